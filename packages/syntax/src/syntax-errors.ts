import type { ILexingError, IRecognitionException, IToken } from "chevrotain";
import { diagnostic, type Diagnostic, type Fix, type LineIndex } from "@vigil/diagnostics";
import { isRealToken, tokenEnd } from "./cst-access.js";
import { decodeString, isJsonNumber, numberHelp } from "./literals.js";
import { looksLikeDuration } from "./duration.js";
import { readErrorPayload } from "./text-to-cst.js";
import { describeToken, describeTokenType, isKeyword, listIndexValue, maximumListIndex } from "./tokens.js";

/**
 * Turns what the lexer and the parser report into diagnostics (V0001–V0005): one message per
 * problem, worded for the person who wrote the policy, with the span of the offending text and a
 * fix when the repair is mechanical (a missing `)`, `:` or `,`).
 */

/** Where, in words, each parser rule is ("in a rule", "in a set of values"). */
const ruleContexts: Readonly<Record<string, string>> = {
  item: "in a policy",
  patternDecl: "in a pattern declaration",
  ruleDecl: "in a rule declaration",
  statement: "in a statement",
  bound: "in the brackets of `bresp`, `limit`, `once` or `eventually`",
  operandList: "in the patterns of a form",
  expr: "in an expression",
  orExpr: "in an expression",
  andExpr: "in an expression",
  unary: "in an expression",
  primary: "in an expression",
  actionIn: "in a set of actions",
  symbol: "in a set of actions",
  statusIs: "in a status condition",
  keyAtom: "in a condition",
  keyPath: "in an argument name",
  keySegment: "in an argument name",
  valueSet: "in a set of values",
  value: "in a set of values",
};

/** What an alternative-less failure in each rule was looking for. */
const ruleExpectations: Readonly<Record<string, string>> = {
  item: "`pattern` or `rule`",
  statement: "a form (`abs`, `prec`, `resp`, `bresp`, `rslv`, `until`, `always` or `limit`)",
  bound: "a positive integer",
  primary: "a condition such as `action in {…}`, a pattern name or `(`",
  symbol: "an action name",
  statusIs: "`ok` or `error`",
  keyAtom: "`in {…}`, `~ \"wildcard\"`, `= $variable`, a comparison with a number (`< 5`, `>= 100`), `matches /regex/` or `contains $variable`",
  keySegment: "an argument name",
  value: "a value (a string, a number, `true`, `false` or `null`)",
};

/** Punctuation whose absence the parser can repair by inserting it. */
const insertable: Readonly<Record<string, string>> = {
  RightParen: ")",
  RightBrace: "}",
  RightBracket: "]",
  Colon: ":",
  Equals: "=",
  LeftBrace: "{",
};

/** The logical operators of C-like languages, as Vigil writes them. */
const cStyleOperators: Readonly<Record<string, string>> = { "&&": "and", "||": "or", "!": "not", "&": "and", "|": "or" };

/** A word replacing operator characters, with the spaces it needs to stay a separate word. */
function padded(word: string, text: string, start: number, end: number): string {
  const before = start > 0 && !/\s/.test(text[start - 1]!) ? " " : "";
  const after = end < text.length && !/\s/.test(text[end]!) ? " " : "";
  return `${before}${word}${after}`;
}

/** Whether an offset of `unread` (ascending) lies in `[start, end)`. */
function unreadWithin(unread: readonly number[], start: number, end: number): boolean {
  let low = 0;
  let high = unread.length;
  while (low < high) {
    const middle = (low + high) >> 1;
    if (unread[middle]! < start) low = middle + 1;
    else high = middle;
  }
  return low < unread.length && unread[low]! < end;
}

/** The offset of the end of the line an offset is on. */
function lineEnd(text: string, offset: number): number {
  const newline = text.indexOf("\n", offset);
  return newline === -1 ? text.length : newline;
}

export function lexingErrorsToDiagnostics(errors: readonly ILexingError[], text: string, lines: LineIndex): Diagnostic[] {
  return errors.map((error) => {
    const character = text.slice(error.offset, error.offset + Math.max(1, error.length));
    const span = lines.span(error.offset, error.offset + Math.max(1, error.length));
    const shown = character.length > 20 ? `${character.slice(0, 17)}…` : character;
    let help = "remove it, or put it inside a string";
    if (character.startsWith("'")) help = "strings are written with double quotes: `\"…\"`";
    else if (character.startsWith("&") || character.startsWith("|") || character.startsWith("!")) {
      help = "the logical operators are written `and`, `or` and `not`";
    }
    const operator = cStyleOperators[character];
    const fix: Fix | undefined = operator === undefined ? undefined : { title: `write \`${operator}\``, edits: [{ span, newText: padded(operator, text, span.start, span.end) }] };
    return diagnostic("V0003", `unexpected character${character.length > 1 ? "s" : ""} \`${shown}\``, { span, help, ...(fix ? { fix } : {}) });
  });
}

