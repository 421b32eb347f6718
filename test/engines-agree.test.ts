import { evaluateStatement } from "@vigil/engine";
import { SmtDecider } from "@vigil/smt";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { statement, trace } from "./arbitraries.js";

/**
 * Differential testing of the two decision procedures: on random statements and traces the
 * direct evaluator and Z3 over the Figure 5 lowering (in both encodings) give identical verdicts
 * and witnesses. VIGIL_PROPERTY_RUNS sets the number of cases (CI runs the default).
 */
const runs = Number(process.env["VIGIL_PROPERTY_RUNS"] ?? 2000);

describe("the evaluator and the SMT lowering agree", () => {
  let shared: SmtDecider;
  let literal: SmtDecider;
  beforeAll(async () => {
    // bresp windows: spelled out in the literal encoding, nearest-later positions in the shared one.
    shared = await SmtDecider.create({ encoding: "shared", timeoutMs: 20_000, windowSpelledOutUpTo: 0 });
    // The literal encoding finds every witness from a model (with certificates), the shared one
    // from unsatisfiable cores first: both ways of reading witnesses are exercised.
    literal = await SmtDecider.create({ encoding: "literal", timeoutMs: 20_000, coreRounds: 0 });
  });
  afterAll(async () => {
    await shared.dispose();
    await literal.dispose();
  });

  it(`on ${runs} random statements and traces`, async () => {
    await fc.assert(
      fc.asyncProperty(statement, trace, async (s, events) => {
        const expected = evaluateStatement(s, events);
        const bySharedEncoding = await shared.decide(s, events);
        expect(bySharedEncoding).toEqual(expected);
        const byLiteralEncoding = await literal.decide(s, events);
        expect(byLiteralEncoding).toEqual(expected);
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
