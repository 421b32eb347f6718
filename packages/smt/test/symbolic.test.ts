import { evaluateStatement } from "@vigil/engine";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onlyStatement, policyText } from "../../../test/arbitraries.js";
import { universeOf } from "../src/candidate-values.js";
import type { Universe } from "../src/symbolic.js";
import { eventOf, type EventChoice } from "../src/symbolic-events.js";
import { SymbolicRun } from "../src/symbolic-run.js";
import { acquireZ3, releaseZ3, type Z3Api } from "../src/z3-runtime.js";
import { Session, Z3_L_TRUE } from "../src/z3-session.js";
import { cases } from "../../../test/support/tier.js";

/**
 * The symbolic semantics against the forward engine: for random policies (as text) and random runs
 * of the policy's universe, the symbolic encoding with every choice fixed to the run must say
 * exactly which events break the statement, as `evaluateStatement` does on the concrete events the
 * choices make (`eventOf`, what a counterexample holds). 500 cases in the heavy tier, 50 in the fast
 * one (test/support/tier.ts).
 */
const runs = cases(50, 500);

/** Raw choices, made into a run of the universe: indexes taken modulo what each choice allows. */
const rawEvents = fc.array(
  fc.record({
    action: fc.nat(),
    status: fc.nat(2),
    values: fc.array(fc.nat(), { minLength: 8, maxLength: 8 }),
    gap: fc.constantFrom(0, 0, 500, 1_000, 2_000, 60_000, 300_000, 3_600_000),
  }),
  { minLength: 1, maxLength: 5 },
);

function choicesOf(universe: Universe, raw: readonly { action: number; status: number; values: number[]; gap: number }[]): EventChoice[] {
  let time = 0;
  return raw.map((event) => ({
    action: event.action % universe.actions.length,
    status: event.status,
    roots: universe.roots.map((root, index) => event.values[index % event.values.length]! % (root.candidates.length + 1)),
    ...(universe.timed ? { time: (time += event.gap) } : {}),
  }));
}

describe("the symbolic semantics agrees with the forward engine", () => {
  let api: Z3Api;
  beforeAll(async () => {
    api = await acquireZ3();
  });
  afterAll(async () => {
    await releaseZ3();
  });

  it(`on ${runs} random policies and runs: the same events break each statement`, async () => {
    await fc.assert(
      fc.asyncProperty(policyText, rawEvents, async (source, raw) => {
        const statement = onlyStatement(source);
        const universe = universeOf([statement]);
        const choices = choicesOf(universe, raw);
        const events = choices.map((choice, index) => eventOf(universe, choice, index + 1));
        const expected = evaluateStatement(statement, events);
        expect(expected.undecided, source).toBeUndefined();
        const run = new SymbolicRun(universe, events.length);
        // The terms first: building them may define constants of their own.
        const terms = events.map((_, index) => run.violationAt(statement, index + 1));
        const lines = [...run.declarations, ...run.fixedTo(choices)];
        terms.forEach((term, index) => lines.push(`(declare-const w_${index + 1} Bool)`, `(assert (= w_${index + 1} ${term}))`));
        const session = Session.open(api.Z3, 30_000);
        try {
          const solver = session.solver();
          session.load(solver, lines.join("\n"));
          expect(await session.check(solver, [])).toBe(Z3_L_TRUE);
          const broken = session.modelValues(
            solver,
            events.map((_, index) => ({ name: `w_${index + 1}`, sort: "Bool" as const })),
          );
          const witnesses = broken.flatMap((value, index) => (value === true ? [index + 1] : []));
          expect(witnesses, `${source}\n${JSON.stringify(events)}`).toEqual(expected.witnesses);
        } finally {
          session.close();
        }
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
