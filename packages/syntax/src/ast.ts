import type { Span } from "@vigil/diagnostics";
import { isKeyword } from "./tokens.js";

/**
 * The abstract syntax of a `.vigil` file (Figure 4 of the Vigil paper, plus the documented
 * extensions). Every node carries the span of the source it was built from. Nodes the parser had
 * to invent while recovering from a syntax error are marked `recovered: true`; later stages treat
 * them as missing and report nothing further about them.
 */

export interface SourceFile {
  readonly kind: "SourceFile";
  readonly policies: readonly PolicyDecl[];
  /** Every `//` and `///` comment of the file, in source order (the printer re-inserts them). */
  readonly comments: readonly Comment[];
  readonly span: Span;
}

export interface Comment {
  /** `line` for `// …`, `doc` for `/// …`. */
  readonly kind: "line" | "doc";
  /** The comment's full text as written, including the leading slashes. */
  readonly text: string;
  readonly span: Span;
}

/** The natural-language requirement a run of `///` comments attaches to the next declaration. */
export interface DocText {
  /** The lines with their `///` and one following space removed, joined by "\n". */
  readonly text: string;
  readonly span: Span;
}

export interface Identifier {
  readonly text: string;
  readonly span: Span;
  readonly recovered?: boolean;
}

export interface PolicyDecl {
  readonly kind: "PolicyDecl";
  readonly name: Identifier;
  readonly doc?: DocText;
  readonly items: readonly Item[];
  readonly span: Span;
}

export type Item = PatternDecl | RuleDecl;

/** `pattern NAME = ψ` */
export interface PatternDecl {
  readonly kind: "PatternDecl";
  readonly name: Identifier;
  readonly body: Expr;
  readonly doc?: DocText;
  readonly span: Span;
}

/** `rule NAME: φ`, optionally followed by a response and a remediation: `rule NAME: φ warn "…"`. */
export interface RuleDecl {
  readonly kind: "RuleDecl";
  readonly name: Identifier;
  readonly statement: Statement;
  /** The response as written; absent when none is (the rule then blocks). */
  readonly response?: ResponseWord;
  /** The message that tells an agent how to comply, as written after the response. */
  readonly remediation?: StringLiteral;
  readonly doc?: DocText;
  readonly span: Span;
}

/**
 * What enforcement does with a violation of a rule: `block` the call (the default), `warn` (let it
 * through and report it), `ask` a person to decide, or contain the run: `halt` it (that call and
 * every later one are refused) or `quarantine` it (from then on only the calls the policy's
 * `read_only` pattern matches may run). A response changes no verdict.
 */
export type RuleResponse = "block" | "warn" | "ask" | "halt" | "quarantine";

/** The responses, in the order the documentation lists them. */
export const ruleResponses: readonly RuleResponse[] = ["block", "warn", "ask", "halt", "quarantine"];

export interface ResponseWord {
  readonly value: RuleResponse;
  readonly span: Span;
}

export type Form = "abs" | "prec" | "resp" | "bresp" | "rslv" | "until" | "always" | "limit";

/**
 * One statement φ: a form applied to its operands. `abs` has one operand, `prec`, `resp`,
 * `bresp` and `rslv` two (ψ, ψ'), `until` three (ψ, ψ', ψb), and `always` one (the body Θ).
 * The parser accepts any number of operands in the parentheses so that the checker can report
 * a wrong count with a precise message.
 */
export interface Statement {
  readonly kind: "Statement";
  readonly form: Form;
  /** The span of the form's keyword (`prec`, `always`, `□`, …). */
  readonly formSpan: Span;
  /** The `[…]` of `bresp[N]`, `bresp[5m]` and `limit[N per 1m]`; absent for every other form, and when not written. */
  readonly bound?: Bound;
  readonly operands: readonly Expr[];
  /** Where in the run the statement is judged (`after ψ`, …); absent: the whole run. */
  readonly scope?: Scope;
  readonly span: Span;
  readonly recovered?: boolean;
}

