import { describe, expect, it } from "vitest";
import { ARGUMENT_OBSERVATION_CAP, createRecordingReader, readAnyTrace, readRecording, readTrace, signatureOf, valuesAtPath, type TraceEvent } from "@vigil/trace";

/** Values are read exactly or rejected with a located error; keys are ordinary own properties. */
const codes = (text: string) => readTrace(text, { file: "t.jsonl" }).diagnostics.map((d) => `${d.code}@${d.span?.line}: ${d.message}`);

const claudeCall = (input: string) =>
  `{"type":"assistant","session_id":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Transfer","input":${input}}]}}`;
const openaiCall = (args: object | string) =>
  JSON.stringify([{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "transfer", arguments: typeof args === "string" ? args : JSON.stringify(args) } }] }]);

describe("integers beyond 2^53 − 1", () => {
  it("rejects an integer literal that would be rounded, naming its field and line", () => {
    expect(codes('{"action":"ok"}\n{"action":"pay","args":{"acct":9007199254740993}}')).toEqual([
      "T0012@2: the field `args.acct` of the event on line 2 is the integer 9007199254740993, which cannot be represented exactly: it would be read as 9007199254740992",
    ]);
    expect(codes('{"action":"pay","args":{"to":[{"acct":-123456789012345678901}]}}')).toEqual([
      "T0012@1: the field `args.to.0.acct` of the event on line 1 is the integer -123456789012345678901, which cannot be represented exactly: it would be read as -123456789012345683968",
    ]);
    expect(codes('{"action":"pay","output":{"id":9007199254740993}}').map((c) => c.slice(0, 33))).toEqual(["T0012@1: the field `output.id` of"]);
  });

  it("keeps integers that are exact, however large, and the same digits in a string", () => {
    const { trace, diagnostics } = readTrace(
      '{"action":"pay","args":{"max":9007199254740991,"two53":9007199254740992,"two54":18014398509481984,"big":1e21,"float":1.5e300,"s":"9007199254740993"}}',
    );
    expect(diagnostics).toEqual([]);
    expect(trace.events[0]!.args).toEqual({ max: 9007199254740991, two53: 2 ** 53, two54: 2 ** 54, big: 1e21, float: 1.5e300, s: "9007199254740993" });
  });

  it("in recordings, names the argument and the call", () => {
    expect(readAnyTrace(claudeCall('{"acct":9007199254740993}')).diagnostics.map((d) => `${d.code}@${d.span?.line}: ${d.message}`)).toEqual([
      "T0012@1: the argument `acct` of the `Transfer` call on line 1 is the integer 9007199254740993, which cannot be represented exactly: it would be read as 9007199254740992",
    ]);
    // The OpenAI `arguments` are JSON text of their own: the literal is looked for there.
    expect(readAnyTrace(openaiCall('{"acct": 9007199254740993}')).diagnostics.map((d) => d.code)).toEqual(["T0012"]);
    expect(readAnyTrace(openaiCall('{"acct": 9007199254740992}')).diagnostics).toEqual([]);
  });
});

describe("numbers out of range", () => {
  it("is a located error saying so, not a garbled schema message", () => {
    expect(codes('{"action":"a","args":{"x":1E400}}\n{"action":"b","output":-1e999,"status":"weird"}')).toEqual([
      "T0013@1: the field `args.x` of the event on line 1 is a number out of range: its magnitude is beyond the largest number a trace can hold (about 1.8e308)",
      "T0013@2: the field `output` of the event on line 2 is a number out of range: its magnitude is beyond the largest number a trace can hold (about 1.8e308)",
      'T0002@2: the field `status` of the event on line 2 must be one of "ok", "error"',
    ]);
    expect(readAnyTrace(claudeCall('{"n":[1,2E400]}')).diagnostics.map((d) => d.message)).toEqual([
      "the argument `n.1` of the `Transfer` call on line 1 is a number out of range: its magnitude is beyond the largest number a trace can hold (about 1.8e308)",
    ]);
  });
});

