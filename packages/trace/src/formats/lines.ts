import { LineIndex, type Span } from "@vigil/diagnostics";

/**
 * Cuts a text given in pieces into its non-blank lines, keeping the running offset and line
 * number, so that each line's place in the whole text is known without keeping the text before
 * it. A piece may end anywhere, even inside a line or between the halves of a UTF-16 surrogate
 * pair: the unfinished line waits for the next piece. A `\r` before the `\n` is not part of the
 * line, as in {@link LineIndex}, which counts lines by `\n` alone.
 */
export class LineSplitter {
  /** The unfinished last line, and where it starts. */
  private rest = "";
  private restOffset = 0;
  private restLine = 1;
  /** The length of the text pushed so far. */
  private consumed = 0;

  /**
   * @param start where the text pushed starts in the whole text (a reading that starts again at a
   *   line of a file read before): its line and offset. The beginning by default.
   */
  constructor(
    private readonly each: (text: string, line: number, offset: number) => void,
    start: { readonly line: number; readonly offset: number } = { line: 1, offset: 0 },
  ) {
    this.restLine = start.line;
    this.restOffset = start.offset;
    this.consumed = start.offset;
  }

  /** The line and offset of the next line, when the text pushed so far ends at a line end. */
  get nextLine(): { line: number; offset: number } | undefined {
    return this.restOffset === this.consumed ? { line: this.restLine, offset: this.restOffset } : undefined;
  }

  push(chunk: string): void {
    let newline = chunk.indexOf("\n");
    if (newline < 0) {
      this.rest = this.rest === "" ? chunk : this.rest + chunk;
      this.consumed += chunk.length;
      return;
    }
    let line = this.restLine;
    this.emit(this.rest === "" ? chunk.slice(0, newline) : this.rest + chunk.slice(0, newline), line++, this.restOffset);
    let start = newline + 1;
    while ((newline = chunk.indexOf("\n", start)) >= 0) {
      this.emit(chunk.slice(start, newline), line++, this.consumed + start);
      start = newline + 1;
    }
    this.rest = chunk.slice(start);
    this.restOffset = this.consumed + start;
    this.restLine = line;
    this.consumed += chunk.length;
  }

  /** The input has ended: the last line, if it did not end with a line break. */
  end(): void {
    const rest = this.rest;
    this.rest = "";
    this.emit(rest, this.restLine, this.restOffset);
  }

  private emit(raw: string, line: number, offset: number): void {
    const text = raw.charCodeAt(raw.length - 1) === 13 /* \r */ ? raw.slice(0, -1) : raw;
    if (!isBlank(text)) this.each(text, line, offset);
  }
}

/** Whether a line holds only white space (most lines start with a visible character). */
export function isBlank(text: string): boolean {
  if (text.length === 0) return true;
  const first = text.charCodeAt(0);
  if (first > 32 && first < 127) return false;
  return text.trim() === "";
}

/**
 * The span of columns `from` to `to` (0-based, `to` exclusive) of line `line`, which starts at
 * `offset` of the text: what `LineIndex.span` gives for offsets inside one line.
 */
export function lineSpan(line: number, offset: number, from: number, to: number): Span {
  return { start: offset + from, end: offset + to, line, column: from + 1, endLine: line, endColumn: to + 1 };
}

/**
 * Where a text starts in the file it was cut from (a run of a file holding several runs): the
 * offset of its first character in the file, and that character's 1-based line and column.
 */
export interface TextOrigin {
  readonly offset: number;
  readonly line: number;
  readonly column: number;
}

/**
 * The lines of a text cut from a larger file, numbered as in that file: a span of the text is
 * given as the span of the same characters in the file (offsets, lines, and columns, which move
 * only on the text's first line), so that events and diagnostics point at the original file.
 */
export class PlacedLineIndex extends LineIndex {
  constructor(
    text: string,
    private readonly origin: TextOrigin,
  ) {
    super(text);
  }

  /** The line and column in the file of an offset of the text. */
  override position(offset: number): { line: number; column: number } {
    const { line, column } = super.position(offset);
    return line === 1 ? { line: this.origin.line, column: column + this.origin.column - 1 } : { line: line + this.origin.line - 1, column };
  }

  /** The offset in the file of a line and column of the file. */
  override offset(line: number, column: number): number {
    const inText = line === this.origin.line ? super.offset(1, column - this.origin.column + 1) : super.offset(line - this.origin.line + 1, column);
    return inText + this.origin.offset;
  }

  /** The span in the file of offsets `start` to `end` of the text. */
  override span(start: number, end: number): Span {
    const from = this.position(start);
    const to = this.position(end);
    return { start: start + this.origin.offset, end: end + this.origin.offset, line: from.line, column: from.column, endLine: to.line, endColumn: to.column };
  }
}

/** The lines of a text, numbered from its file's line when it was cut from one. */
export function lineIndexOf(text: string, origin: TextOrigin | undefined): LineIndex {
  return origin === undefined ? new LineIndex(text) : new PlacedLineIndex(text, origin);
}
