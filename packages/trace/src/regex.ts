/**
 * Regular expressions for `KEY matches /REGEX/FLAGS`: ECMAScript's syntax and meaning, matched in
 * linear time. A pattern holds on a string when some substring matches (a search, like
 * `RegExp.prototype.test`), and `test` must not be made slow by a crafted text, so nothing here
 * backtracks.
 *
 * **Syntax.** The source is parsed by regexpp as ECMAScript 2025 (the newest it knows) without the
 * `u` or `v` flag, with Annex B: the reading of `new RegExp(source, flags)` in a browser or in
 * Node, and of a regex literal written `/source/flags`. Without `u` a pattern is a sequence of
 * UTF-16 code units, as ECMAScript has it: `.` and a class match one unit, so an emoji is two
 * characters. (Unicode mode would move closer to RE2's code points but away from what `/…/i`
 * means to everyone who has written JavaScript.) ES2025 brings the modifiers `(?i:…)`, `(?-i:…)`,
 * `(?s:…)`, and named groups of one name in different alternatives. The flags are `i` and `s`.
 *
 * **Meaning.** The tree is not passed through to RE2: each construct is translated to an RE2
 * pattern with exactly its ECMAScript meaning. Every character-level construct (a character,
 * `.`, `\d` `\s` `\w` and their negations, a class) becomes an explicit set of code units, written
 * as an RE2 class, so RE2's own `.`, `\s`, case folding and flags never enter. `^` and `$` become
 * `\A` and `\z` (there is no `m`), `\b` `\B` stay (both engines use the ASCII word characters
 * `[A-Za-z0-9_]` here), groups become non-capturing (captures are never read), and quantifiers
 * keep their counts (greedy and lazy find the same texts). Without back-references and lookaround
 * a backtracking search tries every way through the pattern, so whether it finds a match depends
 * only on the language of the pattern, which RE2 decides; ECMAScript's rule that an optional
 * iteration must not match the empty string only prunes iterations no match needs.
 *
 * - Case-insensitive matching (`i`, `(?i:…)`) follows ECMAScript's Canonicalize without `u`: two
 *   units match when `toUpperCase` maps them to the same single unit, except that a unit at or
 *   above U+0080 is never mapped into ASCII. A set A matches a unit c when some a in A has the
 *   canonical form of c, so each set is closed under "same canonical form" before it is written
 *   out. This differs from RE2's Unicode folding, which would let `k` match U+212A KELVIN SIGN and
 *   `s` match U+017F LONG S, and `ß` match `ẞ`; ECMAScript does none of these, and neither do we.
 *   Case mapping is the running engine's `toUpperCase`, the same tables as its `RegExp`.
 * - RE2 reads UTF-16 text by code points. So that it sees code units instead, `test` gives it the
 *   text with every surrogate unit U+D800–U+DFFF moved to the private-use plane 15
 *   (U+F0000 + (unit − 0xD800)), and the translated pattern moves surrogates the same way. Each
 *   unit of the text is then one code point for RE2; text without surrogates is passed unchanged.
 *
 * **Rejected,** each with a located problem (offset into the source, length, message, and a `help`
 * where there is something better to write): back-references and lookaround (a linear-time
 * automaton cannot run them); flags other than `i` and `s`, a repeated flag, and the `m` modifier;
 * a count above 1000 in `{n,m}`, nested counts whose product exceeds 1000 (both RE2's limits), and a
 * pattern whose program would exceed {@link MAX_PROGRAM_SIZE} instructions; groups nested deeper
 * than {@link MAX_GROUP_DEPTH}; and constructs that Annex B accepts with a meaning nobody writes
 * them for: an escaped letter or digit without a meaning (`\A`, `\z`, `\p{L}`, `\k`, `\8`, which
 * mean the plain letter or digit), a legacy octal escape (`\1` where there is no group 1 means
 * U+0001), `\c` not followed by a letter, an astral character written inside a class (`[😀]` is
 * a class of two code units) and a quantifier after one (`😀+` repeats its second unit only).
 * Everything else ECMAScript accepts without `u` is accepted, and for it `test(text)` equals
 * `new RegExp(source, flags).test(text)` (for the modifiers and repeated group names, as ES2025
 * defines them: Node 20's own `RegExp` rejects both). `compileRegex` never throws.
 *
 * **Cost.** Matching takes time linear in the text: RE2's DFA, or its NFA at about one step per
 * program instruction per character (measured on re2js: 17 ns per instruction and character when
 * every instruction stays live), which is why the program size is bounded: at most about 85 µs
 * per character for the worst pattern accepted, far less on the DFA. Counted repetition is
 * unrolled, so `(?:a?){1000}` alone is 2000 instructions; `*` and `+` cost one or two. re2js
 * bounds each pattern's DFA cache (8 MB); nothing here is cached across patterns but the fixed
 * table of case mappings.
 */
