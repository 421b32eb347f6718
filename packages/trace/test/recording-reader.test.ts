import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { createRecordingReader, readRecording, readTrace, type ReadRecordingOptions, type TraceEvent } from "@vigil/trace";

/**
 * The recording reader: text pushed in pieces, events handed out as soon as they are complete.
 * Whatever the pieces, it reads what `readRecording` reads from the whole text.
 */
const data = join(import.meta.dirname, "../../../../shared/data");
const fixtures = join(import.meta.dirname, "fixtures");

/** Reads `text` pushed in the given pieces, checking positions run on from piece to piece. */
function readInPieces(pieces: readonly string[], options: ReadRecordingOptions = {}) {
  const reader = createRecordingReader(options);
  const events: TraceEvent[] = [];
  const take = (some: TraceEvent[]) => {
    for (const event of some) expect(event.position).toBe(events.length + 1), events.push(event);
  };
  for (const piece of pieces) take(reader.push(piece));
  take(reader.end());
  return { events, diagnostics: reader.diagnostics, format: reader.format, detected: reader.detected, calls: reader.calls, groundedEvents: reader.groundedEvents };
}

/** Cuts a text at the given offsets. */
const cut = (text: string, at: readonly number[]) => [...at, text.length].map((end, i) => text.slice(i === 0 ? 0 : at[i - 1], end));

/** A deterministic pseudo-random sequence, so a failing split can be replayed. */
function randomCuts(length: number, count: number, seed: number): number[] {
  let state = seed;
  const next = () => ((state = (state * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
  return [...new Set(Array.from({ length: count }, () => Math.floor(next() * length)))].sort((a, b) => a - b);
}

const claudeSession = [
  { type: "system", subtype: "init", session_id: "s1" },
  { type: "assistant", session_id: "s1", message: { content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "cp out.xlsx /shared && rm out.xlsx" } }] } },
  { type: "assistant", session_id: "s1", message: { content: [{ type: "tool_use", id: "t2", name: "Read", input: { file_path: "😀.txt" } }] } },
  { type: "user", session_id: "s1", message: { content: [{ type: "tool_result", tool_use_id: "t2", content: "é😀" }] } },
  { type: "user", session_id: "s1", message: { content: [{ type: "tool_result", tool_use_id: "t1", content: "", is_error: true }] } },
  { type: "assistant", session_id: "s1", message: { content: [{ type: "tool_use", id: "t3", name: "Bash", input: { command: "ls | wc -l" } }] } },
]
  .map((line) => JSON.stringify(line))
  .join("\r\n");

const canonical = ['{"action":"a","args":{"k":"😀"}}', "", '{"action":"b","status":"error","output":"x"}\r', "not json", '{"args":{}}', '{"action":"c","tool":1}', '{"action":"Bash","args":{"command":"rm -rf /"}}'].join("\n");

const texts: [string, string, ReadRecordingOptions][] = [
  ["canonical JSON Lines, with errors", canonical, {}],
  ["canonical JSON Lines, grounded", canonical, { ground: true }],
  ["canonical JSON array", '[\n {"action": "a"},\n {"action": "b", "args": {"k": "😀"}}\n]', {}],
  ["Claude Code transcript, CRLF, calls answered out of order", claudeSession, {}],
  ["MCP log", readFileSync(join(fixtures, "mcp-session.jsonl"), "utf8"), {}],
  ["OpenAI chat", readFileSync(join(fixtures, "openai-chat.json"), "utf8"), {}],
  ["OpenAI Responses items", readFileSync(join(fixtures, "openai-responses.json"), "utf8"), {}],
  ["AgentDojo run", readFileSync(join(data, "agentdojo/gpt-4o-2024-05-13/banking/user_task_0/important_instructions/injection_task_0.json"), "utf8"), {}],
  ["Claude Code transcript, requested", claudeSession, { format: "claude-code" }],
  ["a transcript requested as MCP", claudeSession, { format: "mcp" }],
  ["a document requested as JSON Lines", readFileSync(join(fixtures, "openai-chat.json"), "utf8"), { format: "jsonl" }],
  ["an unrecognized text", "hello\nworld\n", {}],
  ["an empty text", "", {}],
];

