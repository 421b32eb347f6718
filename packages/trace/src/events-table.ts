import { decimalOf, formatDecimal, numberOf, type Decimal } from "./decimal.js";
import type { TraceEvent } from "./event.js";
import { unitsAsCodePoints } from "./regex.js";
import { outputObject, searchableText } from "./subject.js";
import { isJsonObject, valueKey, type JsonValue, type PathSegment } from "./value.js";

/**
 * The canonical events table: every event of every run, one row each, as `vigilc export` writes it
 * and as a warehouse holds a fleet's runs. Shell calls are grounded once, when the row is made; a
 * policy compiled to SQL reads these columns and nothing else.
 */
export interface EventRow {
  /** The run: its trace file, and for a run of a file holding several, ` · ` and its name. */
  readonly run: string;
  /** The event's position in its run, from 1. */
  readonly seq: number;
  /** `call` (a tool call, and a command grounded from one) or `message` (a turn of the conversation). */
  readonly kind: "call" | "message";
  readonly action: string;
  /** `ok`, `error`, or null for a call without a result, a command whose outcome cannot be known, and a message. */
  readonly status: "ok" | "error" | null;
  /** The arguments, a JSON object (strings longer than the observation cap cut, as every engine sees them). */
  readonly args: { readonly [key: string]: JsonValue };
  /** The observed output (its first 65,536 characters), or null when there is none. */
  readonly output: string | null;
  /** The event's time in epoch milliseconds, or null when the recording has none. */
  readonly time: number | null;
  /** The file the event was read from, and the line its record starts on (null when unknown). */
  readonly file: string | null;
  readonly line: number | null;
}

/** The columns of the events table, in order, with their SQL types (as a Parquet file has them). */
export const eventColumns: readonly { readonly name: keyof EventRow; readonly type: string; readonly nullable: boolean }[] = [
  { name: "run", type: "VARCHAR", nullable: false },
  { name: "seq", type: "INTEGER", nullable: false },
  { name: "kind", type: "VARCHAR", nullable: false },
  { name: "action", type: "VARCHAR", nullable: false },
  { name: "status", type: "VARCHAR", nullable: true },
  { name: "args", type: "JSON", nullable: false },
  { name: "output", type: "VARCHAR", nullable: true },
  { name: "time", type: "BIGINT", nullable: true },
  { name: "file", type: "VARCHAR", nullable: true },
  { name: "line", type: "INTEGER", nullable: true },
];

/** The row of one event of a run. */
export function eventRow(run: string, event: TraceEvent, file: string | undefined): EventRow {
  return {
    run,
    seq: event.position,
    kind: event.kind ?? "call",
    action: event.action,
    status: event.status ?? null,
    args: event.args,
    output: event.output ?? null,
    time: event.time ?? null,
    file: event.source?.file ?? file ?? null,
    line: event.source?.line ?? null,
  };
}

/**
 * The event a row of the events table holds, as the engines read it: the inverse of `eventRow`
 * (an output the observation cap cut is its observed prefix, which holds no JSON object either way).
 */
export function eventOfRow(row: EventRow): TraceEvent {
  const source = row.file !== null || row.line !== null ? { ...(row.file !== null ? { file: row.file } : {}), ...(row.line !== null ? { line: row.line } : {}) } : undefined;
  return {
    position: row.seq,
    kind: row.kind,
    action: row.action,
    args: row.args,
    ...(row.status !== null ? { status: row.status } : {}),
    ...(row.output !== null ? { output: row.output } : {}),
    ...(row.time !== null ? { time: row.time } : {}),
    ...(source !== undefined ? { source } : {}),
  };
}

/** A run's name in the table: its file, and the name of a run of a file holding several. */
export function runName(file: string, run: string | undefined): string {
  return run === undefined ? file : `${file} · ${run}`;
}