/** The scope words, contextual as `matches` is: a statement may end with one. */
export type ScopeKind = "after" | "before" | "between" | "afterUntil";

/**
 * Dwyer's scopes: `after ψ` (from the first event matching ψ on), `before ψ` (up to the first event
 * matching ψ), `between ψ and ψ'` (each stretch from a ψ to the next ψ'), `after ψ until ψ'` (the
 * same, a stretch still open at the end judged too).
 */
export interface Scope {
  readonly kind: ScopeKind;
  /** The span of the scope's first word (`after`, `before`, `between`). */
  readonly wordSpan: Span;
  /** ψ: the pattern that opens the scope (for `before`, the one that ends it). */
  readonly open: Expr;
  /** ψ': the pattern that closes each stretch (`between`, `after … until`). */
  readonly close?: Expr;
  readonly span: Span;
}

/**
 * What is written between the brackets of `bresp[…]`, `limit[…]`, `once[…]` and `eventually[…]`:
 * a count or a duration (`3`, `5m`), and for a limit, the key whose numbers are summed (`of amount`)
 * and the window (`per 1d`). Which parts each place allows is the checker's business.
 */
export interface Bound {
  readonly value: BoundLiteral;
  /** `of KEY`: a limit on the sum of the numbers at KEY rather than on a count of events. */
  readonly of?: KeyPath;
  /** `per D`: the length of the sliding window a limit counts in. */
  readonly per?: BoundLiteral;
  /** The brackets and what they hold. */
  readonly span: Span;
}

export interface BoundLiteral {
  /** The literal as written. */
  readonly text: string;
  /** The parsed number when `text` is a JSON number. */
  readonly value?: number;
  /** The milliseconds when `text` is a duration (`500ms`, `30s`, `5m`, `2h`, `1d`). */
  readonly duration?: number;
  readonly span: Span;
}

/**
 * Expressions: patterns ψ and temporal bodies Θ share one syntax. Which nodes are allowed where is
 * the checker's business: `once`, `eventually` and `implies` only under `always`, variables only
 * in patterns of binary forms, and so on.
 */
export type Expr = AndExpr | OrExpr | NotExpr | ImpliesExpr | OnceExpr | EventuallyExpr | Atom | PatternRef | MissingExpr;

/** `ψ and ψ'` (also `∧`); n-ary, flattened, at least two operands. */
export interface AndExpr {
  readonly kind: "And";
  readonly operands: readonly Expr[];
  /** Written in parentheses (the span is inside them). */
  readonly parenthesized?: true;
  readonly span: Span;
}

/** `ψ or ψ'` (also `∨`); an extension, defined by De Morgan. n-ary, flattened. */
export interface OrExpr {
  readonly kind: "Or";
  readonly operands: readonly Expr[];
  /** Written in parentheses (the span is inside them). */
  readonly parenthesized?: true;
  readonly span: Span;
}

/** `not Θ` (also `¬`). */
export interface NotExpr {
  readonly kind: "Not";
  readonly operand: Expr;
  readonly span: Span;
}

/** `Θ implies Θ'` (also `->`, `⇒`, `→`); an extension, sugar for `not (Θ and not Θ')`. Right-associative. */
export interface ImpliesExpr {
  readonly kind: "Implies";
  readonly left: Expr;
  readonly right: Expr;
  readonly span: Span;
}

/** `once Θ` (also `◇⁻`): Θ held at some strictly earlier event; `once[5m] Θ`: one at most that long before. */
export interface OnceExpr {
  readonly kind: "Once";
  readonly window?: Bound;
  readonly operand: Expr;
  readonly span: Span;
}

/** `eventually Θ` (also `◇⁺`): Θ holds at some strictly later event; `eventually[5m] Θ`: one at most that long after. */
export interface EventuallyExpr {
  readonly kind: "Eventually";
  readonly window?: Bound;
  readonly operand: Expr;
  readonly span: Span;
}