import { RegExpParser, RegExpSyntaxError, type AST } from "@eslint-community/regexpp";
import { RE2JS } from "re2js";

export interface RegexProblem {
  readonly message: string;
  /** Offset into the source, in UTF-16 units; a flag at index j of the flags is at source.length + 1 + j. */
  readonly offset: number;
  readonly length: number;
  readonly help?: string;
}

export interface CompiledRegex {
  readonly source: string;
  readonly flags: string;
  /** Whether some substring of the text matches, as `new RegExp(source, flags).test(text)`. */
  test(text: string): boolean;
  /**
   * The translated pattern in RE2's syntax, as `test` runs it: over a text whose UTF-16 units are one
   * code point each ({@link unitsAsCodePoints}). An engine that runs RE2 (DuckDB, ClickHouse,
   * BigQuery) gives it the text so prepared and decides exactly what `test` decides.
   */
  readonly re2: string;
}

/** RE2's largest count in `{n,m}`, and its largest product of nested counts. */
export const MAX_REPEAT_COUNT = 1000;
/** The most instructions a pattern may compile to, counted as RE2 estimates them before compiling. */
export const MAX_PROGRAM_SIZE = 5000;
/** The deepest nesting of groups; the parser and the translation recurse on it. */
export const MAX_GROUP_DEPTH = 100;

export function isRegexProblem(x: CompiledRegex | RegexProblem): x is RegexProblem {
  return isProblem(x);
}

function isProblem<T extends object>(x: T | RegexProblem): x is RegexProblem {
  return "message" in x;
}

/**
 * Compiles the text between the slashes of `/source/flags`, escapes as written (`\/` for a
 * slash), or says what is wrong and where.
 */
export function compileRegex(source: string, flags: string): CompiledRegex | RegexProblem {
  try {
    return compileChecked(source, flags);
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return { message: `the pattern could not be compiled: ${reason}`, offset: 0, length: source.length };
  }
}

function compileChecked(source: string, flags: string): CompiledRegex | RegexProblem {
  const flagProblem = checkFlags(source, flags);
  if (flagProblem !== undefined) return flagProblem;
  const brackets = scanBrackets(source);
  if (brackets.tooDeep !== undefined) {
    return { message: `groups nest more than ${MAX_GROUP_DEPTH} deep`, offset: brackets.tooDeep, length: 1 };
  }
  let pattern: AST.Pattern;
  try {
    pattern = new RegExpParser({ strict: false, ecmaVersion: 2025 }).parsePattern(source, 0, source.length, { unicode: false, unicodeSets: false });
  } catch (error) {
    if (error instanceof RegExpSyntaxError) return syntaxProblem(source, error, brackets);
    throw error;
  }
  const context: Context = { ignoreCase: flags.includes("i"), dotAll: flags.includes("s"), repeatsLeft: MAX_REPEAT_COUNT, outerRepeat: undefined };
  const translated = translateAlternatives(pattern, pattern.alternatives, context);
  if (isProblem(translated)) return translated;
  const re2 = RE2JS.compile(translated.text, 0);
  // The estimate is RE2's own; the compiled program adds a few instructions of its own.
  if (re2.programSize() > 2 * MAX_PROGRAM_SIZE) {
    return { message: `the pattern compiles to ${re2.programSize()} instructions, more than ${MAX_PROGRAM_SIZE}`, offset: 0, length: source.length };
  }
  return { source, flags, test: (text) => re2.test(unitsAsCodePoints(text)), re2: translated.text };
}

// ---------------------------------------------------------------------------------------------
// Flags and syntax errors

