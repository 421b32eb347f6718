import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { detectTraceFormat, readAnyTrace, type TraceEvent } from "@vigil/trace";

/**
 * The trace adapters, on real recordings read in place (AgentDojo runs, Claude Code stream-json
 * transcripts) and on records built by hand from the documented shapes (MCP, OpenAI).
 */
const data = join(import.meta.dirname, "../../../../shared/data");
const fixtures = join(import.meta.dirname, "fixtures");

/** Reads a fixture recording, which must be detected as `format` and read without a diagnostic. */
function readFixture(name: string, format: string): { text: string; trace: { readonly events: readonly TraceEvent[] } } {
  const text = readFileSync(join(fixtures, name), "utf8");
  const read = readAnyTrace(text, { file: name });
  expect(read.format).toBe(format);
  expect(read.diagnostics).toEqual([]);
  return { text, trace: read.trace };
}
const brief = (e: TraceEvent) => [e.position, e.action, e.status ?? "pending", e.source?.line];

describe("Claude Code transcripts (real stream-json runs)", () => {
  const directory = join(data, "claude-code");
  const files = readdirSync(directory).filter((name) => name.endsWith(".jsonl"));

  it("finds the eight transcripts", () => expect(files).toHaveLength(8));

  it.each(files)("%s: every tool_use is an event, paired with its tool_result", (name) => {
    const text = readFileSync(join(directory, name), "utf8");
    const { trace, diagnostics, format } = readAnyTrace(text, { file: name });
    expect(format).toBe("claude-code");
    expect(diagnostics).toEqual([]);
    const uses = (text.match(/"type":"tool_use"/g) ?? []).length;
    const results = new Set([...text.matchAll(/"tool_use_id":"([^"]+)"/g)].map((m) => m[1]));
    expect(trace.events).toHaveLength(uses);
    for (const event of trace.events) {
      expect(event.source?.id).toMatch(/^toolu_/);
      // Answered calls have a status; the one the run ended on may be pending.
      expect(event.status === undefined).toBe(!results.has(event.source!.id!));
      expect(text.split("\n")[event.source!.line! - 1]).toContain(event.source!.id!);
    }
  });

  it("reads a Bash call's command and an error result", () => {
    const name = "claude-code-claude-opus-4-5-skills-gh-repo-analytics-acef3c.jsonl";
    const { trace } = readAnyTrace(readFileSync(join(directory, name), "utf8"), { file: name });
    const first = trace.events[0]!;
    expect(first.action).toBe("Bash");
    expect(typeof first.args["command"]).toBe("string");
    expect(first.status).toBe("error");
  });
});

describe("AgentDojo runs (real)", () => {
  const run = join(data, "agentdojo/gpt-4o-2024-05-13/banking/user_task_0/important_instructions/injection_task_0.json");

  it("takes each tool call's function, named args, error status and result text", () => {
    const text = readFileSync(run, "utf8");
    expect(detectTraceFormat(text)).toBe("agentdojo");
    const { trace, diagnostics } = readAnyTrace(text, { file: run });
    expect(diagnostics).toEqual([]);
    expect(trace.events.map((e) => [e.action, e.status])).toEqual([
      ["read_file", "ok"],
      ["get_most_recent_transactions", "ok"],
      ["send_money", "ok"],
      ["get_iban", "ok"],
      ["send_money", "ok"],
    ]);
    expect(trace.events[2]!.args).toEqual({ recipient: "US133000000121212121212", amount: 50, subject: "Spotify Premium", date: "2023-12-01" });
    expect(trace.events[2]!.output).toContain("Transaction to US133000000121212121212");
    expect(text.split("\n")[trace.events[2]!.source!.line! - 1]).toContain(trace.events[2]!.source!.id!);
  });

  it("reads every run of the corpus without an error", () => {
    const root = join(data, "agentdojo/gpt-4o-2024-05-13");
    const runs: string[] = [];
    const walk = (directory: string) => {
      for (const entry of readdirSync(directory, { withFileTypes: true })) {
        if (entry.isDirectory()) walk(join(directory, entry.name));
        else if (entry.name.endsWith(".json")) runs.push(join(directory, entry.name));
      }
    };
    walk(root);
    expect(runs.length).toBeGreaterThan(1000);
    let events = 0;
    let errors = 0;
    for (const path of runs) {
      const result = readAnyTrace(readFileSync(path, "utf8"), { file: path });
      expect(result.format).toBe("agentdojo");
      expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
      events += result.trace.events.length;
      errors += result.trace.events.filter((e) => e.status === "error").length;
    }
    expect(events).toBeGreaterThan(runs.length);
    expect(errors).toBeGreaterThan(0);
  });
});

describe("MCP JSON-RPC logs", () => {
  it("pairs tools/call requests with their responses by id, ignoring other methods", () => {
    const { trace } = readFixture("mcp-session.jsonl", "mcp");
    expect(trace.events.map(brief)).toEqual([
      [1, "read_file", "ok", 6],
      [2, "write_file", "error", 7],
      [3, "fetch", "error", 10],
      [4, "read_file", "pending", 12],
    ]);
    expect(trace.events[0]!.output).toBe("127.0.0.1 localhost");
    expect(trace.events[2]!.output).toBe("Unknown tool: fetch");
  });

  it("reads JSON-RPC batches, a request's batch and its responses' batch on a line each", () => {
    const text = [
      [
        { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read_file", arguments: { path: "a" } } },
        { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "delete_file", arguments: { path: "b" } } },
      ],
      [
        { jsonrpc: "2.0", id: 2, result: { content: [{ type: "text", text: "no such file" }], isError: true } },
        { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "A" }] } },
      ],
    ]
      .map((line) => JSON.stringify(line))
      .join("\n");
    const { trace, diagnostics, format } = readAnyTrace(text);
    expect(format).toBe("mcp");
    expect(diagnostics).toEqual([]);
    expect(trace.events.map((e) => [e.action, e.args, e.status, e.output, e.source?.line])).toEqual([
      ["read_file", { path: "a" }, "ok", "A", 1],
      ["delete_file", { path: "b" }, "error", "no such file", 1],
    ]);
  });
});

