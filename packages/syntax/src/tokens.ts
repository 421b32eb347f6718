import type { ILexingResult, IToken, TokenType } from "chevrotain";
import { createToken, Lexer } from "./chevrotain.js";

/**
 * The token vocabulary of Vigil and the Chevrotain lexer built from it.
 *
 * Keywords are reserved: each keyword token names `Identifier` as its `longer_alt`, so that
 * `index` lexes as one identifier rather than the keyword `in` followed by `dex`. Comments are
 * not skipped but routed to the `comments` group, which keeps them out of the parser's input
 * while preserving them for doc comments and the printer.
 */

/** The lexer group that receives `//` and `///` comments. */
export const commentGroup = "comments";

// Categories. They match no text themselves; they let the parser and the language server's
// semantic highlighting treat a family of tokens as one.

/** Every reserved word (including its Unicode spellings). */
export const Keyword = createToken({ name: "Keyword", pattern: Lexer.NA });
/** The seven statement forms. */
export const FormKeyword = createToken({ name: "FormKeyword", pattern: Lexer.NA });
/** The forms written `FORM(ψ, …)` with no bound: `abs`, `prec`, `resp`, `rslv`, `until`. */
export const SimpleFormKeyword = createToken({ name: "SimpleFormKeyword", pattern: Lexer.NA, categories: [FormKeyword] });
/** The logical and temporal operators: `not`, `and`, `or`, `implies`, `once`, `eventually`. */
export const OperatorKeyword = createToken({ name: "OperatorKeyword", pattern: Lexer.NA });
/** The constants `ok`, `error`, `true`, `false`, `null`. */
export const ConstantKeyword = createToken({ name: "ConstantKeyword", pattern: Lexer.NA });
/** A string literal, closed or not (the parser accepts both so that one missing quote costs one error). */
export const StringToken = createToken({ name: "StringToken", pattern: Lexer.NA });
/** A regular-expression literal `/…/flags`, closed or not (like strings). */
export const RegexToken = createToken({ name: "RegexToken", pattern: Lexer.NA });

export const WhiteSpace = createToken({ name: "WhiteSpace", pattern: /[ \t\r\n\f\v\u00a0\ufeff]+/, group: Lexer.SKIPPED });
// The doc comment must come before the line comment: Chevrotain takes the first pattern that matches.
export const DocComment = createToken({ name: "DocComment", pattern: /\/\/\/[^\r\n]*/, group: commentGroup });
export const LineComment = createToken({ name: "LineComment", pattern: /\/\/[^\r\n]*/, group: commentGroup });

export const Identifier = createToken({ name: "Identifier", pattern: /[A-Za-z_][A-Za-z0-9_]*/ });

function keyword(name: string, pattern: RegExp, categories: TokenType[] = []): TokenType {
  return createToken({ name, pattern, longer_alt: Identifier, categories: [Keyword, ...categories] });
}

export const PolicyKeyword = keyword("PolicyKeyword", /policy/);
export const PatternKeyword = keyword("PatternKeyword", /pattern/);
export const RuleKeyword = keyword("RuleKeyword", /rule/);
export const AbsKeyword = keyword("AbsKeyword", /abs/, [SimpleFormKeyword]);
export const PrecKeyword = keyword("PrecKeyword", /prec/, [SimpleFormKeyword]);
export const RespKeyword = keyword("RespKeyword", /resp/, [SimpleFormKeyword]);
export const BrespKeyword = keyword("BrespKeyword", /bresp/, [FormKeyword]);
export const RslvKeyword = keyword("RslvKeyword", /rslv/, [SimpleFormKeyword]);
export const UntilKeyword = keyword("UntilKeyword", /until/, [SimpleFormKeyword]);
export const AlwaysKeyword = keyword("AlwaysKeyword", /always|□/, [FormKeyword]);
export const NotKeyword = keyword("NotKeyword", /not|¬/, [OperatorKeyword]);
export const AndKeyword = keyword("AndKeyword", /and|∧/, [OperatorKeyword]);
export const OrKeyword = keyword("OrKeyword", /or|∨/, [OperatorKeyword]);
export const ImpliesKeyword = keyword("ImpliesKeyword", /implies|->|⇒|→/, [OperatorKeyword]);
export const OnceKeyword = keyword("OnceKeyword", /once|◇⁻/, [OperatorKeyword]);
export const EventuallyKeyword = keyword("EventuallyKeyword", /eventually|◇⁺/, [OperatorKeyword]);
export const InKeyword = keyword("InKeyword", /in/);
export const ActionKeyword = keyword("ActionKeyword", /action/);
export const StatusKeyword = keyword("StatusKeyword", /status/);
export const OutputKeyword = keyword("OutputKeyword", /output/);
export const OkKeyword = keyword("OkKeyword", /ok/, [ConstantKeyword]);
export const ErrorKeyword = keyword("ErrorKeyword", /error/, [ConstantKeyword]);
export const TrueKeyword = keyword("TrueKeyword", /true/, [ConstantKeyword]);
export const FalseKeyword = keyword("FalseKeyword", /false/, [ConstantKeyword]);
export const NullKeyword = keyword("NullKeyword", /null/, [ConstantKeyword]);

