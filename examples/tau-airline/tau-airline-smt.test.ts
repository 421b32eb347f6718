import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { check, runVerdicts } from "./verdicts.mjs";

/**
 * The airline policy on the 200 recorded τ-bench runs through Figure 5 on Z3: every run gets the
 * same verdicts, witnesses and breaking events as from the forward engine. Some minutes of solving:
 * a file of the heavy tier.
 */
describe("the τ-bench airline policy on 200 recorded runs, through the SMT engine", () => {
  it("gets the same verdicts, witnesses and breaking events from the SMT engine on every run", async () => {
    const [evaluated, solved] = await Promise.all([check("eval"), check("smt")]);
    expect(solved.summary.failed).toBe(0);
    expect(solved.summary.runs).toBe(200);
    expect(runVerdicts(solved)).toEqual(runVerdicts(evaluated));
  }, 600_000);
});
