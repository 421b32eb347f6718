import { LineIndex, type Diagnostic, type Span } from "@vigil/compiler";
import type { Item, SourceFile } from "@vigil/syntax";

/**
 * Analysis findings, carried across edits until the analysis runs again. A finding points into a
 * declaration (a rule or a pattern); after an edit it is kept, moved with its declaration, only if
 * that declaration's text is exactly as it was. Findings of the declaration being edited, and those
 * that point nowhere, are dropped until the next analysis (after a pause in typing) says again.
 * A finding about several rules (a conflict, a redundancy) may be stale for that pause.
 */

/** The findings of one version of a policy: its text, its tree, and the diagnostics, spans into that text. */
export interface HeldFindings {
  readonly text: string;
  readonly syntax: SourceFile;
  readonly diagnostics: readonly Diagnostic[];
}

/** The held findings moved into another version of the text (the same list when the text is the same). */
export function carryFindings(held: HeldFindings, text: string, syntax: SourceFile): readonly Diagnostic[] {
  if (held.text === text) return held.diagnostics;
  let lines: LineIndex | undefined;
  const moved = (span: Span): Span | undefined => {
    const anchor = anchorOf(held.syntax, span);
    if (anchor === undefined) return undefined;
    const source = held.text.slice(anchor.item.span.start, anchor.item.span.end);
    const now = itemNamed(syntax, anchor.policy, anchor.item);
    if (now === undefined || text.slice(now.span.start, now.span.end) !== source) return undefined;
    const shift = now.span.start - anchor.item.span.start;
    lines ??= new LineIndex(text);
    return lines.span(span.start + shift, span.end + shift);
  };
  const carried: Diagnostic[] = [];
  for (const finding of held.diagnostics) {
    if (finding.span === undefined) continue;
    const span = moved(finding.span);
    if (span === undefined) continue;
    const related = (finding.related ?? []).flatMap((information) => {
      const at = moved(information.span);
      return at === undefined ? [] : [{ ...information, span: at }];
    });
    const { related: _, ...rest } = finding;
    carried.push({ ...rest, span, ...(related.length > 0 ? { related } : {}) });
  }
  return carried;
}

function anchorOf(syntax: SourceFile, span: Span): { policy: string; item: Item } | undefined {
  for (const policy of syntax.policies) {
    const item = policy.items.find((candidate) => candidate.span.start <= span.start && span.end <= candidate.span.end);
    if (item !== undefined) return { policy: policy.name.text, item };
  }
  return undefined;
}

function itemNamed(syntax: SourceFile, policy: string, like: Item): Item | undefined {
  return syntax.policies.find((p) => p.name.text === policy)?.items.find((item) => item.kind === like.kind && item.name.text === like.name.text);
}