describe("argument names are ordinary keys", () => {
  const check = (events: readonly TraceEvent[]) => {
    const args = events[0]!.args;
    expect(Object.keys(args)).toContain("__proto__");
    expect(Object.getPrototypeOf(args)).toBe(Object.prototype);
    // What a policy reads: `abs(__proto__ in {"evil"})` is violated by this event.
    expect(valuesAtPath(args, ["__proto__"])).toEqual(["evil"]);
    expect(valuesAtPath(args, ["inner", "__proto__", "polluted"])).toEqual([true]);
    expect([...signatureOf(events).keys.values()].map((k) => k.segments.join("."))).toContain("__proto__");
  };
  const record = '{"__proto__":"evil","inner":{"__proto__":{"polluted":true}}}';

  it("keeps `__proto__` as an own property, in canonical events and in recordings, and leaves prototypes alone", () => {
    const canonical = readTrace(`{"action":"a","args":${record}}`);
    expect(canonical.diagnostics).toEqual([]);
    check(canonical.trace.events);
    check(readAnyTrace(claudeCall(record)).trace.events);
    check(readAnyTrace(openaiCall(record)).trace.events);
    // With a cut argument the object is copied: still own keys.
    const long = readTrace(`{"action":"a","args":{"__proto__":"evil","inner":{"__proto__":{"polluted":true}},"text":"${"x".repeat(ARGUMENT_OBSERVATION_CAP + 1)}"}}`);
    expect(long.trace.events[0]!.argsTruncated).toBe(true);
    check(long.trace.events);
    expect(({} as Record<string, unknown>)["evil"]).toBeUndefined();
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined();
    expect(Object.getPrototypeOf({})).toBe(Object.prototype);
    expect(Object.keys(Object.prototype)).toEqual([]);
  });
});

describe("the argument observation cap", () => {
  it("cuts string arguments at any depth to 65,536 code units, never inside a surrogate pair, and says so once per trace", () => {
    const long = "y".repeat(ARGUMENT_OBSERVATION_CAP - 1) + "😀" + "tail";
    const text = [
      JSON.stringify({ action: "write", args: { content: long, path: "a.txt", parts: [{ body: "z".repeat(ARGUMENT_OBSERVATION_CAP + 10) }] } }),
      JSON.stringify({ action: "write", args: { content: long } }),
      JSON.stringify({ action: "read", args: { path: "b.txt" } }),
    ].join("\n");
    const { trace, diagnostics } = readTrace(text, { file: "t.jsonl" });
    expect(diagnostics.map((d) => `${d.code}@${d.span?.line}: ${d.message}`)).toEqual([
      "T0014@1: an argument of the event on line 1 is longer than 65536 characters; only its first 65536 are observed",
    ]);
    const [first, second, third] = trace.events;
    expect(first!.args["content"]).toBe("y".repeat(ARGUMENT_OBSERVATION_CAP - 1));
    expect((first!.args["parts"] as { body: string }[])[0]!.body).toHaveLength(ARGUMENT_OBSERVATION_CAP);
    expect(first!.args["path"]).toBe("a.txt");
    expect(first!.argsTruncated).toBe(true);
    expect(second!.argsTruncated).toBe(true);
    expect(third!.argsTruncated).toBeUndefined();
    expect(diagnostics[0]!.severity).toBe("info");
  });

  it("applies to recordings, whose grounded events see the cut value", () => {
    const command = `echo ${"a".repeat(ARGUMENT_OBSERVATION_CAP)}`;
    const text = `{"type":"assistant","session_id":"s","message":{"content":[{"type":"tool_use","id":"t","name":"Bash","input":${JSON.stringify({ command })}}]}}`;
    const read = readRecording(text);
    expect(read.diagnostics.map((d) => d.code)).toEqual(["T0014"]);
    expect(read.trace.events[0]).toMatchObject({ action: "Bash", argsTruncated: true });
    expect((read.trace.events[0]!.args["command"] as string).length).toBe(ARGUMENT_OBSERVATION_CAP);
  });

  it("is the same whether the trace is read whole or in pieces", () => {
    const text = JSON.stringify({ action: "write", args: { content: "q".repeat(ARGUMENT_OBSERVATION_CAP * 2) } });
    const reader = createRecordingReader({});
    const events = [...reader.push(text.slice(0, 1000)), ...reader.push(text.slice(1000)), ...reader.end()];
    expect(events).toEqual(readTrace(text).trace.events);
    expect(reader.diagnostics.map((d) => d.code)).toEqual(["T0014"]);
  });
});
