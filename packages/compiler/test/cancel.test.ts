import { describe, expect, it } from "vitest";
import { check, compile, readTrace, type TraceEvent } from "../src/index.js";

// An editor cancels work that a newer edit made stale: compile and check stop with the signal's
// reason and leave nothing half-done behind.

const policy = compile(`policy p {
  rule r: prec(action in {b} and k = $x, action in {a} and k = $x)
}`);

function events(count: number): readonly TraceEvent[] {
  const lines = Array.from({ length: count }, (_, index) => JSON.stringify({ action: index % 2 === 0 ? "a" : "b", args: { k: index % 97 } }));
  return readTrace(lines.join("\n")).trace.events;
}

describe("cancellation", () => {
  it("does not start a compile with an aborted signal", () => {
    const controller = new AbortController();
    controller.abort(new Error("stale"));
    expect(() => compile("policy p { rule r: abs(action in {a}) }", { signal: controller.signal })).toThrow("stale");
  });

  it("stops the evaluator's pass over a long trace", async () => {
    const controller = new AbortController();
    controller.abort(new Error("superseded by a newer edit"));
    await expect(check(policy, events(100_000), { signal: controller.signal })).rejects.toThrow("superseded");
  });

  it("interrupts the solver and rejects instead of reporting an undecided statement", async () => {
    const controller = new AbortController();
    const run = check(policy, events(4_000), { engine: "smt", signal: controller.signal });
    setTimeout(() => controller.abort(new Error("cancelled")), 50);
    await expect(run).rejects.toThrow("cancelled");
  });

  it("answers as before when the signal is never aborted", async () => {
    // The first `b` (k = 1) comes before any `a` with k = 1: violated at event 2.
    const report = await check(policy, events(50), { signal: new AbortController().signal });
    expect(report.statements[0]!.witnesses[0]).toBe(2);
    const smt = await check(policy, events(50), { engine: "smt", signal: new AbortController().signal });
    expect(smt.statements[0]!.witnesses).toEqual(report.statements[0]!.witnesses);
  });
});
