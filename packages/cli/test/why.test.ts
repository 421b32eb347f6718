import { join } from "node:path";
import { check, compile, type TraceEvent } from "@vigil/compiler";
import { describe, expect, it } from "vitest";
import { whyLine } from "../src/render.js";
import { examples, vigilc } from "./support/run-vigilc.js";

/** `--why` names, for a rule that holds, the event that answered each trigger; the JSON reports carry the answers. */
const dashcam = join(examples, "dashcam");

const event = (position: number, action: string, args: TraceEvent["args"] = {}): TraceEvent => ({ position, action, args, status: "ok" });

async function whyLines(policySource: string, events: TraceEvent[]): Promise<string[]> {
  const policy = compile(policySource);
  expect(policy.ok).toBe(true);
  const report = await check(policy, events);
  return report.statements.map((verdict) => whyLine(verdict));
}

describe("whyLine", () => {
  it("names each trigger's answer, keeps the vacuous wording, and says what an until leaves open", async () => {
    const lines = await whyLines(
      [
        "policy p {",
        "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
        "  rule never: resp(action in {nothing}, action in {close})",
        "  rule locked: until(action in {lock}, action in {unlock}, action in {write})",
        "  rule first: prec(action in {use}, action in {check})",
        "}",
        "",
      ].join("\n"),
      [
        event(1, "open", { id: "a" }),
        event(2, "open", { id: "b" }),
        event(3, "lock"),
        event(4, "close", { id: "b" }),
        event(5, "unlock"),
        event(6, "close", { id: "a" }),
        event(7, "lock"),
        event(8, "use"),
        event(9, "open", { id: "c" }),
      ],
    );
    expect(lines).toEqual([
      "p.closes violated: its trigger matched 3 events (1, 2, 9); 1 broke it (9); 2 answered (1 by 6, 2 by 4); patterns matched: first 3 (1, 2, 9), second 2 (4, 6)",
      "p.never holds vacuously: its trigger matched no event; patterns matched: first none, second 2 (4, 6)",
      "p.locked holds: its trigger matched 2 events (3, 7), no interval broken by a bad event before its resolution; 1 resolved (3 by 5), 1 still open at the end; patterns matched: trigger 2 (3, 7), resolve 1 (5), bad none",
      "p.first violated: its trigger matched 1 event (8); 1 broke it (8); patterns matched: first 1 (8), second none",
    ]);
  });

  it("lists the first ten answers and counts the rest", async () => {
    const opens = Array.from({ length: 12 }, (_, i) => event(i + 1, "open"));
    const [line] = await whyLines("policy p {\n  rule r: resp(action in {open}, action in {close})\n}\n", [...opens, event(13, "close")]);
    expect(line).toBe(
      "p.r holds: its trigger matched 12 events (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … 2 more), each followed by a response (1 by 13, 2 by 13, 3 by 13, 4 by 13, 5 by 13, 6 by 13, 7 by 13, 8 by 13, 9 by 13, 10 by 13, … 2 more); patterns matched: first 12 (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, … 2 more), second 1 (13)",
    );
  });
});

describe.concurrent("vigilc check: answers", () => {
  for (const engine of ["eval", "smt"] as const) {
    it(`--why names the event that answered each trigger (--engine ${engine})`, async () => {
      const result = await vigilc(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--why", "--engine", engine], { cwd: dashcam });
      expect(result.stdout).toContain("dashcam.R1 holds: its trigger matched 1 event (8), each after an event that meets its prerequisite (8 by 7); patterns matched: first 1 (8), second 1 (7)\n");
      expect(result.stdout).toContain("dashcam.R2 holds: its trigger matched 1 event (6), each after an event that meets its prerequisite (6 by 5); patterns matched: first 1 (6), second 1 (5)\n");
      expect(result.stdout).toContain("dashcam.R3 violated: its trigger matched 1 event (5); 1 broke it (5); patterns matched: first 1 (5), second 1 (7)\n");
    });
  }

  it("a corpus's JSON carries each rule's answered count beside its triggered count", async () => {
    const result = await vigilc(["check", "dashcam.vigil", "--trace", "*.jsonl", "--format", "json"], { cwd: dashcam });
    const report = JSON.parse(result.stdout) as { runs: { file: string; statements: { name: string; triggered?: number; answered?: number }[] }[] };
    const violating = report.runs.find((run) => run.file.endsWith("violating.jsonl"))!;
    expect(violating.statements.map(({ name, triggered, answered }) => ({ name, triggered, answered }))).toEqual([
      { name: "R0", triggered: undefined, answered: undefined },
      { name: "R1", triggered: 1, answered: 1 },
      { name: "R2", triggered: 1, answered: 1 },
      { name: "R3", triggered: 1, answered: 0 },
    ]);
  });
});
