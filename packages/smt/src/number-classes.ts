import type { Atom } from "@vigil/engine";
import { compareDecimal, decimalOf, formatDecimal, numberOf, valueKey, type Decimal, type JsonValue } from "@vigil/trace";
import type { TextClass, TextCondition } from "./text-classes.js";

/**
 * The classes of numbers that comparisons tell apart (`amount > 100`), with example values: what
 * `universeOf` adds to a group's candidates so that the symbolic search tries 100 itself when one
 * policy says `> 100` and the other `>= 100`; and the classes of list lengths that counts tell
 * apart (`count(to) <= 5`, `lengthRanges`).
 *
 * A comparison `k ⋈ N` on one value asks where the value's number lies against N (below, equal,
 * above). So for the sorted distinct thresholds t1 < … < tn of every comparison on a group's keys
 * (both policies' in a diff), the values alike to every comparison are: each ti exactly, the
 * numbers strictly between two neighbours, those below t1, those above tn, and the values that are
 * no number at all (no comparison holds on them, `!=` included). Each class gets an example, an
 * exact decimal: a JSON number when one stands for it exactly (its shortest text reads back as the
 * same decimal), or else a string that spells it (which compares as that number, and is how a
 * threshold past a double's range or precision is reached).
 *
 * A string that spells a number counts as that number, so no class of strings is left to try for
 * the comparisons: `"100"`, `"100.0"` and `100` are alike to every comparison. They differ only to
 * the other atoms: to `in {…}` (each constant is a candidate of its own, and its number is made a
 * threshold, so that the examples between thresholds are never a constant, and a threshold that is
 * a constant also gets a spelling that is not one), and to text patterns, which read a number's
 * text (see `numberTextsAlike`).
 */

/** `^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`, the texts `numberOf` may read as numbers (a superset: it also bounds their length and exponent). */
export const NUMBER_TEXT: TextCondition = { kind: "regex", source: "^-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?$", flags: "" };

/** The thresholds of a group's comparisons (`k ⋈ N`), and the numbers of its constants when it has comparisons. */
export function valueThresholds(atoms: readonly Atom[]): Decimal[] {
  const thresholds: Decimal[] = [];
  for (const atom of atoms) if (atom.kind === "keyCompare") thresholds.push(decimalOf(atom.value)!);
  if (thresholds.length === 0) return [];
  for (const atom of atoms) {
    if (atom.kind !== "keyIn") continue;
    for (const { value } of atom.values) {
      const number = numberOf(value);
      if (number !== undefined) thresholds.push(number);
    }
  }
  return sortedDistinct(thresholds);
}

/** The thresholds of `count(k) ⋈ N` atoms among some atoms, sorted and distinct. */
export function countThresholds(atoms: readonly Atom[]): Decimal[] {
  return sortedDistinct(atoms.flatMap((atom) => (atom.kind === "keyCount" ? [decimalOf(atom.value)!] : [])));
}

function sortedDistinct(list: readonly Decimal[]): Decimal[] {
  const sorted = list.map(normalized).sort(compareDecimal);
  return sorted.filter((value, index) => index === 0 || compareDecimal(sorted[index - 1]!, value) !== 0);
}

export interface NumberExamples {
  /** Per class, up to `perClass` distinct values (JSON numbers where exact, else strings). */
  readonly values: readonly JsonValue[];
  /** The same classes as strings only: for the output's text, which holds no JSON number. */
  readonly texts: readonly string[];
  /** The classes no example could be written for (a number past the decimal range), in words. */
  readonly missing: readonly string[];
}

/**
 * Examples of every class of numbers the thresholds tell apart: `perClass` distinct values of each
 * (a group whose keys bind a variable needs as many as a run can hold), none equal to a constant
 * (`constants`, by value key).
 */