describe("OpenAI Responses API items", () => {
  it("pairs function_call items with their function_call_output by call_id", () => {
    const { text, trace } = readFixture("openai-responses.json", "openai");
    expect(trace.events.map((e) => [e.action, e.args, e.status, e.output, e.source?.line, e.source?.id])).toEqual([
      ["run_shell", { command: "tar czf logs.tgz logs/ && rm -rf logs/" }, "ok", "ok", 11, "call_a1"],
      ["send_email", { to: ["ops@example.com"], subject: "Logs archived" }, undefined, undefined, 24, "call_b2"],
    ]);
    // Wrapped as an Agents SDK input list, and an output without its call.
    expect(readAnyTrace(JSON.stringify({ input: JSON.parse(text) })).trace.events).toHaveLength(2);
    const orphan = JSON.stringify([{ type: "function_call_output", call_id: "nope", output: "x" }]);
    expect(readAnyTrace(orphan).diagnostics.map((d) => d.code)).toEqual(["T0007"]);
  });
});

describe("OpenAI chat messages", () => {
  it("parses the JSON-string arguments and pairs results by tool_call_id", () => {
    const { trace } = readFixture("openai-chat.json", "openai");
    expect(trace.events.map((e) => [e.action, e.args, e.status, e.output])).toEqual([
      ["get_weather", { city: "Paris", units: "metric" }, "ok", "18C, cloudy"],
      ["send_email", { to: ["me@example.com"], body: "18C" }, "ok", "sent"],
    ]);
  });
});