export const LeftBrace = createToken({ name: "LeftBrace", pattern: /\{/ });
export const RightBrace = createToken({ name: "RightBrace", pattern: /\}/ });
export const LeftParen = createToken({ name: "LeftParen", pattern: /\(/ });
export const RightParen = createToken({ name: "RightParen", pattern: /\)/ });
export const LeftBracket = createToken({ name: "LeftBracket", pattern: /\[/ });
export const RightBracket = createToken({ name: "RightBracket", pattern: /\]/ });
export const Comma = createToken({ name: "Comma", pattern: /,/ });
export const Colon = createToken({ name: "Colon", pattern: /:/ });
export const Equals = createToken({ name: "Equals", pattern: /=/ });
/** The comparisons of a key's numbers with a number (`amount > 100`); `=` is also one, before a number. */
export const LessEquals = createToken({ name: "LessEquals", pattern: /<=/ });
export const GreaterEquals = createToken({ name: "GreaterEquals", pattern: />=/ });
export const NotEquals = createToken({ name: "NotEquals", pattern: /!=/ });
export const LessThan = createToken({ name: "LessThan", pattern: /</ });
export const GreaterThan = createToken({ name: "GreaterThan", pattern: />/ });
export const Tilde = createToken({ name: "Tilde", pattern: /~/ });
export const Dot = createToken({ name: "Dot", pattern: /\./ });
export const Variable = createToken({ name: "Variable", pattern: /\$[A-Za-z_][A-Za-z0-9_]*/ });

/**
 * A regular expression `/…/flags` on one line, as in ECMAScript: a `/` inside `[…]` or escaped does
 * not close it, and it is never empty (`//` starts a comment, which the lexer tries first). The
 * flags are any letters; the checker says which it accepts. Its syntax is checked after lexing.
 */
export const RegexLiteral = createToken({
  name: "RegexLiteral",
  pattern: /\/(?:[^/\\\r\n[]|\\[^\r\n]|\[(?:[^\]\\\r\n]|\\[^\r\n])*\])+\/[A-Za-z0-9_]*/,
  categories: [RegexToken],
});
/** A regular expression the line ends before closing; reported as V0002 and otherwise read as one. */
export const UnterminatedRegex = createToken({
  name: "UnterminatedRegex",
  pattern: /\/(?:[^/\\\r\n[]|\\[^\r\n]?|\[(?:[^\]\\\r\n]|\\[^\r\n]?)*\]?)+/,
  categories: [RegexToken],
});

/**
 * A double-quoted string on one line. Escapes are checked (and decoded) after lexing, so that a bad
 * escape is reported precisely instead of breaking the string into stray characters.
 */
export const StringLiteral = createToken({ name: "StringLiteral", pattern: /"(?:[^"\\\r\n]|\\[^\r\n])*"/, categories: [StringToken] });
/** A string the line ends before closing; reported as V0002 and otherwise treated as a string. */
export const UnterminatedString = createToken({
  name: "UnterminatedString",
  pattern: /"(?:[^"\\\r\n]|\\[^\r\n]?)*/,
  categories: [StringToken],
});

/**
 * A list index in a key path (`argv.0`, `a.10.b`): digits right after a `.`, which the lexer tells
 * from a number by the token before it (a number never follows a `.`). Like a number it takes the
 * letters and digits that follow, so that `argv.01` or `argv.0x` is one token, reported as
 * malformed (V0005) by `literalDiagnostics`.
 */
export const ListIndex = createToken({
  name: "ListIndex",
  pattern: { exec: matchListIndex },
  line_breaks: false,
  start_chars_hint: ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9"],
});

const listIndexText = /[0-9][0-9A-Za-z_]*/y;

function matchListIndex(text: string, offset: number, matched: readonly IToken[]): RegExpExecArray | null {
  const previous = matched[matched.length - 1];
  if (previous === undefined || previous.tokenType !== Dot) return null;
  listIndexText.lastIndex = offset;
  return listIndexText.exec(text);
}

/** The largest list index a key path may write: the last index of the longest list JavaScript has. */
export const maximumListIndex = 2 ** 32 - 2;

/** The value of a list index as written, or undefined when it is not digits without leading zeros up to {@link maximumListIndex}. */
export function listIndexValue(image: string): number | undefined {
  if (!/^(?:0|[1-9][0-9]{0,9})$/.test(image)) return undefined;
  const value = Number(image);
  return value <= maximumListIndex ? value : undefined;
}

/**
 * A number. The pattern is deliberately looser than JSON (it also takes `01`, `1.`, `6fps`) so that a
 * malformed number lexes as one token and is reported once (V0005) instead of as a cascade.
 */
export const NumberLiteral = createToken({ name: "NumberLiteral", pattern: /-?(?:[0-9]|\.[0-9])(?:[eE][+-]|[0-9A-Za-z_.])*/ });

/**
 * Never produced by the lexer: the parser's input gets one of these in place of a sub-expression
 * nested more deeply than the parser will recurse (see `nesting.ts`). It parses as an expression
 * and becomes a `Missing` node.
 */
