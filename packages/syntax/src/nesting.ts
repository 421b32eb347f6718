import type { IToken } from "chevrotain";
import { createTokenInstance, tokenMatcher } from "./chevrotain.js";
import { LeftParen, NestingLimit, PatternKeyword, PolicyKeyword, RightParen, RuleKeyword } from "./tokens.js";

/**
 * How deeply expressions may nest: parentheses, and chains of `not`/`once`/`eventually`/`implies`.
 * The parser and every later stage walk expressions recursively, so an absurdly deep expression
 * would overflow the stack; it is reported (V0006) instead. No policy a person writes comes near.
 */
export const maximumNestingDepth = 100;

/** A region of the token vector cut out because its parentheses nest too deeply. */
export interface TooDeepRegion {
  /** The `(` at which the limit was exceeded. */
  readonly opener: IToken;
  /** Offsets of the region's text (from the `(` to its matching `)` or where it was abandoned). */
  readonly start: number;
  readonly end: number;
}

function tokenEnd(token: IToken): number {
  return token.startOffset + token.image.length;
}

function isDeclarationKeyword(token: IToken): boolean {
  return tokenMatcher(token, PolicyKeyword) || tokenMatcher(token, PatternKeyword) || tokenMatcher(token, RuleKeyword);
}

/**
 * Replaces every parenthesised region that would take the parser deeper than `maximumNestingDepth`
 * by a single `NestingLimit` token, which the parser accepts as an expression. A region ends at its
 * matching `)`, or, when it is never closed, just before the next declaration keyword (so that the
 * following declarations still parse).
 */
export function cutTooDeepRegions(tokens: readonly IToken[], text: string): { tokens: IToken[]; regions: TooDeepRegion[] } {
  const result: IToken[] = [];
  const regions: TooDeepRegion[] = [];
  let depth = 0;
  let index = 0;
  while (index < tokens.length) {
    const token = tokens[index]!;
    if (isDeclarationKeyword(token)) depth = 0;
    if (tokenMatcher(token, LeftParen)) {
      if (depth >= maximumNestingDepth) {
        const regionEnd = findRegionEnd(tokens, index);
        const last = tokens[regionEnd]!;
        const image = text.slice(token.startOffset, tokenEnd(last));
        const placeholder = createTokenInstance(NestingLimit, image, token.startOffset, tokenEnd(last) - 1, NaN, NaN, NaN, NaN);
        result.push(placeholder);
        regions.push({ opener: token, start: token.startOffset, end: tokenEnd(last) });
        index = regionEnd + 1;
        continue;
      }
      depth++;
    } else if (tokenMatcher(token, RightParen)) {
      depth = Math.max(0, depth - 1);
    }
    result.push(token);
    index++;
  }
  return { tokens: result, regions };
}

/** The index of the last token of the region opened by the `(` at `openerIndex`. */
function findRegionEnd(tokens: readonly IToken[], openerIndex: number): number {
  let balance = 0;
  for (let index = openerIndex; index < tokens.length; index++) {
    const token = tokens[index]!;
    if (index > openerIndex && isDeclarationKeyword(token)) return index - 1;
    if (tokenMatcher(token, LeftParen)) balance++;
    else if (tokenMatcher(token, RightParen)) {
      balance--;
      if (balance === 0) return index;
    }
  }
  return tokens.length - 1;
}