/** The literals a line can end inside of (V0002): what they are, what closes them, and how to fix one. */
const unclosedLiterals: Readonly<Record<string, { what: string; close: string; help: string }>> = {
  UnterminatedString: { what: "string", close: '"', help: "add the closing `\"`; a string cannot span lines (write a line break as `\\n`)" },
  UnterminatedRegex: { what: "regular expression", close: "/", help: "add the closing `/` (and any flags); a regular expression cannot span lines" },
};

/** Whether a token is one a duration may follow: the `[` of a bound, or its word `per`. */
function durationPlace(previous: IToken | undefined): boolean {
  return previous !== undefined && (previous.tokenType.name === "LeftBracket" || (previous.tokenType.name === "Identifier" && previous.image === "per"));
}

/** Reports malformed literals the lexer accepted as one token: unclosed strings and regular expressions, bad escapes, bad numbers. */
export function literalDiagnostics(tokens: readonly IToken[], lines: LineIndex): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  tokens.forEach((token, index) => {
    const span = lines.span(token.startOffset, tokenEnd(token));
    switch (token.tokenType.name) {
      case "UnterminatedString":
      case "UnterminatedRegex": {
        const { what, close, help } = unclosedLiterals[token.tokenType.name]!;
        const end = lines.span(tokenEnd(token), tokenEnd(token));
        diagnostics.push(
          diagnostic("V0002", `this ${what} is not closed before the end of the line`, {
            span,
            help,
            fix: { title: `close the ${what}`, edits: [{ span: end, newText: close }] },
          }),
        );
        break;
      }
      case "StringLiteral": {
        const decoded = decodeString(token.image, true);
        if (decoded.problem !== undefined) {
          diagnostics.push(diagnostic("V0004", decoded.problem, { span, ...(decoded.help ? { help: decoded.help } : {}) }));
        }
        break;
      }
      case "NumberLiteral":
        // A duration (`5m`) is a literal of its own where a bound is written: right after `[` or `per`.
        if (looksLikeDuration(token.image) && durationPlace(tokens[index - 1])) return;
        if (!isJsonNumber(token.image)) {
          diagnostics.push(diagnostic("V0005", `\`${token.image}\` is not a valid number`, { span, help: numberHelp(token.image) }));
        }
        break;
      case "ListIndex":
        if (listIndexValue(token.image) === undefined) {
          // Leading zeros have one meaning: the fix drops them.
          const stripped = /^0+[0-9]+$/.test(token.image) ? token.image.replace(/^0+(?=[0-9])/, "") : undefined;
          const fix = stripped !== undefined && listIndexValue(stripped) !== undefined ? { fix: { title: `write \`${stripped}\``, edits: [{ span, newText: stripped }] } } : {};
          diagnostics.push(diagnostic("V0005", `\`${token.image}\` is not a valid list index`, { span, help: listIndexHelp(token.image), ...fix }));
        }
        break;
      default:
        break;
    }
  });
  return diagnostics;
}

/**
 * The parser's errors as diagnostics. `unread` holds the offsets, ascending, where the lexer could
 * not read the text (V0003): the parser misreads such a gap, so no punctuation is offered for it.
 */
