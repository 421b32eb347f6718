import type { IToken, TokenType } from "chevrotain";
import { tokenMatcher } from "./chevrotain.js";
import { splitScope } from "./declarations.js";
import {
  AndKeyword,
  Colon,
  commentGroup,
  DocComment,
  Dot,
  Identifier,
  Keyword,
  LeftBracket,
  LeftParen,
  ListIndex,
  NumberLiteral,
  OutputKeyword,
  PatternKeyword,
  PolicyKeyword,
  RuleKeyword,
  StringToken,
  tokenize,
  UntilKeyword,
} from "./tokens.js";

/**
 * The tokens of a text as an editor needs them (highlighting, completion, signature help): every
 * token with its offsets, comments included, and each run of characters the lexer could not read
 * as an `unknown` token, in source order. It is the lexer of the parser, so an editor reads a
 * half-typed line exactly as the parser will once it is finished. Never throws.
 *
 * A statement's scope words are keywords here, found by position as the parser finds them
 * (`splitScope`): `after`, `before` and `between` are names everywhere else. So are the other
 * contextual words where the parser reads them: `limit` at the start of a statement (before `[` or
 * `(`), and `of` and `per` in a bound (`limit[500 of amount per 1d]`). A duration (`5m`) is a
 * number token, as the lexer reads it.
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
  /**
   * For a keyword: its ASCII spelling (`□` is `always`, `->` is `implies`). A contextual word read
   * as a keyword in its place (a scope's word, the form `limit`, a bound's `of` and `per`) is a
   * keyword too, spelled as written.
   */
  readonly keyword?: string;
  /**
   * A word of a rule's scope: its first word (`after`, `before`, `between`, contextual: a keyword
   * only in that place), and the `until` or the `and` (of `between`) that ends its first pattern.
   */
  readonly scopeWord?: true;
}

const kindsByTokenName: Readonly<Record<string, ScannedTokenKind>> = {
  Identifier: "identifier",
  Variable: "variable",
  StringLiteral: "string",
  UnterminatedString: "unterminated-string",
  RegexLiteral: "regex",
  UnterminatedRegex: "regex",
  NumberLiteral: "number",
  ListIndex: "number",
  LineComment: "comment",
  DocComment: "doc-comment",
};

