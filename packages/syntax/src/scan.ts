import { tokenMatcher, type IToken } from "chevrotain";
import { commentGroup, DocComment, Keyword, tokenize } from "./tokens.js";

/**
 * The tokens of a text as an editor needs them (highlighting, completion, signature help): every
 * token with its offsets, comments included, and each run of characters the lexer could not read
 * as an `unknown` token, in source order. It is the lexer of the parser, so an editor reads a
 * half-typed line exactly as the parser will once it is finished. Never throws.
 */
export type ScannedTokenKind =
  | "keyword"
  | "identifier"
  | "variable"
  | "string"
  | "unterminated-string"
  /** A regular expression `/…/flags`, closed or not. */
  | "regex"
  | "number"
  | "punctuation"
  | "comment"
  | "doc-comment"
  /** Characters no token starts with (the parser reports them as V0003). */
  | "unknown";

export interface ScannedToken {
  readonly kind: ScannedTokenKind;
  readonly text: string;
  readonly start: number;
  readonly end: number;
  /** For a keyword: its ASCII spelling (`□` is `always`, `->` is `implies`). */
  readonly keyword?: string;
}

const kindsByTokenName: Readonly<Record<string, ScannedTokenKind>> = {
  Identifier: "identifier",
  Variable: "variable",
  StringLiteral: "string",
  UnterminatedString: "unterminated-string",
  RegexLiteral: "regex",
  UnterminatedRegex: "regex",
  NumberLiteral: "number",
  LineComment: "comment",
  DocComment: "doc-comment",
};

export function scanTokens(text: string): ScannedToken[] {
  const lexed = tokenize(text);
  const scanned: ScannedToken[] = [];
  const add = (token: IToken): void => {
    const start = token.startOffset;
    const end = start + token.image.length;
    if (tokenMatcher(token, Keyword)) {
      // Keyword token types are named for their ASCII spelling: `AlwaysKeyword` is `always`.
      const keyword = token.tokenType.name.replace(/Keyword$/, "").toLowerCase();
      scanned.push({ kind: "keyword", text: token.image, start, end, keyword });
      return;
    }
    const kind = tokenMatcher(token, DocComment) ? "doc-comment" : (kindsByTokenName[token.tokenType.name] ?? "punctuation");
    scanned.push({ kind, text: token.image, start, end });
  };
  for (const token of lexed.tokens) add(token);
  for (const token of lexed.groups[commentGroup] ?? []) add(token);
  for (const error of lexed.errors) {
    const length = Math.max(1, error.length);
    scanned.push({ kind: "unknown", text: text.slice(error.offset, error.offset + length), start: error.offset, end: error.offset + length });
  }
  return scanned.sort((a, b) => a.start - b.start);
}
