import type { CheckedStatement } from "@vigil/checker";
import { evaluateStatement } from "@vigil/engine";
import type { TraceEvent } from "@vigil/trace";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onlyStatement, policyText } from "../../../test/arbitraries.js";
import { compareStatements, SymbolicSearch } from "../src/analysis.js";
import { universeOf } from "../src/candidate-values.js";
import { eventOf, type EventChoice } from "../src/symbolic-events.js";
import { cases } from "../../../test/support/tier.js";

/**
 * `compareStatements` against brute force: for random pairs of rules, every run of up to two events
 * over a small alphabet (the pair's actions, each status, none or the first two candidates of each
 * root, a few gaps of time) is judged by the forward engine; where one rule holds and the other
 * breaks, the comparison must have found a run the second rejects. And every run it reports must
 * replay: the forward engine confirms it. 25 cases (each a pair that has an alphabet) in the heavy
 * tier, 10 in the fast one (test/support/tier.ts), alphabets of at most 150 events.
 */
const runs = cases(10, 25);
const DEPTH = 2;

function alphabet(statements: readonly CheckedStatement[]): TraceEvent[] | undefined {
  const universe = universeOf(statements, { runLength: DEPTH });
  let choices: Omit<EventChoice, "time">[] = [];
  for (let action = 0; action < universe.actions.length; action++) for (let status = 0; status < 3; status++) choices.push({ action, status, roots: [] });
  for (const root of universe.roots) {
    // None, and the root's first two candidates (the policies' own values come first).
    choices = choices.flatMap((choice) => Array.from({ length: Math.min(3, root.candidates.length + 1) }, (_, candidate) => ({ ...choice, roots: [...choice.roots, candidate] })));
    if (choices.length > 150) return undefined;
  }
  return choices.map((choice) => eventOf(universe, choice, 1));
}

/** Every run of up to `depth` events of the alphabet, times spaced by each gap in turn when timed. */
function* allRuns(events: readonly TraceEvent[], depth: number, timed: boolean): Generator<TraceEvent[]> {
  const gaps = timed ? [0, 1_000, 2_000, 300_000, 3_600_000] : [undefined];
  for (let length = 1; length <= depth; length++) {
    const indexes = new Array<number>(length).fill(0);
    for (;;) {
      for (const gap of gaps) yield indexes.map((index, position) => ({ ...events[index]!, position: position + 1, ...(gap !== undefined ? { time: position * gap } : {}) }));
      let carry = length - 1;
      while (carry >= 0 && ++indexes[carry]! === events.length) indexes[carry--] = 0;
      if (carry < 0) break;
    }
  }
}

describe("comparing rules over symbolic runs", () => {
  let search: SymbolicSearch;
  beforeAll(async () => {
    search = await SymbolicSearch.create();
  });
  afterAll(async () => {
    await search.dispose();
  });

  it(`misses no difference brute force finds in runs of up to ${DEPTH} events, and every run it reports replays (${runs} pairs)`, async () => {
    let compared = 0;
    await fc.assert(
      fc.asyncProperty(policyText, policyText, async (oldText, newText) => {
        const old = onlyStatement(oldText);
        const next = onlyStatement(newText);
        const events = alphabet([old, next]);
        // A pair with no alphabet to enumerate is skipped, not counted: every counted run compares.
        fc.pre(events !== undefined);
        compared++;
        const difference = await compareStatements(search, [old], [next], DEPTH);
        expect(difference.unknown).toBeUndefined();
        for (const counterexample of difference.counterexamples) expect(counterexample.confirmed, `${oldText}${newText}`).toBe(true);
        const found = { new: false, old: false };
        const timed = universeOf([old, next]).timed;
        for (const run of allRuns(events!, DEPTH, timed)) {
          const oldHolds = evaluateStatement(old, run).holds;
          const newHolds = evaluateStatement(next, run).holds;
          if (oldHolds && !newHolds) found.new = true;
          if (newHolds && !oldHolds) found.old = true;
          if (found.new && found.old) break;
        }
        const reported = { new: difference.counterexamples.some((c) => c.rejectedBy === "new"), old: difference.counterexamples.some((c) => c.rejectedBy === "old") };
        // What brute force finds, the comparison finds (it may find more: it searches every time and value).
        if (found.new) expect(reported.new, `${oldText}${newText}`).toBe(true);
        if (found.old) expect(reported.old, `${oldText}${newText}`).toBe(true);
      }),
      { numRuns: runs },
    );
    expect(compared).toBe(runs);
  }, 600_000);
});