export function scanTokens(text: string): ScannedToken[] {
  const lexed = tokenize(text);
  const scanned: ScannedToken[] = [];
  const scopeWords = scopeWordOffsets(lexed.tokens);
  const contextualWords = contextualWordOffsets(lexed.tokens);
  const add = (token: IToken): void => {
    const start = token.startOffset;
    const end = start + token.image.length;
    const scopeWord = scopeWords.has(start);
    if (tokenMatcher(token, Keyword)) {
      // Keyword token types are named for their ASCII spelling: `AlwaysKeyword` is `always`.
      const keyword = token.tokenType.name.replace(/Keyword$/, "").toLowerCase();
      scanned.push({ kind: "keyword", text: token.image, start, end, keyword, ...(scopeWord ? { scopeWord } : {}) });
      return;
    }
    if (scopeWord) {
      scanned.push({ kind: "keyword", text: token.image, start, end, keyword: token.image, scopeWord });
      return;
    }
    if (contextualWords.has(start)) {
      scanned.push({ kind: "keyword", text: token.image, start, end, keyword: token.image });
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

const openers = new Set(["LeftParen", "LeftBrace", "LeftBracket"]);
const closers = new Set(["RightParen", "RightBrace", "RightBracket"]);

/**
 * The offsets of the scopes' words: in each rule (its tokens from `rule` to the next declaration
 * keyword, or to the `}` that closes its policy), the scope `splitScope` splits off, its first word,
 * and the first `until` (and, after `between`, the first `and`) outside any brackets of the scope.
 * Each rule's scope depends only on its own tokens, so a token's mark never depends on the text after
 * the rule; linear in the tokens.
 */
function scopeWordOffsets(tokens: readonly IToken[]): Set<number> {
  const offsets = new Set<number>();
  let rule: IToken[] | undefined;
  let depth = 0;
  const finish = (): void => {
    if (rule === undefined) return;
    const { scope } = splitScope(rule);
    rule = undefined;
    const word = scope[0];
    if (word === undefined) return;
    offsets.add(word.startOffset);
    let nesting = 0;
    let until = false;
    let and = word.image !== "between";
    for (const token of scope.slice(1)) {
      const name = token.tokenType.name;
      if (openers.has(name)) nesting++;
      else if (closers.has(name)) nesting = Math.max(0, nesting - 1);
      else if (nesting === 0 && !until && tokenMatcher(token, UntilKeyword)) {
        offsets.add(token.startOffset);
        until = true;
      } else if (nesting === 0 && !and && !until && tokenMatcher(token, AndKeyword)) {
        offsets.add(token.startOffset);
        and = true;
      }
    }
  };
  for (const token of tokens) {
    if (tokenMatcher(token, PolicyKeyword) || tokenMatcher(token, PatternKeyword) || tokenMatcher(token, RuleKeyword)) {
      finish();
      if (tokenMatcher(token, RuleKeyword)) rule = [token];
      depth = 0;
      continue;
    }
    if (rule === undefined) continue;
    const name = token.tokenType.name;
    if (openers.has(name)) depth++;
    else if (closers.has(name)) {
      // A `}` no bracket of the rule opened closes its policy.
      if (depth === 0 && name === "RightBrace") {
        finish();
        continue;
      }
      depth = Math.max(0, depth - 1);
    }
    rule.push(token);
  }
  finish();
  return offsets;
}

/**
 * The offsets of the contextual words the parser reads as words of the language, not names (its
 * `statement` and `bound` rules): `limit` right after a rule's `:` and before `[` or `(`, and in
 * each bound (`[` after a keyword, or after the word that starts a statement) `of` right after the
 * value and `per` right after the value or the key path of `of`. Linear in the tokens.
 */
function contextualWordOffsets(tokens: readonly IToken[]): Set<number> {
  const offsets = new Set<number>();
  const is = (index: number, type: TokenType) => index >= 0 && index < tokens.length && tokenMatcher(tokens[index]!, type);
  const isWord = (index: number, word: string) => is(index, Identifier) && tokens[index]!.image === word;
  const isSegment = (index: number) => is(index, Identifier) || is(index, StringToken) || is(index, ListIndex);
  // Only a rule's `:` comes right before a statement.
  const startsStatement = (index: number) => is(index - 1, Colon);
  for (let index = 0; index < tokens.length; index++) {
    if (isWord(index, "limit") && startsStatement(index) && (is(index + 1, LeftBracket) || is(index + 1, LeftParen))) offsets.add(tokens[index]!.startOffset);
    // `every(KEY)`, `some(KEY)`, `count(KEY)` in a condition.
    if ((isWord(index, "every") || isWord(index, "some") || isWord(index, "count")) && is(index + 1, LeftParen) && !startsStatement(index)) offsets.add(tokens[index]!.startOffset);
    if (!is(index, LeftBracket) || !(is(index - 1, Keyword) || (is(index - 1, Identifier) && startsStatement(index - 1)))) continue;
    // `[` VALUE (`of` KEYPATH)? (`per` VALUE)? `]`, as the parser's `bound` reads it.
    let at = index + 1;
    if (is(at, NumberLiteral) || is(at, Identifier) || is(at, StringToken)) at++;
    if (isWord(at, "of")) {
      offsets.add(tokens[at]!.startOffset);
      at++;
      if (is(at, OutputKeyword) || isSegment(at)) {
        at++;
        while (is(at, Dot) && isSegment(at + 1)) at += 2;
      }
    }
    if (isWord(at, "per")) offsets.add(tokens[at]!.startOffset);
  }
  return offsets;
}
