import type { Formula, Subject } from "@vigil/checker";
import { compileRegex, compileWildcard, decimalOf, isRegexProblem, keyPathPlace, numberOrderKey, type Decimal, type PathSegment } from "@vigil/trace";
import type { Span } from "@vigil/diagnostics";
import type { Dialect } from "./dialect.js";
import { Inexpressible } from "./inexpressible.js";

/**
 * The atoms on values as SQL, with the meaning `atoms.ts` of the engine package gives them: each
 * is decided on the values table's rows at its key path (`keyPathPlace`), one row per value
 * `valuesAtSubject` reaches, so that "some value", "every value" and "how many values" are
 * `EXISTS`, `NOT EXISTS` and `count(*)` over those rows.
 *
 * - Some value passes the atom's test: `EXISTS` a row at the place that passes it.
 * - `every(KEY)`: `EXISTS` a row at the place, and `NOT EXISTS` one that fails the test; a row
 *   fails when the test is not true (`CASE WHEN test THEN 0 ELSE 1 END = 1`), so that no NULL can
 *   make a value pass.
 * - `KEY ⋈ N`: the row's `nkey` (the order key of the number the value stands for, null when it
 *   stands for none) against N's order key, as text: exact at any number of digits, on every
 *   engine, with no decimal type (`numberOrderKey` in the trace package).
 * - `count(KEY) ⋈ N`: the number of rows at the place per event (a table of the rule's query),
 *   against the whole number N comes to (`count < 2.5` is `count < 3`); an event with no row has
 *   the count 0, decided here.
 * - `KEY ~ p`: the trace package's RE2 translation of the wildcard where the engine runs RE2;
 *   where it does not but has `LIKE` (Trino, Snowflake), the wildcard as a `LIKE` pattern, which
 *   keeps its meaning exactly unless it has a character class (`likePattern`).
 */
export type ValueAtom = Extract<Formula, { kind: "keyIn" | "keyMatch" | "keyBind" | "keyRegex" | "keyContains" | "keyCompare" | "keyCount" }>;

type Comparison = Extract<Formula, { kind: "keyCompare" }>["op"];

/** What the atoms need of the rule being compiled. */
export interface ValueAtomContext {
  readonly dialect: Dialect;
  /** The values table. */
  readonly values: string;
  /** Adds a common table expression to the rule's query, named after `name`, and gives its full name. */
  add(name: string, sql: string): string;
}

const FALSE = "(1 = 0)";
const TRUE = "(1 = 1)";

const SQL_OPERATOR: Readonly<Record<Comparison, string>> = { "<": "<", "<=": "<=", ">": ">", ">=": ">=", "=": "=", "!=": "<>" };

/** Above every count of values an event can have: a larger N is written as this. */
const COUNT_CEILING = 10n ** 15n;

export class ValueAtoms {
  /** The table of counts per key path (`count(KEY)`), made once per path in a rule. */
  private readonly counts = new Map<string, string>();

  constructor(private readonly context: ValueAtomContext) {}

  /** Where a key path's values are in the values table, for the row alias `v`. */
  place(v: string, subject: Subject, key: readonly PathSegment[]): string {
    const { dialect } = this.context;
    const at = keyPathPlace(key);
    const where = "names" in at ? `${v}.names = ${dialect.literal(at.names)}` : dialect.chainMatch(`${v}.chain`, at.chainPattern);
    return `${v}.subject = ${dialect.literal(subject)} AND ${where}`;
  }

  /**
   * An atom on values as a boolean SQL expression on the event `e` (never NULL). With `binding`,
   * the variables' value keys are those columns; without, `k = $x` holds when e has a value at k
   * and `k contains $x` when it has a text there.
   */
  atom(atom: ValueAtom, e: string, binding: ReadonlyMap<string, string> | undefined): string {
    if (atom.kind === "keyCount") return this.count(atom, e);
    const test = this.test(atom, binding);
    if (test === FALSE) return FALSE;
    const rows = `SELECT 1 FROM ${this.context.values} v WHERE v.run = ${e}.run AND v.seq = ${e}.seq AND ${this.place("v", atom.subject, atom.key)}`;
    if (atom.kind === "keyBind" || atom.every !== true) return `EXISTS (${rows} AND ${test})`;
    return `(EXISTS (${rows}) AND NOT EXISTS (${rows} AND CASE WHEN ${test} THEN 0 ELSE 1 END = 1))`;
  }

