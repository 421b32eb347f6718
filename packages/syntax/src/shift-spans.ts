import type { Span } from "@vigil/diagnostics";

/**
 * A copy of a tree (an AST declaration, a diagnostic) with every span moved by `offsets`
 * characters and `lines` lines. Used to reuse a declaration parsed at another place of an earlier
 * version of the file: its text is the same and it starts at the same column, so only offsets and
 * line numbers differ (columns depend on the text since the start of the line, which is the same).
 * Trees are plain data (objects, arrays, primitives); their depth is bounded by the parser's
 * nesting limit.
 */
export function shiftSpans<T>(tree: T, offsets: number, lines: number): T {
  if (offsets === 0 && lines === 0) return tree;
  return shift(tree, offsets, lines) as T;
}

function shift(value: unknown, offsets: number, lines: number): unknown {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const copy = new Array<unknown>(value.length);
    for (let index = 0; index < value.length; index++) copy[index] = shift(value[index], offsets, lines);
    return copy;
  }
  if (isSpan(value)) {
    return {
      start: value.start + offsets,
      end: value.end + offsets,
      line: value.line + lines,
      column: value.column,
      endLine: value.endLine + lines,
      endColumn: value.endColumn,
    } satisfies Span;
  }
  const copy: Record<string, unknown> = {};
  for (const key in value) copy[key] = shift((value as Record<string, unknown>)[key], offsets, lines);
  return copy;
}

/** A span has exactly these six numeric fields; no other node of a tree has `endColumn`. */
function isSpan(value: object): value is Span {
  return typeof (value as Partial<Span>).endColumn === "number";
}