export function numberExamples(thresholds: readonly Decimal[], constants: ReadonlySet<string>, perClass: number): NumberExamples {
  const values: JsonValue[] = [];
  const texts: string[] = [];
  const missing: string[] = [];
  if (thresholds.length === 0) return { values, texts, missing };
  const count = Math.max(1, perClass);
  const free = (value: JsonValue) => !constants.has(valueKey(value));
  /** Adds the examples of one class: `decimals` are distinct numbers of it, most wanted first. */
  const addClass = (decimals: readonly Decimal[], shown: string) => {
    const spelled: { d: Decimal; text: string }[] = [];
    for (const d of decimals) {
      const text = spellText(d);
      if (text !== undefined && !spelled.some((known) => compareDecimal(known.d, d) === 0)) spelled.push({ d, text });
    }
    if (spelled.length === 0) {
      missing.push(shown);
      return;
    }
    for (const { d, text } of spelled.slice(0, count)) {
      values.push(exactNumber(d, text) ?? text);
      texts.push(text);
    }
  };
  const first = thresholds[0]!;
  const last = thresholds[thresholds.length - 1]!;
  // Near the threshold, else (when that cannot be written: `1e-400 − 1`) a whole number beyond it.
  addClass(
    [...Array.from({ length: count }, (_, j) => shift(first, -(j + 1))), ...Array.from({ length: count }, (_, j) => ({ units: floor(first) - BigInt(j + 1), exponent: 0 }))],
    `below ${shownDecimal(first)}`,
  );
  thresholds.forEach((t, index) => {
    addPoint(t);
    const next = thresholds[index + 1];
    if (next !== undefined) addClass(between(t, next, count), `between ${shownDecimal(t)} and ${shownDecimal(next)}`);
  });
  addClass(
    [...Array.from({ length: count }, (_, j) => shift(last, j + 1)), ...Array.from({ length: count }, (_, j) => ({ units: ceil(last) + BigInt(j + 1), exponent: 0 }))],
    `above ${shownDecimal(last)}`,
  );
  return { values, texts, missing };

  /** A threshold itself: distinct spellings of the one number (`100`, `"100"`, `"100.0"`, …), none a constant. */
  function addPoint(t: Decimal): void {
    const text = spellText(t);
    if (text === undefined) {
      missing.push(`equal to ${shownDecimal(t)}`);
      return;
    }
    const number = exactNumber(t, text);
    const spellings: JsonValue[] = [...(number !== undefined ? [number] : []), text];
    // More spellings of the same number: trailing zeros (`100.0`, `1.50`), or `10e399` for `1e400`.
    const [mantissa, power] = text.split("e") as [string, string | undefined];
    const padded = mantissa.includes(".") ? mantissa : power === undefined ? `${mantissa}.` : mantissa;
    for (let zeros = 1; spellings.length < count + constants.size + 2 && padded.length + zeros + (power?.length ?? 0) < 400; zeros++) {
      spellings.push(power === undefined ? padded + "0".repeat(zeros) : `${padded}${"0".repeat(zeros)}e${Number(power) - zeros}`);
    }
    const chosen = spellings.filter(free).slice(0, count);
    values.push(...chosen);
    texts.push(...spellings.filter((s): s is string => typeof s === "string" && free(s)).slice(0, count));
  }
}

/**
 * `d + k`, exactly (`100` → `101`, `0.5` → `1.5`); for a number too long to write with one more
 * unit, `k` in its last place instead (`1e400` → `2e400`), so that the example can still be written.
 */
function shift(d: Decimal, k: number): Decimal {
  if (d.exponent < 0) return { units: d.units + BigInt(k) * 10n ** BigInt(-d.exponent), exponent: d.exponent };
  const digits = (d.units < 0n ? -d.units : d.units).toString().length;
  if (d.exponent + digits < 390) return { units: d.units * 10n ** BigInt(d.exponent) + BigInt(k), exponent: 0 };
  return { units: d.units + BigInt(k), exponent: d.exponent };
}

/**
 * `count` distinct decimals strictly between a < b, exactly: a + (b − a)·j / 2^p, the midpoint
 * first; then a plus one unit of their last place, for when those cannot be written (between 0 and
 * 3e-400, 1e-400 can).
 */
function between(a: Decimal, b: Decimal, count: number): Decimal[] {
  let p = 1;
  while (2 ** p < count + 1) p++;
  const steps = 2 ** p;
  // (b − a)/2^p = (b − a)·5^p / 10^p.
  const exponent = Math.min(a.exponent, b.exponent);
  const scale = (d: Decimal) => d.units * 10n ** BigInt(d.exponent - exponent);
  const low = scale(a) * 10n ** BigInt(p);
  const step = (scale(b) - scale(a)) * 5n ** BigInt(p);
  const order = [steps / 2, ...Array.from({ length: steps - 1 }, (_, j) => j + 1).filter((j) => j !== steps / 2)];
  const unit = { units: scale(a) + 1n, exponent };
  return [...order.slice(0, count).map((j) => ({ units: low + step * BigInt(j), exponent: exponent - p })), ...(compareDecimal(unit, b) < 0 ? [unit] : [])];
}

