import { CodeActionKind, type CodeAction, type Diagnostic as LspDiagnostic, type Range, type TextEdit } from "vscode-languageserver";
import type { Analysis } from "../analysis.js";
import { isDiagnosticData, renderFix } from "./diagnostics.js";

/**
 * Quick fixes: one per diagnostic that carries a fix, with the fix's title and edits. The edits come
 * from the diagnostic's `data` when it was published for the version being edited, and otherwise
 * from the same diagnostic (same code, overlapping range) in the current analysis.
 */
export function quickFixes(analysis: Analysis, diagnostics: readonly LspDiagnostic[], supportsVersionedEdits: boolean): CodeAction[] {
  const actions: CodeAction[] = [];
  for (const diagnostic of diagnostics) {
    if (diagnostic.source !== "vigil") continue;
    const fix = fixOf(analysis, diagnostic);
    if (fix === undefined) continue;
    actions.push({
      title: fix.title,
      kind: CodeActionKind.QuickFix,
      diagnostics: [diagnostic],
      isPreferred: true,
      edit: supportsVersionedEdits
        ? { documentChanges: [{ textDocument: { uri: analysis.uri, version: analysis.version }, edits: fix.edits }] }
        : { changes: { [analysis.uri]: fix.edits } },
    });
  }
  return actions;
}

function fixOf(analysis: Analysis, diagnostic: LspDiagnostic): { title: string; edits: TextEdit[] } | undefined {
  const data: unknown = diagnostic.data;
  if (isDiagnosticData(data) && data.version === analysis.version) return data.fix === undefined ? undefined : { title: data.fix.title, edits: [...data.fix.edits] };
  const current = analysis.diagnostics.find(
    (candidate) => candidate.code === diagnostic.code && candidate.fix !== undefined && candidate.span !== undefined && overlaps(analysis.positions.rangeOf(candidate.span), diagnostic.range),
  );
  return current?.fix === undefined ? undefined : renderFix(current.fix, analysis.positions);
}

function overlaps(a: Range, b: Range): boolean {
  const before = (x: Range["start"], y: Range["start"]) => x.line < y.line || (x.line === y.line && x.character <= y.character);
  return before(a.start, b.end) && before(b.start, a.end);
}
