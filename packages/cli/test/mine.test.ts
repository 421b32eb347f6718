import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/** `vigilc mine` as a user runs it: a policy that `vigilc check` finds holding on every given run. */

const examples = resolve(import.meta.dirname, "../../../examples");
let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-mine-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc mine", () => {
  it("prints a policy that holds on every run it was mined from", async () => {
    const runs = ["coding-agent/benign.jsonl", "coding-agent/failing-tests.jsonl", "dashcam/benign.jsonl"].map((run) => join(examples, run));
    const output = join(scratch, "mined.vigil");
    const result = await runCli(["mine", ...runs, "--min-runs", "1", "-o", output], { cwd: scratch });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).toMatch(/^\d+ candidates over 3 good runs: \d+ held on every one; \d+ rules kept/);
    const policy = readFileSync(output, "utf8");
    expect(policy).toContain("policy mined {");
    for (const run of runs) {
      const checked = await runCli(["check", output, "--trace", run], { cwd: scratch });
      expect(checked.code, `${run}: ${checked.stdout}${checked.stderr}`).toBe(0);
    }
  });

  it("with --against, keeps the rules a bad run breaks, which vigilc check then reports on it", async () => {
    const good = join(examples, "dashcam/benign.jsonl");
    const bad = join(examples, "dashcam/violating.jsonl");
    const result = await runCli(["mine", good, "--against", bad, "--min-runs", "1", "--name", "dashcam_mined"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("policy dashcam_mined {");
    expect(result.stdout).toContain("Breaks 1 of the bad runs.");
    writeFileSync(join(scratch, "against.vigil"), result.stdout);
    const checked = await runCli(["check", "against.vigil", "--trace", bad], { cwd: scratch });
    expect(checked.code).toBe(1);
  });

  it("exits 1 when no rule holds, and 2 on bad input", async () => {
    writeFileSync(join(scratch, "one.jsonl"), '{"action":"a"}\n');
    const none = await runCli(["mine", "one.jsonl"], { cwd: scratch });
    expect(none.code).toBe(1);
    expect(none.stdout).toBe("");
    writeFileSync(join(scratch, "broken.jsonl"), "{not json\n");
    const broken = await runCli(["mine", "broken.jsonl"], { cwd: scratch });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("error: `");
    const name = await runCli(["mine", "one.jsonl", "--name", "not a name"], { cwd: scratch });
    expect(name.code).toBe(2);
  });
});