export function parseErrorsToDiagnostics(errors: readonly IRecognitionException[], text: string, lines: LineIndex, unread: readonly number[] = []): Diagnostic[] {
  const diagnostics: Diagnostic[] = [];
  const seenOffsets = new Set<number>();
  for (const error of errors) {
    const payload = readErrorPayload(error.message);
    const found = error.token;
    const previous = (error as { previousToken?: IToken }).previousToken;
    const atEnd = !isRealToken(found) || found.tokenType.name === "EOF";
    // Point at the offending token; at the end of the file, just after the last real token.
    const start = atEnd ? (previous && isRealToken(previous) ? tokenEnd(previous) : text.length) : found.startOffset;
    const end = atEnd ? start : tokenEnd(found);
    // Recovery can fail several times at one token; one message per place is enough.
    if (seenOffsets.has(start)) continue;
    seenOffsets.add(start);
    const span = lines.span(start, end);
    const foundText = atEnd ? "the end of the declaration" : describeToken(found);
    const rule = payload?.rule ?? "item";
    const where = ruleContexts[rule] ?? "";
    let expected: string;
    let fix: Fix | undefined;
    let help: string | undefined;
    if (payload?.kind === "mismatch" && payload.expected !== undefined) {
      expected = describeTokenType({ name: payload.expected } as IToken["tokenType"]);
      const insertion = insertable[payload.expected];
      // After a string left open, the insertion would land inside it: closing the string (V0002's
      // fix) is the repair, and may well be all that is missing.
      // Nor when characters the lexer could not read lie in the gap: their own fix comes first.
      if (
        insertion !== undefined &&
        previous !== undefined &&
        isRealToken(previous) &&
        previous.tokenType.name !== "UnterminatedString" &&
        previous.tokenType.name !== "UnterminatedRegex" &&
        !unreadWithin(unread, tokenEnd(previous), atEnd ? lineEnd(text, tokenEnd(previous)) : found.startOffset)
      ) {
        const at = lines.span(tokenEnd(previous), tokenEnd(previous));
        fix = { title: `insert \`${insertion}\``, edits: [{ span: at, newText: insertion }] };
      }
      if (payload.expected === "Variable" && !atEnd && previous !== undefined && isRealToken(previous) && isValueToken(found)) {
        help = "`=` binds a variable; to compare with a value, write `KEY in {value}`";
        fix = {
          title: `write \`in {${found.image}}\``,
          edits: [
            { span: lines.span(previous.startOffset, tokenEnd(previous)), newText: "in {" },
            { span: lines.span(tokenEnd(found), tokenEnd(found)), newText: "}" },
          ],
        };
      }
      if (payload.expected === "NumberLiteral" && !atEnd && previous !== undefined && comparisonTokens.includes(previous.tokenType.name) && /^"-?[0-9][0-9.eE+-]*"$/.test(found.image)) {
        // `amount > "100"`: a comparison takes a number, which it also finds in strings that spell one.
        help = "a comparison is written with a number, and also holds on strings that spell one (`\"150.00\"`)";
        fix = { title: `write \`${found.image.slice(1, -1)}\``, edits: [{ span, newText: found.image.slice(1, -1) }] };
      }
      if (payload.expected === "Identifier" && !atEnd && isKeyword(found.image)) {
        help = `\`${found.image}\` is a reserved word and cannot be a name; choose another name`;
      }
    } else if (payload?.kind === "notAllInputParsed") {
      expected = "the end of the declaration";
      help = "a declaration ends where the next `pattern`, `rule` or the policy's `}` begins; is an operator such as `and` missing?";
    } else if (rule === "keyAtom" && !atEnd && previous !== undefined && previous.tokenType.name === "Equals" && isValueToken(found)) {
      // `mode = "fast"`: `=` takes a variable or a number; a value of another kind goes in a set.
      expected = "a variable such as `$x`, or a number";
      help = "`=` binds a variable, or compares numbers (`amount = 100`); to compare with another value, write `KEY in {value}`";
      fix = {
        title: `write \`in {${found.image}}\``,
        edits: [
          { span: lines.span(previous.startOffset, tokenEnd(previous)), newText: "in {" },
          { span: lines.span(tokenEnd(found), tokenEnd(found)), newText: "}" },
        ],
      };
    } else {
      expected = ruleExpectations[rule] ?? "something else";
      if (rule === "primary" && !atEnd && found.tokenType.name === "Variable") {
        help = "a variable is written as the value of an argument: `KEY = $x`";
      } else if (rule === "statusIs" && !atEnd) {
        help = "a status is `ok` or `error`";
      } else if (rule === "keyAtom" && !atEnd && found.tokenType.name === "Equals") {
        help = "`=` binds a variable or compares numbers; to compare with another value, write `KEY in {value}`";
      }
    }
    diagnostics.push(
      diagnostic("V0001", `expected ${expected} ${where}, found ${foundText}`.replace(/\s+,/, ","), {
        span,
        ...(help !== undefined ? { help } : {}),
        ...(fix !== undefined ? { fix } : {}),
      }),
    );
  }
  return diagnostics;
}

/** The tokens of a comparison's operator (`=` is one only before a number). */
const comparisonTokens: readonly string[] = ["LessThan", "LessEquals", "GreaterThan", "GreaterEquals", "NotEquals"];

function isValueToken(token: IToken): boolean {
  return ["StringLiteral", "NumberLiteral", "TrueKeyword", "FalseKeyword", "NullKeyword", "OkKeyword", "ErrorKeyword"].includes(token.tokenType.name);
}

/** Advice for a malformed list index in a key path (V0005). */
function listIndexHelp(text: string): string {
  if (/^[0-9]+$/.test(text)) {
    if (/^0[0-9]/.test(text)) return `a list index is written without leading zeros: \`${text.replace(/^0+(?=[0-9])/, "")}\``;
    return `a list index is at most ${maximumListIndex}`;
  }
  return "a list index is digits alone (`argv.0`); to name a field that starts with a digit, quote it: `\"" + text + "\"`";
}
