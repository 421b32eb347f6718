import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectTraceFormat, mayBeRunFile, readAnyTrace, readRecording, readRunFile, splitRunFile, type TraceEvent } from "@vigil/trace";
import { arrayElementRanges, topLevelValueOffset } from "../src/formats/json-text.js";

/**
 * τ-bench results: a file of runs is cut into its runs (each named by task and trial, its text
 * keeping the file's lines), a run is read as OpenAI chat messages, and a file of runs read as one
 * trace is an error that says what it is. On the real file (200 runs of gpt-4o in the airline
 * domain) and on small files written here.
 */
const file = join(import.meta.dirname, "../../../../shared/data/tau-bench/gpt-4o-airline.json");
const text = readFileSync(file, "utf8");
const lines = text.split("\n");
const parsed = JSON.parse(text) as { task_id: number; trial: number; traj: { role: string; content: string | null; tool_calls?: { id: string; function: { name: string } }[] }[] }[];

describe("the real τ-bench file", () => {
  const runFile = splitRunFile(text)!;

  it("is detected, and cut into its 200 runs, named by task and trial", () => {
    expect(detectTraceFormat(text)).toBe("tau-bench");
    expect(mayBeRunFile(text)).toBe(true);
    expect(runFile.format).toBe("tau-bench");
    expect(runFile.runs).toHaveLength(200);
    expect(runFile.runs.map((run) => run.name)).toEqual(parsed.map((run) => `task ${run.task_id} trial ${run.trial}`));
    expect(new Set(runFile.runs.map((run) => run.name)).size).toBe(200);
    expect(runFile.runs.slice(0, 2).map((run) => [run.name, run.index, run.origin])).toEqual([
      ["task 0 trial 0", 1, { offset: 4, line: 2, column: 3 }],
      ["task 1 trial 0", 2, { offset: 25352, line: 333, column: 3 }],
    ]);
  });

  it("cuts each run's text out of the file as written, at its origin", () => {
    runFile.runs.forEach((run, index) => {
      expect(text.slice(run.origin.offset, run.origin.offset + run.text.length)).toBe(run.text);
      expect(JSON.parse(run.text)).toEqual(parsed[index]);
      expect(lines[run.origin.line - 1]!.slice(run.origin.column - 1)).toBe("{");
    });
  });

  it("reads each run's calls, paired, at the file's lines, as its traj alone reads", () => {
    for (const run of runFile.runs) {
      const read = readRecording(run.text, { file, format: "tau-bench", origin: run.origin });
      expect(read.diagnostics).toEqual([]);
      expect(read.format).toBe("tau-bench");
      const traj = parsed[run.index - 1]!.traj;
      const calls = traj.flatMap((message) => message.tool_calls ?? []);
      expect(read.trace.events.map((e) => [e.action, e.source?.id])).toEqual(calls.map((call) => [call.function.name, call.id]));
      for (const event of read.trace.events) {
        expect(event.status).toBe("ok");
        // The call's own line, not that of its result, though ids repeat within a run.
        expect(lines[event.source!.line! - 1]!.trim()).toBe(`"id": "${event.source!.id!}",`);
      }
    }
  });

  it("with messages, makes the user's and the agent's turns events; the system prompt and empty turns none", () => {
    let runsWithTextAndCalls = 0;
    for (const run of runFile.runs) {
      const read = readRecording(run.text, { file, format: "tau-bench", origin: run.origin, messages: true });
      expect(read.diagnostics).toEqual([]);
      const expected: string[] = [];
      for (const message of parsed[run.index - 1]!.traj) {
        if (message.role === "user" && message.content) expected.push("user_message");
        if (message.role === "assistant" && message.content) expected.push("agent_message");
        for (const call of message.tool_calls ?? []) expected.push(call.function.name);
        if (message.role === "assistant" && message.content && (message.tool_calls?.length ?? 0) > 0) runsWithTextAndCalls++;
      }
      expect(read.trace.events.map((e) => e.action)).toEqual(expected);
      for (const event of read.trace.events.filter((e) => e.action.endsWith("_message"))) {
        expect(lines[event.source!.line! - 1]!.trim()).toBe("{");
        expect(event.status).toBeUndefined();
      }
    }
    // The file has assistant turns with text and calls: the text comes first (checked above).
    expect(runsWithTextAndCalls).toBeGreaterThan(0);
  });

  it("names the first run's turns", () => {
    const run = runFile.runs[0]!;
    const read = readRecording(run.text, { file, format: "tau-bench", origin: run.origin, messages: true });
    const brief = (e: TraceEvent) => [e.position, e.action, e.source?.line];
    expect(read.trace.events.slice(0, 7).map(brief)).toEqual([
      [1, "user_message", 110],
      [2, "agent_message", 114],
      [3, "user_message", 118],
      [4, "agent_message", 122],
      [5, "user_message", 126],
      [6, "get_user_details", 139],
      [7, "search_direct_flight", 159],
    ]);
    expect(read.trace.events[0]!.args).toEqual({ text: "Hi! I'm looking to book a flight from New York to Seattle on May 20th." });
  });

  it("is no single trace: read whole it is one error saying what it is and how to read it", () => {
    const read = readAnyTrace(text, { file });
    expect(read.format).toBe("tau-bench");
    expect(read.trace.events).toEqual([]);
    expect(read.diagnostics.map((d) => [d.code, d.severity, d.message, d.span?.line])).toEqual([["T0008", "error", "the trace holds 200 τ-bench runs, not one run", 1]]);
    expect(read.diagnostics[0]!.help).toContain("--run NAME");
  });

  it("is read from its file once, cut into runs", async () => {
    const read = await readRunFile(file);
    expect(read).toBeDefined();
    expect("code" in read!).toBe(false);
    expect((read as { runs: unknown[] }).runs).toHaveLength(200);
  });
});

