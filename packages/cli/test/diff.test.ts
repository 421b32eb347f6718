import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc diff OLD NEW`: the relation of each rule and of the whole policy, each difference shown by
 * a run that one version accepts and the other rejects, which `vigilc check` judges the same way.
 */

const oldPolicy = `policy deploy {
  /// Deploy only after a passing version check.
  rule checked: prec(action in {deploy}, action in {version_check} and status = ok)
  rule no_secrets: abs(action in {read_file} and path in {"/etc/shadow"})
  rule limit: limit[3](action in {deploy})
}
`;

const newPolicy = `policy deploy {
  /// Deploy only after a version check.
  rule checked: prec(action in {deploy}, action in {version_check})
  rule no_secrets: abs(action in {read_file} and path in {"/etc/shadow"})
  rule limit: limit[2](action in {deploy})
  rule tested: prec(action in {deploy}, action in {run_tests})
}
`;

type Json = {
  whole: Relation;
  rules: (Relation & { rule: string; change: string })[];
};
type Relation = { relation: string; basis: string; depth: number; values: boolean; leftOut: string[]; counterexamples: { rejectedBy: string; broken: string[]; confirmed: boolean; events: Record<string, unknown>[] }[] };

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-diff-"));
  writeFileSync(join(scratch, "old.vigil"), oldPolicy);
  writeFileSync(join(scratch, "new.vigil"), newPolicy);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc diff", () => {
  it("names the relation of each rule and of the whole, with the shortest runs that show each difference", async () => {
    const result = await runCli(["diff", "old.vigil", "new.vigil", "--format", "json"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Json;
    expect(report.whole.relation).toBe("incomparable");
    expect(report.rules.map(({ rule, change, relation, basis }) => ({ rule, change, relation, basis }))).toEqual([
      { rule: "deploy.checked", change: "changed", relation: "looser", basis: "bounded" },
      { rule: "deploy.no_secrets", change: "unchanged", relation: "equivalent", basis: "proof" },
      { rule: "deploy.limit", change: "changed", relation: "stricter", basis: "bounded" },
      { rule: "deploy.tested", change: "added", relation: "stricter", basis: "bounded" },
    ]);
    // The shortest runs, with nothing in them that does not matter.
    expect(report.rules[0]!.counterexamples).toEqual([
      { rejectedBy: "old", broken: ["deploy.checked"], confirmed: true, events: [{ action: "version_check", status: null }, { action: "deploy" }] },
    ]);
    expect(report.rules[2]!.counterexamples[0]!.events).toEqual([{ action: "deploy" }, { action: "deploy" }, { action: "deploy" }]);
    expect(report.rules[3]!.counterexamples[0]!.events).toEqual([{ action: "deploy" }]);
  });

  it("writes every run in the canonical trace format, ready for vigilc check, which judges it as the diff says", async () => {
    const report = JSON.parse((await runCli(["diff", "old.vigil", "new.vigil", "--format", "json"], { cwd: scratch })).stdout) as Json;
    // The whole policy's runs (a rule's run shows that rule's two versions differing; the other rules may break on it too).
    const runs = report.whole.counterexamples;
    expect(runs.map((run) => run.rejectedBy)).toEqual(["new", "old"]);
    for (const [index, run] of runs.entries()) {
      const file = join(scratch, `run${index}.jsonl`);
      writeFileSync(file, run.events.map((event) => JSON.stringify(event)).join("\n") + "\n");
      const onOld = await runCli(["check", "old.vigil", "--trace", file], { cwd: scratch });
      const onNew = await runCli(["check", "new.vigil", "--trace", file], { cwd: scratch });
      // vigilc check exits 1 on a violation, 0 when the run is safe.
      expect([onOld.code, onNew.code], JSON.stringify(run)).toEqual(run.rejectedBy === "new" ? [0, 1] : [1, 0]);
    }
  });

  it("proves equivalence only where it can, and otherwise says how far it looked", async () => {
    writeFileSync(join(scratch, "a.vigil"), `policy p {\n  rule r: abs(action in {a, b} and status = error)\n  rule s: prec(action in {a}, action in {b})\n}\n`);
    // The same meanings written differently: one-event rules over exact values are proven equal;
    // a `prec` is compared on runs up to the depth.
    writeFileSync(join(scratch, "b.vigil"), `policy p {\n  rule r: abs((action in {a} or action in {b}) and not (status = ok or not status = error))\n  rule s: prec(action in {a}, action in {b} or (action in {b} and status = ok))\n}\n`);
    const result = await runCli(["diff", "a.vigil", "b.vigil", "--depth", "4"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      "a.vigil → b.vigil\n" +
        "whole policy: no difference found in runs of up to 4 events (not proven equivalent)\n" +
        "rule p.r: unchanged\n" +
        "rule p.s: no difference found in runs of up to 4 events (not proven equivalent)\n",
    );
    // With --rule, that rule alone is compared; the whole is still every rule of each file.
    const one = await runCli(["diff", "a.vigil", "b.vigil", "--rule", "r", "--format", "json"], { cwd: scratch });
    const report = JSON.parse(one.stdout) as Json;
    expect(report.whole).toMatchObject({ relation: "equivalent", basis: "bounded", depth: 5 });
    expect(report.rules.map(({ rule, change, relation, basis }) => ({ rule, change, relation, basis }))).toEqual([{ rule: "p.r", change: "unchanged", relation: "equivalent", basis: "proof" }]);
  });

  it("finds a difference that needs a value two patterns meet together, or runs longer than the depth, and says how far it looked", async () => {
    writeFileSync(
      join(scratch, "env-old.vigil"),
      `policy p {\n  rule env: abs(action in {read} and path ~ "*.env")\n  rule secret: abs(action in {read} and path matches /secret/)\n  rule rate: limit[5 per 1h](action in {call})\n}\n`,
    );
    writeFileSync(
      join(scratch, "env-new.vigil"),
      `policy p {\n  rule env: abs(action in {read} and path ~ "*.env")\n  rule secret: abs(action in {read} and path matches /secret/ and not path ~ "*.env")\n  rule rate: limit[7 per 1h](action in {call})\n}\n`,
    );
    const result = await runCli(["diff", "env-old.vigil", "env-new.vigil", "--format", "json"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Json;
    // One event tells `secret` apart: a path that ends in `.env` and holds `secret`.
    const secret = report.rules.find((r) => r.rule === "p.secret")!;
    expect(secret).toMatchObject({ relation: "looser", depth: 5, values: true, leftOut: [] });
    expect(secret.counterexamples[0]!.events).toEqual([{ action: "read", args: { path: "secret.env" } }]);
    // A limit of 5 is broken by 6 calls, and one of 7 by 8: the search goes to 8 events.
    const rate = report.rules.find((r) => r.rule === "p.rate")!;
    expect(rate).toMatchObject({ relation: "looser", depth: 8, values: false, leftOut: [] });
    expect(rate.counterexamples[0]!.events).toHaveLength(6);
    expect(report.whole).toMatchObject({ relation: "looser", depth: 8 });
    // With --rule, the whole keeps every rule: still looser, by the limit.
    const one = JSON.parse((await runCli(["diff", "env-old.vigil", "env-new.vigil", "--rule", "secret", "--format", "json"], { cwd: scratch })).stdout) as Json;
    expect(one.whole).toMatchObject({ relation: "looser", depth: 8 });
    expect(one.rules.map((r) => r.rule)).toEqual(["p.secret"]);
    // Every bounded answer names how far it looked, and over which values.
    const text = await runCli(["diff", "env-old.vigil", "env-new.vigil"], { cwd: scratch });
    expect(text.stdout).toContain("whole policy: looser: the new version accepts runs the old rejects (no other difference in runs of up to 8 events over every class of values the rules tell apart the other way)\n");
    // What the search cannot reach is named: a limit longer than the longest run searched.
    writeFileSync(join(scratch, "big-old.vigil"), `policy p {\n  rule rate: limit[20](action in {call})\n}\n`);
    writeFileSync(join(scratch, "big-new.vigil"), `policy p {\n  rule rate: limit[20](action in {call} or action in {call})\n}\n`);
    const big = await runCli(["diff", "big-old.vigil", "big-new.vigil"], { cwd: scratch });
    expect(big.code, big.stderr).toBe(0);
    expect(big.stdout).toContain(
      "rule p.rate: no difference found in runs of up to 12 events (not proven equivalent; the search left out runs of 21 events, which rule `p.rate` (a limit of 20) needs)\n",
    );
  });

  it("compares a file with its version at a git revision, as markdown for a pull request", async () => {
    const repository = join(scratch, "repo");
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...args], { cwd: repository, encoding: "utf8" });
    execFileSync("mkdir", ["-p", join(repository, "policies")]);
    git("init", "-q");
    writeFileSync(join(repository, "policies", "deploy.vigil"), oldPolicy);
    git("add", ".");
    git("commit", "-q", "-m", "old");
    writeFileSync(join(repository, "policies", "deploy.vigil"), newPolicy);
    const result = await runCli(["diff", "deploy.vigil", "--base", "HEAD", "--format", "markdown"], { cwd: join(repository, "policies") });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain("### Policy change: `deploy.vigil@HEAD` → `deploy.vigil`");
    expect(result.stdout).toContain("| `deploy.tested` | added | stricter: the new version rejects runs the old accepts");
    expect(result.stdout).toContain("```jsonl\n");
    const missing = await runCli(["diff", "deploy.vigil", "--base", "no-such-ref"], { cwd: join(repository, "policies") });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot read `deploy.vigil` at `no-such-ref` with git/);
  });

  it("says what is wrong with its input", async () => {
    writeFileSync(join(scratch, "broken.vigil"), "policy p { rule r: prec(action in {a}) }\n");
    const broken = await runCli(["diff", "old.vigil", "broken.vigil"], { cwd: scratch });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("error: the policy `broken.vigil` has 1 error; nothing was compared");
    const one = await runCli(["diff", "old.vigil"], { cwd: scratch });
    expect(one.code).toBe(2);
    expect(one.stderr).toBe("error: give the old and the new policy file, or one file and --base REF\n");
    const rule = await runCli(["diff", "old.vigil", "new.vigil", "--rule", "nope"], { cwd: scratch });
    expect(rule.code).toBe(2);
    expect(rule.stderr).toBe("error: no rule named `nope` in either version\n");
  });
});
