import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * A rule that measures time on a run without times, as a user meets it: `check` names the event
 * (E0004), judges the other rules and fails closed (exit 1) with the rule undecided, whatever the
 * engine; `lower` lowers nothing (exit 2).
 */

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-untimed-"));
  writeFileSync(join(scratch, "rate.vigil"), "policy rate {\n  rule per_minute: limit[1 per 1m](action in {ping})\n  rule in_all: limit[5](action in {ping})\n}\n");
  writeFileSync(join(scratch, "untimed.jsonl"), ['{"action": "ping"}', '{"action": "ping"}'].join("\n") + "\n");
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("a rule that measures time, on a run without times", () => {
  it.each(["eval", "smt", "monitor"])("check --engine %s leaves it undecided, located at the event, and judges the others", async (engine) => {
    const result = await runCli(["check", "rate.vigil", "--trace", "untimed.jsonl", "--engine", engine], { cwd: scratch });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("error[E0004]: event 1 (line 1 of untimed.jsonl) has no time, and the rule measures time: the rule `per_minute` is undecided");
    expect(result.stderr).toContain("--> untimed.jsonl:1:1");
    const json = await runCli(["check", "rate.vigil", "--trace", "untimed.jsonl", "--engine", engine, "--format", "json"], { cwd: scratch });
    const statements = (JSON.parse(json.stdout) as { statements: { name: string; holds: boolean; undecided?: string }[] }).statements;
    expect(statements.map((s) => [s.name, s.holds, s.undecided])).toEqual([
      ["per_minute", false, "event 1 (line 1 of untimed.jsonl) has no time, and the rule measures time"],
      ["in_all", true, undefined],
    ]);
  });

  it("lower refuses to lower it", async () => {
    const result = await runCli(["lower", "rate.vigil", "--trace", "untimed.jsonl"], { cwd: scratch });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("error: event 1 (line 1 of untimed.jsonl) has no time, and the rule measures time; a rule that measures time cannot be lowered");
  });
});
