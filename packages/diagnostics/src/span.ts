/**
 * A half-open region of a source text. Offsets are UTF-16 code-unit indices into the text
 * (what JavaScript strings index); lines and columns are 1-based, as editors and humans count.
 * `end`/`endLine`/`endColumn` point just past the last character.
 */
export interface Span {
  readonly start: number;
  readonly end: number;
  readonly line: number;
  readonly column: number;
  readonly endLine: number;
  readonly endColumn: number;
}

/** Maps offsets of one text to line/column positions in O(log lines). */
export class LineIndex {
  private readonly lineStarts: number[] = [0];

  constructor(private readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      if (text.charCodeAt(i) === 10 /* \n */) this.lineStarts.push(i + 1);
    }
  }

  /** 1-based line and column of an offset. */
  position(offset: number): { line: number; column: number } {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const mid = (low + high + 1) >> 1;
      if (this.lineStarts[mid]! <= clamped) low = mid;
      else high = mid - 1;
    }
    return { line: low + 1, column: clamped - this.lineStarts[low]! + 1 };
  }

  /** Offset of a 1-based line and column. */
  offset(line: number, column: number): number {
    const start = this.lineStarts[Math.max(0, Math.min(line - 1, this.lineStarts.length - 1))]!;
    return Math.min(this.text.length, start + Math.max(0, column - 1));
  }

  span(start: number, end: number): Span {
    const from = this.position(start);
    const to = this.position(end);
    return { start, end, line: from.line, column: from.column, endLine: to.line, endColumn: to.column };
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }
}

/** The smallest span covering both. */
export function joinSpans(a: Span, b: Span): Span {
  const first = a.start <= b.start ? a : b;
  const last = a.end >= b.end ? a : b;
  return {
    start: first.start,
    end: last.end,
    line: first.line,
    column: first.column,
    endLine: last.endLine,
    endColumn: last.endColumn,
  };
}
