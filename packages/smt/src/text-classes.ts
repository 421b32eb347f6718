import { compileRegex, compileWildcard, isRegexProblem } from "@vigil/trace";

/**
 * The classes of texts that a set of text conditions tells apart, each with example texts: what the
 * symbolic search needs so that no text an atom can see is out of its reach, including texts that
 * several conditions on one key must meet together (`path ~ "*.env"` and `path matches /secret/`:
 * `secret.env`), or meet one and not another.
 *
 * A class is a combination of which conditions hold. Every text falls in exactly one; two texts of
 * one class are alike to every atom the conditions come from. The classes are found exactly, not
 * by guessing examples: each condition is a regular language over UTF-16 code units (a wildcard,
 * a regular expression, equality with a constant), made into an automaton, and a breadth-first
 * search over the product of the automata, from the empty text, visits every combination of their
 * states that some text reaches. Which conditions hold on a text depends only on the combination
 * it reaches, so the combinations visited are every class there is, each with its shortest texts.
 * The search ends because there are finitely many combinations, each kept with at most `perClass`
 * texts; it is bounded by `limits`, and says so when it stops short (`incomplete`).
 *
 * Why this and not Z3's string theory: the languages are read off the matchers' own translations,
 * `compileWildcard(…).re2` and `compileRegex(…).re2` (the RE2 patterns the forward engine runs,
 * where every character set is already explicit and case folding already closed), so no meaning
 * of a wildcard or of ECMAScript's `/…/i`, `\b` or `.` is restated in a second engine's terms
 * (Z3's regexes have no `\b`, and read characters as code points where ECMAScript without `u`
 * reads UTF-16 units). Every example text is then checked against the real matchers before it is
 * used (`universeOf` keeps only what `compileAtom` agrees with), so a mistake here can only lose a
 * class, never make a wrong one; and the search is exhaustive by construction, which a solver's
 * `unknown` on a string query is not.
 *
 * Texts are sequences of UTF-16 code units, as JavaScript strings are. A regular expression (read
 * without `u`) tests units; a wildcard tests code points, so each of its character tests is
 * spelled over units: a character of the Basic Multilingual Plane is one unit, an astral one a
 * high and a low surrogate, and a lone surrogate one unit that is not part of a pair (a high one
 * not followed by a low one, a low one not preceded by a high one), which is how `codePointAt`
 * reads a string.
 */
export type TextCondition =
  | { readonly kind: "wildcard"; readonly pattern: string }
  | { readonly kind: "regex"; readonly source: string; readonly flags: string }
  | { readonly kind: "equals"; readonly text: string };

export interface TextClass {
  /** Per condition (in the order given), whether it holds on the texts of this class. */
  readonly holds: readonly boolean[];
  /** Up to `perClass` texts of the class, shortest first; fewer only when the class has no more. */
  readonly texts: readonly string[];
}

export interface TextClasses {
  readonly classes: readonly TextClass[];
  /** Set when the search stopped short (a limit reached, a pattern it cannot read): some class may be missing. */
  readonly incomplete?: string;
}

export interface TextClassLimits {
  /** The most combinations of automaton states visited (default 20,000). */
  readonly states?: number;
  /** The most steps of the search, a step being one combination followed by one character (default 4,000,000). */
  readonly steps?: number;
}

