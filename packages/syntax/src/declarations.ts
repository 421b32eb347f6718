import type { IToken } from "chevrotain";
import { tokenMatcher } from "./chevrotain.js";
import { diagnostic, type Diagnostic, type LineIndex } from "@vigil/diagnostics";
import { tokenEnd } from "./cst-access.js";
import { isScopeWord } from "./text-to-cst.js";
import {
  describeToken,
  ErrorKeyword,
  Identifier,
  LeftBrace,
  NestingLimit,
  OkKeyword,
  PatternKeyword,
  PolicyKeyword,
  NumberLiteral,
  RegexToken,
  RightBrace,
  RightParen,
  RuleKeyword,
  StringToken,
  Variable,
} from "./tokens.js";

/**
 * The file's outline, found before any expression is parsed: `policy NAME {`, then declarations,
 * then `}`. Because `policy`, `pattern` and `rule` are reserved words that occur nowhere else, they
 * mark where every declaration starts, exactly; each declaration is then parsed on its own, so a
 * syntax error is confined to its declaration and every other one is still parsed and checked.
 */

export interface PolicyOutline {
  readonly keyword: IToken;
  readonly name?: IToken;
  /** The tokens of each `pattern`/`rule` declaration, each starting with its keyword. */
  readonly items: readonly (readonly IToken[])[];
  /** Offsets from the `policy` keyword to just past its `}` (or its last token when unclosed). */
  readonly start: number;
  readonly end: number;
}

export interface FileOutline {
  readonly policies: readonly PolicyOutline[];
  readonly diagnostics: readonly Diagnostic[];
}

const isPolicy = (token: IToken) => tokenMatcher(token, PolicyKeyword);
const isItemKeyword = (token: IToken) => tokenMatcher(token, PatternKeyword) || tokenMatcher(token, RuleKeyword);

export function outlineFile(tokens: readonly IToken[], lines: LineIndex): FileOutline {
  const diagnostics: Diagnostic[] = [];
  const policies: PolicyOutline[] = [];
  const stray = (run: readonly IToken[], help: string) => {
    const first = run[0];
    const last = run[run.length - 1];
    if (first === undefined || last === undefined) return;
    diagnostics.push(
      diagnostic("V0001", `expected \`policy\`, found ${describeToken(first)}`, { span: lines.span(first.startOffset, tokenEnd(last)), help }),
    );
  };

  let index = 0;
  const before: IToken[] = [];
  while (index < tokens.length && !isPolicy(tokens[index]!)) before.push(tokens[index++]!);
  stray(before, "every pattern and rule belongs inside a `policy NAME { … }` block");

  while (index < tokens.length) {
    const chunk: IToken[] = [tokens[index++]!];
    while (index < tokens.length && !isPolicy(tokens[index]!)) chunk.push(tokens[index++]!);
    const { outline, after } = outlinePolicy(chunk, lines, diagnostics);
    policies.push(outline);
    stray(after, "a policy ends at its closing `}`; start the next one with `policy NAME {`");
  }
  return { policies, diagnostics };
}