describe("createRecordingReader", () => {
  it.each(texts)("%s: any split of the text reads as the whole text does", (_, text, options) => {
    const whole = readRecording(text, { file: "t", ...options });
    const expected = { events: whole.trace.events, diagnostics: whole.diagnostics, format: whole.format, detected: whole.detected, calls: whole.calls, groundedEvents: whole.groundedEvents };
    // Grounding is skipped once an error is known, which a stream may learn only after grounding
    // earlier pieces: compare errorless texts under every split, and the others without grounding.
    const errors = whole.diagnostics.some((d) => d.severity === "error");
    const splits = [[], randomCuts(text.length, 7, text.length), randomCuts(text.length, 40, 7), [...Array(text.length).keys()].filter((i) => i % 97 === 1)];
    for (const at of splits) {
      if (errors && at.length > 0 && whole.groundedEvents === 0 && (options.ground ?? whole.format !== "jsonl")) {
        expect(readInPieces(cut(text, at), { file: "t", ...options, ground: false })).toMatchObject({ events: readRecording(text, { file: "t", ...options, ground: false }).trace.events });
        continue;
      }
      expect(readInPieces(cut(text, at), { file: "t", ...options })).toEqual(expected);
    }
  });

  it("splits a line anywhere, even between the halves of a surrogate pair, one code unit at a time", () => {
    const text = '{"action":"a","args":{"k":"😀é"}}\r\n{"action":"b"}';
    const pieces = [...Array(text.length).keys()].map((i) => text[i]!);
    expect(pieces.some((p) => p.charCodeAt(0) >= 0xd800 && p.charCodeAt(0) <= 0xdbff)).toBe(true);
    const read = readInPieces(pieces, { file: "t" });
    expect(read.events).toEqual(readTrace(text, { file: "t" }).trace.events);
    expect(read.events[0]!.args).toEqual({ k: "😀é" });
    expect(read.events[1]!.source?.span).toMatchObject({ start: text.indexOf('{"action":"b"}'), line: 2, column: 1, endLine: 2, endColumn: 15 });
  });

  it("hands out canonical events line by line, deciding the format on the first line", () => {
    const reader = createRecordingReader({ file: "t.jsonl" });
    expect(reader.push('{"action":"a"}\n{"action":"b"')).toMatchObject([{ position: 1, action: "a" }]);
    expect(reader.format).toBe("jsonl");
    expect(reader.push("}\n")).toMatchObject([{ position: 2, action: "b", source: { line: 2 } }]);
    expect(reader.push("\n\n")).toEqual([]);
    expect(reader.push('{"action":"c"}')).toEqual([]);
    expect(reader.end()).toMatchObject([{ position: 3, action: "c", source: { line: 5 } }]);
    expect(reader.calls).toBe(3);
    expect(() => reader.push("{}")).toThrow(/ended/);
  });

  it("holds a call until it is answered, and the calls after it until then; grounds each on the way out", () => {
    const lines = claudeSession.split("\r\n").map((line) => `${line}\n`);
    const reader = createRecordingReader({ file: "s.jsonl" });
    expect(reader.push(lines[0]!)).toEqual([]);
    expect(reader.format).toBe("claude-code");
    expect(reader.push(lines[1]! + lines[2]!)).toEqual([]);
    // The answer to the second call: the first is still unanswered, so nothing comes out yet.
    expect(reader.push(lines[3]!)).toEqual([]);
    const both = reader.push(lines[4]!);
    // The call failed without its output showing that its line ran: its commands' statuses are not known.
    expect(both.map((e) => [e.position, e.action, e.status, e.source?.groundedFrom])).toEqual([
      [1, "Bash", "error", undefined],
      [2, "cp", undefined, 1],
      [3, "rm", undefined, 1],
      [4, "Read", "ok", undefined],
    ]);
    expect(reader.push(lines[5]!)).toEqual([]);
    // The input ends with the last call unanswered: it comes out without a status, grounded after
    // the events before it, with `groundedFrom` its own position.
    expect(reader.end().map((e) => [e.position, e.action, e.status, e.source?.groundedFrom])).toEqual([
      [5, "Bash", undefined, undefined],
      [6, "ls", undefined, 5],
      [7, "wc", undefined, 5],
    ]);
    expect(reader).toMatchObject({ calls: 3, groundedEvents: 4, detected: true, diagnostics: [] });
  });

  it("holds a JSON document until the input ends", () => {
    const text = readFileSync(join(fixtures, "openai-chat.json"), "utf8");
    const reader = createRecordingReader({});
    expect(reader.push(text)).toEqual([]);
    expect(reader.end()).toHaveLength(2);
    expect(reader.format).toBe("openai");
  });

  it("keeps the first 1,000 diagnostics and counts the rest in one, as severe as the worst of them", () => {
    const text = Array.from({ length: 1_500 }, (_, i) => (i === 1_400 ? '{"action": 1}' : `{"action":"a","field${i}":1}`)).join("\n");
    const reader = createRecordingReader({ file: "t.jsonl" });
    reader.push(text);
    reader.end();
    expect(reader.diagnostics).toHaveLength(1_001);
    expect(reader.diagnostics[999]!.code).toBe("T0006");
    expect(reader.diagnostics[1_000]).toMatchObject({
      code: "T0015",
      severity: "error",
      file: "t.jsonl",
      message: "500 more diagnostics of the trace are not listed (1 of them an error); only the first 1000 are kept",
    });
    expect(readTrace(text).diagnostics).toHaveLength(1_001);
  });

  it("reads a long canonical trace piece by piece, handing out every event by the piece it ends in", () => {
    const line = (i: number) => `${JSON.stringify({ action: `tool${i % 7}`, args: { path: `/data/${i}`, n: i }, output: "ok" })}\n`;
    const text = Array.from({ length: 20_000 }, (_, i) => line(i)).join("");
    const reader = createRecordingReader({});
    let handed = 0;
    let largestHeld = 0;
    for (let at = 0; at < text.length; at += 65_536) {
      const piece = text.slice(at, at + 65_536);
      handed += reader.push(piece).length;
      // Every line that ended in this piece is out: only the unfinished one is held.
      const ended = text.slice(0, at + piece.length).split("\n").length - 1;
      largestHeld = Math.max(largestHeld, ended - handed);
    }
    handed += reader.end().length;
    expect(handed).toBe(20_000);
    expect(largestHeld).toBe(0);
  });

  it("hands out, when the input ends, as many calls as were left unanswered, without a spread that overflows the stack", () => {
    // 200,000 calls, none answered: every one comes out at the end, in one list.
    const calls = 200_000;
    const text = Array.from({ length: calls }, (_, id) => JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t", arguments: { k: id } } })).join("\n");
    const whole = readRecording(text, { format: "mcp" });
    expect(whole.trace.events).toHaveLength(calls);
    expect(whole.trace.events[calls - 1]).toMatchObject({ position: calls, action: "t", args: { k: calls - 1 } });
    expect(whole.trace.events[calls - 1]!.status).toBeUndefined();
  });
});

describe("createRecordingReader for some positions only", () => {
  /** The events at `positions` of `text` pushed in pieces, by a reader that hands out only those. */
  function readAt(text: string, positions: ReadonlySet<number>, options: ReadRecordingOptions = {}, pieces = 7) {
    const reader = createRecordingReader(options, { positions });
    const events: TraceEvent[] = [];
    for (const piece of cut(text, randomCuts(text.length, pieces, 11))) events.push(...reader.push(piece));
    events.push(...reader.end());
    return { events, diagnostics: reader.diagnostics, calls: reader.calls };
  }

  const lines = Array.from({ length: 50 }, (_, i) => JSON.stringify({ action: `t${i % 3}`, args: { n: i, path: `/d/${i}` }, ...(i % 4 === 0 ? { output: `o${i}` } : {}) }));
  // Blank lines and a CRLF: positions count events, not lines.
  const run = [lines[0], "", ...lines.slice(1, 20), "   ", `${lines[20]}\r`, ...lines.slice(21)].join("\n");
  const wanted = new Set([1, 2, 20, 21, 22, 50]);

  it.each<[string, string, ReadRecordingOptions]>([
    ["canonical JSON Lines", run, {}],
    ["canonical JSON Lines, grounded", run, { ground: true }],
    ["a canonical JSON array", `[${lines.join(",\n")}]`, {}],
    ["a Claude Code transcript", claudeSession, {}],
    ["an MCP log", readFileSync(join(fixtures, "mcp-session.jsonl"), "utf8"), {}],
  ])("%s: hands out the events a whole reading has at those positions, and only those", (_, text, options) => {
    const whole = readRecording(text, options).trace.events;
    const positions = new Set([...wanted].filter((position) => position <= whole.length));
    expect(positions.size).toBeGreaterThan(1);
    const read = readAt(text, positions, options);
    expect(read.events).toEqual(whole.filter((event) => positions.has(event.position)));
    expect(read.calls).toBe(readRecording(text, options).calls);
  });

  it("counts the lines of other positions in canonical JSON Lines without parsing them (the run was read before without errors)", () => {
    // Were the line at position 3 parsed, it would be an error; it is only counted.
    const text = [lines[0], lines[1], "{not json", lines[3], lines[4]].join("\n");
    const read = readAt(text, new Set([2, 4]));
    expect(read.events.map((event) => [event.position, event.args["n"]])).toEqual([
      [2, 1],
      [4, 3],
    ]);
    expect(read.diagnostics).toEqual([]);
  });

  it("notes where a reading of canonical JSON Lines can start again, and a reading from there gives what the whole reading gives", () => {
    // Blank lines, a CRLF and characters beyond the BMP: offsets count UTF-16 code units.
    const text = [lines[0], "", ...lines.slice(1, 20), "   ", `${lines[20]}\r`, '{"action":"😀","args":{"k":"é😀"}}', ...lines.slice(21)].join("\n") + "\n";
    const whole = readRecording(text).trace.events;
    const reader = createRecordingReader();
    const points: { at: number; place: NonNullable<ReturnType<typeof reader.resumePoint>> }[] = [];
    let at = 0;
    // Cut after every fourth line break, and anywhere else.
    const lineEnds = [...text.matchAll(/\n/g)].map((match) => match.index + 1).filter((_, index) => index % 4 === 0);
    const cuts = [...new Set([...lineEnds, ...randomCuts(text.length, 40, 5)])].filter((offset) => offset < text.length).sort((a, b) => a - b);
    for (const piece of cut(text, cuts)) {
      reader.push(piece);
      at += piece.length;
      const place = reader.resumePoint();
      // Only between lines: the text so far ends at a line end.
      if (place !== undefined) points.push({ at, place });
      else expect(text[at - 1]).not.toBe("\n");
    }
    expect(points.length).toBeGreaterThan(3);
    for (const { at, place } of points) {
      expect(place.offset).toBe(at);
      const positions = new Set(whole.filter((event) => event.position >= place.position).map((event) => event.position));
      const again = createRecordingReader({}, { positions, from: place });
      const events = [...again.push(text.slice(at)), ...again.end()];
      expect(events).toEqual(whole.filter((event) => event.position >= place.position));
      expect(again.diagnostics).toEqual([]);
    }
  });

  it.each<[string, string, ReadRecordingOptions]>([
    ["grounded canonical JSON Lines", run, { ground: true }],
    ["a canonical JSON array", `[${lines.join(",\n")}]\n`, {}],
    ["a Claude Code transcript", `${claudeSession}\n`, {}],
  ])("notes no place to start again in %s (records there are not read line by line on their own)", (_, text, options) => {
    const reader = createRecordingReader(options);
    reader.push(text);
    expect(reader.resumePoint()).toBeUndefined();
  });
});