/** Every class of texts the conditions tell apart, with up to `perClass` texts each. */
export function textClasses(conditions: readonly TextCondition[], perClass: number, limits: TextClassLimits = {}): TextClasses {
  if (perClass > MAX_LETTERS) {
    const fewer = textClasses(conditions, MAX_LETTERS, limits);
    return { ...fewer, incomplete: fewer.incomplete ?? `more than ${MAX_LETTERS} texts of one class were asked for` };
  }
  const automata: Nfa[] = [];
  for (const condition of conditions) {
    const built = automatonOf(condition);
    if (typeof built === "string") return { classes: [], incomplete: built };
    automata.push(built);
  }
  const minterms = mintermsOf(automata);
  if (typeof minterms === "string") return { classes: [], incomplete: minterms };
  const dfas = automata.map((nfa, index) => new LazyDfa(nfa, index, minterms));
  const maxStates = limits.states ?? 20_000;
  const maxSteps = limits.steps ?? 4_000_000;

  interface Combination {
    readonly holds: boolean[];
    readonly texts: { text: string; order: number }[];
  }
  const combinations = new Map<string, Combination>();
  const queue: { states: number[]; text: string }[] = [];
  let order = 0;
  let incomplete: string | undefined;
  const visit = (states: number[], text: string): void => {
    const key = states.join(",");
    let combination = combinations.get(key);
    if (combination === undefined) {
      if (combinations.size >= maxStates) {
        incomplete ??= `more than ${maxStates.toLocaleString("en")} combinations of its patterns' states`;
        return;
      }
      combinations.set(key, (combination = { holds: dfas.map((dfa, k) => dfa.accepts(states[k]!)), texts: [] }));
    }
    if (combination.texts.length >= perClass) return;
    combination.texts.push({ text, order: order++ });
    queue.push({ states, text });
  };
  visit(
    dfas.map((dfa) => dfa.start()),
    "",
  );
  // The letters of the search: up to `perClass` units of each minterm, so that a class with that
  // many texts shows that many. (Were a text of the class to use another unit, its minterm would
  // have more than `perClass` units, and the text with each letter in its place instead would be
  // that many texts of the class.)
  const letters = minterms.order.flatMap((minterm) => minterms.units[minterm]!.slice(0, Math.max(1, perClass)).map((unit) => ({ minterm, unit })));
  let steps = 0;
  for (let head = 0; head < queue.length && incomplete === undefined; head++) {
    const { states, text } = queue[head]!;
    const next = new Map<number, number[]>();
    for (const { minterm, unit } of letters) {
      if (++steps > maxSteps) {
        incomplete = `more than ${maxSteps.toLocaleString("en")} steps of the search`;
        break;
      }
      let reached = next.get(minterm);
      if (reached === undefined) next.set(minterm, (reached = dfas.map((dfa, k) => dfa.next(states[k]!, minterm))));
      visit(reached, text + String.fromCharCode(unit));
    }
  }
  const byHolds = new Map<string, { holds: boolean[]; texts: { text: string; order: number }[] }>();
  for (const combination of combinations.values()) {
    const key = combination.holds.map((h) => (h ? "1" : "0")).join("");
    const known = byHolds.get(key);
    if (known === undefined) byHolds.set(key, { holds: combination.holds, texts: [...combination.texts] });
    else known.texts.push(...combination.texts);
  }
  const classes = [...byHolds.values()].map(({ holds, texts }) => ({
    holds,
    texts: texts
      .sort((a, b) => a.order - b.order)
      .slice(0, perClass)
      .map((t) => t.text),
  }));
  return incomplete === undefined ? { classes } : { classes, incomplete };
}

// ---- sets of UTF-16 code units (or of code points): sorted inclusive ranges [lo, hi, lo, hi, …] ----

type Ranges = number[];

const MAX_UNIT = 0xffff;
const HIGH: Ranges = [0xd800, 0xdbff];
const LOW: Ranges = [0xdc00, 0xdfff];
const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];

