import { describe, expect, it } from "vitest";
import { fixtures } from "./support/paths.js";
import { runCli, type CliRunOptions } from "./support/run-cli.js";

/**
 * The runs of a corpus are judged in worker threads, which load the built CLI's corpus-worker.js:
 * every run here is of the built CLI, in process (see `built` in support/run-cli.ts). The progress
 * bar drawn on a terminal is in process.test.ts.
 */
const runBuiltCli = (args: readonly string[], options: CliRunOptions = {}) => runCli(args, { ...options, built: true });

/** `vigilc check POLICY --trace DIR-or-GLOB`: every run of a corpus, a summary, exit codes. */
describe("vigilc check on a corpus", () => {
  it("checks every trace of a directory, recursively, in any format", async () => {
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus", "--format", "json"], { cwd: fixtures });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as { verdict: string; summary: Record<string, unknown>; runs: { file: string; format: string; verdict: string }[] };
    expect(report.verdict).toBe("unsafe");
    expect(report.summary).toMatchObject({ runs: 3, safe: 1, unsafe: 2, failed: 0 });
    expect(report.runs.map((r) => [r.file, r.format, r.verdict])).toEqual([
      ["corpus/benign.jsonl", "jsonl", "safe"],
      ["corpus/nested/session.jsonl", "claude-code", "unsafe"],
      ["corpus/violating.jsonl", "jsonl", "unsafe"],
    ]);
  });

  it("prints a summary per rule for people, with no progress bar when piped", async () => {
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus"], { cwd: fixtures });
    expect(result.stdout).toContain("unsafe  corpus/violating.jsonl: housekeeping.no_recursive_delete at 2");
    expect(result.stdout).toMatch(/housekeeping\.no_recursive_delete\s+2 of 3 runs/);
    expect(result.stdout).toContain("checked 3 runs (");
    expect(result.stderr).not.toContain("[#");
  });

  it("warns about a rule whose trigger matched no event in any run (human, JSON, SARIF), with either engine", async () => {
    const { mkdtempSync, readFileSync, rmSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const scratch = mkdtempSync(join(tmpdir(), "vigil-never-"));
    try {
      const policy = join(scratch, "never.vigil");
      // `rm` runs are grounded with `target`; a condition on `path` can never match them.
      writeFileSync(policy, `policy p {\n  /// Never delete the home directory.\n  rule home: abs(action in {rm} and path in {"~"})\n  /// No recursive delete.\n  rule recursive: abs(action in {rm} and recursive in {true})\n}\n`);
      const human = await runBuiltCli(["check", policy, "--trace", "corpus"], { cwd: fixtures });
      expect(human.stdout).toContain("warning: the trigger of p.home matched no event in any of the 3 runs: it held only vacuously");
      expect(human.stdout).not.toContain("the trigger of p.recursive");
      for (const engine of ["eval", "smt"]) {
        const json = JSON.parse((await runBuiltCli(["check", policy, "--trace", "corpus", "--format", "json", "--engine", engine], { cwd: fixtures })).stdout) as { summary: { neverTriggered: string[] } };
        expect(json.summary.neverTriggered).toEqual(["p.home"]);
      }
      const sarif = join(scratch, "out.sarif");
      await runBuiltCli(["check", policy, "--trace", "corpus", "--sarif", sarif], { cwd: fixtures });
      const log = JSON.parse(readFileSync(sarif, "utf8")) as { runs: { invocations: { toolConfigurationNotifications?: { level: string; message: { text: string }; associatedRule: { id: string } }[] }[] }[] };
      expect(log.runs[0]!.invocations[0]!.toolConfigurationNotifications).toEqual([
        expect.objectContaining({ level: "warning", associatedRule: { id: "p.home" }, message: { text: expect.stringContaining("matched no event in any run") } }),
      ]);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it("takes a glob", async () => {
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus/*.jsonl", "--format", "json"], { cwd: fixtures });
    expect(JSON.parse(result.stdout).summary).toMatchObject({ runs: 2, safe: 1, unsafe: 1 });
  });

  it("reports a run it cannot check, with its line, checks the others, and exits 2", async () => {
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus-bad"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/error {3}corpus-bad\/truncated\.jsonl:1: T0001/);
    expect(result.stdout).toContain("checked 2 runs (1 events): 1 safe, 0 unsafe, 1 could not be checked");
    // The errors stay data in the JSON report: code, severity, message, file and line.
    const json = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus-bad", "--format", "json"], { cwd: fixtures });
    const runs = JSON.parse(json.stdout).runs as { file: string; errors: { code: string; severity: string; file: string; line: number }[] }[];
    expect(runs.find((run) => run.file.endsWith("truncated.jsonl"))!.errors[0]).toMatchObject({ code: "T0001", severity: "error", file: "corpus-bad/truncated.jsonl", line: 1 });
  });

  it("honors --engine and --strict as a single run does (one pipeline)", async () => {
    const corpus = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus", "--engine", "smt", "--timeout", "20000", "--format", "json"], { cwd: fixtures });
    const runs = (JSON.parse(corpus.stdout) as { runs: { file: string; engine: string; statements: { name: string; holds: boolean; witnesses: number[] }[] }[] }).runs;
    expect(runs.map((run) => run.engine)).toEqual(["smt", "smt", "smt"]);
    for (const run of runs) {
      const single = await runBuiltCli(["check", "no-delete.vigil", "--trace", run.file, "--engine", "smt", "--timeout", "20000", "--format", "json"], { cwd: fixtures });
      const verdicts = (JSON.parse(single.stdout) as { statements: { name: string; holds: boolean; witnesses: number[] }[] }).statements;
      expect(run.statements.map(({ name, holds, witnesses }) => ({ name, holds, witnesses }))).toEqual(verdicts.map(({ name, holds, witnesses }) => ({ name, holds, witnesses })));
    }
    // Under --strict the policy's names are judged against the corpus as a whole: a run alone lacks
    // names the others show (a single run fails), and the corpus, which shows them all, is judged.
    const single = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus/benign.jsonl", "--strict"], { cwd: fixtures });
    expect(single.code).toBe(2);
    const strict = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus", "--strict"], { cwd: fixtures });
    expect(strict.code, strict.stderr).toBe(1);
    expect(strict.stderr).toBe("");
    expect(strict.stdout).toContain("checked 3 runs (");
  });

  describe("the closed world of a corpus: the union of its runs' signatures", () => {
    it("warns once for the corpus about a name no run shows, with the nearest name of any run, as a single run does", async () => {
      const corpus = await runBuiltCli(["check", "corpus-names/deploy.vigil", "--trace", "corpus-names/runs"], { cwd: fixtures });
      expect(corpus.code).toBe(1);
      // Once for the corpus, not per run (three runs, each of which lacks `git_psuh`).
      expect(corpus.stderr.match(/warning\[V1101\]/g)).toHaveLength(1);
      expect(corpus.stderr).toContain("warning[V1101]: the action `git_psuh` occurs in no run of the corpus, so it matches no event\n  --> corpus-names/deploy.vigil:5:33");
      // The nearest name is `git_push`, which only runs b and c show.
      expect(corpus.stderr).toContain("help: did you mean `git_push`?");
      // A name some run shows is known: `run_tests` is only in run a, `force` only in b and c.
      expect(corpus.stderr).not.toContain("run_tests");
      expect(corpus.stderr).not.toContain("`force`");
      // The single-run check says the same of the same name: one place decides.
      const single = await runBuiltCli(["check", "corpus-names/deploy.vigil", "--trace", "corpus-names/runs/b.jsonl"], { cwd: fixtures });
      expect(single.stderr).toContain("warning[V1101]: the action `git_psuh` does not occur in the trace, so it matches no event");
      expect(single.stderr).toContain("help: did you mean `git_push`?");
    });

    it("with the SQL engine too", async () => {
      const corpus = await runBuiltCli(["check", "corpus-names/deploy.vigil", "--trace", "corpus-names/runs", "--engine", "sql"], { cwd: fixtures });
      expect(corpus.code).toBe(1);
      expect(corpus.stderr.match(/warning\[V1101\]/g)).toHaveLength(1);
      expect(corpus.stderr).toContain("help: did you mean `git_push`?");
    });

    it("--strict: one error for the corpus, judged against the union, not one per run against its own signature", async () => {
      const misspelled = await runBuiltCli(["check", "corpus-names/deploy.vigil", "--trace", "corpus-names/runs", "--strict"], { cwd: fixtures });
      expect(misspelled.code).toBe(2);
      expect(misspelled.stderr).toContain("error: --strict: 1 warning about `corpus-names/deploy.vigil` against the runs of `corpus-names/runs` counts as an error; no verdict is given");
      expect(misspelled.stdout).not.toContain("verdict:");
      // Every name of this policy is shown by some run, though each run lacks some: the corpus is judged.
      for (const run of ["a", "b", "c"]) {
        const alone = await runBuiltCli(["check", "corpus-names/complete.vigil", "--trace", `corpus-names/runs/${run}.jsonl`, "--strict"], { cwd: fixtures });
        expect(alone.code).toBe(2);
      }
      for (const engine of ["eval", "sql"]) {
        const complete = await runBuiltCli(["check", "corpus-names/complete.vigil", "--trace", "corpus-names/runs", "--strict", "--engine", engine], { cwd: fixtures });
        expect(complete.code, complete.stderr).toBe(1);
        expect(complete.stderr).toBe("");
        expect(complete.stdout).toContain("unsafe  corpus-names/runs/b.jsonl: release.no_force at 1");
      }
    });
  });

  it("refuses a FIFO among the runs instead of waiting on it", async () => {
    const { mkdtemp, copyFile } = await import("node:fs/promises");
    const { execFileSync } = await import("node:child_process");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const directory = await mkdtemp(join(tmpdir(), "vigil-fifo-"));
    await copyFile(join(fixtures, "corpus", "benign.jsonl"), join(directory, "benign.jsonl"));
    execFileSync("mkfifo", [join(directory, "x.jsonl")]);
    const result = await runBuiltCli(["check", join(fixtures, "no-delete.vigil"), "--trace", directory]);
    expect(result.code).toBe(2);
    expect(result.stdout).toMatch(/x\.jsonl.*T0004.*named pipe/);
    const alone = await runBuiltCli(["check", join(fixtures, "no-delete.vigil"), "--trace", join(directory, "x.jsonl")]);
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("not a regular file");
  });

  it("a directory without traces is an input error", async () => {
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus-empty"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("holds no trace files");
  });
});

describe("SARIF", () => {
  it("writes one result per violated rule and run, located at the witnesses' trace lines", async () => {
    const { mkdtemp, readFile } = await import("node:fs/promises");
    const { tmpdir } = await import("node:os");
    const { join } = await import("node:path");
    const out = join(await mkdtemp(join(tmpdir(), "vigil-sarif-")), "report.sarif");
    const result = await runBuiltCli(["check", "no-delete.vigil", "--trace", "corpus", "--sarif", out], { cwd: fixtures });
    expect(result.code).toBe(1);
    const sarif = JSON.parse(await readFile(out, "utf8"));
    expect(sarif.version).toBe("2.1.0");
    const run = sarif.runs[0];
    expect(run.tool.driver.rules.map((r: { id: string }) => r.id)).toEqual(["housekeeping.no_recursive_delete", "housekeeping.validate_before_share"]);
    expect(run.tool.driver.rules[0].shortDescription.text).toBe("Never delete files recursively.");
    const located = run.results.map((r: { ruleId: string; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }) => [
      r.ruleId,
      r.locations[0]!.physicalLocation.artifactLocation.uri,
      r.locations[0]!.physicalLocation.region.startLine,
    ]);
    expect(located).toEqual([
      ["housekeeping.no_recursive_delete", "corpus/nested/session.jsonl", 2],
      ["housekeeping.validate_before_share", "corpus/nested/session.jsonl", 2],
      ["housekeeping.no_recursive_delete", "corpus/violating.jsonl", 2],
    ]);
  });
});