/** A reference to a `pattern` declared in the same policy. */
export interface PatternRef {
  readonly kind: "PatternRef";
  readonly name: Identifier;
  readonly span: Span;
}

/** Stands where the parser expected an expression and found none. */
export interface MissingExpr {
  readonly kind: "Missing";
  readonly span: Span;
  readonly recovered: true;
}

export type Atom = ActionIn | KeyIn | KeyMatch | KeyBind | KeyRegex | KeyContains | KeyCompare | KeyCount | StatusIs | OutputMatch;

/**
 * `every(KEY) …` or `some(KEY) …` before a condition on a key: `every` holds when the key has a
 * value and every value under it satisfies the condition (each element of a list, each list a
 * path reaches); `some`, as a condition written without a word, when some value does.
 */
export interface Quantifier {
  readonly kind: "every" | "some";
  readonly span: Span;
}

/** A comparison of numbers: `<`, `<=`, `>`, `>=`, `=` (before a number), `!=`. */
export type ComparisonOperator = "<" | "<=" | ">" | ">=" | "=" | "!=";

/** The number a comparison compares with, as written; not `valid` when it is not a JSON number (reported, V0005). */
export interface NumberOperand {
  readonly text: string;
  readonly valid: boolean;
  readonly span: Span;
}

/** `KEY > 100`: a value under the key is a number (or a string spelling one) that compares so with the number. */
export interface KeyCompare {
  readonly kind: "KeyCompare";
  readonly key: KeyPath;
  readonly quantifier?: Quantifier;
  readonly operator: ComparisonOperator;
  readonly operatorSpan: Span;
  readonly number: NumberOperand;
  readonly span: Span;
}

/** `count(KEY) <= 5`: the number of values under the key (a list's elements) compares so with the number. */
export interface KeyCount {
  readonly kind: "KeyCount";
  readonly key: KeyPath;
  /** The span of the word `count`. */
  readonly countSpan: Span;
  readonly operator: ComparisonOperator;
  readonly operatorSpan: Span;
  readonly number: NumberOperand;
  readonly span: Span;
}

/** `action in {a, "b", …}`: a(e) ∈ α. */
export interface ActionIn {
  readonly kind: "ActionIn";
  readonly actions: readonly SymbolLiteral[];
  readonly span: Span;
}

/** `KEY in {v, …}`: e[k] ∈ S. */
export interface KeyIn {
  readonly kind: "KeyIn";
  readonly key: KeyPath;
  readonly quantifier?: Quantifier;
  readonly values: readonly ValueLiteral[];
  readonly span: Span;
}

/** `KEY ~ "wildcard"`: e[k] ≈ p. */
export interface KeyMatch {
  readonly kind: "KeyMatch";
  readonly key: KeyPath;
  readonly quantifier?: Quantifier;
  readonly pattern: StringLiteral;
  readonly span: Span;
}

/** `KEY = $x`: pins the argument to the variable x. */
export interface KeyBind {
  readonly kind: "KeyBind";
  readonly key: KeyPath;
  readonly variable: Variable;
  readonly span: Span;
}

/** `KEY matches /regex/flags`: some string value under the key contains a match of the regular expression. */
export interface KeyRegex {
  readonly kind: "KeyRegex";
  readonly key: KeyPath;
  readonly quantifier?: Quantifier;
  readonly regex: RegexLiteral;
  readonly span: Span;
}

/** `KEY contains $x`: some string value under the key contains the value bound to x, as text. */
export interface KeyContains {
  readonly kind: "KeyContains";
  readonly key: KeyPath;
  readonly quantifier?: Quantifier;
  readonly variable: Variable;
  readonly span: Span;
}

/** `status = ok` / `status = error`. */
export interface StatusIs {
  readonly kind: "StatusIs";
  readonly status: "ok" | "error";
  readonly span: Span;
}

