import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { run } from "../src/cli.js";
import { root } from "./support/run-vigilc.js";

/**
 * What `vigilc draft` writes beside the policy, run in process with a model's answer saved in a
 * file (`--answer`: no key, no network): the test file of the draft's verdicts on the runs given,
 * one test per run, a file of several runs (τ-bench) included; a run the draft cannot be judged on
 * is a reported failure, never an expectation; and with `--explain`, an analysis that fails does
 * not keep the policy from being written. The analysis is made to fail here as the solver failed
 * on the τ-bench signature ("memory access out of bounds").
 */

const analysis = vi.hoisted(() => ({ fail: false }));
vi.mock("@vigil/compiler", async (importOriginal) => {
  const original = await importOriginal<typeof import("@vigil/compiler")>();
  return {
    ...original,
    analyzePolicy: async (...args: Parameters<typeof original.analyzePolicy>) => {
      if (analysis.fail) throw new Error("memory access out of bounds");
      return original.analyzePolicy(...args);
    },
  };
});

const skill = resolve(import.meta.dirname, "../../draft/test/fixtures/release-skill");
const tauFile = join(root, "../shared/data/tau-bench/gpt-4o-airline.json");
let scratch = "";

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-draft-outputs-"));
  for (const file of ["SKILL.md", "checklist.md", "run.jsonl"]) cpSync(join(skill, file), join(scratch, file));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function vigilc(args: readonly string[], cwd = scratch): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await run(args, {
    stdout: (text) => void (stdout += text),
    stderr: (text) => void (stderr += text),
    colors: false,
    cwd,
    env: { VIGIL_CACHE_DIR: join(scratch, "cache") },
  });
  return { code, stdout, stderr };
}

/** A model's answer: the rules, each citing its line of the specification. */
function answer(rules: string): string {
  return `\`\`\`vigil\npolicy release {\n${rules}}\n\`\`\`\n`;
}
const releaseRules = answer(
  "  /// Run the test suite (`run_tests`) before you tag a release (`tag`).\n  /// source: SKILL.md:10\n  rule tests_before_tag: prec(action in {tag}, action in {run_tests} and status = ok)\n" +
    "  /// The version must be bumped (`bump_version`) before `publish`.\n  /// source: checklist.md:3\n  rule bump_before_publish: prec(action in {publish}, action in {bump_version})\n",
);

/** A τ-bench results file: one run per element, its calls as the chat's tool calls. */
function tauBenchFile(runs: readonly { task: number; trial: number; calls: readonly string[] }[]): string {
  return JSON.stringify(
    runs.map(({ task, trial, calls }) => ({
      task_id: task,
      trial,
      reward: 1,
      info: {},
      traj: [
        { role: "system", content: "You release packages." },
        { role: "user", content: "Release it, please." },
        ...calls.flatMap((name, index) => [
          { role: "assistant", content: null, tool_calls: [{ id: `call_${index}`, type: "function", function: { name, arguments: "{}" } }] },
          { role: "tool", tool_call_id: `call_${index}`, name, content: "done" },
        ]),
        { role: "assistant", content: "Released." },
      ],
    })),
    null,
    2,
  );
}

