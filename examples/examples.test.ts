import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check, compile, readTrace, signatureOf, SmtDecider, type CheckReport } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Every shipped example with an `expected.json`: each trace beside its policy gets the verdict and
 * the witnesses recorded there, from both decision procedures. (`agentdojo/` is measured against a
 * recorded corpus instead, by its own test.)
 */

interface Expectation {
  readonly policy: string;
  readonly traces: Readonly<Record<string, { verdict: "safe" | "unsafe"; violations: Readonly<Record<string, readonly number[]>> }>>;
}

const root = import.meta.dirname;
const examples = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory() && existsSync(join(root, entry.name, "expected.json")))
  .map((entry) => entry.name)
  .sort();

function violations(report: CheckReport): Record<string, readonly number[]> {
  const result: Record<string, readonly number[]> = {};
  for (const statement of report.statements) {
    if (!statement.holds) result[`${statement.policy}.${statement.name}`] = statement.witnesses;
  }
  return result;
}

let decider: SmtDecider;
beforeAll(async () => {
  decider = await SmtDecider.create({ timeoutMs: 30_000 });
});
afterAll(async () => {
  await decider.dispose();
});

it("ships the four trace examples the documentation describes", () => {
  expect(examples).toEqual(["ari-kernel", "dashcam", "databricks", "trailofbits-asan"]);
});

describe.each(examples)("example %s", (example) => {
  const directory = join(root, example);
  const expected = JSON.parse(readFileSync(join(directory, "expected.json"), "utf8")) as Expectation;
  const source = readFileSync(join(directory, expected.policy), "utf8");

  it("has a benign and at least one violating trace, all with expectations", () => {
    const traces = readdirSync(directory).filter((name) => name.endsWith(".jsonl")).sort();
    expect(Object.keys(expected.traces).sort()).toEqual(traces);
    expect(Object.values(expected.traces).map((t) => t.verdict)).toContain("safe");
    expect(Object.values(expected.traces).map((t) => t.verdict)).toContain("unsafe");
  });

  it("compiles without errors", () => {
    const compiled = compile(source, { file: expected.policy });
    expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  describe.each(Object.entries(expected.traces))("trace %s", (traceFile, want) => {
    const { trace, diagnostics } = readTrace(readFileSync(join(directory, traceFile), "utf8"), { file: traceFile });
    const compiled = compile(source, { file: expected.policy, signature: signatureOf(trace.events) });

    it.each(["eval", "smt"] as const)("gets the expected verdict and witnesses from %s", async (engine) => {
      expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      const report = await check(compiled, trace, { engine, decider });
      expect({ verdict: report.verdict, violations: violations(report) }).toEqual(want);
    });
  });
});
