/**
 * Whole-string wildcard matching, the `~` of the language: `*` matches any sequence of characters
 * (slashes included), `?` exactly one character, `[…]` one character of a class (`[a-z]`,
 * negated by a leading `!` or `^`), and `\` makes the next character literal. Matching is
 * case-sensitive and anchored at both ends, and a character is a Unicode code point. Wildcards
 * are evaluated outside the solver: the decision procedures see only each event's ground outcome.
 *
 * A wildcard is matched without backtracking, in time at most proportional to the text's length
 * times the wildcard's (texts are agent outputs and arguments, so a policy must not be made slow
 * by a crafted one). The stars cut the wildcard into segments of single-character tests, each of
 * a fixed length in characters. The first segment must match at the start of the text and the
 * last at its end; each segment between them is taken at its leftmost occurrence after the one
 * before. Leftmost is always right: a later occurrence of a fixed-length segment ends later and
 * leaves less text for the segments after it, so if any choice leads to a match, the leftmost
 * one does. Each candidate start costs at most the segment's length, and the candidates of the
 * successive segments never overlap, hence the bound. Segments of plain characters are found
 * with the string's own search (`startsWith`, `endsWith`, `indexOf`), which is the common case.
 */
export type CompiledWildcard =
  | {
      readonly ok: true;
      /** Whether the text, whole, matches the wildcard. */
      readonly matches: (text: string) => boolean;
      readonly source: string;
      /**
       * The same wildcard as an RE2 pattern over code points, anchored at both ends: what an SQL
       * engine that runs RE2 matches a value's text with (`wildcardRe2` below).
       */
      readonly re2: string;
    }
  | { readonly ok: false; readonly message: string; /** Offset into the wildcard text. */ readonly offset: number };

/** One character of a class: ranges of code points as inclusive pairs, `[low, high, low, high, …]`. */
interface CharacterClass {
  readonly negated: boolean;
  readonly ranges: readonly number[];
}

/** A test of one character: a literal code point, any character (`?`), or a class. */
type CharacterTest = number | typeof ANY | CharacterClass;

const ANY = "any";

/**
 * The tests between two stars. `literal` is the segment as text when every test is a literal
 * character and none is a lone surrogate, so that the string's search finds it only at character
 * boundaries; `literalPrefix` is the longest such run at its start, used to skip to candidates.
 */
interface Segment {
  readonly tests: readonly CharacterTest[];
  readonly literal: string | undefined;
  readonly literalPrefix: string;
}

const cache = new Map<string, CompiledWildcard>();

export function compileWildcard(pattern: string): CompiledWildcard {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  const compiled = compileUncached(pattern);
  if (cache.size > 10_000) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

const DASH = 0x2d;

function compileUncached(pattern: string): CompiledWildcard {
  // Iterate by code point so that `?` matches one character, not half a surrogate pair.
  const chars = Array.from(pattern);
  const segments: CharacterTest[][] = [[]];
  let offset = 0;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    const charOffset = offset;
    offset += char.length;
    const tests = segments[segments.length - 1]!;
    if (char === "*") {
      // A run of stars means the same as one star, so it starts a single new segment.
      while (chars[i + 1] === "*") {
        i++;
        offset += 1;
      }
      segments.push([]);
    } else if (char === "?") {
      tests.push(ANY);
    } else if (char === "\\") {
      const next = chars[i + 1];
      if (next === undefined) return { ok: false, message: "a `\\` at the end of a wildcard escapes nothing", offset: charOffset };
      tests.push(next.codePointAt(0)!);
      i++;
      offset += next.length;
    } else if (char === "[") {
      const parsed = parseClass(chars, i);
      if ("message" in parsed) return { ok: false, message: parsed.message, offset: charOffset };
      tests.push(parsed.characterClass);
      for (let k = i + 1; k <= parsed.end; k++) offset += chars[k]!.length;
      i = parsed.end;
    } else {
      tests.push(char.codePointAt(0)!);
    }
  }
  const compiledSegments = segments.map(toSegment);
  return { ok: true, matches: (text) => matchSegments(compiledSegments, text), source: pattern, re2: wildcardRe2(segments) };
}

