import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * Event times as a user meets them: a canonical trace's `time` judged by a rule that measures
 * time, a `time` that is not one (T0016, exit 2), `at` in a test file (a bad one is V2006), and
 * `vigilc explain` of the two codes.
 */

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-times-"));
  writeFileSync(join(scratch, "rate.vigil"), "policy rate {\n  /// At most two pings a minute.\n  rule pings: limit[2 per 1m](action in {ping})\n}\n");
  const ping = (time: string | number) => JSON.stringify({ action: "ping", time });
  writeFileSync(join(scratch, "spaced.jsonl"), [ping("2026-11-27T10:00:00Z"), ping("2026-11-27T10:00:40Z"), ping(Date.UTC(2026, 10, 27, 10, 1, 30))].join("\n") + "\n");
  writeFileSync(join(scratch, "burst.jsonl"), [ping("2026-11-27T10:00:00Z"), ping("2026-11-27T11:00:10+01:00"), ping("2026-11-27T10:00:20.5Z")].join("\n") + "\n");
  writeFileSync(join(scratch, "no-zone.jsonl"), [ping("2026-11-27T10:00:00Z"), ping("2026-11-27T10:00:40")].join("\n") + "\n");
  writeFileSync(
    join(scratch, "rate.vigiltest"),
    ['policy "rate.vigil"', 'test "burst" {', "  events { ping at 0s  ping at 30s  ping at 59s  ping at 2m }", "  expect pings violated at 3", "  decide 3 block by pings", "}", ""].join("\n"),
  );
  writeFileSync(join(scratch, "bad.vigiltest"), ['policy "rate.vigil"', 'test "t" {', "  events { ping at 5 }", "  expect all hold", "}", ""].join("\n"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("event times", () => {
  it("check judges a limit per minute on the trace's times", async ({ expect }) => {
    const spaced = await runCli(["check", "rate.vigil", "--trace", "spaced.jsonl"], { cwd: scratch });
    expect(spaced.stderr).toBe("");
    expect(spaced.code).toBe(0);
    const burst = await runCli(["check", "rate.vigil", "--trace", "burst.jsonl", "--format", "json"], { cwd: scratch });
    expect(burst.code).toBe(1);
    expect((JSON.parse(burst.stdout) as { statements: { name: string; witnesses: number[] }[] }).statements.map((s) => [s.name, s.witnesses])).toEqual([["pings", [3]]]);
  });

  it("a time without a zone is T0016 at its line, and nothing is judged", async ({ expect }) => {
    const result = await runCli(["check", "rate.vigil", "--trace", "no-zone.jsonl"], { cwd: scratch });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error[T0016]: the field `time` of the event on line 2 is the date-time `2026-11-27T10:00:40`, which has no time zone");
    expect(result.stderr).toContain("--> no-zone.jsonl:2:1");
  });

  it("test runs a file whose events have `at`, and locates a bad time", async ({ expect }) => {
    const passed = await runCli(["test", "rate.vigiltest"], { cwd: scratch });
    expect(passed.stderr).toBe("");
    expect(passed.code).toBe(0);
    const bad = await runCli(["test", "bad.vigiltest"], { cwd: scratch });
    expect(bad.code).toBe(2);
    expect(bad.stdout + bad.stderr).toContain("V2006");
    expect(bad.stdout + bad.stderr).toContain("bad.vigiltest:3:20");
  });

  it("explain knows T0016 and V2006", async ({ expect }) => {
    expect((await runCli(["explain", "T0016"])).stdout).toMatch(/^T0016 \(error\): an event's time .* neither an ISO 8601 date-time with a time zone nor a whole number of epoch milliseconds\n$/);
    expect((await runCli(["explain", "v2006"])).stdout).toMatch(/^V2006 \(error\): an event's time \(`at …`\) in a test file/);
  });
});
