import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check, compile, readRecording, signatureOf, SmtDecider, type CheckReport } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Every shipped example with an `expected.json`: each trace beside its policy gets the verdict and
 * the witnesses recorded there, from both decision procedures. Traces are read as `vigilc` reads
 * them: in any format, recordings of agents with their shell calls grounded. (`agentdojo/` is
 * measured against a recorded corpus instead, by its own test.)
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

it("ships the five trace examples the documentation describes", () => {
  expect(examples).toEqual(["ari-kernel", "coding-agent", "dashcam", "databricks", "trailofbits-asan"]);
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
    const { trace, diagnostics } = readRecording(readFileSync(join(directory, traceFile), "utf8"), { file: traceFile });
    const compiled = compile(source, { file: expected.policy, signature: signatureOf(trace.events) });

    it.each(["eval", "smt"] as const)("gets the expected verdict and witnesses from %s", async (engine) => {
      expect(diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      const report = await check(compiled, trace, { engine, decider });
      expect({ verdict: report.verdict, violations: violations(report) }).toEqual(want);
    });
  });
});

describe("the coding-agent policy on the real Claude Code transcripts in ../shared/data/claude-code", () => {
  const directory = join(root, "../../shared/data/claude-code");
  const transcripts = readdirSync(directory).filter((name) => name.endsWith(".jsonl")).sort();
  const source = readFileSync(join(root, "coding-agent/coding-agent.vigil"), "utf8");

  it("finds the eight transcripts", () => {
    expect(transcripts).toHaveLength(8);
  });

  it.each(transcripts)("%s reads as Claude Code, grounds its shell calls, and raises no false alarm", async (name) => {
    const read = readRecording(readFileSync(join(directory, name), "utf8"), { file: name });
    expect(read.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(read.format).toBe("claude-code");
    const shellCalls = read.trace.events.filter((e) => e.action === "Bash").length;
    expect(read.groundedEvents >= shellCalls).toBe(true);
    const compiled = compile(source, { file: "coding-agent.vigil", signature: signatureOf(read.trace.events) });
    const report = await check(compiled, read.trace, { engine: "eval" });
    expect({ verdict: report.verdict, violations: violations(report) }).toEqual({ verdict: "safe", violations: {} });
  });
});