  /** The test of one value row `v`. */
  private test(atom: Exclude<ValueAtom, { kind: "keyCount" }>, binding: ReadonlyMap<string, string> | undefined): string {
    const { dialect } = this.context;
    const lit = dialect.literal;
    const text = dialect.substringFrom("v.vkey", 3);
    const searchable = `substr(v.vkey, 1, 2) IN ('s:', 'n:', 'b:')`;
    switch (atom.kind) {
      case "keyIn":
        return atom.values.length === 0 ? FALSE : `v.vkey IN (${atom.values.map((value) => lit(value.key)).join(", ")})`;
      case "keyMatch": {
        const wildcard = compileWildcard(atom.pattern);
        if (!wildcard.ok) return FALSE;
        return `${searchable} AND ${this.wildcard(text, atom.pattern, wildcard.re2, atom.span)}`;
      }
      case "keyRegex": {
        const regex = compileRegex(atom.source, atom.flags);
        if (isRegexProblem(regex)) return FALSE;
        return `${searchable} AND ${this.re2(`coalesce(v.utext, ${text})`, regex.re2, atom.span)}`;
      }
      case "keyBind": {
        const value = binding?.get(atom.variable);
        return value === undefined ? TRUE : `v.vkey = ${value}`;
      }
      case "keyContains": {
        const value = binding?.get(atom.variable);
        if (value === undefined) return searchable;
        // The text of a bound value: a string itself, anything else its JSON text (`null` for null).
        const needle = `CASE WHEN ${value} = 'null' THEN 'null' ELSE ${dialect.substringFrom(value, 3)} END`;
        return `${searchable} AND ${dialect.position(text, needle)} > 0`;
      }
      case "keyCompare":
        return this.compare(atom);
    }
  }

  /** `KEY ⋈ N` on one row: its number's order key against N's. */
  private compare(atom: Extract<ValueAtom, { kind: "keyCompare" }>): string {
    const { dialect } = this.context;
    const key = numberOrderKey(boundOf(atom.value));
    if (key === undefined) {
      throw new Inexpressible(`the number ${shorten(atom.value)} has too many digits to be compared in SQL`, atom.span, "check this rule with `vigilc check`");
    }
    const nkey = dialect.bytewise?.("v.nkey") ?? "v.nkey";
    return `(v.nkey IS NOT NULL AND ${nkey} ${SQL_OPERATOR[atom.op]} ${dialect.literal(key)})`;
  }

  /** `count(KEY) ⋈ N`: the event's count of rows at the place (0 without any) against N. */
  private count(atom: Extract<ValueAtom, { kind: "keyCount" }>, e: string): string {
    const whole = wholeComparison(atom.op, boundOf(atom.value));
    if (typeof whole === "boolean") return whole ? TRUE : FALSE;
    const condition = `c.n ${SQL_OPERATOR[whole.op]} ${whole.n}`;
    const counted = `SELECT 1 FROM ${this.counted(atom.subject, atom.key)} c WHERE c.run = ${e}.run AND c.seq = ${e}.seq`;
    // An event without a row at the place has no row here: its count, 0, is decided now.
    return holds(whole.op, 0n, whole.n) ? `NOT EXISTS (${counted} AND NOT (${condition}))` : `EXISTS (${counted} AND ${condition})`;
  }

  /** The rule's table of `run, seq, n`: how many values each event has at a key path (events with none left out). */
  private counted(subject: Subject, key: readonly PathSegment[]): string {
    const id = JSON.stringify([subject, key]);
    let table = this.counts.get(id);
    if (table === undefined) {
      table = this.context.add(
        `count${this.counts.size}`,
        `SELECT v.run, v.seq, count(*) AS n FROM ${this.context.values} v WHERE ${this.place("v", subject, key)} GROUP BY v.run, v.seq`,
      );
      this.counts.set(id, table);
    }
    return table;
  }

  /**
   * A wildcard's test of `text`: its RE2 translation where the engine runs RE2, else its `LIKE`
   * pattern where the engine has one and the wildcard has no class; refused otherwise.
   */
  private wildcard(text: string, pattern: string, re2: string, span: Span): string {
    const { dialect } = this.context;
    if (dialect.re2Search === undefined && dialect.like !== undefined) {
      const like = likePattern(pattern);
      if (like !== undefined) return dialect.like(text, like);
      throw new Inexpressible(
        `a wildcard's character class (\`[…]\`) has no \`LIKE\` form, and ${dialect.name}'s regular expressions are not RE2, so this pattern's meaning cannot be kept exactly`,
        span,
        "write the wildcard without a class (`*` and `?` are kept exactly), or check this rule with `vigilc check`",
      );
    }
    return this.re2(text, re2, span);
  }

