import type { Span } from "@vigil/diagnostics";
import type { Position, Range } from "vscode-languageserver";

/**
 * The one place where the compiler's spans become LSP positions and back.
 *
 * A span carries 0-based UTF-16 offsets into the text (what JavaScript strings index) and 1-based
 * lines and columns counted on `\n`. LSP positions are 0-based lines and 0-based UTF-16 characters,
 * with `\r\n`, `\r` and `\n` all ending a line. Converting through the offsets with the LSP's own
 * notion of lines keeps a file with `\r\n` (or a stray `\r`) exact; a span of a text the server does
 * not hold (a trace file) is converted from its line and column.
 */
export class TextPositions {
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    for (let index = 0; index < text.length; index++) {
      const code = text.charCodeAt(index);
      if (code === 13 /* \r */) {
        if (text.charCodeAt(index + 1) === 10) index++;
        this.lineStarts.push(index + 1);
      } else if (code === 10 /* \n */) this.lineStarts.push(index + 1);
    }
  }

  get lineCount(): number {
    return this.lineStarts.length;
  }

  /** The LSP position of an offset (clamped to the text). */
  positionAt(offset: number): Position {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= clamped) low = middle;
      else high = middle - 1;
    }
    return { line: low, character: clamped - this.lineStarts[low]! };
  }

  /** The offset of an LSP position; a character past the end of its line means the line's end. */
  offsetAt(position: Position): number {
    if (position.line < 0) return 0;
    if (position.line >= this.lineStarts.length) return this.text.length;
    const start = this.lineStarts[position.line]!;
    const end = this.lineEnd(position.line);
    return Math.max(start, Math.min(start + Math.max(0, position.character), end));
  }

  /** The offset just past the last character of a line, before its line break. */
  lineEnd(line: number): number {
    const next = this.lineStarts[line + 1];
    if (next === undefined) return this.text.length;
    let end = next;
    if (end > 0 && this.text.charCodeAt(end - 1) === 10) end--;
    if (end > 0 && this.text.charCodeAt(end - 1) === 13) end--;
    return Math.max(this.lineStarts[line]!, end);
  }

  /** The offset where a line starts. */
  lineStart(line: number): number {
    return this.lineStarts[Math.max(0, Math.min(line, this.lineStarts.length - 1))]!;
  }

  range(start: number, end: number): Range {
    return { start: this.positionAt(start), end: this.positionAt(end) };
  }

  /** The range of a span of this text. */
  rangeOf(span: Pick<Span, "start" | "end">): Range {
    return this.range(span.start, span.end);
  }

  /** The whole text, for an edit that replaces it. */
  get fullRange(): Range {
    return this.range(0, this.text.length);
  }
}

/** The range of a span of a text the server does not hold (a trace or schema file), from its 1-based line and column. */
export function rangeOfForeignSpan(span: Span | undefined): Range {
  if (span === undefined) return { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } };
  return {
    start: { line: span.line - 1, character: span.column - 1 },
    end: { line: span.endLine - 1, character: span.endColumn - 1 },
  };
}

/** Whether a position lies within a range (both ends included, as a cursor after a word is on it). */
export function rangeContains(range: Range, position: Position): boolean {
  const afterStart = position.line > range.start.line || (position.line === range.start.line && position.character >= range.start.character);
  const beforeEnd = position.line < range.end.line || (position.line === range.end.line && position.character <= range.end.character);
  return afterStart && beforeEnd;
}
