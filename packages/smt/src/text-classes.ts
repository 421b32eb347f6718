import { compileRegex, compileWildcard, isRegexProblem } from "@vigil/trace";
import { LazyDfa } from "./text-automata/lazy-dfa.js";
import { MAX_LETTERS, mintermsOf } from "./text-automata/minterms.js";
import { NfaBuilder, type Nfa } from "./text-automata/nfa.js";
import { Condition } from "./text-automata/position-conditions.js";
import { Re2Reader, type Node } from "./text-automata/re2-pattern.js";

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

/** The most NFA states a condition may take (a pattern with large counts is unrolled). */
const MAX_NFA_STATES = 200_000;

/** A condition as an automaton over UTF-16 units, or why it could not be made one. */
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
