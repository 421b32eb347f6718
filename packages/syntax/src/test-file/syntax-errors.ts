import type { IRecognitionException } from "chevrotain";
import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";

/**
 * Turns the test-file parser's errors into diagnostics (V2001), each saying what the line wanted
 * in the words of a test file rather than by the parser's rule and token names.
 */

/** What each parser rule wanted, in words. */
const expectations: Readonly<Record<string, string>> = {
  file: "`policy \"…\"` or `test \"…\" { … }`",
  testCase: "`events { … }`, `trace \"…\"`, `expect …`, `decide …` or `}`",
  eventsBlock: "an event (`action {args} ok output \"…\" at 5s`) or `}`",
  handEvent: "an event: an action name, then `{args}`, `ok`, `error` or `pending`, `output \"…\"`, and `at` its time",
  eventTime: "a time after `at`: a duration from the run's start (`90s`, `5m`) or a date-time in quotes (`\"2026-11-27T10:00:00Z\"`)",
  traceLine: "`trace \"file\"`, then `run \"NAME\"` for one run of a file holding several, and `messages` if the conversation's messages are events",
  expectLine: "`expect RULE holds`, `expect RULE violated [at N, …]`, or `expect all hold` / `expect others hold`",
  witness: "an event position, then `broken by N` for `until`",
  decideLine: "`decide N allow|block|ask|warn [by RULE, …]`",
  ruleReference: "a rule name",
  objectValue: "`key: value` pairs in `{ … }`",
  arrayValue: "values in `[ … ]`",
  value: "a value (a string, a number, `true`, `false`, `null`, `{…}` or `[…]`)",
};

/** Punctuation and literals as a message names them. */
const tokenWords: Readonly<Record<string, string>> = {
  LeftBrace: "`{`",
  RightBrace: "`}`",
  LeftBracket: "`[`",
  RightBracket: "`]`",
  Comma: "`,`",
  Colon: "`:`",
  Dot: "`.`",
  StringLiteral: "a string in double quotes",
  NumberLiteral: "a number",
  Word: "a name",
  Identifier: "a name",
};

export function syntaxError(error: IRecognitionException, spanOf: (start: number, end: number) => Span, length: number): Diagnostic {
  const token = error.token;
  const start = Number.isNaN(token.startOffset) ? length : token.startOffset;
  const end = Number.isNaN(token.endOffset ?? NaN) ? start : token.endOffset! + 1;
  const rule = error.context.ruleStack.at(-1) ?? "file";
  const found = token.tokenType === undefined || token.image === "" ? "the end of the file" : `\`${token.image}\``;
  // A missing token (Chevrotain names it in its message) is said as such; otherwise what the line wanted.
  const missing = error.name === "MismatchedTokenException" ? /--> (\w+) <--/.exec(error.message)?.[1] : undefined;
  const wanted = missing !== undefined ? (tokenWords[missing] ?? `\`${missing.replace(/Keyword$/, "").toLowerCase()}\``) : (expectations[rule] ?? "something else");
  return diagnostic("V2001", `unexpected ${found}: expected ${wanted}`, { span: spanOf(start, end) });
}
