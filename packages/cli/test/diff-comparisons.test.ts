import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc diff` and `vigilc analyze` on comparisons, `every(…)` and `count(…)`: `amount > 100` and
 * `amount >= 100` told apart by one event holding 100, a rewrite of a count proven equivalent, and
 * a contradiction called unmatchable only where the key holds one value (a list holds 6 and 2).
 */

type Relation = { relation: string; basis: string; leftOut: string[]; counterexamples: { rejectedBy: string; confirmed: boolean; events: { action: string; args?: Record<string, unknown> }[] }[] };
type Report = { files: { diagnostics: { code: string; span: { line: number } }[] }[] };

let scratch: string;
const policy = (name: string, rule: string) => writeFileSync(join(scratch, name), `policy p {\n  rule r: ${rule}\n}\n`);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-comparisons-"));
  policy("above.vigil", "abs(action in {refund} and amount > 100)");
  policy("at-least.vigil", "abs(action in {refund} and amount >= 100)");
  policy("at-most.vigil", "abs(action in {send} and count(to) <= 5)");
  policy("not-over.vigil", "abs(action in {send} and not count(to) > 5)");
  writeFileSync(
    join(scratch, "contradiction.vigil"),
    `policy p {\n  rule one: abs(action in {refund} and amount > 5 and amount < 3 and count(amount) <= 1)\n  rule any: abs(action in {refund} and amount > 5 and amount < 3)\n}\n`,
  );
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc diff and analyze on comparisons and counts", () => {
  it("tells `amount > 100` from `amount >= 100` by one event holding 100", async () => {
    const result = await runCli(["diff", "above.vigil", "at-least.vigil", "--format", "json"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    const whole = (JSON.parse(result.stdout) as { whole: Relation }).whole;
    expect(whole.relation).toBe("stricter");
    expect(whole.counterexamples).toEqual([{ rejectedBy: "new", broken: ["p.r"], confirmed: true, events: [{ action: "refund", args: { amount: 100 } }] }]);
  });

  it("proves `count(to) <= 5` and `not count(to) > 5` equivalent", async () => {
    const result = await runCli(["diff", "at-most.vigil", "not-over.vigil"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain("whole policy: equivalent (proven)");
  });

  it("calls a contradiction unmatchable where the key holds one value, and not where a list can meet it", async () => {
    const result = await runCli(["analyze", "contradiction.vigil", "--format", "json"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    expect((JSON.parse(result.stdout) as Report).files[0]!.diagnostics.map((d) => `${d.code} ${d.span.line}`)).toEqual(["A0001 2", "A0002 2"]);
  });
});
