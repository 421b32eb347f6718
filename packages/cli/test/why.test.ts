import { join } from "node:path";
import { check, compile, reportToJson, uncountedAmount, type TraceEvent } from "@vigil/compiler";
import { describe, expect, it } from "vitest";
import { whyLine } from "../src/reports/render.js";
import { examples } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

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

describe("whyLine of a scoped rule", () => {
  it("says whether and where the scope opened, and never claims a trigger answered in a stretch that is not judged", async () => {
    const lines = await whyLines(
      [
        "policy s {",
        "  rule never_opened: resp(action in {open}, action in {save}) after action in {lock}",
        "  rule unclosed: abs(action in {rm}) between action in {start} and action in {stop}",
        "  rule between_resp: resp(action in {open}, action in {save}) between action in {start} and action in {stop}",
        "  rule until_scope: prec(action in {use}, action in {check}) after action in {begin} until action in {end}",
        "  rule before_scope: abs(action in {rm}) before action in {approve}",
        "  rule body: always not action in {write} after action in {open}",
        "  rule unscoped: abs(action in {rm})",
        "}",
        "",
      ].join("\n"),
      [
        event(1, "start"),
        event(2, "open"),
        event(3, "save"),
        event(4, "stop"),
        event(5, "begin"),
        event(6, "check"),
        event(7, "use"),
        event(8, "end"),
        event(9, "approve"),
        event(10, "start"),
        event(11, "rm"),
        event(12, "open"),
      ],
    );
    expect(lines).toEqual([
      "s.never_opened holds vacuously: its scope never opened: no event matched its `after` pattern; patterns matched: first 2 (2, 12), second 1 (3)",
      // The rm at 11 is in a stretch that never closed: not judged, so the rule holds, and the line says why (not "as the rule asks").
      "s.unclosed holds: its scope opened 2 times: at 1 (closed at 4), at 10 (never closed: not judged); its pattern matched 1 event in its scope (11); what happened in the stretch opened at 10 is not judged, since it never closed; patterns matched: pattern 1 (11)",
      "s.between_resp holds: its scope opened 2 times: at 1 (closed at 4), at 10 (never closed: not judged); its trigger matched 2 events in its scope (2, 12); 1 answered (2 by 3); what happened in the stretch opened at 10 is not judged, since it never closed; patterns matched: first 2 (2, 12), second 1 (3)",
      "s.until_scope holds: its scope opened once: at 5 (closed at 8); its trigger matched 1 event in its scope (7), each after an event that meets its prerequisite (7 by 6); patterns matched: first 1 (7), second 1 (6)",
      "s.before_scope holds vacuously: its scope is events 1 to 8: event 9 matched its `before` pattern; its pattern matched no event in its scope; patterns matched: pattern 1 (11)",
      "s.body holds: its scope opened at event 2; its body held at every event in its scope (an `always` has no single trigger)",
      "s.unscoped violated: its pattern matched 1 event (11); 1 broke it (11); patterns matched: pattern 1 (11)",
    ]);
  });

  it("the JSON report carries where the scope opened and closed", async () => {
    const policy = compile("policy s {\n  rule r: abs(action in {rm}) between action in {start} and action in {stop}\n  rule u: abs(action in {rm})\n}\n");
    const report = await check(policy, [event(1, "start"), event(2, "stop"), event(3, "start")]);
    const [scoped, unscoped] = reportToJson(report).statements;
    expect(scoped!.scope).toEqual({ count: 2, first: [{ open: 1, close: 2 }, { open: 3 }] });
    expect(unscoped!.scope).toBeUndefined();
  });

  it("a `between` whose only stretch never closed holds vacuously, and says so", async () => {
    const [line] = await whyLines("policy s {\n  rule r: abs(action in {rm}) between action in {start} and action in {stop}\n}\n", [event(1, "start"), event(2, "rm")]);
    expect(line).toBe(
      "s.r holds vacuously: its scope opened once: at 1 (never closed: not judged); patterns matched: pattern 1 (2)",
    );
  });

  it("a scoped violation says where the scope opened", async () => {
    const [line] = await whyLines("policy s {\n  rule r: abs(action in {rm}) after action in {lock}\n}\n", [event(1, "rm"), event(2, "lock"), event(3, "rm")]);
    expect(line).toBe("s.r violated: its scope opened at event 2; its pattern matched 1 event in its scope (3); 1 broke it (3); patterns matched: pattern 2 (1, 3)");
  });
});

