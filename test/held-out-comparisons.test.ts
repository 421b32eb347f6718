import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compile, createEngine, readTrace, SmtDecider, type DecisionEngine, type TraceEvent } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { figure5Witnesses } from "./figure5.js";

/**
 * Held-out cases of comparisons, `every`/`some` and `count`, written from docs/language.md alone
 * by a reader who saw no code (test/fixtures/held-out/comparisons.json, kept as written). Each is a
 * condition ψ, a few events and the events where ψ holds; `abs(ψ)` must have exactly those witnesses
 * on every engine and on the literal reading of Figure 5.
 */

interface HeldOutCase {
  readonly name: string;
  readonly rule: string;
  readonly events: readonly Record<string, unknown>[];
  readonly witnesses: readonly number[];
  readonly why: string;
}

const held: readonly HeldOutCase[] = JSON.parse(readFileSync(join(import.meta.dirname, "fixtures", "held-out", "comparisons.json"), "utf8"));

let decider: SmtDecider;
const engines: DecisionEngine[] = [];
beforeAll(async () => {
  decider = await SmtDecider.create({ timeoutMs: 20_000 });
  engines.push(createEngine("eval"), createEngine("monitor"), createEngine("smt", { decider }), createEngine("sql"));
});
afterAll(async () => {
  await decider.dispose();
});

describe("held-out cases of comparisons, lists and counts, written from the documentation", () => {
  it("has cases", () => {
    expect(held.length).toBeGreaterThanOrEqual(40);
  });

  it.each(held.map((c) => [c.name, c] as const))("%s", async (_, c) => {
    const compiled = compile(`policy p {\n  rule r: abs(${c.rule})\n}\n`);
    expect(compiled.diagnostics.filter((d) => d.severity === "error"), c.rule).toEqual([]);
    const statement = compiled.program.policies[0]!.statements[0]!;
    const read = readTrace(c.events.map((event) => JSON.stringify(event)).join("\n"));
    expect(read.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const events: readonly TraceEvent[] = read.trace.events;
    const expected = { why: c.why, witnesses: [...c.witnesses] };
    expect({ why: c.why, witnesses: figure5Witnesses(statement, events) }).toEqual(expected);
    for (const engine of engines) {
      const run = engine.start([statement]);
      for (const event of events) run.step(event);
      const [outcome] = await run.finish();
      // Decided, not refused: an undecided outcome has no witnesses either.
      expect({ engine: engine.name, why: c.why, undecided: outcome!.undecided, holds: outcome!.holds, witnesses: outcome!.witnesses }).toEqual({
        engine: engine.name,
        ...expected,
        undecided: undefined,
        holds: c.witnesses.length === 0,
      });
    }
  });
});
