import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { measure, pairedDiff } from "./measure.mjs";

/**
 * The airline policy drafted by a model from airline-policy.md (answer.md, kept as the model wrote
 * it; airline-drafted.vigil is `vigilc draft --answer` of it), measured run by run against the
 * hand-written policy on the 200 recorded τ-bench runs: the figures measured.json records (the
 * README's table), and the comparison of each drafted rule with the hand rule citing the same lines.
 */

const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "measured.json"), "utf8"));

describe("the drafted airline policy against the hand-written one", async () => {
  const figures = await measure();

  it("flags the runs measured.json records, with its precision and recall", () => {
    expect(figures).toEqual(recorded);
  });

  it("pairs its rules with the hand policy's by the lines they cite, and every difference it shows replays", async () => {
    const diff = await pairedDiff();
    expect(diff.pairedBy).toBe("source");
    const paired = diff.rules.filter((rule: { kind?: string }) => rule.kind === "couple" || rule.kind === "together");
    expect(paired.length).toBeGreaterThan(0);
    for (const rule of [diff.whole, ...diff.rules]) for (const run of rule.counterexamples ?? []) expect(run.confirmed, rule.rule).toBe(true);
  });
});
