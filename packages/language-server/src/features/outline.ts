import { printExpr, type Comment, type Item } from "@vigil/syntax";
import { FoldingRangeKind, SymbolKind, type DocumentSymbol, type FoldingRange } from "vscode-languageserver";
import type { Analysis } from "../analysis.js";

/** The outline of a document (policies, and in each its patterns and rules) and its folding ranges. */

const detailLength = 80;

export function documentSymbols(analysis: Analysis): DocumentSymbol[] {
  const { positions } = analysis;
  return analysis.compiled.syntax.policies.map((policy) => ({
    name: displayName(policy.name.text),
    kind: SymbolKind.Namespace,
    range: positions.rangeOf(policy.span),
    selectionRange: positions.rangeOf(policy.name.span),
    children: policy.items.map((item) => ({
      name: displayName(item.name.text),
      kind: item.kind === "PatternDecl" ? SymbolKind.Constant : SymbolKind.Event,
      detail: itemDetail(item),
      range: positions.rangeOf(item.span),
      selectionRange: positions.rangeOf(item.name.span),
    })),
  }));
}

/** A recovered declaration has no name yet; an outline entry must have one. */
function displayName(name: string): string {
  return name.length > 0 ? name : "(unnamed)";
}

function itemDetail(item: Item): string {
  if (item.kind === "PatternDecl") return shorten(printExpr(item.body));
  const scope = item.statement.scope?.kind;
  const parts = [item.statement.form, scope === "afterUntil" ? "after … until" : scope, item.response?.value];
  return parts.filter((part) => part !== undefined).join(" · ");
}

function shorten(text: string): string {
  return text.length <= detailLength ? text : `${text.slice(0, detailLength - 1)}…`;
}

export function foldingRanges(analysis: Analysis): FoldingRange[] {
  const { positions } = analysis;
  const ranges: FoldingRange[] = [];
  const fold = (start: number, end: number, kind?: FoldingRangeKind, keepLastLine = false): void => {
    const from = positions.positionAt(start).line;
    const to = positions.positionAt(end).line - (keepLastLine ? 1 : 0);
    if (to > from) ranges.push({ startLine: from, endLine: to, ...(kind !== undefined ? { kind } : {}) });
  };
  for (const policy of analysis.compiled.syntax.policies) {
    if (policy.doc !== undefined) fold(policy.doc.span.start, policy.doc.span.end, FoldingRangeKind.Comment);
    // The policy's closing brace stays visible when its body is folded.
    fold(policy.span.start, policy.span.end, undefined, true);
    for (const item of policy.items) {
      if (item.doc !== undefined) fold(item.doc.span.start, item.doc.span.end, FoldingRangeKind.Comment);
      fold(item.span.start, item.span.end);
    }
  }
  for (const run of commentRuns(analysis.compiled.syntax.comments, analysis)) fold(run.start, run.end, FoldingRangeKind.Comment);
  return ranges.sort((a, b) => a.startLine - b.startLine || b.endLine - a.endLine).filter(uniqueRange());
}

/** Runs of `//` comments on consecutive lines (doc comments fold with their declaration above). */
function commentRuns(comments: readonly Comment[], analysis: Analysis): { start: number; end: number }[] {
  const runs: { start: number; end: number }[] = [];
  let current: { start: number; end: number; line: number } | undefined;
  for (const comment of comments) {
    if (comment.kind !== "line") continue;
    const line = analysis.positions.positionAt(comment.span.start).line;
    if (current !== undefined && line === current.line + 1) {
      current.end = comment.span.end;
      current.line = line;
    } else {
      if (current !== undefined) runs.push(current);
      current = { start: comment.span.start, end: comment.span.end, line };
    }
  }
  if (current !== undefined) runs.push(current);
  return runs;
}

function uniqueRange(): (range: FoldingRange) => boolean {
  const seen = new Set<string>();
  return (range) => {
    const key = `${range.startLine}:${range.endLine}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  };
}