describe("a sum limit's witness whose amount could not be counted", () => {
  const source = "policy pay {\n  /// Refunds add up to 500 at most.\n  rule refunds: limit[500 of amount](action in {refund})\n}\n";
  const events = [event(1, "refund", { amount: 100 }), event(2, "refund", { amount: "12 USD" }), event(3, "refund"), event(4, "refund", { amount: -5 }), event(5, "refund", { amount: 450 })];

  it("says so in the why line: not a number, missing or negative, a witness by itself", async () => {
    const policy = compile(source);
    const report = await check(policy, events);
    const line = whyLine(report.statements[0]!, { eventAt: (position) => events[position - 1], uncountedAmount });
    expect(line).toBe(
      'pay.refunds violated: its pattern matched 5 events (1, 2, 3, 4, 5); 4 broke it (2, where its amount at `amount` is not a number ("12 USD"): a witness by itself, 3, where it has no amount at `amount`: a witness by itself, 4, where its amount at `amount` is negative (-5): a witness by itself, 5); patterns matched: pattern 5 (1, 2, 3, 4, 5)',
    );
  });

  it("says so beside the witness in the report of vigilc check", async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-why-"));
    try {
      writeFileSync(join(scratch, "pay.vigil"), source);
      writeFileSync(join(scratch, "run.jsonl"), events.map(({ action, args }) => JSON.stringify({ action, args })).join("\n") + "\n");
      const result = await runCli(["check", "pay.vigil", "--trace", "run.jsonl"], { cwd: scratch });
      expect(result.code).toBe(1);
      expect(result.stdout).toContain(
        'witness event 2 (run.jsonl:2): refund {"amount":"12 USD"} [ok]\n    note: its amount at `amount` is not a number ("12 USD"), so it cannot be counted: it is a witness by itself, whatever the total\n',
      );
      expect(result.stdout).toContain("witness event 3 (run.jsonl:3): refund {} [ok]\n    note: it has no amount at `amount`, so it cannot be counted");
      // A witness past the maximum has no note.
      expect(result.stdout).toContain('witness event 5 (run.jsonl:5): refund {"amount":450} [ok]\n  = response: block');
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("vigilc check: answers", () => {
  for (const engine of ["eval", "smt"] as const) {
    it(`--why names the event that answered each trigger (--engine ${engine})`, async () => {
      const result = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--why", "--engine", engine], { cwd: dashcam });
      expect(result.stdout).toContain("dashcam.R1 holds: its trigger matched 1 event (8), each after an event that meets its prerequisite (8 by 7); patterns matched: first 1 (8), second 1 (7)\n");
      expect(result.stdout).toContain("dashcam.R2 holds: its trigger matched 1 event (6), each after an event that meets its prerequisite (6 by 5); patterns matched: first 1 (6), second 1 (5)\n");
      expect(result.stdout).toContain("dashcam.R3 violated: its trigger matched 1 event (5); 1 broke it (5); patterns matched: first 1 (5), second 1 (7)\n");
    });
  }

  it("a corpus's JSON carries each rule's answered count beside its triggered count", async () => {
    // A corpus: its runs are judged in worker threads, which the built CLI has.
    const result = await runCli(["check", "dashcam.vigil", "--trace", "*.jsonl", "--format", "json"], { cwd: dashcam, built: true });
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
