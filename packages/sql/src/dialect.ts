/**
 * What differs between the SQL engines a policy compiles to: how a string is written, how a
 * regular expression is searched for, how a substring is found, and how an exact decimal is
 * written. Everything else the compiled SQL uses is common to all of them: `WITH`, joins, `UNION
 * ALL`, `GROUP BY`, `EXISTS`, `CASE`, and window functions with `ROWS` and `RANGE` frames.
 *
 * Regular expressions: the trace package translates each of Vigil's (ECMAScript's meaning, UTF-16
 * code units) and each wildcard to an RE2 pattern with exactly its meaning. An engine that runs
 * RE2 (`re2`) is given that pattern; the text it searches is the value's text with one code point
 * per UTF-16 unit (the values table's `utext`, where that differs). An engine whose regular
 * expressions are another language can run only the patterns of the values table's key paths
 * (`^`, `$`, `(…)*`, `[0-9]+`, `\.`, `#` and plain characters), and a wildcard without a
 * character class as a `LIKE` pattern where its `LIKE` keeps the wildcard's meaning (`like`:
 * Trino, Snowflake); a rule that needs more is refused for it with a located diagnostic (S0001),
 * never approximated. Numbers are compared as their order keys, texts of digits (the values
 * table's `nkey`), which every engine compares exactly. SQLite has no regular
 * expressions of its own: the function `vigil_regexp(pattern, text)` is registered by whoever opens
 * the database (`registerSqliteFunctions`), and runs RE2 as the other engines do.
 */
export type DialectName = "duckdb" | "postgres" | "sqlite" | "clickhouse" | "trino" | "spark" | "bigquery" | "snowflake";

export const dialectNames: readonly DialectName[] = ["duckdb", "postgres", "sqlite", "clickhouse", "trino", "spark", "bigquery", "snowflake"];

export type NullType = "string" | "integer" | "bigint";

export interface Dialect {
  readonly name: DialectName;
  /** A string literal. */
  literal(text: string): string;
  /**
   * Whether `text` has a substring matching an RE2 pattern (as the trace package writes them);
   * absent when the engine's regular expressions cannot run them, a string saying why when this
   * pattern cannot be written for the engine.
   */
  re2Search?(text: string, pattern: string): string | { readonly unsupported: string };
  /**
   * Whether the whole of `text` matches a `LIKE` pattern whose escape character is `\`, `_`
   * matching one code point and `%` any run of them, newlines included, case-sensitively: how a
   * wildcard is matched where the engine has no RE2 (`likePattern`). Absent where RE2 is used.
   */
  like?(text: string, pattern: string): string;
  /**
   * `text` compared byte by byte (the order keys of numbers are compared as text); absent where
   * a text's own comparison already is.
   */
  bytewise?(text: string): string;
  /** Whether `text` matches a key-path pattern of the values table (its own syntax is enough for those). */
  chainMatch(text: string, pattern: string): string;
  /** The position of `needle` in `haystack` from 1, or 0. */
  position(haystack: string, needle: string): string;
  /** `text` from its `start`-th character (from 1) on. */
  substringFrom(text: string, start: number): string;
  /** An exact decimal of the given text (digits, an optional point and digits); undefined when the engine has none. */
  decimal?(text: string): string;
  /** The remainder of a whole number's division. */
  mod(a: string, b: string): string;
  /** The final query: the `SELECT`s (joined by `UNION ALL`) ordered by the columns given. */
  ordered(selects: string, by: string): string;
  /** A NULL of a string, a 32-bit or a 64-bit whole number (a column of a union that is NULL in some of its parts). */
  nullOf(type: NullType): string;
}

/** Standard SQL strings: quotes doubled, backslashes literal. */
const standardLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Strings in which a backslash escapes (BigQuery, Spark, ClickHouse, Snowflake): backslashes doubled too. */
const backslashLiteral = (text: string): string => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

const percent = (a: string, b: string): string => `((${a}) % ${b})`;

const typedNull = (types: Readonly<Record<NullType, string>>) => (type: NullType): string => `CAST(NULL AS ${types[type]})`;

const decimal38 = (text: string): string => `CAST(${text} AS DECIMAL(38, 18))`;

