import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { check, compile, parseTestFile, readRecording, runTestFile, signatureOf, SmtDecider, type CheckReport } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Every shipped example: each policy has a test file beside it (`*.vigiltest`) whose tests pass with
 * every engine and cover every rule, and every recorded trace of the directory is the run of one of
 * its tests, with a benign one among them. (`vigilc test examples/` runs the same files as a user
 * would: packages/cli/test/test-command.test.ts.)
 */

const root = import.meta.dirname;

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

/** Every policy of the examples, as `directory/file`. */
const policies = readdirSync(root, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .flatMap((entry) => readdirSync(join(root, entry.name)).filter((name) => name.endsWith(".vigil")).map((name) => `${entry.name}/${name}`))
  .sort();

it("ships the example policies the documentation describes, each with its tests", () => {
  expect(policies.map((p) => p.split("/")[0])).toEqual(["agentdojo", "agentdojo", "agentdojo", "agentdojo", "ari-kernel", "ari-kernel", "coding-agent", "dashcam", "databricks", "payments", "support-desk", "tau-airline", "trailofbits-asan"]);
});

describe.each(policies)("%s", (policy) => {
  const testFile = join(root, policy.replace(/\.vigil$/, ".vigiltest"));
  const directory = join(root, policy.split("/")[0]!);

  it("compiles without errors", () => {
    const compiled = compile(readFileSync(join(root, policy), "utf8"), { file: policy });
    expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  });

  it("has tests that pass with every engine and cover every rule", async () => {
    const result = await runTestFile(testFile, { decider });
    expect(result.diagnostics).toEqual([]);
    expect(result.tests.filter((t) => t.outcome !== "passed").map((t) => ({ name: t.name, failures: t.failures.map((f) => `${f.expected} / ${f.actual}`), diagnostics: t.diagnostics.map((d) => d.message) }))).toEqual([]);
    expect(result.coverage.filter((rule) => !rule.covered).map((rule) => rule.name)).toEqual([]);
  });

  it("runs every recorded trace beside it in a test of its directory, a benign one among them", () => {
    const traces = readdirSync(directory).filter((name) => name.endsWith(".jsonl")).sort();
    // A directory may hold several policies (ari-kernel's rules and its capability grants): each
    // trace is the run of a test of one of them.
    const tests = readdirSync(directory)
      .filter((name) => name.endsWith(".vigiltest"))
      .flatMap((name) => parseTestFile(readFileSync(join(directory, name), "utf8")).tests);
    const named = tests.flatMap((t) => (t.input?.kind === "trace" ? [t.input.path] : []));
    expect(traces.filter((trace) => !named.includes(trace))).toEqual([]);
    if (traces.length > 0) {
      const benign = tests.filter((t) => t.input?.kind === "trace" && t.expectations.some((e) => e.kind === "verdict" && e.rule === "all" && e.holds));
      expect(benign.length).toBeGreaterThan(0);
    }
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
