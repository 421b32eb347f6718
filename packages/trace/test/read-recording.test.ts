import { describe, expect, it } from "vitest";
import { readRecording } from "@vigil/trace";

/** `readRecording`: any format in, shell calls grounded by default for recordings of agents. */
const transcript = [
  { type: "system", subtype: "init", session_id: "s1" },
  { type: "assistant", message: { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "cp out.xlsx /shared && rm out.xlsx" } }] } },
  { type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "", is_error: false }] } },
]
  .map((line) => JSON.stringify(line))
  .join("\n");

const canonical = JSON.stringify({ action: "Bash", args: { command: "rm -rf build" } });

describe("readRecording", () => {
  it("grounds the shell calls of a recording, after the call they come from", () => {
    const read = readRecording(transcript, { file: "session.jsonl" });
    expect(read.diagnostics).toEqual([]);
    expect(read).toMatchObject({ format: "claude-code", detected: true, calls: 1, groundedEvents: 2 });
    expect(read.trace.events.map((e) => [e.position, e.action, e.status, e.source?.groundedFrom])).toEqual([
      [1, "Bash", "ok", undefined],
      [2, "cp", "ok", 1],
      [3, "rm", "ok", 1],
    ]);
    expect(read.trace.events[1]!.args).toMatchObject({ source: "out.xlsx", dest: "/shared" });
  });

  it("takes canonical events as given unless asked to ground them", () => {
    expect(readRecording(canonical).trace.events.map((e) => e.action)).toEqual(["Bash"]);
    expect(readRecording(canonical, { ground: true }).trace.events.map((e) => e.action)).toEqual(["Bash", "rm"]);
    expect(readRecording(transcript, { ground: false })).toMatchObject({ calls: 1, groundedEvents: 0 });
  });

  it("does not ground a recording that has reading errors, and reports them", () => {
    const orphan = JSON.stringify({ type: "user", message: { role: "user", content: [{ type: "tool_result", tool_use_id: "t9", content: "x" }] } });
    const read = readRecording(`${transcript}\n${orphan}`, { file: "session.jsonl" });
    expect(read.diagnostics.map((d) => [d.code, d.span?.line])).toEqual([["T0007", 4]]);
    expect(read.groundedEvents).toBe(0);
    expect(read.trace.events.map((e) => e.action)).toEqual(["Bash"]);
  });

  it("reports an unrecognized format without a format", () => {
    const read = readRecording('{"foo": 1}');
    expect(read.format).toBeUndefined();
    expect(read.diagnostics.map((d) => d.code)).toEqual(["T0008"]);
  });
});