/** What most engines share: standard strings, `strpos`, `substr`, `DECIMAL(38, 18)`, `%`. */
const standard = {
  literal: standardLiteral,
  position: (haystack: string, needle: string) => `strpos(${haystack}, ${needle})`,
  substringFrom: (text: string, start: number) => `substr(${text}, ${start})`,
  decimal: decimal38,
  mod: percent,
  nullOf: typedNull({ string: "VARCHAR", integer: "INTEGER", bigint: "BIGINT" }),
  ordered: (selects: string, by: string) => `${selects}\nORDER BY ${by}`,
};

/** An engine that runs RE2 through one function `name(text, pattern)`, for both kinds of pattern. */
const re2Function = (name: string, literal: (text: string) => string) => ({
  re2Search: (text: string, pattern: string) => `${name}(${text}, ${literal(pattern)})`,
  chainMatch: (text: string, pattern: string) => `${name}(${text}, ${literal(pattern)})`,
});

export const dialects: Readonly<Record<DialectName, Dialect>> = {
  duckdb: { ...standard, name: "duckdb", ...re2Function("regexp_matches", standardLiteral) },
  postgres: {
    ...standard,
    name: "postgres",
    // PostgreSQL's regular expressions are Spencer's ARE: each RE2 pattern is rewritten (`postgresPattern`).
    re2Search: (text, pattern) => {
      const written = postgresPattern(pattern);
      return typeof written === "string" ? `(${text} ~ ${standardLiteral(written)})` : written;
    },
    chainMatch: (text, pattern) => `(${text} ~ ${standardLiteral(pattern)})`,
    // A database's default collation may be a language's: the "C" collation compares bytes.
    bytewise: (text) => `(${text} COLLATE "C")`,
    decimal: (text) => `CAST(${text} AS NUMERIC)`,
    nullOf: typedNull({ string: "TEXT", integer: "INTEGER", bigint: "BIGINT" }),
  },
  sqlite: {
    ...standard,
    name: "sqlite",
    re2Search: (text, pattern) => `(vigil_regexp(${standardLiteral(pattern)}, ${text}) = 1)`,
    chainMatch: (text, pattern) => `(vigil_regexp(${standardLiteral(pattern)}, ${text}) = 1)`,
    position: (haystack, needle) => `instr(${haystack}, ${needle})`,
    // SQLite's numbers are 64-bit integers and doubles: no exact decimal sum.
    decimal: undefined,
    nullOf: typedNull({ string: "TEXT", integer: "INTEGER", bigint: "BIGINT" }),
  },
  clickhouse: {
    ...standard,
    name: "clickhouse",
    literal: backslashLiteral,
    ...re2Function("match", backslashLiteral),
    position: (haystack, needle) => `positionUTF8(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substringUTF8(${text}, ${start})`,
    decimal: (text) => `toDecimal256(${text}, 18)`,
    // An ORDER BY after UNION ALL orders only the last SELECT; a LEFT JOIN fills a missing row with
    // its columns' defaults unless `join_use_nulls` is set (the compiled SQL reads NULL there).
    ordered: (selects, by) => `SELECT * FROM (\n${selects}\n)\nORDER BY ${by}\nSETTINGS join_use_nulls = 1`,
    // A type is not nullable unless it says so.
    nullOf: typedNull({ string: "Nullable(String)", integer: "Nullable(Int32)", bigint: "Nullable(Int64)" }),
  },
  trino: {
    ...standard,
    name: "trino",
    // Trino runs Java's or Joni's regular expressions, not RE2: only the key-path patterns. Its
    // LIKE matches code points (`_` is one), `%` across newlines.
    chainMatch: (text, pattern) => `regexp_like(${text}, ${standardLiteral(pattern)})`,
    like: (text, pattern) => `(${text} LIKE ${standardLiteral(pattern)} ESCAPE ${standardLiteral("\\")})`,
  },
  spark: {
    ...standard,
    name: "spark",
    literal: backslashLiteral,
    // Spark runs Java's regular expressions: only the key-path patterns.
    chainMatch: (text, pattern) => `(${text} RLIKE ${backslashLiteral(pattern)})`,
    position: (haystack, needle) => `instr(${haystack}, ${needle})`,
    nullOf: typedNull({ string: "STRING", integer: "INTEGER", bigint: "BIGINT" }),
  },
  bigquery: {
    ...standard,
    name: "bigquery",
    literal: backslashLiteral,
    ...re2Function("REGEXP_CONTAINS", backslashLiteral),
    position: (haystack, needle) => `STRPOS(${haystack}, ${needle})`,
    substringFrom: (text, start) => `SUBSTR(${text}, ${start})`,
    decimal: (text) => `CAST(${text} AS BIGNUMERIC)`,
    nullOf: typedNull({ string: "STRING", integer: "INTEGER", bigint: "BIGINT" }),
    mod: (a, b) => `MOD(${a}, ${b})`,
  },
  snowflake: {
    ...standard,
    name: "snowflake",
    literal: backslashLiteral,
    // Snowflake's regular expressions are POSIX ERE: only the key-path patterns. Its LIKE is
    // case-sensitive, `_` one character.
    chainMatch: (text, pattern) => `REGEXP_LIKE(${text}, ${backslashLiteral(pattern)})`,
    like: (text, pattern) => `(${text} LIKE ${backslashLiteral(pattern)} ESCAPE ${backslashLiteral("\\")})`,
    position: (haystack, needle) => `POSITION(${needle}, ${haystack})`,
    substringFrom: (text, start) => `SUBSTR(${text}, ${start})`,
  },
};

