import { compile, createMonitor, TraceRun, type TraceEvent } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/** Budgets fail closed: past a time or memory budget a statement is undecided, and the monitor blocks. */
const policy = compile(
  [
    "policy p {",
    "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
    "  rule no_rm: abs(action in {rm})",
    "}",
    "",
  ].join("\n"),
);
const statements = policy.program.policies.flatMap((p) => p.statements);
const opens = (count: number): TraceEvent[] => Array.from({ length: count }, (_, i) => ({ position: i + 1, action: "open", args: { id: `f${i}` } }));

describe("the evaluator's budgets", () => {
  it("past its time budget, every statement is undecided with the reason", () => {
    const run = new TraceRun(statements, { timeMs: 0 });
    for (const event of opens(10_000)) run.step(event);
    expect(run.exhausted).toBe(true);
    const outcomes = run.finish();
    expect(outcomes.every((o) => !o.holds && /time budget of 0 ms/.test(o.undecided ?? ""))).toBe(true);
  });

  it("a statement holding more open obligations than its memory budget is undecided; the others are judged", () => {
    const run = new TraceRun(statements, { openObligations: 100 });
    for (const event of opens(10_000)) run.step(event);
    const [closes, noRm] = run.finish();
    expect(closes).toMatchObject({ holds: false, undecided: expect.stringMatching(/more than 100 obligations/) });
    expect(noRm).toEqual({ holds: true, witnesses: [] });
  });
});

describe("the monitor's budgets", () => {
  it("a decision past its budget of work blocks the call and says why, counted not timed", () => {
    // Each statement the action concerns counts one, and one per obligation it holds open.
    const monitor = createMonitor(policy, { decisionBudget: 5 });
    for (let i = 0; i < 5; i++) {
      expect(monitor.decide({ id: `c${i}`, action: "open", args: { id: `f${i}` } }).decision).toBe("allow");
      monitor.record({ id: `c${i}`, status: "ok" });
    }
    const decided = monitor.decide({ action: "open", args: { id: "a" } });
    expect(decided.decision).toBe("block");
    expect(decided.error).toMatch(/units of work .* past its budget of 5/);
    // The same state, the same answer: the count does not depend on the machine.
    const again = createMonitor(policy, { decisionBudget: 5, restore: monitor.snapshot() });
    expect(again.decide({ action: "open", args: { id: "a" } })).toEqual(decided);
  });

  it("once a statement is past its memory budget, every call is blocked with the reason", () => {
    const monitor = createMonitor(policy, { openObligations: 10 });
    for (let i = 0; i < 1024; i++) {
      expect(monitor.decide({ id: `c${i}`, action: "open", args: { id: `f${i}` } }).decision).toBe("allow");
      monitor.record({ id: `c${i}`, status: "ok" });
    }
    const decided = monitor.decide({ action: "close", args: { id: "f1" } });
    expect(decided.decision).toBe("block");
    expect(decided.error).toMatch(/closes holds more than 10 open obligations/);
  });
});