function normalized(pairs: readonly (readonly [number, number])[]): Ranges {
  const sorted = [...pairs].filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    if (out.length > 0 && lo <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

function pairs(ranges: Ranges): [number, number][] {
  const out: [number, number][] = [];
  for (let k = 0; k < ranges.length; k += 2) out.push([ranges[k]!, ranges[k + 1]!]);
  return out;
}

function intersect(a: Ranges, lo: number, hi: number): Ranges {
  const out: number[] = [];
  for (const [l, h] of pairs(a)) {
    const from = Math.max(l, lo);
    const to = Math.min(h, hi);
    if (from <= to) out.push(from, to);
  }
  return out;
}

function complementOf(ranges: Ranges, max: number): Ranges {
  const out: number[] = [];
  let next = 0;
  for (const [lo, hi] of pairs(ranges)) {
    if (lo > next) out.push(next, lo - 1);
    next = hi + 1;
  }
  if (next <= max) out.push(next, max);
  return out;
}

function has(ranges: Ranges, unit: number): boolean {
  for (let k = 0; k < ranges.length; k += 2) if (unit >= ranges[k]! && unit <= ranges[k + 1]!) return true;
  return false;
}

// ---- the RE2 patterns the matchers run, read back --------------------------------------------

/**
 * A pattern of the RE2 subset that `compileRegex` and `compileWildcard` write: alternation,
 * concatenation, `(?:…)` and `(?s:…)` groups, `*` `+` `?` `{n}` `{n,}` `{n,m}`, classes of code
 * points (`[…]`, `[^…]`, ranges, `\x{…}` escapes), `.`, and the assertions `\A` `\z` `\b` `\B`.
 */
type Node =
  | { readonly t: "set"; readonly ranges: Ranges }
  | { readonly t: "cat"; readonly items: readonly Node[] }
  | { readonly t: "alt"; readonly items: readonly Node[] }
  | { readonly t: "rep"; readonly item: Node; readonly min: number; readonly max: number }
  | { readonly t: "assert"; readonly kind: Condition };

const MAX_CODE_POINT = 0x10ffff;

class Re2Reader {
  private at = 0;
  constructor(private readonly text: string) {}

  read(): Node {
    const node = this.alternatives(false);
    if (this.at !== this.text.length) throw new Error(`unexpected \`${this.text[this.at]}\` at ${this.at}`);
    return node;
  }

  private alternatives(dotAll: boolean): Node {
    const items = [this.sequence(dotAll)];
    while (this.text[this.at] === "|") {
      this.at++;
      items.push(this.sequence(dotAll));
    }
    return items.length === 1 ? items[0]! : { t: "alt", items };
  }

  private sequence(dotAll: boolean): Node {
    const items: Node[] = [];
    while (this.at < this.text.length && this.text[this.at] !== "|" && this.text[this.at] !== ")") items.push(this.quantified(dotAll));
    return { t: "cat", items };
  }

  private quantified(dotAll: boolean): Node {
    let node = this.atom(dotAll);
    for (;;) {
      const c = this.text[this.at];
      let min: number;
      let max: number;
      if (c === "*") [min, max] = [0, Infinity];
      else if (c === "+") [min, max] = [1, Infinity];
      else if (c === "?") [min, max] = [0, 1];
      else if (c === "{" && /^\{\d+(,\d*)?\}/.test(this.text.slice(this.at))) {
        const match = /^\{(\d+)(,(\d*))?\}/.exec(this.text.slice(this.at))!;
        min = Number(match[1]);
        max = match[2] === undefined ? min : match[3] === "" ? Infinity : Number(match[3]);
        this.at += match[0].length - 1;
      } else return node;
      this.at++;
      // Greedy and lazy repetition match the same texts.
      if (this.text[this.at] === "?") this.at++;
      node = { t: "rep", item: node, min, max };
    }
  }

  private atom(dotAll: boolean): Node {
    const c = this.text[this.at]!;
    if (c === "(") {
      const flags = /^\(\?([a-zA-Z-]*):/.exec(this.text.slice(this.at));
      if (flags === null) throw new Error("a group of another kind than `(?:…)`");
      this.at += flags[0].length;
      const [on, off = ""] = flags[1]!.split("-");
      if (/[^s]/.test(on! + off)) throw new Error(`the flags \`${flags[1]}\``);
      const inner = this.alternatives(on!.includes("s") ? true : off.includes("s") ? false : dotAll);
      if (this.text[this.at] !== ")") throw new Error("an unclosed group");
      this.at++;
      return inner;
    }
    if (c === "[") return this.characterClass();
    if (c === ".") {
      this.at++;
      return { t: "set", ranges: dotAll ? [0, MAX_CODE_POINT] : complementOf([0x0a, 0x0a], MAX_CODE_POINT) };
    }
    if (c === "^" || c === "$") {
      this.at++;
      return { t: "assert", kind: c === "^" ? Condition.AtStart : Condition.AtEnd };
    }
    if (c === "\\") {
      const next = this.text[this.at + 1];
      const assertion = next === "A" ? Condition.AtStart : next === "z" ? Condition.AtEnd : next === "b" ? Condition.WordBoundary : next === "B" ? Condition.NotWordBoundary : undefined;
      if (assertion !== undefined) {
        this.at += 2;
        return { t: "assert", kind: assertion };
      }
    }
    const point = this.character();
    return { t: "set", ranges: [point, point] };
  }

  /** One character, as written: `\x{…}`, an escaped punctuation character, or itself. */
  private character(): number {
    const c = this.text[this.at]!;
    if (c === "\\") {
      const hex = /^\\x\{([0-9A-Fa-f]+)\}/.exec(this.text.slice(this.at));
      if (hex !== null) {
        this.at += hex[0].length;
        return parseInt(hex[1]!, 16);
      }
      const escaped = this.text.codePointAt(this.at + 1);
      if (escaped === undefined || /[A-Za-z0-9]/.test(String.fromCodePoint(escaped))) throw new Error(`the escape \`${this.text.slice(this.at, this.at + 2)}\``);
      this.at += 1 + (escaped > 0xffff ? 2 : 1);
      return escaped;
    }
    const point = this.text.codePointAt(this.at)!;
    this.at += point > 0xffff ? 2 : 1;
    return point;
  }

  private characterClass(): Node {
    this.at++;
    const negated = this.text[this.at] === "^";
    if (negated) this.at++;
    const ranges: [number, number][] = [];
    let first = true;
    while (this.text[this.at] !== "]" || first) {
      if (this.at >= this.text.length) throw new Error("an unclosed class");
      first = false;
      const low = this.character();
      if (this.text[this.at] === "-" && this.text[this.at + 1] !== "]") {
        this.at++;
        ranges.push([low, this.character()]);
      } else ranges.push([low, low]);
    }
    this.at++;
    const set = normalized(ranges);
    return { t: "set", ranges: negated ? complementOf(set, MAX_CODE_POINT) : set };
  }
}

// ---- automata over UTF-16 code units ---------------------------------------------------------

/** What an ε-move requires of the units on either side of the position. */
const Condition = {
  None: 0,
  AtStart: 1,
  AtEnd: 2,
  WordBoundary: 3,
  NotWordBoundary: 4,
  /** The next unit is not a low surrogate (a high one just read was alone). */
  NextNotLow: 5,
  /** The previous unit is not a high surrogate (a low one about to be read is alone). */
  PreviousNotHigh: 6,
} as const;
type Condition = (typeof Condition)[keyof typeof Condition];

/** What is known of the unit before a position: none (the start), a word character, a high surrogate, anything else. */
const Before = { Start: 0, Word: 1, High: 2, Other: 3 } as const;
type Before = (typeof Before)[keyof typeof Before];

interface Nfa {
  /** Per state, the unit-consuming moves: the set of units, and the state reached. */
  readonly moves: { readonly set: Ranges; readonly to: number }[][];
  readonly epsilons: { readonly to: number; readonly condition: Condition }[][];
  readonly start: number;
  readonly final: number;
  /** Whether the condition holds when some substring matches (a regular expression's search), rather than the whole text. */
  readonly search: boolean;
  /** Whether some ε-move reads the unit before its position (`\b`, `\B`, a lone low surrogate). */
  readonly readsBefore: boolean;
}

class NfaBuilder {
  readonly moves: { set: Ranges; to: number }[][] = [];
  readonly epsilons: { to: number; condition: Condition }[][] = [];
  private states = 0;

  constructor(private readonly units: "units" | "codePoints") {}

  state(): number {
    this.moves.push([]);
    this.epsilons.push([]);
    return this.states++;
  }

  epsilon(from: number, to: number, condition: Condition = Condition.None): void {
    this.epsilons[from]!.push({ to, condition });
  }

  move(from: number, set: Ranges, to: number): void {
    if (set.length > 0) this.moves[from]!.push({ set, to });
  }

  /** A fragment for the node, between fresh states. */
  build(node: Node): { from: number; to: number } {
    const from = this.state();
    const to = this.state();
    switch (node.t) {
      case "set":
        this.character(from, node.ranges, to);
        break;
      case "assert":
        this.epsilon(from, to, node.kind);
        break;
      case "cat": {
        let at = from;
        for (const item of node.items) {
          const part = this.build(item);
          this.epsilon(at, part.from);
          at = part.to;
        }
        this.epsilon(at, to);
        break;
      }
      case "alt":
        for (const item of node.items) {
          const part = this.build(item);
          this.epsilon(from, part.from);
          this.epsilon(part.to, to);
        }
        break;
      case "rep": {
        let at = from;
        for (let k = 0; k < node.min; k++) {
          const part = this.build(node.item);
          this.epsilon(at, part.from);
          at = part.to;
        }
        if (node.max === Infinity) {
          const loop = this.state();
          this.epsilon(at, loop);
          const part = this.build(node.item);
          this.epsilon(loop, part.from);
          this.epsilon(part.to, loop);
          this.epsilon(loop, to);
        } else {
          for (let k = node.min; k < node.max; k++) {
            this.epsilon(at, to);
            const part = this.build(node.item);
            this.epsilon(at, part.from);
            at = part.to;
          }
          this.epsilon(at, to);
        }
        break;
      }
    }
    return { from, to };
  }

  /** One character of the set: one unit, or for code points, a surrogate pair or a lone surrogate. */
  private character(from: number, ranges: Ranges, to: number): void {
    if (this.units === "units") {
      // `compileRegex` writes a surrogate unit as a code point of plane 15 (U+F0000 + its offset).
      const plain = intersect(ranges, 0, MAX_UNIT);
      const moved = intersect(ranges, 0xf0000, 0xf07ff).map((point) => point - 0xf0000 + 0xd800);
      this.move(from, normalized([...pairs(plain), ...pairs(moved)]), to);
      return;
    }
    this.move(from, normalized([...pairs(intersect(ranges, 0, 0xd7ff)), ...pairs(intersect(ranges, 0xe000, MAX_UNIT))]), to);
    const highs = intersect(ranges, 0xd800, 0xdbff);
    if (highs.length > 0) {
      const middle = this.state();
      this.move(from, highs, middle);
      this.epsilon(middle, to, Condition.NextNotLow);
    }
    const lows = intersect(ranges, 0xdc00, 0xdfff);
    if (lows.length > 0) {
      const middle = this.state();
      this.epsilon(from, middle, Condition.PreviousNotHigh);
      this.move(middle, lows, to);
    }
    // Astral code points: each range as boxes of (high surrogates) × (low surrogates).
    for (const [lo, hi] of pairs(intersect(ranges, 0x10000, MAX_CODE_POINT))) {
      const high = (point: number) => 0xd800 + ((point - 0x10000) >> 10);
      const low = (point: number) => 0xdc00 + ((point - 0x10000) & 0x3ff);
      const box = (highs: [number, number], lows: [number, number]) => {
        if (highs[0] > highs[1] || lows[0] > lows[1]) return;
        const middle = this.state();
        this.move(from, [highs[0], highs[1]], middle);
        this.move(middle, [lows[0], lows[1]], to);
      };
      if (high(lo) === high(hi)) box([high(lo), high(lo)], [low(lo), low(hi)]);
      else {
        box([high(lo), high(lo)], [low(lo), 0xdfff]);
        box([high(lo) + 1, high(hi) - 1], [0xdc00, 0xdfff]);
        box([high(hi), high(hi)], [0xdc00, low(hi)]);
      }
    }
  }
}

/** The most NFA states a condition may take (a pattern with large counts is unrolled). */
const MAX_NFA_STATES = 200_000;

function automatonOf(condition: TextCondition): Nfa | string {
  let pattern: string;
  let units: "units" | "codePoints";
  let search: boolean;
  let shown: string;
  switch (condition.kind) {
    case "equals": {
      const builder = new NfaBuilder("units");
      const start = builder.state();
      let at = start;
      for (let k = 0; k < condition.text.length; k++) {
        const next = builder.state();
        const unit = condition.text.charCodeAt(k);
        builder.move(at, [unit, unit], next);
        at = next;
      }
      return { moves: builder.moves, epsilons: builder.epsilons, start, final: at, search: false, readsBefore: false };
    }
    case "wildcard": {
      const compiled = compileWildcard(condition.pattern);
      if (!compiled.ok) return `the wildcard ${JSON.stringify(condition.pattern)} does not compile`;
      [pattern, units, search, shown] = [compiled.re2, "codePoints", false, `the wildcard ${JSON.stringify(condition.pattern)}`];
      break;
    }
    case "regex": {
      const compiled = compileRegex(condition.source, condition.flags);
      if (isRegexProblem(compiled)) return `the regular expression /${condition.source}/${condition.flags} does not compile`;
      [pattern, units, search, shown] = [compiled.re2, "units", true, `the regular expression /${condition.source}/${condition.flags}`];
      break;
    }
  }
  let node: Node;
  try {
    node = new Re2Reader(pattern).read();
  } catch (error) {
    return `${shown} could not be read as an automaton (${error instanceof Error ? error.message : String(error)})`;
  }
  const builder = new NfaBuilder(units);
  let fragment: { from: number; to: number };
  try {
    fragment = buildBounded(builder, node);
  } catch {
    return `${shown} makes an automaton of more than ${MAX_NFA_STATES.toLocaleString("en")} states`;
  }
  const readsBefore = builder.epsilons.some((list) =>
    list.some((e) => e.condition === Condition.WordBoundary || e.condition === Condition.NotWordBoundary || e.condition === Condition.PreviousNotHigh),
  );
  return { moves: builder.moves, epsilons: builder.epsilons, start: fragment.from, final: fragment.to, search, readsBefore };
}

function buildBounded(builder: NfaBuilder, node: Node): { from: number; to: number } {
  // A rough count first: counted repetition multiplies its item.
  const size = (n: Node): number => {
    switch (n.t) {
      case "set":
      case "assert":
        return 4;
      case "cat":
      case "alt":
        return 2 + n.items.reduce((sum, item) => sum + size(item), 0);
      case "rep":
        return 3 + size(n.item) * Math.max(1, n.max === Infinity ? n.min + 1 : n.max);
    }
  };
  if (size(node) > MAX_NFA_STATES) throw new Error("too large");
  return builder.build(node);
}

// ---- minterms: the classes of units no automaton tells apart ---------------------------------

interface Minterms {
  /** How many there are. */
  readonly count: number;
  /** Per minterm, the unit that stands for it in example texts. */
  readonly representative: readonly number[];
  /** Per minterm, its most readable units (a few), the representative first. */
  readonly units: readonly (readonly number[])[];
  /** The minterms in the order the search tries them: the most readable representatives first. */
  readonly order: readonly number[];
  /** Per minterm, what an ε-condition needs to know of it. */
  readonly word: readonly boolean[];
  readonly high: readonly boolean[];
  readonly low: readonly boolean[];
  /** Per automaton, per state, per move: whether the move reads the minterm. */
  readonly reads: readonly (readonly (readonly Uint8Array[])[])[];
}

/** The most minterms (units no automaton tells apart, grouped) a search takes on. */
const MAX_MINTERMS = 2_000;

function mintermsOf(automata: readonly Nfa[]): Minterms | string {
  const sets: Ranges[] = [HIGH, LOW, WORD];
  for (const nfa of automata) for (const list of nfa.moves) for (const move of list) sets.push(move.set);
  // Cut points: where some set starts or ends.
  const cuts = new Set<number>([0, MAX_UNIT + 1]);
  for (const set of sets) for (const [lo, hi] of pairs(set)) cuts.add(lo).add(hi + 1);
  const bounds = [...cuts].sort((a, b) => a - b);
  const intervals = bounds.length - 1;
  if (intervals * sets.length > 50_000_000) return `its patterns' characters are too many to tell apart (${sets.length} sets, ${intervals} intervals)`;
  const intervalOf = (unit: number): number => {
    let low = 0;
    let high = intervals - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (bounds[middle]! <= unit) low = middle;
      else high = middle - 1;
    }
    return low;
  };
  // Each interval's signature: the sets that hold it.
  const signature: string[] = new Array<string>(intervals).fill("");
  sets.forEach((set, index) => {
    for (const [lo, hi] of pairs(set)) for (let k = intervalOf(lo); k < intervals && bounds[k]! <= hi; k++) signature[k] += `${index},`;
  });
  const mintermOfSignature = new Map<string, number>();
  const mintermOfInterval: number[] = [];
  const members: [number, number][][] = [];
  for (let k = 0; k < intervals; k++) {
    let id = mintermOfSignature.get(signature[k]!);
    if (id === undefined) {
      mintermOfSignature.set(signature[k]!, (id = members.length));
      members.push([]);
    }
    mintermOfInterval.push(id);
    members[id]!.push([bounds[k]!, bounds[k + 1]! - 1]);
  }
  const count = members.length;
  if (count > MAX_MINTERMS) return `its patterns tell apart more than ${MAX_MINTERMS.toLocaleString("en")} kinds of characters`;
  // Each minterm's most readable units: the preferred ones it holds, then the first few of each range.
  const units = members.map((ranges) => {
    const candidates = new Set<number>();
    for (const [lo, hi] of ranges) {
      for (const unit of PREFERRED) if (unit >= lo && unit <= hi) candidates.add(unit);
      for (let unit = lo; unit <= Math.min(hi, lo + 64); unit++) candidates.add(unit);
    }
    return [...candidates].sort((a, b) => rank(a) - rank(b) || a - b).slice(0, MAX_LETTERS);
  });
  const representative = units.map((list) => list[0]!);
  const order = Array.from({ length: count }, (_, k) => k).sort((a, b) => rank(representative[a]!) - rank(representative[b]!) || representative[a]! - representative[b]!);
  const reads = automata.map((nfa) =>
    nfa.moves.map((list) =>
      list.map((move) => {
        const bits = new Uint8Array(count);
        for (const [lo, hi] of pairs(move.set)) for (let k = intervalOf(lo); k < intervals && bounds[k]! <= hi; k++) bits[mintermOfInterval[k]!] = 1;
        return bits;
      }),
    ),
  );
  return {
    count,
    representative,
    units,
    order,
    word: representative.map((unit) => has(WORD, unit)),
    high: representative.map((unit) => has(HIGH, unit)),
    low: representative.map((unit) => has(LOW, unit)),
    reads,
  };
}

/** The most units of one minterm a search uses as distinct letters. */
const MAX_LETTERS = 64;

/** Units that make readable examples, most readable first. */
const PREFERRED: readonly number[] = Array.from("xyzabcdefghijklmnopqrstuvwXYZABCDEFGHIJKLMNOPQRSTUVW0123456789_-./: ", (c) => c.charCodeAt(0));

function rank(unit: number): number {
  const preferred = PREFERRED.indexOf(unit);
  if (preferred >= 0) return preferred;
  if (unit > 0x20 && unit < 0x7f) return 100 + unit;
  if (unit >= 0xa1 && unit <= 0xff) return 1_000 + unit;
  if (unit >= 0x100 && unit < 0xd800 && !(unit >= 0x2000 && unit <= 0x206f)) return 10_000 + unit;
  if (unit >= 0xe000) return 100_000 + unit;
  // Control characters, separators, surrogates: last.
  return 1_000_000 + unit;
}

// ---- the lazy subset construction ------------------------------------------------------------

const ACCEPTED = 0;

/**
 * An NFA determinized on demand. A state is the set of NFA states reached so far (before their
 * ε-closure, which depends on the next unit), and what is known of the last unit read; for a
 * search, a match already found makes the state `ACCEPTED`, which stays so.
 */
class LazyDfa {
  private readonly ids = new Map<string, number>();
  private readonly sets: number[][] = [];
  private readonly before: Before[] = [];
  private readonly transitions: Int32Array[] = [];
  private readonly accepting: (boolean | undefined)[] = [];
  constructor(
    private readonly nfa: Nfa,
    /** Its place among the automata of the search: the row of `minterms.reads` that is its. */
    private readonly index: number,
    private readonly minterms: Minterms,
  ) {
    // State 0: a match found (searches only).
    this.sets.push([]);
    this.before.push(Before.Other);
    this.transitions.push(new Int32Array(minterms.count).fill(ACCEPTED));
    this.accepting.push(true);
  }

  start(): number {
    return this.intern([this.nfa.start], Before.Start);
  }

  private intern(states: number[], before: Before): number {
    const set = [...new Set(states)].sort((a, b) => a - b);
    const known = this.nfa.readsBefore || before === Before.Start ? before : Before.Other;
    const key = `${known}:${set.join(",")}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.sets.length;
      this.ids.set(key, id);
      this.sets.push(set);
      this.before.push(known);
      this.transitions.push(new Int32Array(this.minterms.count).fill(-1));
      this.accepting.push(undefined);
    }
    return id;
  }

  /** The ε-closure of a set, between a unit of the kind `before` and the next one (a minterm, or the end). */
  private closure(states: readonly number[], before: Before, next: number | "end"): Set<number> {
    const seen = new Set(states);
    const stack = [...states];
    while (stack.length > 0) {
      const state = stack.pop()!;
      for (const { to, condition } of this.nfa.epsilons[state]!) {
        if (seen.has(to) || !this.allows(condition, before, next)) continue;
        seen.add(to);
        stack.push(to);
      }
    }
    return seen;
  }

  private allows(condition: Condition, before: Before, next: number | "end"): boolean {
    switch (condition) {
      case Condition.None:
        return true;
      case Condition.AtStart:
        return before === Before.Start;
      case Condition.AtEnd:
        return next === "end";
      case Condition.WordBoundary:
      case Condition.NotWordBoundary: {
        const boundary = (before === Before.Word) !== (next !== "end" && this.minterms.word[next]!);
        return boundary === (condition === Condition.WordBoundary);
      }
      case Condition.NextNotLow:
        return next === "end" || !this.minterms.low[next]!;
      case Condition.PreviousNotHigh:
        return before !== Before.High;
    }
  }

  next(state: number, minterm: number): number {
    const known = this.transitions[state]![minterm]!;
    if (known >= 0) return known;
    const closure = this.closure(this.sets[state]!, this.before[state]!, minterm);
    let result: number;
    if (this.nfa.search && closure.has(this.nfa.final)) result = ACCEPTED;
    else {
      const reached: number[] = [];
      const reads = this.minterms.reads[this.index]!;
      for (const from of closure) {
        const moves = this.nfa.moves[from]!;
        for (let k = 0; k < moves.length; k++) if (reads[from]![k]![minterm] === 1) reached.push(moves[k]!.to);
      }
      // A search may start a match at every position.
      if (this.nfa.search) reached.push(this.nfa.start);
      const before = this.minterms.word[minterm] ? Before.Word : this.minterms.high[minterm] ? Before.High : Before.Other;
      result = this.intern(reached, before);
    }
    this.transitions[state]![minterm] = result;
    return result;
  }

  accepts(state: number): boolean {
    let known = this.accepting[state];
    if (known === undefined) {
      known = this.closure(this.sets[state]!, this.before[state]!, "end").has(this.nfa.final);
      this.accepting[state] = known;
    }
    return known;
  }
}