/**
 * The values table: every value a key path can reach on an event, one row each, so that a policy
 * compiled to SQL decides its atoms by plain comparisons, with the meaning `valuesAtSubject` gives
 * them and no engine's own reading of JSON. A row is a value that is not a list (a list stands for
 * its elements, at any depth), reached from the arguments or from the output by a chain of steps:
 * member names, and list elements by index.
 *
 * - `names` is the chain's names, each written `.` and the name with every character but ASCII
 *   letters, digits and `_` as `%` and its UTF-8 bytes in hex (`.path`, `.items.id`); `chain` is the
 *   same with each list element as `#` and its index (`.items#0.id`). A key path of names reaches
 *   exactly the rows whose `names` is its names so written (lists are transparent); a path with an
 *   index reaches the rows whose `chain` matches {@link keyPathPlace}'s pattern.
 * - The output's text is the row of the empty chain under `output`; the JSON object it holds, when
 *   it holds one, gives rows under `output` like the arguments do.
 * - `vkey` is the value's identity under the language's equality (`valueKey`): `s:` and the string,
 *   `n:` and the number's shortest text, `b:true`, `null`, `j:` and the JSON text of an object. The
 *   searchable text of a string, number or boolean is the `vkey` after its two-character tag.
 * - `utext` is that text as regular expressions read it, one code point per UTF-16 unit
 *   (`unitsAsCodePoints`), only where it differs from the text (it holds a character outside the
 *   Basic Multilingual Plane).
 * - `amount` is a number at least zero as an exact decimal without exponent (what a `limit[X of
 *   KEY]` sums); null for anything else.
 * - `nkey` is the number a value stands for where numbers are compared (`numberOf`: a number, or a
 *   string spelling a JSON number, negative ones included) as its order key ({@link numberOrderKey}):
 *   digits whose order as text is the numbers' order, so that `amount > 100` is a comparison of two
 *   texts, exact at any number of digits on every engine; null for anything else.
 */
export interface ValueRow {
  readonly run: string;
  readonly seq: number;
  readonly subject: "args" | "output";
  readonly names: string;
  readonly chain: string;
  readonly vkey: string;
  readonly utext: string | null;
  readonly amount: string | null;
  readonly nkey: string | null;
}

/** The columns of the values table, in order, with their SQL types. */
export const valueColumns: readonly { readonly name: keyof ValueRow; readonly type: string; readonly nullable: boolean }[] = [
  { name: "run", type: "VARCHAR", nullable: false },
  { name: "seq", type: "INTEGER", nullable: false },
  { name: "subject", type: "VARCHAR", nullable: false },
  { name: "names", type: "VARCHAR", nullable: false },
  { name: "chain", type: "VARCHAR", nullable: false },
  { name: "vkey", type: "VARCHAR", nullable: false },
  { name: "utext", type: "VARCHAR", nullable: true },
  { name: "amount", type: "VARCHAR", nullable: true },
  { name: "nkey", type: "VARCHAR", nullable: true },
];

/** The rows of the values table for one event. */
export function eventValueRows(run: string, event: TraceEvent): ValueRow[] {
  const rows: ValueRow[] = [];
  const seq = event.position;
  const add = (subject: "args" | "output", names: string, chain: string, value: JsonValue): void => {
    const vkey = valueKey(value);
    const text = searchableText(value);
    const utext = text === undefined ? null : unitsAsCodePoints(text);
    let amount: string | null = null;
    if (typeof value === "number" && value >= 0) {
      // JavaScript writes a number without an exponent as its shortest decimal, as `formatDecimal` would.
      const shortest = String(value);
      if (!shortest.includes("e")) amount = shortest;
      else {
        const decimal = decimalOf(value);
        if (decimal !== undefined && decimal.units >= 0n) amount = formatDecimal(decimal);
      }
    }
    const number = typeof value === "number" || typeof value === "string" ? numberOf(value) : undefined;
    const nkey = number === undefined ? null : (numberOrderKey(number) ?? null);
    rows.push({ run, seq, subject, names, chain, vkey, utext: utext === text ? null : utext, amount, nkey });
  };
  const walk = (subject: "args" | "output", value: JsonValue, names: string, chain: string): void => {
    if (Array.isArray(value)) {
      value.forEach((element: JsonValue, index: number) => walk(subject, element, names, `${chain}#${index}`));
      return;
    }
    add(subject, names, chain, value);
    if (isJsonObject(value)) for (const name of Object.keys(value)) members(subject, value, name, names, chain);
  };
  const members = (subject: "args" | "output", object: { readonly [key: string]: JsonValue }, name: string, names: string, chain: string): void => {
    const step = `.${encodePathName(name)}`;
    walk(subject, object[name]!, names + step, chain + step);
  };
  for (const name of Object.keys(event.args)) members("args", event.args, name, "", "");
  if (event.output !== undefined) {
    add("output", "", "", event.output);
    const object = outputObject(event);
    if (object !== undefined) for (const name of Object.keys(object)) members("output", object, name, "", "");
  }
  return rows;
}

