import type { Diagnostic, Fix } from "@vigil/compiler";
import {
  DiagnosticSeverity,
  DiagnosticTag,
  type Diagnostic as LspDiagnostic,
  type DiagnosticRelatedInformation,
  type TextEdit as LspTextEdit,
} from "vscode-languageserver";
import { rangeOfForeignSpan, type TextPositions } from "../positions.js";
import { pathToUri } from "../uris.js";

/**
 * Diagnostics as the editor shows them: the compiler's diagnostics (data) rendered into LSP
 * diagnostics, with the code linked to its explanation and the fix carried along for the quick fix.
 */

/** What a published diagnostic carries in `data`: its fix, already in LSP terms, and the version it applies to. */
export interface DiagnosticData {
  readonly version: number;
  readonly fix?: { readonly title: string; readonly edits: readonly LspTextEdit[] };
}

const severities = {
  error: DiagnosticSeverity.Error,
  warning: DiagnosticSeverity.Warning,
  info: DiagnosticSeverity.Information,
} as const;

/** Codes whose subject is dead text (shown faded). */
const unnecessaryCodes: ReadonlySet<string> = new Set(["V1104"]);

export interface RenderOptions {
  readonly uri: string;
  readonly version: number;
  readonly positions: TextPositions;
  /** The link to the explanation of a code, when the server knows where the documentation is. */
  readonly codeLink?: (code: string) => string | undefined;
}

/** An LSP diagnostic of a diagnostic in the document (spans of this text). */
export function renderDiagnostic(diagnostic: Diagnostic, options: RenderOptions): LspDiagnostic {
  const { positions } = options;
  const range = diagnostic.span !== undefined ? positions.rangeOf(diagnostic.span) : positions.range(0, 0);
  const href = options.codeLink?.(diagnostic.code);
  const related: DiagnosticRelatedInformation[] = (diagnostic.related ?? []).map((information) => ({
    message: information.message,
    location:
      information.file !== undefined && information.file !== diagnostic.file
        ? { uri: pathToUri(information.file), range: rangeOfForeignSpan(information.span) }
        : { uri: options.uri, range: positions.rangeOf(information.span) },
  }));
  const data: DiagnosticData = {
    version: options.version,
    ...(diagnostic.fix !== undefined ? { fix: renderFix(diagnostic.fix, positions) } : {}),
  };
  return {
    range,
    severity: severities[diagnostic.severity],
    code: diagnostic.code,
    ...(href !== undefined ? { codeDescription: { href } } : {}),
    source: "vigil",
    message: diagnostic.help !== undefined ? `${diagnostic.message}\nhelp: ${diagnostic.help}` : diagnostic.message,
    ...(related.length > 0 ? { relatedInformation: related } : {}),
    ...(unnecessaryCodes.has(diagnostic.code) ? { tags: [DiagnosticTag.Unnecessary] } : {}),
    data,
  };
}

export function renderFix(fix: Fix, positions: TextPositions): { title: string; edits: LspTextEdit[] } {
  return { title: fix.title, edits: fix.edits.map((edit) => ({ range: positions.rangeOf(edit.span), newText: edit.newText })) };
}

/** An LSP diagnostic of a file the server does not hold (a sample trace, a schema), from lines and columns. */
export function renderForeignDiagnostic(diagnostic: Diagnostic, codeLink?: (code: string) => string | undefined): LspDiagnostic {
  const href = codeLink?.(diagnostic.code);
  return {
    range: rangeOfForeignSpan(diagnostic.span),
    severity: severities[diagnostic.severity],
    code: diagnostic.code,
    ...(href !== undefined ? { codeDescription: { href } } : {}),
    source: "vigil",
    message: diagnostic.help !== undefined ? `${diagnostic.message}\nhelp: ${diagnostic.help}` : diagnostic.message,
  };
}

/** Whether a value is the `data` of one of our diagnostics. */
export function isDiagnosticData(value: unknown): value is DiagnosticData {
  return typeof value === "object" && value !== null && typeof (value as { version?: unknown }).version === "number";
}
