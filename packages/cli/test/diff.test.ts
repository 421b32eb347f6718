import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vigilc } from "./support/run-vigilc.js";

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
type Relation = { relation: string; basis: string; depth: number; counterexamples: { rejectedBy: string; broken: string[]; confirmed: boolean; events: Record<string, unknown>[] }[] };

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-diff-"));
  writeFileSync(join(scratch, "old.vigil"), oldPolicy);
  writeFileSync(join(scratch, "new.vigil"), newPolicy);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc diff", () => {
  it("names the relation of each rule and of the whole, with the shortest runs that show each difference", async () => {
    const result = await vigilc(["diff", "old.vigil", "new.vigil", "--format", "json"], { cwd: scratch });
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
    const report = JSON.parse((await vigilc(["diff", "old.vigil", "new.vigil", "--format", "json"], { cwd: scratch })).stdout) as Json;
    // The whole policy's runs (a rule's run shows that rule's two versions differing; the other rules may break on it too).
    const runs = report.whole.counterexamples;
    expect(runs.map((run) => run.rejectedBy)).toEqual(["new", "old"]);
    for (const [index, run] of runs.entries()) {
      const file = join(scratch, `run${index}.jsonl`);
      writeFileSync(file, run.events.map((event) => JSON.stringify(event)).join("\n") + "\n");
      const onOld = await vigilc(["check", "old.vigil", "--trace", file], { cwd: scratch });
      const onNew = await vigilc(["check", "new.vigil", "--trace", file], { cwd: scratch });
      // vigilc check exits 1 on a violation, 0 when the run is safe.
      expect([onOld.code, onNew.code], JSON.stringify(run)).toEqual(run.rejectedBy === "new" ? [0, 1] : [1, 0]);
    }
  });

  it("proves equivalence only where it can, and otherwise says how far it looked", async () => {
    writeFileSync(join(scratch, "a.vigil"), `policy p {\n  rule r: abs(action in {a, b} and status = error)\n  rule s: prec(action in {a}, action in {b})\n}\n`);
    // The same meanings written differently: one-event rules over exact values are proven equal;
    // a `prec` is compared on runs up to the depth.
    writeFileSync(join(scratch, "b.vigil"), `policy p {\n  rule r: abs((action in {a} or action in {b}) and not (status = ok or not status = error))\n  rule s: prec(action in {a}, action in {b} or (action in {b} and status = ok))\n}\n`);
    const result = await vigilc(["diff", "a.vigil", "b.vigil", "--depth", "4"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toBe(
      "a.vigil → b.vigil\n" +
        "whole policy: no difference found in runs of up to 4 events (not proven equivalent)\n" +
        "rule p.r: unchanged\n" +
        "rule p.s: no difference found in runs of up to 4 events (not proven equivalent)\n",
    );
    const one = await vigilc(["diff", "a.vigil", "b.vigil", "--rule", "r", "--format", "json"], { cwd: scratch });
    expect(JSON.parse(one.stdout).whole).toMatchObject({ relation: "equivalent", basis: "proof" });
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
    const result = await vigilc(["diff", "deploy.vigil", "--base", "HEAD", "--format", "markdown"], { cwd: join(repository, "policies") });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stdout).toContain("### Policy change: `deploy.vigil@HEAD` → `deploy.vigil`");
    expect(result.stdout).toContain("| `deploy.tested` | added | stricter: the new version rejects runs the old accepts");
    expect(result.stdout).toContain("```jsonl\n");
    const missing = await vigilc(["diff", "deploy.vigil", "--base", "no-such-ref"], { cwd: join(repository, "policies") });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^error: cannot read `deploy.vigil` at `no-such-ref` with git/);
  });

  it("says what is wrong with its input", async () => {
    writeFileSync(join(scratch, "broken.vigil"), "policy p { rule r: prec(action in {a}) }\n");
    const broken = await vigilc(["diff", "old.vigil", "broken.vigil"], { cwd: scratch });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("error: the policy `broken.vigil` has 1 error; nothing was compared");
    const one = await vigilc(["diff", "old.vigil"], { cwd: scratch });
    expect(one.code).toBe(2);
    expect(one.stderr).toBe("error: give the old and the new policy file, or one file and --base REF\n");
    const rule = await vigilc(["diff", "old.vigil", "new.vigil", "--rule", "nope"], { cwd: scratch });
    expect(rule.code).toBe(2);
    expect(rule.stderr).toBe("error: no rule named `nope` in either version\n");
  });
});