/** The decimal with no trailing zeros in its units (`100` is 1 × 10^2). */
function normalized(d: Decimal): Decimal {
  let { units, exponent } = d;
  while (units !== 0n && units % 10n === 0n) {
    units /= 10n;
    exponent++;
  }
  return units === 0n ? { units, exponent: 0 } : { units, exponent };
}

/**
 * A text that spells the decimal exactly as `numberOf` reads it: its plain form, or `units e exponent`
 * when the plain form is too long; undefined when neither is a number `numberOf` reads (past the
 * decimal range: no value at all is that number).
 */
export function spellText(d: Decimal): string | undefined {
  const { units, exponent } = normalized(d);
  const plain = exponent > 400 ? undefined : formatDecimal({ units, exponent });
  const scientific = `${units}e${exponent}`;
  for (const text of plain === undefined ? [scientific] : [plain, scientific]) {
    const read = numberOf(text);
    if (read !== undefined && compareDecimal(read, d) === 0) return text;
  }
  return undefined;
}

/** A decimal as people read it: its spelling, or `units e exponent` past the range. */
function shownDecimal(d: Decimal): string {
  const { units, exponent } = normalized(d);
  return spellText(d) ?? `${units}e${exponent}`;
}

/** The JSON number whose shortest text reads back as exactly this decimal, if there is one. */
function exactNumber(d: Decimal, text: string): number | undefined {
  const number = Number(text);
  if (!Number.isFinite(number)) return undefined;
  const read = decimalOf(number);
  return read !== undefined && compareDecimal(read, d) === 0 ? number : undefined;
}

/**
 * Whether the texts that may spell a number all meet the same wildcards and regular expressions,
 * read off the classes of a group's text conditions with `NUMBER_TEXT` among them. When they do,
 * every number and every string spelling one looks the same to the group's text patterns, so the
 * number classes' examples stand for every combination of comparisons and patterns a number
 * meets; when they do not, a combination may be missed (a number whose text ends in `5` and one
 * whose text does not, each against every threshold), and `universeOf` says so.
 */
export function numberTextsAlike(conditions: readonly TextCondition[], classes: readonly TextClass[]): boolean {
  const numberIndex = conditions.indexOf(NUMBER_TEXT);
  const patterns = conditions.flatMap((condition, index) => (condition.kind === "equals" || index === numberIndex ? [] : [index]));
  const seen = new Set<string>();
  for (const c of classes) if (c.holds[numberIndex] === true) seen.add(patterns.map((index) => (c.holds[index] ? "1" : "0")).join(""));
  return seen.size <= 1;
}

/**
 * A text that looks like a number to the patterns but is none to the comparisons (its exponent is
 * past the decimal range): stands for those texts when the patterns tell number texts from others.
 */
export function nonNumberLookalike(constants: ReadonlySet<string>): string {
  for (let digit = 1; ; digit++) {
    const text = `${digit}e999`;
    if (!constants.has(valueKey(text))) return text;
  }
}

/** An integer range of list lengths `[low, high]` (`high` undefined: no end). */
export interface LengthRange {
  readonly low: bigint;
  readonly high: bigint | undefined;
}

/**
 * The lengths from 1 up that `count(k) ⋈ N` atoms tell apart, as ranges of whole numbers: below
 * the first threshold, each whole threshold, between two neighbours, above the last. (Length 0 is
 * the key with no value: no list is needed for it.)
 */
export function lengthRanges(thresholds: readonly Decimal[]): LengthRange[] {
  const ranges: LengthRange[] = [];
  const push = (low: bigint, high: bigint | undefined) => {
    const from = low < 1n ? 1n : low;
    if (high === undefined || from <= high) ranges.push({ low: from, high });
  };
  if (thresholds.length === 0) return [{ low: 1n, high: undefined }];
  push(1n, ceil(thresholds[0]!) - 1n);
  thresholds.forEach((t, index) => {
    if (floor(t) === ceil(t)) push(floor(t), floor(t));
    const next = thresholds[index + 1];
    push(floor(t) + 1n, next === undefined ? undefined : ceil(next) - 1n);
  });
  return ranges;
}

function floor(d: Decimal): bigint {
  if (d.exponent >= 0) return d.units * 10n ** BigInt(d.exponent);
  const scale = 10n ** BigInt(-d.exponent);
  const quotient = d.units / scale;
  return d.units < 0n && quotient * scale !== d.units ? quotient - 1n : quotient;
}

function ceil(d: Decimal): bigint {
  return -floor({ units: -d.units, exponent: d.exponent });
}
