import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile, judgeRun } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * The one pipeline: a file streamed piece by piece gives exactly what its whole text gives, and the
 * witness events and lines a report needs are found whether they were final while reading (`abs`,
 * an `until` trigger) or only at the end (`resp`).
 */
const policy = compile(
  [
    "policy p {",
    '  rule no_rm: abs(action in {rm} and path ~ "/etc/*")',
    "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
    "  rule locked: until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)",
    "}",
    "",
  ].join("\n"),
);
const directory = mkdtempSync(join(tmpdir(), "vigil-judge-"));
const file = join(directory, "run.jsonl");
const actions = ["rm", "open", "close", "lock", "unlock", "write", "ls"];
const paths = ["/etc/passwd", "/tmp/x"];
writeFileSync(
  file,
  Array.from({ length: 20_000 }, (_, i) => JSON.stringify({ action: actions[(i * 5) % 7], args: { path: paths[i % 2], id: `f${i % 13}` } })).join("\n") + "\n",
);

describe("judgeRun", () => {
  it("gives the same report for a streamed file and for its text, and locates the witnesses a report shows", async () => {
    const streamed = await judgeRun(policy, { file }, { locateWitnesses: 5, witnessLines: true });
    const whole = await judgeRun(policy, { file, text: readFileSync(file, "utf8") }, { locateWitnesses: 5, witnessLines: true });
    expect(streamed.eventCount).toBe(20_000);
    expect(streamed.events).toBeUndefined();
    expect(streamed.report!.statements.map((s) => [s.name, s.holds, s.witnesses])).toEqual(whole.report!.statements.map((s) => [s.name, s.holds, s.witnesses]));
    for (const statement of streamed.report!.statements) {
      expect(statement.witnesses.length).toBeGreaterThan(5);
      for (const position of statement.witnesses.slice(0, 5)) expect(streamed.witnessEvents!.get(position)?.position).toBe(position);
      // Canonical events are one per line: the line of a witness is its position.
      for (const position of statement.witnesses) expect(streamed.witnessLines!.get(position)).toBe(position);
    }
  });

  it("stops reading past its time budget and leaves every statement undecided", async () => {
    const judged = await judgeRun(policy, { file }, { budgetMs: 0 });
    expect(judged.eventCount).toBeLessThan(20_000);
    expect(judged.report!.statements.every((s) => !s.holds && s.undecided !== undefined)).toBe(true);
  });
});