/**
 * Reads the class opening at `chars[start]` (a `[`), up to its closing `]` at `end`.
 *
 * A `]` right after the opening (or after its negation) is literal, `\` makes the next character
 * literal, and a `-` between two characters, other than first or last, is a range. The ranges are
 * grouped left to right, each taking the character before the dash and the one after it, so in
 * `[a-c-e]` the second dash follows a range and is the literal `-`. A range whose end comes before
 * its start is an error; the check compares the characters on either side of the dash as written.
 */
function parseClass(chars: readonly string[], start: number): { characterClass: CharacterClass; end: number } | { message: string } {
  let j = start + 1;
  const negated = chars[j] === "!" || chars[j] === "^";
  if (negated) j++;
  // Each entry is a literal code point, or `undefined` for a dash that joins its neighbours.
  const items: Array<number | undefined> = [];
  let first = true;
  let closed = false;
  for (; j < chars.length; j++) {
    const c = chars[j]!;
    if (c === "]" && !first) {
      closed = true;
      break;
    }
    first = false;
    if (c === "\\") {
      const next = chars[j + 1];
      if (next === undefined) break;
      items.push(next.codePointAt(0)!);
      j++;
    } else if (c === "-" && items.length > 0 && chars[j + 1] !== "]" && chars[j + 1] !== undefined) {
      const low = chars[j - 1]!;
      const high = chars[j + 1]!;
      if (high.codePointAt(0)! < low.codePointAt(0)!) return { message: `the range \`${low}-${high}\` in a wildcard class runs backwards` };
      items.push(undefined);
    } else {
      items.push(c.codePointAt(0)!);
    }
  }
  if (!closed) return { message: "a `[` in a wildcard is not closed by `]`" };
  const ranges: number[] = [];
  for (let k = 0; k < items.length; ) {
    const low = items[k] ?? DASH;
    if (items[k + 1] === undefined && k + 2 < items.length) {
      const high = items[k + 2] ?? DASH;
      if (high < low) {
        // Only an escaped end can get here, as in `[+-\!]`: the check above saw the backslash.
        return { message: `the range \`${String.fromCodePoint(low)}-${String.fromCodePoint(high)}\` in a wildcard class runs backwards` };
      }
      ranges.push(low, high);
      k += 3;
    } else {
      ranges.push(low, low);
      k += 1;
    }
  }
  return { characterClass: { negated, ranges }, end: j };
}

/**
 * The segments as one RE2 pattern with the wildcard's meaning on a text of code points: `\A`, each
 * segment's tests (a literal, any character, a class of code point ranges), `(?s:.*)` between
 * segments (the wildcard's `*`, newlines included), `\z`. Every character is written as a code
 * point escape, so no character of the wildcard is read as RE2 syntax.
 */
function wildcardRe2(segments: readonly (readonly CharacterTest[])[]): string {
  const test = (t: CharacterTest): string => {
    if (typeof t === "number") return re2CodePoint(t);
    if (t === ANY) return "(?s:.)";
    const ranges: string[] = [];
    for (let k = 0; k < t.ranges.length; k += 2) {
      const low = t.ranges[k]!;
      const high = t.ranges[k + 1]!;
      ranges.push(low === high ? re2CodePoint(low) : `${re2CodePoint(low)}-${re2CodePoint(high)}`);
    }
    return `[${t.negated ? "^" : ""}${ranges.join("")}]`;
  };
  return `\\A${segments.map((segment) => segment.map(test).join("")).join("(?s:.*)")}\\z`;
}