/** `output ~ "wildcard"`: o(e) ≈ p. */
export interface OutputMatch {
  readonly kind: "OutputMatch";
  readonly pattern: StringLiteral;
  readonly span: Span;
}

/**
 * An argument name, possibly a dotted path into nested objects (`headers.host`). Each segment is
 * an identifier or a quoted string (`"content-type"`, `"a.b"`); a quoted segment is one name even
 * if it contains dots. After the first, a segment may be a list index written in digits
 * (`argv.0`: the first element of the list under `argv`; `"0"` is the name "0"). A path written
 * from `output` (`output.reservation_id`) leads into the call's output read as a JSON object;
 * `output` alone is the output's text.
 */
export interface KeyPath {
  /** The span of the leading `output` keyword, when the path is into the output. */
  readonly output?: Span;
  /** The segments after `output` (none for `output` alone), or the argument's path. */
  readonly segments: readonly KeySegment[];
  readonly span: Span;
}

/** A segment of a key path: a name, or a list index (never the first segment). Tell them apart with `"index" in segment`. */
export type KeySegment = KeyName | KeyIndex;

/** A name in a key path: an identifier, or a quoted string (`quoted`). */
export interface KeyName {
  readonly name: string;
  readonly quoted: boolean;
  readonly span: Span;
}

/** A list index in a key path (`argv.0`): the element at that position of a list, counted from 0. */
export interface KeyIndex {
  readonly index: number;
  readonly span: Span;
}

/** What a segment selects: a name (a string), or an index (a number), as the trace's key paths have it. */
export function keySegmentValue(segment: KeySegment): string | number {
  return "index" in segment ? segment.index : segment.name;
}

/** A key path's segments as the trace reads them (`argv.0` is `["argv", 0]`); the path after `output` for one into the output. */
export function keyPathSegments(path: KeyPath): (string | number)[] {
  return path.segments.map(keySegmentValue);
}

/** An action name in `action in {…}`: an identifier or a quoted string. */
export interface SymbolLiteral {
  readonly value: string;
  readonly quoted: boolean;
  readonly span: Span;
}

/** A value in `KEY in {…}`: a JSON string, number, `true`, `false` or `null`. */
export interface ValueLiteral {
  readonly value: string | number | boolean | null;
  /** The literal as written (so that `6.0` prints back as `6.0`). */
  readonly raw: string;
  readonly span: Span;
}

export interface StringLiteral {
  /** The decoded string (JSON escapes applied). */
  readonly value: string;
  readonly raw: string;
  readonly span: Span;
}

/** A regular expression `/source/flags` as written; the checker compiles it. */
export interface RegexLiteral {
  /** The text between the slashes, escapes as written. */
  readonly source: string;
  /** The letters after the closing slash. */
  readonly flags: string;
  readonly raw: string;
  /** False when the line ended before the closing `/` (reported by the parser). */
  readonly closed: boolean;
  readonly span: Span;
}

/** `$x` */
export interface Variable {
  /** The name without the `$`. */
  readonly name: string;
  readonly span: Span;
}

/** The dotted spelling of a key path, each segment quoted where a bare name would not lex as one. */
export function keyPathText(path: KeyPath): string {
  const segments = path.segments.map((segment) => ("index" in segment ? String(segment.index) : nameText(segment.name)));
  return path.output !== undefined ? ["output", ...segments].join(".") : segments.join(".");
}

/** An action name as the printer writes it: bare when it is a plain identifier, quoted otherwise. */
export function symbolText(symbol: SymbolLiteral): string {
  return nameText(symbol.value);
}

/** A name bare when it lexes as an identifier (and is not a reserved word), as a JSON string otherwise. */
export function nameText(name: string): string {
  return isPlainIdentifier(name) && !isKeyword(name) ? name : JSON.stringify(name);
}

const plainIdentifier = /^[A-Za-z_][A-Za-z0-9_]*$/;
export function isPlainIdentifier(text: string): boolean {
  return plainIdentifier.test(text);
}
