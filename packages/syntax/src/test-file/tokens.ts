import type { TokenType } from "chevrotain";
import { createToken, Lexer } from "../chevrotain.js";

/**
 * The token vocabulary of test files and the lexer built from it. A second vocabulary, apart from
 * the policies' (`../tokens.ts`), so that none of a test file's words is reserved in a policy.
 * Comments go to the `comments` group: out of the parser's way, kept for the `///` text of a test.
 */

// The vocabulary. Every word is a `Word`: a keyword is one only where the grammar wants it, so
// that an action or an argument may be called `test` or `expect`.
export const Word = createToken({ name: "Word", pattern: Lexer.NA });
export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_\-]*/, categories: [Word] });
function keyword(word: string): TokenType {
  return createToken({ name: `${word[0]!.toUpperCase()}${word.slice(1)}Keyword`, pattern: new RegExp(word), longer_alt: Identifier, categories: [Word] });
}
export const Policy = keyword("policy");
export const Test = keyword("test");
export const Events = keyword("events");
export const Ground = keyword("ground");
export const Trace = keyword("trace");
export const Messages = keyword("messages");
export const Run = keyword("run");
export const Expect = keyword("expect");
export const Holds = keyword("holds");
export const Hold = keyword("hold");
export const Violated = keyword("violated");
export const At = keyword("at");
export const Broken = keyword("broken");
export const By = keyword("by");
export const Decide = keyword("decide");
export const Allow = keyword("allow");
export const Block = keyword("block");
export const Ask = keyword("ask");
export const Warn = keyword("warn");
export const Ok = keyword("ok");
export const ErrorWord = keyword("error");
export const Pending = keyword("pending");
export const Output = keyword("output");
export const True = keyword("true");
export const False = keyword("false");
export const Null = keyword("null");

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n\f\v\u00a0\ufeff]+/, group: Lexer.SKIPPED });
export const DocComment = createToken({ name: "DocComment", pattern: /\/\/\/[^\r\n]*/, group: "comments" });
export const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/, group: "comments" });
export const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"?/ });
export const NumberLiteral = createToken({ name: "NumberLiteral", pattern: /-?(?:[0-9]|\.[0-9])(?:[eE][+-]|[0-9A-Za-z_.])*/ });
export const LeftBrace = createToken({ name: "LeftBrace", pattern: /\{/ });
export const RightBrace = createToken({ name: "RightBrace", pattern: /\}/ });
export const LeftBracket = createToken({ name: "LeftBracket", pattern: /\[/ });
export const RightBracket = createToken({ name: "RightBracket", pattern: /\]/ });
export const Comma = createToken({ name: "Comma", pattern: /,/ });
export const Colon = createToken({ name: "Colon", pattern: /:/ });
export const Dot = createToken({ name: "Dot", pattern: /\./ });

const keywords = [Policy, Test, Events, Ground, Trace, Run, Messages, Expect, Holds, Hold, Violated, At, Broken, By, Decide, Allow, Block, Ask, Warn, Ok, ErrorWord, Pending, Output, True, False, Null];
export const tokens: TokenType[] = [WhiteSpace, DocComment, LineComment, Word, ...keywords, Identifier, StringLiteral, NumberLiteral, LeftBrace, RightBrace, LeftBracket, RightBracket, Comma, Colon, Dot];
export const testLexer = new Lexer(tokens, { positionTracking: "full", ensureOptimizations: false });

/** The words a test file gives meaning to, for an editor's highlighting and completion. */
export const testFileKeywords: readonly string[] = [...keywords.map((token) => String(token.PATTERN).slice(1, -1)), "all", "others"];
