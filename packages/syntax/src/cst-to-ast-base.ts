import type { IToken } from "chevrotain";
import type { Diagnostic, LineIndex, Span } from "@vigil/diagnostics";
import type { Comment, DocText, Identifier, MissingExpr } from "./ast.js";
import { tokenEnd } from "./cst-access.js";

/**
 * What every layer of the AST builder shares: the input, the diagnostics building reports, and
 * spans, names and holes. The builder is written in layers, each a subclass of the one below it:
 * this one, literals (`cst-to-ast-literals.ts`), formulas (`cst-to-ast-formulas.ts`) and
 * declarations (`cst-to-ast.ts`); a layer calls only its own methods and those below it.
 */

export interface AstBuildInput {
  readonly text: string;
  readonly lines: LineIndex;
  /** Doc comments, keyed by the offset of the `policy`/`pattern`/`rule` keyword they document. */
  readonly docs: ReadonlyMap<number, DocText>;
  readonly comments: readonly Comment[];
  /** Offsets of the tokens at which the parser reported errors. */
  readonly errorOffsets: readonly number[];
}

export class AstBuilderBase {
  readonly diagnostics: Diagnostic[] = [];

  /** The offsets of the parser's errors, ascending. */
  private readonly errorOffsets: readonly number[];

  constructor(protected readonly input: AstBuildInput) {
    this.errorOffsets = [...input.errorOffsets].sort((a, b) => a - b);
  }

  protected identifier(token: IToken | undefined, fallback: number): Identifier {
    if (token === undefined) return { text: "", span: this.span(fallback, fallback), recovered: true };
    return { text: token.image, span: this.tokenSpan(token) };
  }

  protected missing(start: number, end: number = start): MissingExpr {
    return { kind: "Missing", span: this.span(start, end), recovered: true };
  }

  /** Whether the parser reported an error at an offset in `[start, end)`: a binary search, per statement. */
  protected hasErrorWithin(start: number, end: number): boolean {
    const offsets = this.errorOffsets;
    let low = 0;
    let high = offsets.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (offsets[middle]! < start) low = middle + 1;
      else high = middle;
    }
    return low < offsets.length && offsets[low]! < end;
  }

  protected tokenSpan(token: IToken): Span {
    return this.span(token.startOffset, tokenEnd(token));
  }

  protected span(start: number, end: number): Span {
    return this.input.lines.span(start, end);
  }
}