/** One policy from its `policy` keyword up to the next one (exclusive). */
function outlinePolicy(chunk: readonly IToken[], lines: LineIndex, diagnostics: Diagnostic[]): { outline: PolicyOutline; after: IToken[] } {
  const keyword = chunk[0]!;
  const header: IToken[] = [];
  let index = 1;
  // The header ends at the first declaration keyword, or at a `}` that balances the policy's `{`
  // (a policy with no declarations); the brace depth is carried along so that this stays linear.
  let headerDepth = 0;
  while (index < chunk.length && !isItemKeyword(chunk[index]!)) {
    const token = chunk[index]!;
    if (tokenMatcher(token, RightBrace) && headerDepth === 1) break;
    if (tokenMatcher(token, LeftBrace)) headerDepth++;
    else if (tokenMatcher(token, RightBrace)) headerDepth--;
    header.push(token);
    index++;
  }

  const name = header[0] !== undefined && tokenMatcher(header[0], Identifier) ? header[0] : undefined;
  const open = header.find((token) => tokenMatcher(token, LeftBrace));
  const endOfKeyword = lines.span(tokenEnd(keyword), tokenEnd(keyword));
  if (name === undefined) {
    const found = header[0];
    diagnostics.push(
      diagnostic("V0001", `expected a name after \`policy\`, found ${found ? describeToken(found) : "the end of the policy"}`, {
        span: found ? lines.span(found.startOffset, tokenEnd(found)) : endOfKeyword,
        help: "a policy is written `policy NAME { … }`",
      }),
    );
  }
  if (open === undefined) {
    const at = tokenEnd(name ?? keyword);
    diagnostics.push(
      diagnostic("V0001", `expected \`{\` after the policy's name`, {
        span: lines.span(at, at),
        fix: { title: "insert `{`", edits: [{ span: lines.span(at, at), newText: " {" }] },
      }),
    );
  }
  const unexpected = header.filter((token) => token !== name && token !== open);
  if (unexpected.length > 0) {
    const first = unexpected[0]!;
    diagnostics.push(
      diagnostic("V0001", `expected \`pattern\` or \`rule\` in a policy, found ${describeToken(first)}`, {
        span: lines.span(first.startOffset, tokenEnd(unexpected[unexpected.length - 1]!)),
        help: "a policy holds `pattern NAME = …` and `rule NAME: …` declarations",
      }),
    );
  }

  // The closing brace: the first `}` that balances the policy's `{`. When none does but the policy
  // ends with a `}`, an inner `{` is the one left open; that `}` still closes the policy, and the
  // declaration with the open `{` reports it.
  const body = chunk.slice(index);
  let close = -1;
  let depth = 1;
  for (let k = 0; k < body.length; k++) {
    if (tokenMatcher(body[k]!, LeftBrace)) depth++;
    else if (tokenMatcher(body[k]!, RightBrace) && --depth === 0) {
      close = k;
      break;
    }
  }
  if (close === -1 && body.length > 0 && tokenMatcher(body[body.length - 1]!, RightBrace)) close = body.length - 1;
  const inside = close === -1 ? body : body.slice(0, close);
  const after = close === -1 ? [] : body.slice(close + 1);
  const last = close === -1 ? (inside[inside.length - 1] ?? header[header.length - 1] ?? keyword) : body[close]!;
  if (close === -1) {
    const at = tokenEnd(last);
    diagnostics.push(
      diagnostic("V0001", `expected \`}\` to close the policy${name ? ` \`${name.image}\`` : ""}`, {
        span: lines.span(at, at),
        fix: { title: "insert `}`", edits: [{ span: lines.span(at, at), newText: "\n}" }] },
      }),
    );
  }

  const items: IToken[][] = [];
  for (const token of inside) {
    if (isItemKeyword(token) || items.length === 0) items.push([]);
    items[items.length - 1]!.push(token);
  }
  return { outline: { keyword, ...(name ? { name } : {}), items, start: keyword.startOffset, end: tokenEnd(last) }, after };
}

/** A rule's tokens split into those of `rule NAME: φ` and those of the response after it. */
export interface RuleTokens {
  readonly declaration: IToken[];
  /** `WORD`, `WORD "…"` or `"…"` (or, in error, more strings); empty when the rule has no response. */
  readonly response: IToken[];
}

/** The tokens that can end a statement: the last token of an operand list or of an expression. */
const statementEnds = [RightParen, RightBrace, Identifier, StringToken, RegexToken, Variable, NumberLiteral, OkKeyword, ErrorKeyword, NestingLimit];
const endsStatement = (token: IToken | undefined) => token !== undefined && statementEnds.some((type) => tokenMatcher(token, type));

/**
 * Finds the response at the end of a rule's tokens. The response words (`block`, `warn`, `ask`,
 * `halt`, `quarantine`) are not reserved (a pattern, an action or a key may still be named `block`), so they are
 * recognized by position: an identifier, and a string after it, that follow a token that can end a
 * statement. No expression has a name or a string right after such a token, so the split is exact
 * on every valid rule; on a broken one it keeps the response out of the parser's recovery, so that
 * a mistake in the statement is still reported once. A string alone in that place (a remediation
 * whose word is missing) is split off too, to be reported with a fix. Any identifier is taken, so
 * that a word that is not a response (`deny`) gets a precise diagnostic.
 */
export function splitResponse(tokens: readonly IToken[]): RuleTokens {
  const all = [...tokens];
  const none = { declaration: all, response: [] };
  if (all.length === 0 || !tokenMatcher(all[0]!, RuleKeyword)) return none;
  // The run of strings at the end, and the word before it if there is one.
  let messages = all.length;
  while (messages > 0 && tokenMatcher(all[messages - 1]!, StringToken)) messages--;
  const candidates: number[] = [];
  if (messages > 0 && tokenMatcher(all[messages - 1]!, Identifier)) candidates.push(messages - 1);
  for (let start = messages; start < all.length; start++) candidates.push(start);
  // Longest first; `rule NAME :` and a form keyword come before any response. The word right after
  // the scope's word (`after deploy`) is the scope's pattern, not a response.
  const scope = scopeStart(all);
  const start = candidates.find((index) => index >= 4 && endsStatement(all[index - 1]) && index - 1 !== scope);
  return start === undefined ? none : { declaration: all.slice(0, start), response: all.slice(start) };
}

/** Tokens that open and close a nesting. */
const openers = new Set(["LeftParen", "LeftBrace", "LeftBracket"]);
const closers = new Set(["RightParen", "RightBrace", "RightBracket"]);

/**
 * Splits a rule's statement (its response already split off) from its scope. The scope's words
 * `after`, `before` and `between` are not reserved, so a scope is found by position, like the
 * response: the first of them outside any parentheses, braces or brackets, past the form keyword,
 * right after a token that can end a statement. No expression has a name right after such a token,
 * so the split is exact on every valid rule.
 */
export function splitScope(tokens: readonly IToken[]): { readonly statement: IToken[]; readonly scope: IToken[] } {
  const start = scopeStart(tokens);
  return start === undefined ? { statement: [...tokens], scope: [] } : { statement: tokens.slice(0, start), scope: tokens.slice(start) };
}

/** Where a rule's scope starts (its word), if it has one. Only rules have scopes: a pattern's `after` is an error in the pattern. */
function scopeStart(tokens: readonly IToken[]): number | undefined {
  if (tokens.length === 0 || !tokenMatcher(tokens[0]!, RuleKeyword)) return undefined;
  let depth = 0;
  for (let index = 0; index < tokens.length; index++) {
    const token = tokens[index]!;
    const name = token.tokenType.name;
    if (openers.has(name)) depth++;
    else if (closers.has(name)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && index >= 4 && isScopeWord(token) && endsStatement(tokens[index - 1])) return index;
  }
  return undefined;
}