describe("vigilc draft: the test file of the draft's verdicts", () => {
  it("gives a file of several runs one test per run, each with its own verdicts, which vigilc test passes on every engine", async () => {
    writeFileSync(
      join(scratch, "runs.json"),
      tauBenchFile([
        { task: 1, trial: 0, calls: ["run_tests", "tag", "bump_version", "publish"] },
        { task: 1, trial: 1, calls: ["tag", "run_tests", "bump_version", "publish"] },
        { task: 2, trial: 0, calls: ["run_tests", "tag", "publish"] },
      ]),
    );
    writeFileSync(join(scratch, "rules.md"), releaseRules);
    const drafted = await vigilc(["draft", "SKILL.md", "--trace", "runs.json", "run.jsonl", "--answer", "rules.md", "-o", "several.vigil"]);
    expect(drafted.code, drafted.stderr).toBe(0);
    expect(drafted.stderr).toContain("wrote several.vigiltest: the draft's verdict on each of the 4 runs given, one test each (2 break a rule)");
    const tests = readFileSync(join(scratch, "several.vigiltest"), "utf8");
    expect(tests).toContain('test "runs.json#task 1 trial 0" {\n  trace "runs.json" run "task 1 trial 0"\n  expect all hold\n}');
    expect(tests).toContain('test "runs.json#task 1 trial 1" {\n  trace "runs.json" run "task 1 trial 1"\n  expect tests_before_tag violated at 1\n  expect others hold\n}');
    expect(tests).toContain('test "runs.json#task 2 trial 0" {\n  trace "runs.json" run "task 2 trial 0"\n  expect bump_before_publish violated at 3\n  expect others hold\n}');
    expect(tests).toContain('test "run.jsonl" {\n  trace "run.jsonl"\n  expect all hold\n}');
    expect(tests.match(/^test /gm)).toHaveLength(4);
    const tested = await vigilc(["test", "several.vigiltest"]);
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(tested.stdout).toContain("4 tests in 1 file: 4 passed");
    // Files of one name in several directories (a corpus): each run is named by its path.
    mkdirSync(join(scratch, "other"), { recursive: true });
    cpSync(join(scratch, "run.jsonl"), join(scratch, "other", "run.jsonl"));
    const corpus = await vigilc(["draft", "SKILL.md", "--trace", "run.jsonl", "other/run.jsonl", "--answer", "rules.md", "-o", "corpus.vigil"]);
    expect(corpus.code, corpus.stderr).toBe(0);
    expect(readFileSync(join(scratch, "corpus.vigiltest"), "utf8").match(/^test .*$/gm)).toEqual(['test "run.jsonl" {', 'test "other/run.jsonl" {']);
  });

  it.skipIf(!existsSync(tauFile))("gives the 200 τ-bench runs 200 tests, those that break the rule expecting it", { timeout: 300_000 }, async () => {
    const policyLine = readFileSync(join(tauFile, "../airline-policy.md"), "utf8").split("\n").findIndex((line) => line.includes("All payment methods must already be in user profile")) + 1;
    cpSync(join(tauFile, "../airline-policy.md"), join(scratch, "airline-policy.md"));
    writeFileSync(
      join(scratch, "airline.md"),
      "```vigil\npolicy airline {\n  /// Payment: All payment methods must already be in user profile for safety reasons.\n" +
        `  /// source: airline-policy.md:${policyLine}\n` +
        "  rule payment_in_profile: prec(\n    (action in {book_reservation} and payment_methods.payment_id = $p)\n    or (action in {update_reservation_flights, update_reservation_baggages} and payment_id = $p),\n    action in {get_user_details} and output contains $p,\n  )\n}\n```\n",
    );
    const drafted = await vigilc(["draft", "airline-policy.md", "--trace", tauFile, "--answer", "airline.md", "-o", "airline.vigil"]);
    expect(drafted.code, drafted.stderr).toBe(0);
    const tests = readFileSync(join(scratch, "airline.vigiltest"), "utf8");
    expect(tests.match(/^test /gm)).toHaveLength(200);
    const broken = tests.match(/expect payment_in_profile violated at/g)?.length ?? 0;
    expect(broken).toBeGreaterThan(0);
    expect(tests.match(/expect all hold/g)).toHaveLength(200 - broken);
    expect(drafted.stderr).toContain(`one test each (${broken} break a rule)`);
    // The verdicts written are those another engine finds too.
    const tested = await vigilc(["test", "airline.vigiltest", "--engine", "eval,sql"]);
    expect(tested.code, tested.stdout.slice(-2000) + tested.stderr.slice(0, 2000)).toBe(0);
    expect(tested.stdout).toContain("200 tests in 1 file: 200 passed");
  });

  it("fails, writing no test file, when the draft cannot be judged on a run, naming the run and why", async () => {
    // A window of time on runs whose events have no time: the rule is undecided on them.
    writeFileSync(
      join(scratch, "timed.md"),
      answer("  /// After publishing (`publish`), announce the release with `notify`.\n  /// source: SKILL.md:12\n  rule announce_after_publish: bresp[5m](action in {publish} and status = ok, action in {notify})\n"),
    );
    const drafted = await vigilc(["draft", "SKILL.md", "--trace", "run.jsonl", "runs.json", "--answer", "timed.md", "-o", "timed.vigil"]);
    expect(drafted.code).toBe(2);
    expect(drafted.stderr).toContain("wrote timed.vigil");
    expect(drafted.stderr).toContain("error: the draft could not be judged on 4 runs of 4, so no test file was written (the policy was):");
    expect(drafted.stderr).toMatch(/ {2}run\.jsonl: `release\.announce_after_publish` undecided \(event 1 \(line 1 of .*run\.jsonl\) has no time, and the rule measures time\)/);
    expect(drafted.stderr).toContain("  runs.json#task 1 trial 0: `release.announce_after_publish` undecided (");
    expect(existsSync(join(scratch, "timed.vigiltest"))).toBe(false);
  });
});

describe("vigilc draft --explain", () => {
  it("writes the policy (and its tests) when the analysis fails, says so, and exits 2; never 'nothing found'", async () => {
    writeFileSync(join(scratch, "rules.md"), releaseRules);
    analysis.fail = true;
    try {
      const explained = await vigilc(["draft", "SKILL.md", "--trace", "run.jsonl", "--answer", "rules.md", "--explain", "-o", "explained.vigil"]);
      expect(explained.code).toBe(2);
      expect(explained.stderr).toContain("analysis (runs of up to 5 events, under the signature): failed, nothing is known of it: memory access out of bounds");
      expect(explained.stderr).not.toContain("nothing found");
      expect(explained.stderr).toContain("wrote explained.vigil\nerror: the analysis of the draft failed (memory access out of bounds); the policy was written without it");
      expect(readFileSync(join(scratch, "explained.vigil"), "utf8")).toContain("rule tests_before_tag");
      expect(readFileSync(join(scratch, "explained.vigiltest"), "utf8")).toContain('test "run.jsonl"');
      // To standard output, the same.
      const printed = await vigilc(["draft", "SKILL.md", "--answer", "rules.md", "--explain"]);
      expect(printed.code).toBe(2);
      expect(printed.stdout).toContain("rule bump_before_publish");
      expect(printed.stderr).toContain("error: the analysis of the draft failed (memory access out of bounds)");
    } finally {
      analysis.fail = false;
    }
    // The analysis that finishes: exit 0, its findings said.
    const fine = await vigilc(["draft", "SKILL.md", "--trace", "run.jsonl", "--answer", "rules.md", "--explain"]);
    expect(fine.code, fine.stderr).toBe(0);
    expect(fine.stderr).toMatch(/analysis \(runs of up to 5 events, under the signature\): (nothing found|\d+ findings?)/);
  });
});