describe("one τ-bench run, and a traj alone", () => {
  const first = parsed[0]!;

  it("reads a run object alone as one τ-bench run", () => {
    const read = readRecording(JSON.stringify(first, null, 2), { messages: true });
    expect(read.format).toBe("tau-bench");
    expect(read.detected).toBe(true);
    expect(read.diagnostics).toEqual([]);
    expect(read.calls).toBe(8);
  });

  it("reads a traj alone as OpenAI chat messages, one run, as before", () => {
    const traj = JSON.stringify(first.traj, null, 2);
    expect(splitRunFile(traj)).toBeUndefined();
    const read = readRecording(traj);
    expect(read.format).toBe("openai");
    expect(read.trace.events.map((e) => e.action)).toEqual(first.traj.flatMap((m) => (m.tool_calls ?? []).map((c) => c.function.name)));
  });

  it("names no other JSON array a file of runs", async () => {
    expect(splitRunFile('[{"action": "read"}]')).toBeUndefined();
    expect(splitRunFile("[]")).toBeUndefined();
    expect(splitRunFile('{"task_id": 0, "traj": []}')).toBeUndefined();
    expect(splitRunFile('[{"task_id": 0, "traj": []}]', { format: "openai" })).toBeUndefined();
    expect(await readRunFile(join(import.meta.dirname, "fixtures/openai-chat.json"))).toBeUndefined();
  });
});

describe("a file of runs with broken runs", () => {
  // Run 2 has no traj; run 3 names its task twice with run 4 (same task and trial); run 5 is cut short.
  const broken = [
    "[",
    '  {"task_id": 7, "trial": 0, "traj": [{"role": "user", "content": "hi"}]},',
    '  {"task_id": 8, "trial": 0, "reward": 1},',
    '  {"task_id": 9, "trial": 1, "traj": []},',
    '  {"task_id": 9, "trial": 1, "traj": []},',
    '  {"task_id": 10, "trial": 0, "traj": [{"role": "user", "content": "bye"}, {"role": "tool", "tool_call_id": "x", "content": "?"}]},',
    '  {"task_id": 11, "trial": 0, "traj": [{"role": "user", "con',
  ].join("\n");

  it("cuts every run out, a run that does not parse included, and names duplicates by their place", () => {
    const runFile = splitRunFile(broken)!;
    expect(runFile.runs.map((run) => [run.name, run.origin.line, run.origin.column])).toEqual([
      ["task 7 trial 0", 2, 3],
      ["task 8 trial 0", 3, 3],
      ["task 9 trial 1 (run 3)", 4, 3],
      ["task 9 trial 1 (run 4)", 5, 3],
      ["task 10 trial 0", 6, 3],
      ["run 6", 7, 3],
    ]);
  });

  it("reads each broken run as an error located at its line of the file", () => {
    const runs = splitRunFile(broken)!.runs;
    const read = (index: number) => readRecording(runs[index]!.text, { file: "broken.json", format: "tau-bench", origin: runs[index]!.origin, messages: true });
    expect(read(0).diagnostics).toEqual([]);
    expect(read(0).trace.events.map((e) => [e.action, e.source?.line])).toEqual([["user_message", 2]]);
    expect(read(1).diagnostics.map((d) => [d.code, d.span?.line, d.span?.column, d.file])).toEqual([["T0008", 3, 3, "broken.json"]]);
    expect(read(1).diagnostics[0]!.message).toContain("not a τ-bench run");
    expect(read(4).diagnostics.map((d) => [d.code, d.span?.line])).toEqual([["T0007", 6]]);
    const cut = read(5).diagnostics;
    expect(cut.map((d) => [d.code, d.span?.line])).toEqual([["T0001", 7]]);
    expect(cut[0]!.span!.start).toBeGreaterThan(broken.lastIndexOf("\n"));
  });
});

describe("where the parts of a JSON text are", () => {
  it("finds the elements of an array, past brackets, commas and escaped quotes in strings", () => {
    const json = ' [ {"a": "x]\\",{"}, [1, 2] ,"s,t" , 3 ]';
    const ranges = arrayElementRanges(json, 1);
    expect(ranges.map((r) => json.slice(r.start, r.end))).toEqual(['{"a": "x]\\",{"}', "[1, 2]", '"s,t"', "3"]);
    expect(arrayElementRanges("[]", 0)).toEqual([]);
    // An array cut short ends at the end of the text.
    expect(arrayElementRanges('[1, {"a": ', 0).map((r) => [r.start, r.end])).toEqual([[1, 2], [4, 9]]);
  });

  it("finds the value of a key of the top-level object, the last of duplicates, not a nested one", () => {
    const json = '{"meta": {"traj": 1}, "s": "\\"traj\\": 2", "traj": [1], "traj": [2]}';
    expect(json.slice(topLevelValueOffset(json, "traj"))).toMatch(/^\[2\]/);
    expect(topLevelValueOffset(json, "none")).toBeUndefined();
    expect(topLevelValueOffset("[1]", "traj")).toBeUndefined();
  });
});
