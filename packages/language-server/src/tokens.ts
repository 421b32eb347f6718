import { scanTokens, type ScannedToken, type ScannedTokenKind } from "@vigil/syntax";

/**
 * The tokens of a text as the editor's features read them: the lexer of `@vigil/syntax`
 * (`scanTokens`), comments and unreadable characters included, so that completion and highlighting
 * read a half-typed line the way the parser will once it is finished.
 */
export { scanTokens };
export type Token = ScannedToken;
export type TokenKind = ScannedTokenKind;

/** Whether a token is the keyword with this ASCII spelling. */
export function isKeywordToken(token: Token | undefined, keyword: string): boolean {
  return token?.kind === "keyword" && token.keyword === keyword;
}

/** Whether a token is this punctuation character. */
export function isPunctuation(token: Token | undefined, character: string): boolean {
  return token?.kind === "punctuation" && token.text === character;
}

/** Whether a token is a comment (`//` or `///`). */
export function isComment(token: Token): boolean {
  return token.kind === "comment" || token.kind === "doc-comment";
}

/** The index of the last token that starts before `offset`, or -1 (binary search; tokens are in order). */
export function lastTokenBefore(tokens: readonly Token[], offset: number): number {
  let low = 0;
  let high = tokens.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (tokens[middle]!.start < offset) low = middle + 1;
    else high = middle;
  }
  return low - 1;
}