function re2CodePoint(codePoint: number): string {
  const plain = (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a) || (codePoint >= 0x61 && codePoint <= 0x7a);
  return plain ? String.fromCharCode(codePoint) : `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

function isLoneSurrogate(codePoint: number): boolean {
  return codePoint >= 0xd800 && codePoint <= 0xdfff;
}

function isPlainLiteral(test: CharacterTest): test is number {
  return typeof test === "number" && !isLoneSurrogate(test);
}

function toSegment(tests: readonly CharacterTest[]): Segment {
  let prefixLength = 0;
  while (prefixLength < tests.length && isPlainLiteral(tests[prefixLength]!)) prefixLength++;
  let literalPrefix = "";
  for (let k = 0; k < prefixLength; k++) literalPrefix += String.fromCodePoint(tests[k] as number);
  return { tests, literal: prefixLength === tests.length ? literalPrefix : undefined, literalPrefix };
}

function testMatches(test: CharacterTest, codePoint: number): boolean {
  if (typeof test === "number") return test === codePoint;
  if (test === ANY) return true;
  const ranges = test.ranges;
  let inside = false;
  for (let k = 0; k < ranges.length; k += 2) {
    if (codePoint >= ranges[k]! && codePoint <= ranges[k + 1]!) {
      inside = true;
      break;
    }
  }
  return inside !== test.negated;
}

/** The width in UTF-16 units of the character at `index` (a character boundary). */
function widthAt(text: string, index: number): number {
  return text.codePointAt(index)! > 0xffff ? 2 : 1;
}

/**
 * Where the segment ends when its first character is at `start` (a character boundary), or -1 if
 * it does not match there.
 */
function matchAt(segment: Segment, text: string, start: number): number {
  if (segment.literal !== undefined) return text.startsWith(segment.literal, start) ? start + segment.literal.length : -1;
  let index = start;
  for (const test of segment.tests) {
    const codePoint = text.codePointAt(index);
    if (codePoint === undefined || !testMatches(test, codePoint)) return -1;
    index += codePoint > 0xffff ? 2 : 1;
  }
  return index;
}

/**
 * Where the segment must start to end exactly at the end of the text, no earlier than `from`, or
 * -1. Characters are counted back from the end: a low surrogate after a high one is one character,
 * as it is read forwards.
 */
function suffixStart(segment: Segment, text: string, from: number): number {
  if (segment.literal !== undefined) {
    const start = text.length - segment.literal.length;
    return start >= from && text.endsWith(segment.literal) ? start : -1;
  }
  let start = text.length;
  for (let count = 0; count < segment.tests.length; count++) {
    if (start <= from) return -1;
    const last = text.charCodeAt(start - 1);
    const pair = last >= 0xdc00 && last <= 0xdfff && start - 2 >= 0 && isHighSurrogate(text.charCodeAt(start - 2));
    start -= pair ? 2 : 1;
  }
  if (start < from) return -1;
  return matchAt(segment, text, start) === text.length ? start : -1;
}

function isHighSurrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdbff;
}

/**
 * The end of the segment's leftmost occurrence that starts at or after `from` and ends by `limit`,
 * or -1. Occurrences that start later end later, so the first one found past `limit` ends the
 * search.
 */
function findLeftmost(segment: Segment, text: string, from: number, limit: number): number {
  if (segment.literal !== undefined) {
    const found = text.indexOf(segment.literal, from);
    return found >= 0 && found + segment.literal.length <= limit ? found + segment.literal.length : -1;
  }
  const prefix = segment.literalPrefix;
  let start = from;
  while (start <= limit) {
    if (prefix !== "") {
      start = text.indexOf(prefix, start);
      if (start < 0) return -1;
    }
    const end = matchAt(segment, text, start);
    if (end > limit) return -1;
    if (end >= 0) return end;
    if (start >= text.length) return -1;
    start += widthAt(text, start);
  }
  return -1;
}

function matchSegments(segments: readonly Segment[], text: string): boolean {
  const first = segments[0]!;
  if (segments.length === 1) return matchAt(first, text, 0) === text.length;
  const afterFirst = matchAt(first, text, 0);
  if (afterFirst < 0) return false;
  const lastStart = suffixStart(segments[segments.length - 1]!, text, afterFirst);
  if (lastStart < 0) return false;
  let position = afterFirst;
  for (let k = 1; k < segments.length - 1; k++) {
    position = findLeftmost(segments[k]!, text, position, lastStart);
    if (position < 0) return false;
  }
  return true;
}

/**
 * Whether a value matches a wildcard. Strings match on their text; numbers and booleans on their
 * JSON text (`6`, `true`); `null`, objects and lists never match. A malformed wildcard matches
 * nothing (the checker reports it before any trace is judged).
 */
export function wildcardMatches(pattern: string, value: unknown): boolean {
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "boolean") text = JSON.stringify(value);
  else return false;
  const compiled = compileWildcard(pattern);
  return compiled.ok && compiled.matches(text);
}