/** The digits of an order key's exponent field, and the offset that makes each exponent a number of that many digits. */
const EXPONENT_DIGITS = 7;
const EXPONENT_OFFSET = 5_000_000;

/**
 * A decimal as its order key: a text of ASCII digits whose order, compared character by character
 * (a text before every longer text it starts), is the order of the numbers, and equal exactly when
 * the numbers are equal (`1.0`, `1` and `"1e0"` have one key). The number is read as a sign, a
 * position of its point p and its significant digits d₁…dₙ (the value is 0.d₁…dₙ × 10^p, d₁ and
 * dₙ not zero):
 *
 * - zero is `2`;
 * - a positive number is `3`, p + 5,000,000 in 7 digits, then d₁…dₙ: a larger p is a larger
 *   number, and at the same p the digits compare as text (a shorter run of digits that starts a
 *   longer one is the smaller number, the longer one going on with digits that are not all zero);
 * - a negative number is `1`, 5,000,000 − p in 7 digits, each digit d as the two digits `0` and
 *   9 − d, then `1`: every comparison of the positive case reversed, the final `1` placing a
 *   number after (above) the longer ones its digits start (−0.1 above −0.101).
 *
 * Undefined when p is outside the field (a number of more than some five million digits: never a
 * value, whose text is at most 400 characters, nor a number a policy writes in practice).
 */
export function numberOrderKey(value: Decimal): string | undefined {
  if (value.units === 0n) return "2";
  const negative = value.units < 0n;
  const all = (negative ? -value.units : value.units).toString();
  const digits = all.replace(/0+$/, "");
  const point = all.length + value.exponent;
  const field = negative ? EXPONENT_OFFSET - point : EXPONENT_OFFSET + point;
  if (field < 0 || field >= 10 ** EXPONENT_DIGITS) return undefined;
  const position = String(field).padStart(EXPONENT_DIGITS, "0");
  if (!negative) return `3${position}${digits}`;
  let reversed = "";
  for (const digit of digits) reversed += `0${9 - Number(digit)}`;
  return `1${position}${reversed}1`;
}

/** A name as a step of `names` and `chain`: ASCII letters, digits and `_` as they are, every other character as `%` and its UTF-8 bytes in hex. */
export function encodePathName(name: string): string {
  if (PLAIN_NAME.test(name)) return name;
  let encoded = encodedNames.get(name);
  if (encoded === undefined) {
    if (encodedNames.size > 10_000) encodedNames.clear();
    encodedNames.set(name, (encoded = encodeBytes(name)));
  }
  return encoded;
}

const PLAIN_NAME = /^[A-Za-z0-9_]*$/;
const encodedNames = new Map<string, string>();
const utf8 = new TextEncoder();

function encodeBytes(name: string): string {
  let out = "";
  for (const byte of utf8.encode(name)) {
    const plain = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a) || byte === 0x5f;
    out += plain ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return out;
}

/**
 * Where a key path's values are in the values table: a path of names alone by its `names` (equal),
 * a path with an index by a regular expression its `chain` must match whole. The expression uses
 * only `^`, `$`, `(…)*`, `[0-9]+`, `\.`, `#` and the letters, digits, `_` and `%` of names, which
 * every SQL engine's regular expressions read alike.
 */
export function keyPathPlace(segments: readonly PathSegment[]): { readonly names: string } | { readonly chainPattern: string } {
  if (segments.every((segment) => typeof segment === "string")) return { names: segments.map((name) => `.${encodePathName(name as string)}`).join("") };
  const elements = "(#[0-9]+)*";
  let pattern = "^";
  for (const segment of segments) pattern += typeof segment === "number" ? `#${segment}` : `${elements}\\.${encodePathName(segment)}`;
  return { chainPattern: `${pattern}${elements}$` };
}