  private re2(text: string, pattern: string, span: Span): string {
    const search = this.context.dialect.re2Search;
    if (search === undefined) {
      throw new Inexpressible(
        `${this.context.dialect.name}'s regular expressions are not RE2, so this pattern's meaning cannot be kept exactly`,
        span,
        "run this rule on DuckDB, PostgreSQL, SQLite (with Vigil's functions), ClickHouse or BigQuery, or with `vigilc check`",
      );
    }
    const written = search(text, pattern);
    if (typeof written !== "string") {
      throw new Inexpressible(`${written.unsupported}, so this pattern's meaning cannot be kept exactly`, span, "write the pattern without it, or check this rule with `vigilc check`");
    }
    return written;
  }
}

/**
 * A wildcard as a `LIKE` pattern with `\` as its escape character, or undefined when it has a
 * character class, which `LIKE` cannot say. `*` (a run of them) is `%`, `?` is `_` (one
 * character: a code point in the engines that take it), and every other character is itself, a
 * `%`, `_` or `\` escaped by a `\`; a wildcard's `\` makes the character after it literal, as in
 * the wildcard. Both match the whole text, case-sensitively, `%` across newlines too.
 */
export function likePattern(wildcard: string): string | undefined {
  // By code point, as the wildcard is read: `?` is one character, never half a surrogate pair.
  const chars = Array.from(wildcard);
  let out = "";
  let star = false;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (char === "*") {
      if (!star) out += "%";
      star = true;
      continue;
    }
    star = false;
    if (char === "?") out += "_";
    else if (char === "[") return undefined;
    else {
      const literal = char === "\\" ? chars[++i] : char;
      // A `\` at the end escapes nothing: the checker refuses such a wildcard.
      if (literal === undefined) return undefined;
      out += literal === "%" || literal === "_" || literal === "\\" ? `\\${literal}` : literal;
    }
  }
  return out;
}

/** N of a comparison (its canonical decimal text, which the checker made). */
function boundOf(text: string): Decimal {
  const value = decimalOf(text);
  if (value === undefined) throw new Error(`internal error: \`${text}\` is not a decimal`);
  return value;
}

/**
 * `count ⋈ N` as a comparison of the count (a whole number, at least zero) with a whole number, or
 * its truth when it is the same for every count: `< 2.5` is `< 3`, `<= 2.5` is `<= 2`, `= 2.5`
 * never holds and `!= 2.5` always does, `< 0` never holds.
 */
function wholeComparison(op: Comparison, bound: Decimal): { op: Comparison; n: bigint } | boolean {
  const floor = floorOf(bound);
  const whole = bound.exponent >= 0 || bound.units % 10n ** BigInt(-bound.exponent) === 0n;
  const ceiling = whole ? floor : floor + 1n;
  let n: bigint;
  switch (op) {
    case "<":
    case ">=":
      n = ceiling;
      break;
    case "<=":
    case ">":
      n = floor;
      break;
    case "=":
    case "!=":
      if (!whole) return op === "!=";
      n = floor;
      break;
  }
  // No count is below 0 or reaches the ceiling: the comparison is then the same for every count.
  if (n < 0n || (n === 0n && (op === "<" || op === ">="))) return holds(op, 0n, n);
  return { op, n: n > COUNT_CEILING ? COUNT_CEILING : n };
}

/** The largest whole number at most the decimal. */
function floorOf(value: Decimal): bigint {
  if (value.exponent >= 0) return value.units * 10n ** BigInt(value.exponent);
  const scale = 10n ** BigInt(-value.exponent);
  const quotient = value.units / scale;
  return value.units < 0n && quotient * scale !== value.units ? quotient - 1n : quotient;
}

function holds(op: Comparison, a: bigint, b: bigint): boolean {
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "=":
      return a === b;
    case "!=":
      return a !== b;
  }
}

function shorten(text: string): string {
  return text.length <= 24 ? text : `${text.slice(0, 12)}…${text.slice(-8)}`;
}
