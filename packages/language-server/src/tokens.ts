import { isKeyword } from "@vigil/syntax";

/**
 * The tokens of a text as an editor needs them: every token with its offsets, comments included,
 * never an error. It follows the lexer of `@vigil/syntax` (`tokens.ts`: the same patterns in the
 * same priority order, keywords reserved through `isKeyword`), so that completion and highlighting
 * read a half-typed line the way the parser will once it is finished.
 */

export type TokenKind =
  | "keyword"
  | "identifier"
  | "variable"
  | "string"
  | "unterminated-string"
  | "number"
  | "punctuation"
  | "comment"
  | "doc-comment"
  /** A character that starts no token (the parser reports it as V0003). */
  | "unknown";

export interface Token {
  readonly kind: TokenKind;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** For a keyword: its ASCII spelling (`□` is `always`, `->` is `implies`). */
  readonly keyword?: string;
}

/** The Unicode and symbolic spellings of keywords, longest first where one is a prefix of another. */
const symbolicKeywords: readonly (readonly [string, string])[] = [
  ["□", "always"],
  ["¬", "not"],
  ["∧", "and"],
  ["∨", "or"],
  ["->", "implies"],
  ["⇒", "implies"],
  ["→", "implies"],
  ["◇⁻", "once"],
  ["◇⁺", "eventually"],
];

const whitespace = /[ \t\r\n\f\v\u00a0\ufeff]+/y;
const comment = /\/\/[^\r\n]*/y;
const identifier = /[A-Za-z_][A-Za-z0-9_]*/y;
const variable = /\$[A-Za-z_][A-Za-z0-9_]*/y;
const closedString = /"(?:[^"\\\r\n]|\\[^\r\n])*"/y;
const openString = /"(?:[^"\\\r\n]|\\[^\r\n]?)*/y;
const number = /-?(?:[0-9]|\.[0-9])(?:[eE][+-]|[0-9A-Za-z_.])*/y;
const punctuation = "{}()[],:=~.";

function matchAt(pattern: RegExp, text: string, offset: number): string | undefined {
  pattern.lastIndex = offset;
  return pattern.exec(text)?.[0];
}

/** Splits a text into tokens, comments included; a character no token starts becomes an `unknown` token. */
export function scanTokens(text: string): Token[] {
  const tokens: Token[] = [];
  let offset = 0;
  const push = (kind: TokenKind, length: number, keyword?: string): void => {
    tokens.push({ kind, text: text.slice(offset, offset + length), start: offset, end: offset + length, ...(keyword !== undefined ? { keyword } : {}) });
    offset += length;
  };
  scanning: while (offset < text.length) {
    const space = matchAt(whitespace, text, offset);
    if (space !== undefined) {
      offset += space.length;
      continue;
    }
    const slashes = matchAt(comment, text, offset);
    if (slashes !== undefined) {
      push(slashes.startsWith("///") ? "doc-comment" : "comment", slashes.length);
      continue;
    }
    const word = matchAt(identifier, text, offset);
    if (word !== undefined) {
      if (isKeyword(word)) push("keyword", word.length, word);
      else push("identifier", word.length);
      continue;
    }
    for (const [spelling, keyword] of symbolicKeywords) {
      if (text.startsWith(spelling, offset)) {
        push("keyword", spelling.length, keyword);
        continue scanning;
      }
    }
    if (punctuation.includes(text[offset]!)) {
      push("punctuation", 1);
      continue;
    }
    const name = matchAt(variable, text, offset);
    if (name !== undefined) {
      push("variable", name.length);
      continue;
    }
    const closed = matchAt(closedString, text, offset);
    if (closed !== undefined) {
      push("string", closed.length);
      continue;
    }
    const open = matchAt(openString, text, offset);
    if (open !== undefined) {
      push("unterminated-string", open.length);
      continue;
    }
    const literal = matchAt(number, text, offset);
    if (literal !== undefined) {
      push("number", literal.length);
      continue;
    }
    // One code point (a surrogate pair stays whole), as the lexer skips an unknown character.
    const code = text.codePointAt(offset)!;
    push("unknown", code > 0xffff ? 2 : 1);
  }
  return tokens;
}

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
