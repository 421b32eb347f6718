import type { Minterms } from "./minterms.js";
import type { Nfa } from "./nfa.js";
import { Condition } from "./position-conditions.js";

/** What is known of the unit before a position: none (the start), a word character, a high surrogate, anything else. */
const Before = { Start: 0, Word: 1, High: 2, Other: 3 } as const;
type Before = (typeof Before)[keyof typeof Before];

const ACCEPTED = 0;

/**
 * An NFA determinized on demand. A state is the set of NFA states reached so far (before their
 * ε-closure, which depends on the next unit), and what is known of the last unit read; for a
 * search, a match already found makes the state `ACCEPTED`, which stays so.
 */
export class LazyDfa {
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
