import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { examplesDir, scratchDirectory, vigilcSpawned } from "./support.js";

/**
 * A named pipe among the runs of a corpus. Opening a FIFO for reading blocks until a writer comes,
 * which never happens: the check must refuse it as a file that is not regular, not wait on it, and
 * still check every other run.
 */

const scratch = scratchDirectory("fifo");
afterAll(() => scratch.remove());

describe("a FIFO named x.jsonl inside a corpus directory", () => {
  const corpus = join(scratch.path, "runs");
  mkdirSync(corpus);
  copyFileSync(join(examplesDir, "dashcam/benign.jsonl"), join(corpus, "a.jsonl"));
  copyFileSync(join(examplesDir, "dashcam/violating.jsonl"), join(corpus, "b.jsonl"));
  execFileSync("mkfifo", [join(corpus, "x.jsonl")]);
  const policy = join(examplesDir, "dashcam/dashcam.vigil");

  it("does not hang: the FIFO is reported (exit 2) and the other runs are checked", async () => {
    const run = await vigilcSpawned(["check", policy, "--trace", corpus], { cwd: scratch.path, timeoutMs: 50_000 });
    expect(run.signal, "vigilc was killed: it waited on the FIFO").toBeNull();
    expect(run.code).toBe(2);
    const report = run.stdout + run.stderr;
    expect(report).toMatch(/x\.jsonl.*(FIFO|named pipe)/);
    expect(report).toMatch(/unsafe\s+\S*b\.jsonl: dashcam\.R3 at 5/);
    expect(report).toContain("checked 3 runs");
    expect(report).toContain("1 safe, 1 unsafe, 1 could not be checked");
  }, 60_000);

  it("with --format json, the FIFO is a run with an error and the others have their verdicts", async () => {
    const run = await vigilcSpawned(["check", policy, "--trace", corpus, "--format", "json"], { cwd: scratch.path, timeoutMs: 50_000 });
    expect(run.signal, "vigilc was killed: it waited on the FIFO").toBeNull();
    expect(run.code).toBe(2);
    const report = JSON.parse(run.stdout) as { summary: { runs: number; failed: number }; runs: Array<{ file: string; verdict?: string; errors: Array<{ code: string; message: string }> }> };
    expect(report.summary).toMatchObject({ runs: 3, safe: 1, unsafe: 1, failed: 1 });
    const byFile = new Map(report.runs.map((r) => [r.file.split("/").pop(), r]));
    expect(byFile.get("a.jsonl")?.verdict).toBe("safe");
    expect(byFile.get("b.jsonl")?.verdict).toBe("unsafe");
    const fifo = byFile.get("x.jsonl");
    expect(fifo?.verdict).toBeUndefined();
    expect(fifo?.errors.map((e) => `${e.code} ${e.message}`).join(" ")).toMatch(/T0004 .*(FIFO|named pipe)/);
  }, 60_000);
});