const flagHelp: Readonly<Record<string, string>> = {
  g: "`matches` already searches the whole text; drop `g`",
  y: "for a match at the start of the text, begin the pattern with `^`",
  m: "`^` and `$` match only at the start and end of the text; for the start of a line write `(?:^|[\\n\\r\\u2028\\u2029])`",
  u: "patterns are read without `u`, as UTF-16 code units; drop `u`",
  v: "patterns are read without `v`, as UTF-16 code units; drop `v`",
  d: "`matches` reports no match indices; drop `d`",
};

function checkFlags(source: string, flags: string): RegexProblem | undefined {
  const seen = new Set<string>();
  for (let j = 0; j < flags.length; j++) {
    const flag = String.fromCodePoint(flags.codePointAt(j)!);
    const at = { offset: source.length + 1 + j, length: flag.length };
    if (flag === "i" || flag === "s") {
      if (seen.has(flag)) return { message: `the flag \`${flag}\` is repeated`, ...at };
      seen.add(flag);
    } else if (flag in flagHelp) {
      return { message: `the flag \`${flag}\` is not supported: the flags are \`i\` and \`s\``, ...at, help: flagHelp[flag]! };
    } else {
      return { message: `unknown flag \`${flag}\`: the flags are \`i\` and \`s\``, ...at };
    }
    j += flag.length - 1;
  }
  return undefined;
}

interface Brackets {
  /** The `(` that goes deeper than MAX_GROUP_DEPTH. */
  readonly tooDeep: number | undefined;
  /** The innermost `(` still open at the end, and the `[` still open at the end. */
  readonly openGroup: number | undefined;
  readonly openClass: number | undefined;
}

/**
 * Finds the groups and classes as the parser will (a `\` escapes the next unit; inside a class
 * nothing but `]` and `\` is special), to bound the depth before parsing and to place the
 * parser's "unterminated" errors at the bracket that was not closed.
 */
function scanBrackets(source: string): Brackets {
  const groups: number[] = [];
  let openClass: number | undefined;
  for (let k = 0; k < source.length; k++) {
    const unit = source[k];
    if (unit === "\\") k++;
    else if (openClass !== undefined) {
      if (unit === "]") openClass = undefined;
    } else if (unit === "[") openClass = k;
    else if (unit === "(") {
      groups.push(k);
      if (groups.length > MAX_GROUP_DEPTH) return { tooDeep: k, openGroup: undefined, openClass: undefined };
    } else if (unit === ")") groups.pop();
  }
  return { tooDeep: undefined, openGroup: groups[groups.length - 1], openClass };
}

/** The parser's error, placed on the construct at fault where the parser gives only where it stopped. */
function syntaxProblem(source: string, error: RegExpSyntaxError, brackets: Brackets): RegexProblem {
  const prefix = `Invalid regular expression: /${source}/: `;
  const raw = error.message.startsWith(prefix) ? error.message.slice(prefix.length) : error.message;
  const index = Math.min(Math.max(error.index, 0), source.length);
  const at = (offset: number, end: number) => ({ offset, length: end - offset });
  switch (raw) {
    case "Unterminated group":
      if (brackets.openGroup !== undefined) return { message: "this `(` is not closed by a `)`", ...at(brackets.openGroup, brackets.openGroup + 1) };
      break;
    case "Unterminated character class":
      if (brackets.openClass !== undefined) return { message: "this `[` is not closed by a `]`", ...at(brackets.openClass, brackets.openClass + 1) };
      break;
    case "Unmatched ')'":
      return { message: "this `)` closes no group", ...at(index, index + 1) };
    case "\\ at end of pattern":
      return { message: "a `\\` at the end of the pattern escapes nothing", ...at(index, source.length), help: "for a backslash, write `\\\\`" };
    case "Nothing to repeat":
    case "numbers out of order in {} quantifier": {
      const start = Math.max(0, source[index - 1] === "}" ? source.lastIndexOf("{", index - 1) : index - 1);
      const quantifier = source.slice(start, index);
      return raw === "Nothing to repeat"
        ? { message: `\`${quantifier}\` has nothing to repeat`, ...at(start, index), help: `for the character itself, write \`\\${quantifier[0]}\`` }
        : { message: `the counts in \`${quantifier}\` are out of order`, ...at(start, index) };
    }
    case "Range out of order in character class": {
      const start = Math.max(0, source.lastIndexOf("[", index - 1));
      return { message: "a range in this class runs backwards", ...at(start, index) };
    }
  }
  const message = raw.charAt(0).toLowerCase() + raw.slice(1);
  return { message, ...at(index, Math.min(index + 1, source.length)) };
}

