import { describe, expect, it } from "vitest";
import { splitGlob } from "../../extension/src/globs.js";
import { reportLines, summaryLine, testRunSummary, violationMessage } from "../../extension/src/report.js";
import type { CheckTraceResult, StatementVerdict } from "../../extension/src/protocol.js";

/**
 * The parts of the extension that are plain functions: the words a trace check puts in the
 * Problems panel and the output channel, the line that sums up a run of a test file, and how a
 * trace glob becomes a watcher's folder and pattern. The rest of the extension runs in VS Code
 * (editor.e2e.test.ts).
 */

const range = { start: { line: 41, character: 7 }, end: { line: 41, character: 20 } };
const statement = (overrides: Partial<StatementVerdict>): StatementVerdict => ({ policy: "coding_agent", name: "no_force_push", holds: false, witnesses: [], range, ...overrides });

describe("the words of a trace check", () => {
  it("names the trace and the witness events, with their lines", () => {
    expect(violationMessage(statement({ witnesses: [{ event: 5, line: 6 }, { event: 9 }] }), "/w/coding-agent/force-push.jsonl")).toBe(
      "rule `no_force_push` violated on force-push.jsonl at event 5 (line 6), event 9",
    );
  });

  it("names at most five witnesses and counts the others, the unlisted ones included", () => {
    const witnesses = [1, 2, 3, 4, 5, 6, 7].map((event) => ({ event }));
    expect(violationMessage(statement({ witnesses, witnessCount: 1200 }), "t.jsonl")).toBe(
      "rule `no_force_push` violated on t.jsonl at event 1, event 2, event 3, event 4, event 5 and 1195 more",
    );
  });

  it("says why a statement was not decided", () => {
    expect(violationMessage(statement({ undecided: "time budget exceeded" }), "C:\\traces\\t.jsonl")).toBe("rule `no_force_push` undecided on t.jsonl: time budget exceeded");
  });

  it("sums up a run and reports every statement", () => {
    const result: CheckTraceResult = {
      verdict: "unsafe",
      trace: "/w/force-push.jsonl",
      statements: [statement({ witnesses: [{ event: 5, line: 6 }] }), statement({ name: "read_before_edit", holds: true })],
      errors: [],
    };
    expect(summaryLine(result)).toBe("Vigil: force-push.jsonl is unsafe: 1 of 2 rules violated or undecided");
    expect(reportLines(result, "coding-agent/coding-agent.vigil", "smt")).toEqual([
      "coding-agent/coding-agent.vigil on /w/force-push.jsonl (engine smt): unsafe",
      "  violated   coding_agent.no_force_push",
      "               at event 5 (line 6)",
      "  holds      coding_agent.read_before_edit",
    ]);
    expect(summaryLine({ verdict: "unsafe", trace: "/w/bad.jsonl", statements: [], errors: ["line 3: invalid JSON"] })).toBe("Vigil: bad.jsonl could not be checked: line 3: invalid JSON");
  });
});

describe("trace globs as watcher patterns", () => {
  it("roots a glob at the folder its static segments name", () => {
    expect(splitGlob("/w/examples", "*.jsonl")).toEqual({ base: "/w/examples", pattern: "*.jsonl" });
    expect(splitGlob("/w/examples", "coding-agent/**/*.jsonl")).toEqual({ base: "/w/examples/coding-agent", pattern: "**/*.jsonl" });
    expect(splitGlob("/w/examples", "../shared/data/*.json")).toEqual({ base: "/w/shared/data", pattern: "*.json" });
    expect(splitGlob("/w/examples", "/data/runs/{a,b}.jsonl")).toEqual({ base: "/data/runs", pattern: "{a,b}.jsonl" });
  });

  it("watches a glob without wildcards as the one file it names", () => {
    expect(splitGlob("/w/examples", "traces/benign.jsonl")).toEqual({ base: "/w/examples/traces", pattern: "benign.jsonl" });
  });
});

describe("the words of a run of a test file", () => {
  const test = (name: string, outcome: "passed" | "failed" | "error") => ({ name, outcome, failedExpectations: outcome === "failed" ? 1 : 0, durationMs: 3 });

  it("counts the tests by outcome", () => {
    expect(testRunSummary({ uri: "file:///w/dashcam/dash%20cam.vigiltest", tests: [test("a", "passed"), test("b", "failed"), test("c", "error")], errors: [] })).toBe(
      "dash cam.vigiltest: 3 tests, 1 passed, 1 failed, 1 could not run",
    );
    expect(testRunSummary({ uri: "file:///w/t.vigiltest", tests: [test("a", "passed")], errors: [] })).toBe("t.vigiltest: 1 test, 1 passed");
  });

  it("says why no test ran", () => {
    expect(testRunSummary({ uri: "file:///w/t.vigiltest", tests: [], errors: ["line 1:8: V2101: the policy `p.vigil` cannot be read"] })).toBe(
      "t.vigiltest: no test ran: line 1:8: V2101: the policy `p.vigil` cannot be read",
    );
  });
});