export const NestingLimit = createToken({ name: "NestingLimit", pattern: Lexer.NA });

/** Every token type in lexing priority order (categories and never-lexed tokens included). */
export const allTokens: readonly TokenType[] = [
  Keyword,
  FormKeyword,
  SimpleFormKeyword,
  OperatorKeyword,
  ConstantKeyword,
  StringToken,
  RegexToken,
  NestingLimit,
  WhiteSpace,
  DocComment,
  LineComment,
  PolicyKeyword,
  PatternKeyword,
  RuleKeyword,
  AbsKeyword,
  PrecKeyword,
  RespKeyword,
  BrespKeyword,
  RslvKeyword,
  UntilKeyword,
  AlwaysKeyword,
  NotKeyword,
  AndKeyword,
  OrKeyword,
  ImpliesKeyword,
  OnceKeyword,
  EventuallyKeyword,
  InKeyword,
  ActionKeyword,
  StatusKeyword,
  OutputKeyword,
  OkKeyword,
  ErrorKeyword,
  TrueKeyword,
  FalseKeyword,
  NullKeyword,
  Identifier,
  LeftBrace,
  RightBrace,
  LeftParen,
  RightParen,
  LeftBracket,
  RightBracket,
  Comma,
  Colon,
  LessEquals,
  GreaterEquals,
  NotEquals,
  LessThan,
  GreaterThan,
  Equals,
  Tilde,
  Dot,
  Variable,
  StringLiteral,
  UnterminatedString,
  RegexLiteral,
  UnterminatedRegex,
  ListIndex,
  NumberLiteral,
];

/** The reserved words of the language, in their ASCII spelling. */
export const keywords: readonly string[] = [
  "policy",
  "pattern",
  "rule",
  "abs",
  "prec",
  "resp",
  "bresp",
  "rslv",
  "until",
  "always",
  "not",
  "and",
  "or",
  "implies",
  "once",
  "eventually",
  "in",
  "action",
  "status",
  "output",
  "ok",
  "error",
  "true",
  "false",
  "null",
];

const keywordSet: ReadonlySet<string> = new Set(keywords);

export function isKeyword(text: string): boolean {
  return keywordSet.has(text);
}

/** How messages name each token type: the exact text in backticks, or a description. */
const tokenDescriptions: Readonly<Record<string, string>> = {
  PolicyKeyword: "`policy`",
  PatternKeyword: "`pattern`",
  RuleKeyword: "`rule`",
  AbsKeyword: "`abs`",
  PrecKeyword: "`prec`",
  RespKeyword: "`resp`",
  BrespKeyword: "`bresp`",
  RslvKeyword: "`rslv`",
  UntilKeyword: "`until`",
  AlwaysKeyword: "`always`",
  NotKeyword: "`not`",
  AndKeyword: "`and`",
  OrKeyword: "`or`",
  ImpliesKeyword: "`implies`",
  OnceKeyword: "`once`",
  EventuallyKeyword: "`eventually`",
  InKeyword: "`in`",
  ActionKeyword: "`action`",
  StatusKeyword: "`status`",
  OutputKeyword: "`output`",
  OkKeyword: "`ok`",
  ErrorKeyword: "`error`",
  TrueKeyword: "`true`",
  FalseKeyword: "`false`",
  NullKeyword: "`null`",
  Identifier: "a name",
  LeftBrace: "`{`",
  RightBrace: "`}`",
  LeftParen: "`(`",
  RightParen: "`)`",
  LeftBracket: "`[`",
  RightBracket: "`]`",
  Comma: "`,`",
  Colon: "`:`",
  Equals: "`=`",
  Tilde: "`~`",
  Dot: "`.`",
  Variable: "a variable such as `$x`",
  StringToken: "a string",
  StringLiteral: "a string",
  UnterminatedString: "a string",
  NumberLiteral: "a number",
  ListIndex: "a list index",
  RegexToken: "a regular expression such as `/yes/i`",
  RegexLiteral: "a regular expression",
  UnterminatedRegex: "a regular expression",
  SimpleFormKeyword: "a form (`abs`, `prec`, `resp`, `rslv` or `until`)",
  FormKeyword: "a form",
  EOF: "end of file",
};

/** A human description of a token type for messages ("`)`", "a name", "end of file"). */
export function describeTokenType(tokenType: TokenType): string {
  return tokenDescriptions[tokenType.name] ?? `\`${tokenType.name}\``;
}

/** A human description of one actual token: its text in backticks, shortened if long. */
export function describeToken(token: IToken): string {
  if (token.tokenType.name === "EOF") return "end of file";
  const image = token.image.length > 30 ? `${token.image.slice(0, 27)}…` : token.image;
  return `\`${image}\``;
}

export const vigilLexer = new Lexer(allTokens as TokenType[], {
  positionTracking: "onlyOffset",
  ensureOptimizations: true,
});

/** Splits a text into tokens; comments land in `groups.comments`, lexing errors in `errors`. */
export function tokenize(text: string): ILexingResult {
  return vigilLexer.tokenize(text);
}
