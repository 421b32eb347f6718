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
 * (`^`, `$`, `(…)*`, `[0-9]+`, `\.`, `#` and plain characters); a rule that needs more is refused
 * for it with a located diagnostic (S0001), never approximated. SQLite has no regular
 * expressions of its own: the function `vigil_regexp(pattern, text)` is registered by whoever opens
 * the database (`registerSqliteFunctions`), and runs RE2 as the other engines do.
 */
export type DialectName = "duckdb" | "postgres" | "sqlite" | "clickhouse" | "trino" | "spark" | "bigquery" | "snowflake";

export const dialectNames: readonly DialectName[] = ["duckdb", "postgres", "sqlite", "clickhouse", "trino", "spark", "bigquery", "snowflake"];

export interface Dialect {
  readonly name: DialectName;
  /** A string literal. */
  literal(text: string): string;
  /** Whether `text` has a substring matching an RE2 pattern; undefined when the engine does not run RE2. */
  re2Search?(text: string, pattern: string): string;
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
  /** The SQL type of a string, for a NULL of that type. */
  readonly stringType: string;
}

/** Standard SQL strings: quotes doubled, backslashes literal. */
const standardLiteral = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** Strings in which a backslash escapes (BigQuery, Spark, ClickHouse, Snowflake): backslashes doubled too. */
const backslashLiteral = (text: string): string => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`;

const percent = (a: string, b: string): string => `((${a}) % ${b})`;

const decimal38 = (text: string): string => `CAST(${text} AS DECIMAL(38, 18))`;

export const dialects: Readonly<Record<DialectName, Dialect>> = {
  duckdb: {
    name: "duckdb",
    literal: standardLiteral,
    re2Search: (text, pattern) => `regexp_matches(${text}, ${standardLiteral(pattern)})`,
    chainMatch: (text, pattern) => `regexp_matches(${text}, ${standardLiteral(pattern)})`,
    position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substr(${text}, ${start})`,
    decimal: decimal38,
    stringType: "VARCHAR",
    mod: percent,
  },
  postgres: {
    name: "postgres",
    literal: standardLiteral,
    // PostgreSQL's regular expressions are Spencer's ARE, not RE2: only the key-path patterns.
    chainMatch: (text, pattern) => `(${text} ~ ${standardLiteral(pattern)})`,
    position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substr(${text}, ${start})`,
    decimal: (text) => `CAST(${text} AS NUMERIC)`,
    stringType: "TEXT",
    mod: percent,
  },
  sqlite: {
    name: "sqlite",
    literal: standardLiteral,
    re2Search: (text, pattern) => `(vigil_regexp(${standardLiteral(pattern)}, ${text}) = 1)`,
    chainMatch: (text, pattern) => `(vigil_regexp(${standardLiteral(pattern)}, ${text}) = 1)`,
    position: (haystack, needle) => `instr(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substr(${text}, ${start})`,
    // SQLite's numbers are 64-bit integers and doubles: no exact decimal sum.
    stringType: "TEXT",
    mod: percent,
  },
  clickhouse: {
    name: "clickhouse",
    literal: backslashLiteral,
    re2Search: (text, pattern) => `match(${text}, ${backslashLiteral(pattern)})`,
    chainMatch: (text, pattern) => `match(${text}, ${backslashLiteral(pattern)})`,
    position: (haystack, needle) => `positionUTF8(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substringUTF8(${text}, ${start})`,
    decimal: (text) => `toDecimal256(${text}, 18)`,
    stringType: "Nullable(String)",
    mod: percent,
  },
  trino: {
    name: "trino",
    literal: standardLiteral,
    // Trino runs Java's or Joni's regular expressions, not RE2: only the key-path patterns.
    chainMatch: (text, pattern) => `regexp_like(${text}, ${standardLiteral(pattern)})`,
    position: (haystack, needle) => `strpos(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substr(${text}, ${start})`,
    decimal: decimal38,
    stringType: "VARCHAR",
    mod: percent,
  },
  spark: {
    name: "spark",
    literal: backslashLiteral,
    // Spark runs Java's regular expressions: only the key-path patterns.
    chainMatch: (text, pattern) => `(${text} RLIKE ${backslashLiteral(pattern)})`,
    position: (haystack, needle) => `instr(${haystack}, ${needle})`,
    substringFrom: (text, start) => `substr(${text}, ${start})`,
    decimal: decimal38,
    stringType: "STRING",
    mod: percent,
  },
  bigquery: {
    name: "bigquery",
    literal: backslashLiteral,
    re2Search: (text, pattern) => `REGEXP_CONTAINS(${text}, ${backslashLiteral(pattern)})`,
    chainMatch: (text, pattern) => `REGEXP_CONTAINS(${text}, ${backslashLiteral(pattern)})`,
    position: (haystack, needle) => `STRPOS(${haystack}, ${needle})`,
    substringFrom: (text, start) => `SUBSTR(${text}, ${start})`,
    decimal: (text) => `CAST(${text} AS BIGNUMERIC)`,
    stringType: "STRING",
    mod: (a, b) => `MOD(${a}, ${b})`,
  },
  snowflake: {
    name: "snowflake",
    literal: backslashLiteral,
    // Snowflake's regular expressions are POSIX ERE: only the key-path patterns.
    chainMatch: (text, pattern) => `REGEXP_LIKE(${text}, ${backslashLiteral(pattern)})`,
    position: (haystack, needle) => `POSITION(${needle}, ${haystack})`,
    substringFrom: (text, start) => `SUBSTR(${text}, ${start})`,
    decimal: decimal38,
    stringType: "VARCHAR",
    mod: percent,
  },
};
