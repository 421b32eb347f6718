import { describe, expect, it } from "vitest";
import { OUTPUT_OBSERVATION_CAP, readTrace, signatureOf, signatureToJson } from "@vigil/trace";

const codes = (text: string) => readTrace(text, { file: "t.jsonl" }).diagnostics.map((d) => `${d.code}@${d.span?.line}: ${d.message}`);

describe("readTrace", () => {
  it("reads JSON Lines, numbering events from 1 and keeping their lines", () => {
    const { trace, diagnostics } = readTrace('{"action":"a"}\n\n{"action":"b","args":{"k":1},"status":"error","output":"x"}\r\n', { file: "t.jsonl" });
    expect(diagnostics).toEqual([]);
    expect(trace.events).toEqual([
      { position: 1, action: "a", args: {}, status: "ok", source: { file: "t.jsonl", line: 1, span: expect.objectContaining({ start: 0, line: 1, column: 1, endLine: 1 }) } },
      { position: 2, action: "b", args: { k: 1 }, status: "error", output: "x", source: { file: "t.jsonl", line: 3, span: expect.objectContaining({ start: 16, line: 3, column: 1, endLine: 3 }) } },
    ]);
  });

  it("reads a JSON array, with the line where each element starts", () => {
    const { trace, diagnostics } = readTrace('[\n  {"action": "a"},\n  {"action": "b", "output": {"n": 1}}\n]');
    expect(diagnostics).toEqual([]);
    expect(trace.events.map((e) => [e.position, e.action, e.source?.line, e.output])).toEqual([
      [1, "a", 2, undefined],
      [2, "b", 3, '{"n":1}'],
    ]);
  });

  it("reads a message record (kind message: no status, no output) and a call with no result (status null)", () => {
    const { trace, diagnostics } = readTrace(
      ['{"kind": "message", "action": "user_message", "args": {"text": "hi"}}', '{"action": "a", "status": null}', '{"kind": "call", "action": "b"}'].join("\n"),
    );
    expect(diagnostics).toEqual([]);
    expect(trace.events.map((e) => [e.kind, e.action, e.status])).toEqual([
      ["message", "user_message", undefined],
      [undefined, "a", undefined],
      [undefined, "b", "ok"],
    ]);
    expect(codes('{"kind": "message", "action": "m", "status": "ok"}\n{"kind": "tool", "action": "m"}')).toEqual([
      "T0002@1: the field `kind` of the event on line 1 is a message: it has no `status` and no `output`",
      'T0002@2: the field `kind` of the event on line 2 must be one of "call", "message"',
    ]);
  });

  it("accepts an empty trace", () => {
    expect(readTrace("").trace.events).toEqual([]);
    expect(readTrace("\n\n").diagnostics).toEqual([]);
    expect(readTrace("[]").trace.events).toEqual([]);
  });

  it("names the line and the field of every malformed record, and goes on", () => {
    expect(
      codes(
        [
          '{"action":"ok"}',
          '{"action": "a", "args": {"k": 1}',
          '{"args": {}}',
          '{"action": 7}',
          '{"action": "a", "status": "weird"}',
          '{"action": "a", "args": [1]}',
          "[1, 2]",
          '{"action": ""}',
        ].join("\n"),
      ),
    ).toEqual([
      expect.stringMatching(/^T0001@2: line 2 is not valid JSON/),
      "T0002@3: the event on line 3 has no `action` field",
      "T0002@4: the field `action` of the event on line 4 must be a string",
      'T0002@5: the field `status` of the event on line 5 must be one of "ok", "error"',
      "T0002@6: the field `args` of the event on line 6 must be an object",
      "T0002@7: the event on line 7 is not a JSON object",
      expect.stringMatching(/^T0002@8: the field `action` of the event on line 8/),
    ]);
  });

  it("rejects a JSON value that is not an array of events", () => {
    expect(codes('{"action": "a"} trailing')).toEqual([expect.stringMatching(/^T0001@1/)]);
    expect(codes('"just a string"')).toEqual([expect.stringMatching(/^T0002@1: the event on line 1 is not a JSON object/)]);
    expect(codes("[1,")).toEqual([expect.stringMatching(/^T0001@1: the trace is not valid JSON/)]);
  });

  it("warns once per unknown field", () => {
    expect(codes('{"action": "a", "tool": 1}\n{"action": "b", "tool": 2}')).toEqual([
      "T0006@1: the field `tool` (first on line 1) is not part of the canonical event format and is ignored",
    ]);
  });

  it("keeps a bounded observation of huge outputs, and says so", () => {
    const huge = "x".repeat(5_000_000) + "END";
    const { trace, diagnostics } = readTrace(JSON.stringify({ action: "a", output: huge }));
    expect(trace.events[0]!.output!.length).toBe(OUTPUT_OBSERVATION_CAP);
    expect(trace.events[0]!.outputTruncated).toBe(true);
    expect(diagnostics.map((d) => d.code)).toEqual(["T0005"]);
  });

  it("never cuts a surrogate pair in half", () => {
    const output = "x".repeat(OUTPUT_OBSERVATION_CAP - 1) + "😀";
    const observed = readTrace(JSON.stringify({ action: "a", output })).trace.events[0]!.output!;
    expect(observed).toBe("x".repeat(OUTPUT_OBSERVATION_CAP - 1));
  });
});

describe("signatureOf", () => {
  it("collects actions, argument names (dotted into objects) and their values", () => {
    const { trace } = readTrace('{"action":"a","args":{"k":6,"h":{"host":"x"},"l":["p","q"]}}\n{"action":"b","args":{"k":"6"}}');
    expect(signatureToJson(signatureOf(trace.events))).toMatchSnapshot();
  });
});