// ---------------------------------------------------------------------------------------------
// Sets of UTF-16 code units: sorted, disjoint, non-adjacent inclusive ranges [lo, hi, lo, hi, …].

type UnitSet = readonly number[];

const MAX_UNIT = 0xffff;

function normalize(ranges: readonly (readonly [number, number])[]): UnitSet {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    if (out.length > 0 && lo <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

function pairsOf(set: UnitSet): [number, number][] {
  const pairs: [number, number][] = [];
  for (let k = 0; k < set.length; k += 2) pairs.push([set[k]!, set[k + 1]!]);
  return pairs;
}

function complement(set: UnitSet): UnitSet {
  const out: number[] = [];
  let next = 0;
  for (let k = 0; k < set.length; k += 2) {
    if (set[k]! > next) out.push(next, set[k]! - 1);
    next = set[k + 1]! + 1;
  }
  if (next <= MAX_UNIT) out.push(next, MAX_UNIT);
  return out;
}

function contains(set: UnitSet, unit: number): boolean {
  let low = 0;
  let high = set.length / 2 - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    if (unit < set[2 * middle]!) high = middle - 1;
    else if (unit > set[2 * middle + 1]!) low = middle + 1;
    else return true;
  }
  return false;
}

const DIGITS: UnitSet = [0x30, 0x39];
const WORD: UnitSet = normalize([[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]]);
/** ECMAScript's WhiteSpace and LineTerminator: `\s`. */
const SPACE: UnitSet = normalize([
  [0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff],
]);
const LINE_TERMINATORS: UnitSet = normalize([[0x0a, 0x0a], [0x0d, 0x0d], [0x2028, 0x2029]]);
const ALL_UNITS: UnitSet = [0, MAX_UNIT];

/**
 * The units that share their canonical form with another unit, in groups: ECMAScript's
 * Canonicalize without `u` (ch's `toUpperCase` when that is one unit, unless it would take a
 * non-ASCII unit into ASCII). Built once, on the first case-insensitive pattern; fixed in size.
 */
interface CaseGroups {
  readonly groups: readonly (readonly number[])[];
  readonly groupOf: ReadonlyMap<number, readonly number[]>;
}

let caseGroups: CaseGroups | undefined;

function canonicalize(unit: number): number {
  const upper = String.fromCharCode(unit).toUpperCase();
  if (upper.length !== 1) return unit;
  const mapped = upper.charCodeAt(0);
  return unit >= 0x80 && mapped < 0x80 ? unit : mapped;
}

function sameCaseGroups(): CaseGroups {
  if (caseGroups !== undefined) return caseGroups;
  const byCanonical = new Map<number, number[]>();
  for (let unit = 0; unit <= MAX_UNIT; unit++) {
    const canonical = canonicalize(unit);
    const group = byCanonical.get(canonical);
    if (group === undefined) byCanonical.set(canonical, [unit]);
    else group.push(unit);
  }
  const groups = [...byCanonical.values()].filter((group) => group.length > 1);
  const groupOf = new Map<number, readonly number[]>();
  for (const group of groups) for (const unit of group) groupOf.set(unit, group);
  caseGroups = { groups, groupOf };
  return caseGroups;
}

/** The units whose canonical form is that of some unit of the set: what the set matches under `i`. */
function caseClosure(set: UnitSet): UnitSet {
  const { groups, groupOf } = sameCaseGroups();
  const added: [number, number][] = [];
  const addGroup = (group: readonly number[]) => {
    for (const unit of group) added.push([unit, unit]);
  };
  let count = 0;
  for (let k = 0; k < set.length; k += 2) count += set[k + 1]! - set[k]! + 1;
  if (count <= groups.length) {
    // A small set (a character, a short class): look up each of its units.
    for (let k = 0; k < set.length; k += 2) {
      for (let unit = set[k]!; unit <= set[k + 1]!; unit++) {
        const group = groupOf.get(unit);
        if (group !== undefined) addGroup(group);
      }
    }
  } else {
    for (const group of groups) if (group.some((unit) => contains(set, unit))) addGroup(group);
  }
  return added.length === 0 ? set : normalize([...pairsOf(set), ...added]);
}

// ---------------------------------------------------------------------------------------------
// Writing RE2 syntax

const SURROGATE_LOW = 0xd800;
const SURROGATE_HIGH = 0xdfff;
/** Where a surrogate unit goes, in the text given to RE2 and in the pattern: plane 15, private use. */
const SURROGATE_SHIFT = 0xf0000 - SURROGATE_LOW;

function codePointSyntax(codePoint: number): string {
  const isPlain = (codePoint >= 0x30 && codePoint <= 0x39) || (codePoint >= 0x41 && codePoint <= 0x5a) || (codePoint >= 0x61 && codePoint <= 0x7a);
  return isPlain ? String.fromCharCode(codePoint) : `\\x{${codePoint.toString(16).toUpperCase()}}`;
}

/** An RE2 class (or single character) matching exactly the units of the set, surrogates moved. */
function setSyntax(set: UnitSet): string {
  const ranges: [number, number][] = [];
  for (const [lo, hi] of pairsOf(set)) {
    // Cut each range at the surrogate block, whose units are moved to plane 15.
    if (lo < SURROGATE_LOW) ranges.push([lo, Math.min(hi, SURROGATE_LOW - 1)]);
    if (hi >= SURROGATE_LOW && lo <= SURROGATE_HIGH) ranges.push([Math.max(lo, SURROGATE_LOW) + SURROGATE_SHIFT, Math.min(hi, SURROGATE_HIGH) + SURROGATE_SHIFT]);
    if (hi > SURROGATE_HIGH) ranges.push([Math.max(lo, SURROGATE_HIGH + 1), hi]);
  }
  if (ranges.length === 0) return "[^\\x{0}-\\x{10FFFF}]";
  if (ranges.length === 1 && ranges[0]![0] === ranges[0]![1]) return codePointSyntax(ranges[0]![0]);
  return `[${ranges.map(([lo, hi]) => (lo === hi ? codePointSyntax(lo) : `${codePointSyntax(lo)}-${codePointSyntax(hi)}`)).join("")}]`;
}

const SURROGATES = /[\uD800-\uDFFF]/;
const SURROGATES_GLOBAL = /[\uD800-\uDFFF]/g;

/**
 * A pattern already in RE2's syntax (a translation made here, or by the wildcard matcher), as a
 * search of a text, run by the same engine as `test`: for a database that has no RE2 of its own
 * (SQLite's `vigil_regexp`).
 */
export function compileRe2(pattern: string): (text: string) => boolean {
  const re2 = RE2JS.compile(pattern, 0);
  return (text) => re2.test(text);
}

/** The text as RE2 should read it: one code point per UTF-16 unit (surrogates moved to plane 15). */
export function unitsAsCodePoints(text: string): string {
  if (!SURROGATES.test(text)) return text;
  return text.replace(SURROGATES_GLOBAL, (unit) => String.fromCodePoint(unit.charCodeAt(0) + SURROGATE_SHIFT));
}

// ---------------------------------------------------------------------------------------------
// Translation

interface Context {
  readonly ignoreCase: boolean;
  readonly dotAll: boolean;
  /** How many more times an inner count may multiply the enclosing counts (RE2's nested limit). */
  readonly repeatsLeft: number;
  /** The outermost counted quantifier around this node, and the product of the counts so far. */
  readonly outerRepeat: { readonly node: AST.Quantifier; readonly product: number } | undefined;
}

/** RE2 syntax and RE2's estimate of its program size (its `calcSize`). */
interface Translation {
  readonly text: string;
  readonly size: number;
}

type Translated = Translation | RegexProblem;

const spanOf = (node: AST.Node) => ({ offset: node.start, length: node.end - node.start });

function checkSize(node: AST.Node, translation: Translation): Translated {
  if (translation.size <= MAX_PROGRAM_SIZE) return translation;
  const problem = {
    message: `this part of the pattern compiles to about ${translation.size} instructions, more than the ${MAX_PROGRAM_SIZE} a pattern may have`,
    ...spanOf(node),
  };
  if (!/\{\d/.test(node.raw)) return problem;
  return { ...problem, help: "counted repetition is unrolled: `x{n,m}` costs m copies of `x`; write `*` or `+` where the exact count does not matter" };
}

function translateAlternatives(node: AST.Node, alternatives: readonly AST.Alternative[], context: Context): Translated {
  const parts: string[] = [];
  let size = alternatives.length - 1;
  for (const alternative of alternatives) {
    const translated = translateSequence(alternative, context);
    if (isProblem(translated)) return translated;
    parts.push(translated.text);
    size += translated.size;
  }
  return checkSize(node, { text: `(?:${parts.join("|")})`, size: Math.max(1, size) });
}

function translateSequence(alternative: AST.Alternative, context: Context): Translated {
  let text = "";
  let size = 0;
  const elements = alternative.elements;
  for (let k = 0; k < elements.length; k++) {
    const element = elements[k]!;
    const split = splitAstral(elements[k - 1], element);
    if (split !== undefined) return split;
    const translated = translateElement(element, context);
    if (isProblem(translated)) return translated;
    text += translated.text;
    size += translated.size;
  }
  return checkSize(alternative, { text, size: Math.max(1, size) });
}

/** Whether the nodes are an astral character written as itself (not as escapes): a surrogate pair. */
function isLiteralAstral(high: AST.Node | undefined, low: AST.Node | undefined): boolean {
  const isUnit = (node: AST.Node | undefined, from: number, to: number) => node?.type === "Character" && node.raw.length === 1 && node.value >= from && node.value <= to;
  return isUnit(high, 0xd800, 0xdbff) && isUnit(low, 0xdc00, 0xdfff) && high!.end === low!.start;
}

/** A quantifier after an astral character repeats only its second unit: `😀+` is `\uD83D\uDE00+`. */
function splitAstral(previous: AST.Element | undefined, element: AST.Element): RegexProblem | undefined {
  if (element.type !== "Quantifier" || !isLiteralAstral(previous, element.element)) return undefined;
  const character = previous!.raw + element.element.raw;
  const quantifier = element.raw.slice(element.element.raw.length);
  return {
    message: `without the \`u\` flag, \`${quantifier}\` after \`${character}\` repeats only the second of its two UTF-16 units`,
    offset: previous!.start,
    length: element.end - previous!.start,
    help: `to repeat the character, write \`(?:${character})${quantifier}\``,
  };
}

function translateElement(element: AST.Element, context: Context): Translated {
  switch (element.type) {
    case "Character": {
      const problem = checkEscape(element);
      if (problem !== undefined) return problem;
      return setTranslation([element.value, element.value], context);
    }
    case "CharacterSet":
      if (element.kind === "any") return setTranslation(context.dotAll ? ALL_UNITS : complement(LINE_TERMINATORS), context);
      if (element.kind === "property") return { message: "Unicode property escapes need the `u` flag", ...spanOf(element) };
      return setTranslation(escapeSet(element), context);
    case "CharacterClass":
      return translateClass(element, context);
    case "ExpressionCharacterClass":
      return { message: "class set operations need the `v` flag", ...spanOf(element) };
    case "Group":
    case "CapturingGroup": {
      const inner = groupContext(element, context);
      if (isProblem(inner)) return inner;
      return translateAlternatives(element, element.alternatives, inner);
    }
    case "Quantifier":
      return translateQuantifier(element, context);
    case "Assertion":
      return translateAssertion(element);
    case "Backreference":
      return {
        message: `the back-reference \`${element.raw}\` cannot be matched in linear time`,
        ...spanOf(element),
        help: "write the group's pattern again: it then matches any text of that shape, not only the text the group matched",
      };
  }
}

function escapeSet(element: AST.EscapeCharacterSet): UnitSet {
  const set = element.kind === "digit" ? DIGITS : element.kind === "space" ? SPACE : WORD;
  return element.negate ? complement(set) : set;
}

function setTranslation(set: UnitSet, context: Context): Translation {
  return { text: setSyntax(context.ignoreCase ? caseClosure(set) : set), size: 1 };
}

function translateClass(element: AST.CharacterClass, context: Context): Translated {
  const ranges: [number, number][] = [];
  const characters: AST.Character[] = [];
  for (const item of element.elements) {
    if (item.type === "Character") {
      characters.push(item);
      ranges.push([item.value, item.value]);
    } else if (item.type === "CharacterClassRange") {
      characters.push(item.min, item.max);
      ranges.push([item.min.value, item.max.value]);
    } else if (item.type === "CharacterSet" && item.kind !== "property") {
      ranges.push(...pairsOf(escapeSet(item)));
    } else {
      return { message: "this class needs the `u` or `v` flag", ...spanOf(item) };
    }
  }
  for (let k = 0; k < characters.length; k++) {
    const problem = checkEscape(characters[k]!);
    if (problem !== undefined) return problem;
    const next = characters[k + 1];
    if (next !== undefined && isLiteralAstral(characters[k], next)) {
      const character = characters[k]!.raw + next.raw;
      return {
        message: `without the \`u\` flag, a class holds UTF-16 units: \`${character}\` here is its two halves, each matched alone`,
        offset: characters[k]!.start,
        length: next.end - characters[k]!.start,
        help: `to match the character, write it outside the class, e.g. \`(?:${character}|[…])\``,
      };
    }
  }
  const set = context.ignoreCase ? caseClosure(normalize(ranges)) : normalize(ranges);
  return { text: setSyntax(element.negate ? complement(set) : set), size: 1 };
}

const STANDARD_ESCAPE = /^\\(?:[tnvfrb]|0|x[0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|c[A-Za-z])$/;

const letterEscapeHelp: Readonly<Record<string, string>> = {
  A: "for the start of the text, write `^`",
  z: "for the end of the text, write `$`",
  Z: "for the end of the text, write `$`",
  p: "Unicode property escapes need the `u` flag, which `matches` does not take; write a class such as `[A-Za-z]`",
  P: "Unicode property escapes need the `u` flag, which `matches` does not take; write a negated class such as `[^A-Za-z]`",
  k: "`\\k<name>` refers to a named group, and there is none",
  x: "`\\x` takes two hexadecimal digits, as in `\\x41`",
  u: "`\\u` takes four hexadecimal digits, as in `\\u0041`; `\\u{…}` needs the `u` flag",
};

/**
 * Annex B reads an escaped letter or digit without a meaning as the letter or digit itself, and
 * `\1`–`\7` without that many groups (or in a class) as an octal code. Nobody writes `\z`, `\p{L}`
 * or `\1` for those, so they are rejected rather than matched as something else than was meant.
 */
function checkEscape(character: AST.Character): RegexProblem | undefined {
  const raw = character.raw;
  if (!raw.startsWith("\\") || STANDARD_ESCAPE.test(raw)) return undefined;
  const at = spanOf(character);
  if (raw === "\\") {
    return { message: "`\\c` must be followed by a letter", offset: at.offset, length: 2, help: "for a backslash, write `\\\\`" };
  }
  if (raw.startsWith("\\c")) return { message: `\`${raw}\`: \`\\c\` must be followed by a letter`, ...at };
  const second = raw[1]!;
  if (/[0-9]/.test(second)) {
    const inClass = character.parent.type !== "Alternative" && character.parent.type !== "Quantifier";
    const why = inClass ? "in a class" : "refers to no group, so it";
    if (second === "8" || second === "9") {
      return { message: `\`${raw}\` ${why} would mean the digit \`${second}\``, ...at, help: `for the digit, write \`${second}\`` };
    }
    const code = character.value.toString(16).toUpperCase();
    return { message: `\`${raw}\` ${why} would be an octal escape for U+${code.padStart(4, "0")}`, ...at, help: `for that character, write \`\\x${code.padStart(2, "0")}\`` };
  }
  if (!/[A-Za-z]/.test(second)) return undefined;
  return {
    message: `\`\\${second}\` is not an escape here: without the \`u\` flag it would mean the letter \`${second}\``,
    offset: at.offset,
    length: 2,
    help: letterEscapeHelp[second] ?? `for the letter, write \`${second}\``,
  };
}

function groupContext(group: AST.Group | AST.CapturingGroup, context: Context): Context | RegexProblem {
  if (group.type === "CapturingGroup" || group.modifiers === null) return context;
  const { add, remove } = group.modifiers;
  for (const flags of [add, remove]) {
    if (flags?.multiline) {
      const offset = flags.start + flags.raw.indexOf("m");
      return { message: "the modifier `m` is not supported: the flags are `i` and `s`", offset, length: 1, help: flagHelp["m"]! };
    }
  }
  return {
    ...context,
    ignoreCase: add.ignoreCase ? true : remove?.ignoreCase ? false : context.ignoreCase,
    dotAll: add.dotAll ? true : remove?.dotAll ? false : context.dotAll,
  };
}

function translateAssertion(assertion: AST.Assertion): Translated {
  switch (assertion.kind) {
    case "start":
      return { text: "\\A", size: 1 };
    case "end":
      return { text: "\\z", size: 1 };
    case "word":
      return { text: assertion.negate ? "\\B" : "\\b", size: 1 };
    case "lookahead":
    case "lookbehind": {
      const opener = assertion.raw.slice(0, assertion.kind === "lookahead" ? 3 : 4);
      const help = assertion.negate
        ? "to require that the text has no match, write `not KEY matches /…/`; to exclude one character, use a class such as `[^…]`"
        : assertion.kind === "lookahead"
          ? "a search finds `a(?=b)` exactly where it finds `ab`: write the lookahead's pattern in place; for two conditions on one text, join two `matches` with `and`"
          : "a search finds `(?<=a)b` exactly where it finds `ab`: write the lookbehind's pattern in place";
      return { message: `\`${opener}…)\` (${assertion.negate ? "negative " : ""}${assertion.kind}) cannot be matched in linear time`, ...spanOf(assertion), help };
    }
  }
}

function translateQuantifier(quantifier: AST.Quantifier, context: Context): Translated {
  const { min, max } = quantifier;
  const countSpan = { offset: quantifier.element.end, length: quantifier.end - quantifier.element.end };
  const largest = max === Infinity ? min : max;
  if (largest > MAX_REPEAT_COUNT) {
    return {
      message: `the count ${largest} is more than ${MAX_REPEAT_COUNT}, the most a linear-time matcher repeats`,
      ...countSpan,
      help: `if the exact count does not matter, write \`+\` or \`{${Math.min(min, MAX_REPEAT_COUNT)},}\``,
    };
  }
  // RE2 bounds the product of nested `{n,m}` counts (not of `*`, `+`, `?`, which it does not unroll).
  const counted = !(max === Infinity && min <= 1) && !(min === 0 && max === 1) && largest !== 1;
  let inner = context;
  if (counted) {
    if (largest === 0) inner = { ...context, repeatsLeft: MAX_REPEAT_COUNT, outerRepeat: undefined };
    else if (largest > context.repeatsLeft) {
      const outer = context.outerRepeat!;
      const product = outer.product * largest;
      return {
        message: `these nested counts repeat ${product} times in all, more than ${MAX_REPEAT_COUNT}, the most a linear-time matcher repeats`,
        ...spanOf(outer.node),
        help: "write `*` or `+` for one of the counts if the exact count does not matter",
      };
    } else {
      const outerRepeat = context.outerRepeat === undefined ? { node: quantifier, product: largest } : { node: context.outerRepeat.node, product: context.outerRepeat.product * largest };
      inner = { ...context, repeatsLeft: Math.trunc(context.repeatsLeft / largest), outerRepeat };
    }
  }
  const element = translateElement(quantifier.element, inner);
  if (isProblem(element)) return element;
  const sub = element.size;
  let suffix: string;
  let size: number;
  if (min === 0 && max === Infinity) [suffix, size] = ["*", 2 + sub];
  else if (min === 1 && max === Infinity) [suffix, size] = ["+", 1 + sub];
  else if (min === 0 && max === 1) [suffix, size] = ["?", 1 + sub];
  else if (max === Infinity) [suffix, size] = [`{${min},}`, 1 + min * sub];
  else if (min === max) [suffix, size] = [`{${min}}`, max * sub];
  else [suffix, size] = [`{${min},${max}}`, max * sub + (max - min)];
  return checkSize(quantifier, { text: `(?:${element.text})${suffix}`, size: Math.max(1, size) });
}
