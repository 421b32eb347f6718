import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import { ARGUMENT_OBSERVATION_CAP } from "../event.js";

/**
 * Checks on the values of a parsed record, made in one walk so that a well-formed record costs
 * one pass over its values besides `JSON.parse`. The walk only raises flags; finding where a
 * flagged value is, and saying why, is the slow path taken for the rare record that needs it.
 */

/** How deeply an event's values may nest (every later stage walks values recursively). */
export const maximumValueDepth = 64;

/** An object or a list deeper than {@link maximumValueDepth}. */
export const TOO_DEEP = 1;
/** A number that is not finite: `JSON.parse` reads a literal beyond the largest double (`1E400`) as Infinity. */
export const OUT_OF_RANGE = 2;
/** An integer beyond 2^53 − 1, whose literal may have been rounded. */
export const UNSAFE_INTEGER = 4;
/** A string longer than the argument observation cap. */
export const LONG_STRING = 8;

/**
 * The flags of a value found at `depth` (the record itself is at depth 0). The recursion stops at
 * the depth limit, so it never nests more than that many calls.
 */
export function valueFlags(value: unknown, depth: number): number {
  switch (typeof value) {
    case "number":
      if (!Number.isFinite(value)) return OUT_OF_RANGE;
      return value > Number.MAX_SAFE_INTEGER || value < -Number.MAX_SAFE_INTEGER ? UNSAFE_INTEGER : 0;
    case "string":
      return value.length > ARGUMENT_OBSERVATION_CAP ? LONG_STRING : 0;
    case "object": {
      if (value === null) return 0;
      if (depth > maximumValueDepth) return TOO_DEEP;
      let flags = 0;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) flags |= valueFlags(value[i], depth + 1);
      } else {
        // `for…in` with an own-property test: the keys `Object.keys` lists, without allocating them.
        const object = value as Record<string, unknown>;
        for (const key in object) if (hasOwn.call(object, key)) flags |= valueFlags(object[key], depth + 1);
      }
      return flags;
    }
    default:
      return 0;
  }
}

const hasOwn = Object.prototype.hasOwnProperty;

/** The dotted path of the first value nested deeper than `maximumValueDepth`, if any (iterative: never overflows). */
export function tooDeep(value: unknown): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (depth > maximumValueDepth) return path;
    const entries: [string, unknown][] = Array.isArray(current) ? current.map((v, i) => [String(i), v]) : Object.entries(current);
    for (const [key, child] of entries) stack.push({ value: child, depth: depth + 1, path: path === "" ? key : `${path}.${key}` });
  }
  return undefined;
}

/** A number a record cannot hold as written: out of range, or an integer the parse rounded. */
export interface NumberProblem {
  /** The dotted path of the value from where the walk started. */
  readonly path: string;
  readonly kind: "out-of-range" | "inexact";
  /** For an inexact integer: its literal, and the number it would read as. */
  readonly literal?: string;
  readonly readAs?: number;
}

/**
 * The numbers under `value` that the record cannot hold as written. An integer beyond 2^53 − 1 is
 * a problem only when its literal in `source` (the JSON text it was parsed from) is not exactly the
 * number it reads as: `9007199254740993` reads as …992 and is rejected, while `2^54` written out is
 * exact and kept. The literals are found by a scan of the text, made only when such an integer is.
 */
export function numberProblems(value: unknown, source: string, prefix = ""): NumberProblem[] {
  const problems: NumberProblem[] = [];
  let inexact: Map<number, string> | undefined;
  const visit = (current: unknown, path: string, depth: number): void => {
    if (typeof current === "number") {
      if (!Number.isFinite(current)) problems.push({ path, kind: "out-of-range" });
      else if (current > Number.MAX_SAFE_INTEGER || current < -Number.MAX_SAFE_INTEGER) {
        inexact ??= inexactIntegerLiterals(source);
        const literal = inexact.get(current);
        if (literal !== undefined) problems.push({ path, kind: "inexact", literal, readAs: current });
      }
      return;
    }
    if (typeof current !== "object" || current === null || depth > maximumValueDepth) return;
    const join = (key: string) => (path === "" ? key : `${path}.${key}`);
    if (Array.isArray(current)) current.forEach((element, index) => visit(element, join(String(index)), depth + 1));
    else for (const key of Object.keys(current)) visit((current as Record<string, unknown>)[key], join(key), depth + 1);
  };
  visit(value, prefix, 0);
  return problems;
}

/** The diagnostic of a number a record cannot hold as written; `subject` names the field and the record. */
export function numberDiagnostic(problem: { readonly kind: "out-of-range" | "inexact"; readonly literal?: string; readonly readAs?: number }, subject: string, where: { span: Span; file?: string }): Diagnostic {
  if (problem.kind === "out-of-range") {
    return diagnostic("T0013", `${subject} is a number out of range: its magnitude is beyond the largest number a trace can hold (about 1.8e308)`, {
      ...where,
      help: "write such a quantity as a string",
    });
  }
  return diagnostic("T0012", `${subject} is the integer ${problem.literal}, which cannot be represented exactly: it would be read as ${BigInt(problem.readAs!)}`, {
    ...where,
    help: "integers are exact up to 2^53 − 1 (9007199254740991); write a larger identifier as a string",
  });
}

/**
 * The integer literals of a JSON text (outside strings) that are not exactly the number they
 * read as, by that number: the first such literal of each. Only literals of 16 digits or more can
 * be beyond 2^53 − 1, so shorter ones are skipped without converting them.
 */
export function inexactIntegerLiterals(text: string): Map<number, string> {
  const found = new Map<number, string>();
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 34 /* " */) {
      // Skip the string, with its escapes.
      for (i++; i < length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
      continue;
    }
    if (c !== 45 /* - */ && (c < 48 || c > 57)) continue;
    const start = i;
    if (c === 45) i++;
    const digitsStart = i;
    while (i < length && text.charCodeAt(i) >= 48 && text.charCodeAt(i) <= 57) i++;
    const digits = i - digitsStart;
    let integer = true;
    // A fraction or an exponent makes it no integer literal; consume the rest of the number.
    while (i < length) {
      const d = text.charCodeAt(i);
      if (d === 46 /* . */ || d === 101 /* e */ || d === 69 /* E */ || d === 43 /* + */ || d === 45 || (d >= 48 && d <= 57)) {
        integer = false;
        i++;
      } else break;
    }
    const literal = text.slice(start, i);
    i--;
    if (!integer || digits < 16) continue;
    const read = Number(literal);
    if (Number.isFinite(read) && BigInt(literal) !== BigInt(read) && !found.has(read)) found.set(read, literal);
  }
  return found;
}
