import type { Nfa } from "./nfa.js";
import { has, HIGH, LOW, MAX_UNIT, pairs, WORD, type Ranges } from "./unit-ranges.js";

/**
 * Minterms: the classes of units no automaton tells apart. The search reads one letter per class
 * (a few, when it wants several texts of one class), not every unit, and each class has a readable
 * unit to show in example texts.
 */
export interface Minterms {
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

export function mintermsOf(automata: readonly Nfa[]): Minterms | string {
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
export const MAX_LETTERS = 64;

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
