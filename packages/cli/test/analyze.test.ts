import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc analyze`: each kind of finding on a policy written to have them all
 * (fixtures/analysis/release.vigil, the example of docs/analysis.md), a clean policy, bad input.
 */
type Report = { depth: number; files: { file: string; diagnostics: { code: string; severity: string; message: string; span: { line: number } }[] }[] };

describe("vigilc analyze", () => {
  it("finds every kind: an unmatchable pattern, a rule that never fires, one that always breaks, impossible actions, redundant rules, a conflict", async () => {
    const result = await runCli(["analyze", "analysis/release.vigil", "--format", "json"]);
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.depth).toBe(5);
    expect(report.files[0]!.diagnostics.map((d) => `${d.code} ${d.severity} ${d.span.line}: ${d.message}`)).toEqual([
      "A0005 info 3: rule `release.tested` is implied by the other rules: no run of up to 5 events keeps them and breaks it",
      "A0001 warning 7: no event can match this pattern of rule `release.never`",
      "A0002 warning 7: no run of up to 5 events breaks rule `release.never`: it never fires",
      "A0005 info 9: rule `release.tested_again` is implied by the other rules: no run of up to 5 events keeps them and breaks it",
      "A0006 warning 11: once this trigger of rule `release.announce` holds, no run of up to 5 events keeps every rule",
      "A0001 warning 14: no event can match this pattern of rule `release.approved`",
      "A0003 warning 14: every one of the runs of up to 5 events in which this trigger holds breaks rule `release.approved`",
      "A0004 warning 3: no run of up to 5 events that keeps every rule calls `deploy` successfully: the policy makes it impossible",
      "A0004 warning 3: no run of up to 5 events that keeps every rule calls `run_tests` successfully: the policy makes it impossible",
      "A0004 warning 11: no run of up to 5 events that keeps every rule calls `notify` successfully: the policy makes it impossible",
      "A0004 warning 14: no run of up to 5 events that keeps every rule calls `merge` successfully: the policy makes it impossible",
    ]);
  });

  it("prints the findings at their rules, with a summary", async () => {
    const result = await runCli(["analyze", "analysis/release.vigil", "--depth", "3"]);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("warning[A0006]: once this trigger of rule `release.announce` holds, no run of up to 3 events keeps every rule\n  --> analysis/release.vigil:11:");
    expect(result.stderr).toContain("note: `release.deployed_first` names `deploy` too at analysis/release.vigil:5:3");
    expect(result.stderr.trimEnd().split("\n").at(-1)).toBe("analyzed 1 policy file over runs of up to 3 events: 9 warnings, 2 notes");
  });

  it("writes the findings as SARIF at their places in the policy file", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-analyze-"));
    try {
      const sarifFile = join(scratch, "analysis.sarif");
      const result = await runCli(["analyze", "analysis/release.vigil", "--sarif", sarifFile]);
      expect(result.code).toBe(1);
      const log = JSON.parse(readFileSync(sarifFile, "utf8")) as {
        version: string;
        runs: { tool: { driver: { rules: { id: string }[] } }; results: { ruleId: string; level: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[];
      };
      expect(log.version).toBe("2.1.0");
      const run = log.runs[0]!;
      expect(run.tool.driver.rules.map((rule) => rule.id).sort()).toEqual(["A0001", "A0002", "A0003", "A0004", "A0005", "A0006"]);
      expect(run.results.map((r) => `${r.ruleId} ${r.level} ${r.locations[0]!.physicalLocation.artifactLocation.uri}:${r.locations[0]!.physicalLocation.region.startLine}`)).toContain(
        "A0006 warning analysis/release.vigil:11",
      );
      expect(run.results.filter((r) => r.level === "note").map((r) => r.ruleId)).toEqual(["A0005", "A0005"]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("analyzes under a trace's signature: the closed world of its actions, arguments and values", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-analyze-"));
    try {
      writeFileSync(
        join(scratch, "p.vigil"),
        `policy p {\n  rule prod: abs(action in {deploy} and env in {"prod"})\n  rule typo: prec(action in {deploi}, action in {check})\n  rule checked: prec(action in {deploy}, action in {check})\n}\n`,
      );
      writeFileSync(join(scratch, "run.jsonl"), '{"action": "check"}\n{"action": "deploy", "args": {"env": "staging"}}\n');
      const under = await runCli(["analyze", "p.vigil", "--trace", "run.jsonl", "--format", "json"], { cwd: scratch });
      expect(under.code, under.stderr).toBe(1);
      expect((JSON.parse(under.stdout) as Report).files[0]!.diagnostics.map((d) => `${d.code} ${d.span.line}: ${d.message}`)).toEqual([
        'A0001 2: no event under the signature can match this pattern of rule `p.prod`',
        "A0002 2: no run under the signature of up to 5 events breaks rule `p.prod`: it never fires",
        "A0001 3: no event under the signature can match this pattern of rule `p.typo`",
        "A0002 3: no run under the signature of up to 5 events breaks rule `p.typo`: it never fires",
      ]);
      // Without the signature, every action and value may occur.
      const open = await runCli(["analyze", "p.vigil"], { cwd: scratch });
      expect(open.code, open.stderr).toBe(0);
      const both = await runCli(["analyze", "p.vigil", "--trace", "run.jsonl", "--schema", "run.jsonl"], { cwd: scratch });
      expect(both.code).toBe(2);
      expect(both.stderr).toBe("error: give --trace or --schema, not both\n");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("gives a rule the solver cannot decide within its resource limit A0007, and analyses every other rule", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-analyze-"));
    try {
      writeFileSync(
        join(scratch, "p.vigil"),
        `policy p {\n  rule quick: abs(action in {a} and status = error)\n  rule heavy: limit[8](action in {call} and path matches /secret/ and path ~ "*.env")\n` +
          `  rule never: abs(action in {read} and status = ok and status = error)\n  rule checked: prec(action in {deploy}, action in {check})\n}\n`,
      );
      // Z3's rlimit counts its work, the same on every machine: a few thousand units answer the
      // small questions, and not `heavy`'s (runs of 9 events, two patterns on one key).
      const result = await runCli(["analyze", "p.vigil", "--rlimit", "5000", "--format", "json"], { cwd: scratch });
      expect(result.code, result.stderr).toBe(1);
      const found = (JSON.parse(result.stdout) as Report).files[0]!.diagnostics.map((d) => `${d.code} ${d.span.line}`);
      expect([...new Set(found)]).toEqual(["A0007 3", "A0001 4", "A0002 4"]);
      const text = await runCli(["analyze", "p.vigil", "--rlimit", "5000"], { cwd: scratch });
      expect(text.stderr).toContain("warning[A0007]: the analysis could not decide: the solver could not decide runs of 5 events: it reached the solver's resource limit (rlimit 5,000)\n  --> p.vigil:3:3");
      // With the default limit, every rule is decided.
      const full = await runCli(["analyze", "p.vigil", "--format", "json"], { cwd: scratch });
      expect((JSON.parse(full.stdout) as Report).files[0]!.diagnostics.map((d) => `${d.code} ${d.span.line}`)).toEqual(["A0001 4", "A0002 4"]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("finds nothing in a sound policy, and refuses one with errors", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-analyze-"));
    try {
      // A count limit is searched as far as it takes to break it (one event more than its maximum);
      // a pattern that only tests a variable takes its value from the trigger; `action in {}` is
      // written to match nothing.
      writeFileSync(
        join(scratch, "ok.vigil"),
        `policy p {\n  rule checked: prec(action in {deploy}, action in {version_check} and status = ok)\n  rule no_secrets: abs(action in {read_file} and path ~ "/etc/*")\n` +
          `  rule rate: limit[8](action in {call})\n  rule quoted: prec(action in {send} and to = $x, action in {read} and output contains $x)\n` +
          `  rule once_only: until(action in {pay} and to = $x, action in {}, action in {pay} and to = $x)\n}\n`,
      );
      const clean = await runCli(["analyze", "ok.vigil"], { cwd: scratch });
      expect(clean.code, clean.stderr).toBe(0);
      expect(clean.stderr).toBe("analyzed 1 policy file over runs of up to 5 events: nothing found\n");
      writeFileSync(join(scratch, "bad.vigil"), "policy p { rule r: prec(action in {a}) }\n");
      const bad = await runCli(["analyze", "bad.vigil"], { cwd: scratch });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain("error: the policy `bad.vigil` has 1 error; it was not analyzed");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
