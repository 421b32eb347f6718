import type { Span } from "./span.js";
import type { Severity } from "./severity.js";
import { diagnosticCodes, type DiagnosticCode } from "./codes.js";

/** One replacement of the text under `span` by `newText`. */
export interface TextEdit {
  readonly span: Span;
  readonly newText: string;
}

/** A mechanical repair a tool may offer (a quick fix in the editor, a hint in the CLI). */
export interface Fix {
  readonly title: string;
  readonly edits: readonly TextEdit[];
}

/** Another place that explains the diagnostic (the first definition of a duplicate, say). */
export interface RelatedInformation {
  readonly message: string;
  readonly span: Span;
  readonly file?: string;
}

/**
 * A problem found in user input, as data. Diagnostics are produced by the compiler's stages and
 * rendered only at the edges (the CLI, the language server). Messages are lowercase sentences
 * with user input in backticks; advice goes in `help`.
 */
export interface Diagnostic {
  readonly code: DiagnosticCode;
  readonly severity: Severity;
  readonly message: string;
  /** Where in the file the problem is; absent only for whole-file problems. */
  readonly span?: Span;
  /** The file the span refers to, when the producer knows it. */
  readonly file?: string;
  readonly help?: string;
  readonly fix?: Fix;
  readonly related?: readonly RelatedInformation[];
}

export interface DiagnosticInit {
  readonly span?: Span;
  readonly file?: string;
  readonly help?: string;
  readonly fix?: Fix;
  readonly related?: readonly RelatedInformation[];
  /** Overrides the registry's default severity (e.g. a warning promoted by `--strict`). */
  readonly severity?: Severity;
}

/** Builds a diagnostic whose severity comes from the registry entry of its code. */
export function diagnostic(code: DiagnosticCode, message: string, init: DiagnosticInit = {}): Diagnostic {
  const entry = diagnosticCodes[code];
  const result: { -readonly [K in keyof Diagnostic]: Diagnostic[K] } = {
    code,
    severity: init.severity ?? entry.severity,
    message,
  };
  if (init.span !== undefined) result.span = init.span;
  if (init.file !== undefined) result.file = init.file;
  if (init.help !== undefined) result.help = init.help;
  if (init.fix !== undefined) result.fix = init.fix;
  if (init.related !== undefined && init.related.length > 0) result.related = init.related;
  return result;
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Orders diagnostics by file, then position, then code, so output is stable. */
export function sortDiagnostics(diagnostics: readonly Diagnostic[]): Diagnostic[] {
  return [...diagnostics].sort(
    (a, b) =>
      (a.file ?? "").localeCompare(b.file ?? "") ||
      (a.span?.start ?? -1) - (b.span?.start ?? -1) ||
      a.code.localeCompare(b.code),
  );
}