describe("bad recordings", () => {
  const codes = (text: string, format?: "claude-code" | "openai" | "mcp") =>
    readAnyTrace(text, { file: "bad", ...(format ? { format } : {}) }).diagnostics.map((d) => `${d.code}@${d.span?.line}`);

  it("a result without a call is an error naming its line", () => {
    const text = [
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Read","input":{"file_path":"x"}}]},"session_id":"s"}',
      '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"zzz","content":"?"}]},"session_id":"s"}',
    ].join("\n");
    expect(codes(text)).toEqual(["T0007@2"]);
  });

  it("a truncated line is an error naming its line, and the rest is still read", () => {
    const text = [
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","name":"Read","input":{}}]},"session_id":"s"}',
      '{"type":"user","message":{"content":[{"type":"tool_res',
    ].join("\n");
    const result = readAnyTrace(text);
    expect(result.diagnostics.map((d) => `${d.code}@${d.span?.line}`)).toEqual(["T0001@2"]);
    expect(result.trace.events).toHaveLength(1);
  });

  it("a recording cut inside its first line is still recognized, so the cut is reported where it is", () => {
    const claude = '{"type":"system","subtype":"init","session_id":"s","tools":["Bash",';
    expect(detectTraceFormat(claude)).toBe("claude-code");
    expect(codes(claude)).toEqual(["T0001@1"]);
    const mcp = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"read_fi';
    expect(detectTraceFormat(mcp)).toBe("mcp");
    expect(codes(mcp)).toEqual(["T0001@1"]);
  });

  it("a requested format that the text plainly is not is one error naming the format it reads as", () => {
    const run = readFileSync(join(data, "agentdojo/gpt-4o-2024-05-13/banking/user_task_0/none/none.json"), "utf8");
    for (const format of ["claude-code", "mcp", "jsonl"] as const) {
      const result = readAnyTrace(run, { format });
      expect(result.diagnostics.map((d) => [d.code, d.span?.line])).toEqual([["T0008", 1]]);
      expect(result.diagnostics[0]!.message).toMatch(/^the trace is one JSON document over \d+ lines; `[a-z-]+` reads /);
      expect(result.diagnostics[0]!.help).toBe("it reads as `agentdojo`: leave out --trace-format to detect it, or name that format");
      expect(result.trace.events).toEqual([]);
    }
    // Lines of another format would otherwise read as an empty trace, which breaks no prohibition.
    const transcript = readFileSync(join(data, "claude-code/claude-code-claude-opus-4-5-skills-3d-scan-calc-bace81.jsonl"), "utf8");
    const asMcp = readAnyTrace(transcript, { format: "mcp" });
    expect(asMcp.diagnostics.map((d) => [d.code, d.message])).toEqual([["T0008", "no line of the trace is one of the MCP JSON-RPC messages that `mcp` reads"]]);
    expect(readAnyTrace(readFileSync(join(fixtures, "mcp-session.jsonl"), "utf8"), { format: "claude-code" }).diagnostics.map((d) => d.code)).toEqual(["T0008"]);
    // An empty recording is an empty trace, in any format.
    expect(readAnyTrace("", { format: "claude-code" })).toMatchObject({ diagnostics: [], trace: { events: [] } });
  });

  it("a call without a tool name or a result without a call id is an error, never skipped", () => {
    const claude = [
      '{"type":"assistant","message":{"content":[{"type":"tool_use","id":"a","input":{}}]},"session_id":"s"}',
      '{"type":"user","message":{"content":[{"type":"tool_result","content":"?"}]},"session_id":"s"}',
    ].join("\n");
    expect(codes(claude)).toEqual(["T0002@1", "T0002@2"]);
    expect(readAnyTrace(claude).diagnostics.map((d) => d.message)).toEqual([
      "the `tool_use` block on line 1 has no `name` (a string naming the tool)",
      "the `tool_result` block on line 2 has no `tool_use_id` naming the call it answers",
    ]);
    expect(codes('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"arguments":{}}}')).toEqual(["T0002@1"]);
    const chat = JSON.stringify([
      { role: "assistant", tool_calls: [{ id: "c1", type: "function", function: { arguments: "{}" } }, 7] },
      { role: "tool", content: "x" },
    ]);
    expect(readAnyTrace(chat, { format: "openai" }).diagnostics.map((d) => [d.code, d.message])).toEqual([
      ["T0002", "the tool call `messages[0].tool_calls[0]` (line 1) names no function (`function` or `function.name`)"],
      ["T0002", "the tool call `messages[0].tool_calls[1]` names no function (`function` or `function.name`)"],
      ["T0002", "the tool result `messages[1]` has no `tool_call_id` naming the call it answers"],
    ]);
  });

  it("arguments that are not an object are an error", () => {
    const text = JSON.stringify([{ role: "assistant", tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{not json" } }] }]);
    expect(codes(text, "openai")).toEqual(["T0009@1"]);
  });

  it("an unknown format is an error, not an empty trace that passes", () => {
    expect(codes('{"hello": "world"}')).toEqual(["T0008@1"]);
    expect(codes("just text")).toEqual(["T0008@1"]);
  });

  it("a truncated JSON document is an error", () => {
    expect(codes('[{"role": "user", "content": "hi"}', "openai")).toEqual(["T0001@1"]);
  });
});