/** PostgreSQL's limit on a count in `{n,m}` (RE_DUP_MAX). */
const POSTGRES_MAX_COUNT = 255;

/** ASCII word characters, as ECMAScript's `\b` (and the translation's) has them. */
const WORD = "[A-Za-z0-9_]";

/**
 * An RE2 pattern as the trace package writes them, rewritten for PostgreSQL's advanced regular
 * expressions with the same matches. The translation uses a small vocabulary (every character
 * but ASCII letters and digits as `\x{…}`, classes of such, `(?:`, `(?s:`, `|`, quantifiers,
 * `\A`, `\z`, `\b`, `\B`), each written for ARE: `\x{…}` as `\u…` or `\U…`, `\A` and `\z` as `^`
 * and `$` (an ARE without the newline-sensitive flags matches them only at the ends of the text, and
 * its `.` and negated classes match a newline, as `(?s:…)` wants), `\b` and `\B` as lookarounds over
 * the ASCII word characters (ARE's `\y` uses the locale's), lazy quantifiers as greedy ones
 * (whether a match exists does not depend on it). A count above 255 has no ARE form.
 */
export function postgresPattern(pattern: string): string | { readonly unsupported: string } {
  let out = "";
  for (let i = 0; i < pattern.length; ) {
    const rest = pattern.slice(i);
    const escape = /^\\x\{([0-9A-F]+)\}/.exec(rest);
    if (escape !== null) {
      const code = parseInt(escape[1]!, 16);
      out += code <= 0xffff ? `\\u${code.toString(16).padStart(4, "0")}` : `\\U${code.toString(16).padStart(8, "0")}`;
      i += escape[0].length;
      continue;
    }
    const count = /^\{(\d+)(,(\d*))?\}\??/.exec(rest);
    if (count !== null) {
      const numbers = [count[1], count[3]].filter((n) => n !== undefined && n !== "").map(Number);
      if (numbers.some((n) => n > POSTGRES_MAX_COUNT)) return { unsupported: `PostgreSQL's regular expressions count at most ${POSTGRES_MAX_COUNT} repetitions (\`{${numbers.join(",")}}\`)` };
      out += count[0].endsWith("?") ? count[0].slice(0, -1) : count[0];
      i += count[0].length;
      continue;
    }
    if (rest.startsWith("(?s:")) {
      out += "(?:";
      i += 4;
    } else if (rest.startsWith("(?:")) {
      out += "(?:";
      i += 3;
    } else if (rest.startsWith("\\A")) {
      out += "^";
      i += 2;
    } else if (rest.startsWith("\\z")) {
      out += "$";
      i += 2;
    } else if (rest.startsWith("\\b")) {
      out += `(?:(?<=${WORD})(?!${WORD})|(?<!${WORD})(?=${WORD}))`;
      i += 2;
    } else if (rest.startsWith("\\B")) {
      out += `(?:(?<=${WORD})(?=${WORD})|(?<!${WORD})(?!${WORD}))`;
      i += 2;
    } else if (/^[*+?][?]/.test(rest)) {
      // A lazy quantifier: the same matches as the greedy one.
      out += rest[0];
      i += 2;
    } else if (/^[A-Za-z0-9()|*+?.\[\]^-]/.test(rest)) {
      out += rest[0];
      i += 1;
    } else {
      return { unsupported: `the pattern's \`${rest[0]}\` has no PostgreSQL form here` };
    }
  }
  return out;
}
