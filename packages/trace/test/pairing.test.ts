import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { readAnyTrace } from "@vigil/trace";

/**
 * Pairing: a result answers the earliest call of its id that is still unanswered when the result
 * is recorded. Recordings reuse ids (OpenAI chat runs repeat a `tool_call_id` across turns), so
 * pairing by the first call of an id would hand later calls' outputs to earlier calls.
 */
const data = join(import.meta.dirname, "../../../../shared/data");

const summary = (text: string, format?: "openai" | "claude-code" | "mcp") => {
  const read = readAnyTrace(text, format !== undefined ? { format } : {});
  return {
    events: read.trace.events.map((e) => [e.action, e.source?.id, e.status ?? "pending", e.output]),
    diagnostics: read.diagnostics.map((d) => `${d.code}@${d.span?.line}`),
  };
};

describe("pairing a result with the earliest unanswered call of its id", () => {
  it("OpenAI chat messages: an id reused in a later turn, in parallel calls, answered once too often, and answered before it is called", () => {
    const messages = [
      { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_user", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "user" },
      // The same id in a later turn: its answer is the second one.
      { role: "assistant", tool_calls: [{ id: "call_1", type: "function", function: { name: "get_booking", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "call_1", content: "booking" },
      // Two parallel calls sharing an id: answered in the order they were made.
      {
        role: "assistant",
        tool_calls: [
          { id: "p", type: "function", function: { name: "first", arguments: "{}" } },
          { id: "p", type: "function", function: { name: "second", arguments: "{}" } },
        ],
      },
      { role: "tool", tool_call_id: "p", content: "one" },
      { role: "tool", tool_call_id: "p", content: "two" },
      // No call of `p` is left unanswered: a second answer, reported and dropped.
      { role: "tool", tool_call_id: "p", content: "three" },
      // A result before any call of its id answers nothing; the call after it stays pending.
      { role: "tool", tool_call_id: "late", content: "too early" },
      { role: "assistant", tool_calls: [{ id: "late", type: "function", function: { name: "late_call", arguments: "{}" } }] },
    ];
    const text = messages.map((m) => JSON.stringify(m)).join(",\n");
    expect(summary(`[${text}]`, "openai")).toEqual({
      events: [
        ["get_user", "call_1", "ok", "user"],
        ["get_booking", "call_1", "ok", "booking"],
        ["first", "p", "ok", "one"],
        ["second", "p", "ok", "two"],
        ["late_call", "late", "pending", undefined],
      ],
      diagnostics: ["T0010@8", "T0007@9"],
    });
  });

  it("Claude Code transcripts: a tool_use id answered, reused, then answered again", () => {
    const lines = [
      { type: "assistant", session_id: "s", message: { content: [{ type: "tool_use", id: "t", name: "Read", input: { file_path: "a" } }] } },
      { type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: "t", content: "A" }] } },
      { type: "assistant", session_id: "s", message: { content: [{ type: "tool_use", id: "t", name: "Read", input: { file_path: "b" } }] } },
      { type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: "t", content: "B", is_error: true }] } },
    ];
    expect(summary(lines.map((l) => JSON.stringify(l)).join("\n"))).toEqual({
      events: [
        ["Read", "t", "ok", "A"],
        ["Read", "t", "error", "B"],
      ],
      diagnostics: [],
    });
  });

  it("MCP logs: a JSON-RPC id reused once answered, also by a request that is not a tool call", () => {
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read", arguments: { path: "a" } } },
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "A" }] } },
      { jsonrpc: "2.0", id: 1, method: "tools/list" },
      { jsonrpc: "2.0", id: 1, result: { tools: [] } },
      { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read", arguments: { path: "b" } } },
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "B" }] } },
      { jsonrpc: "2.0", id: 1, result: { content: [{ type: "text", text: "again" }] } },
    ];
    expect(summary(lines.map((l) => JSON.stringify(l)).join("\n"))).toEqual({
      events: [
        ["read", "1", "ok", "A"],
        ["read", "1", "ok", "B"],
      ],
      diagnostics: ["T0010@7"],
    });
  });
});

/**
 * τ-bench airline runs (gpt-4o, 200 runs), read in place. The file is one JSON array of runs, each
 * holding its conversation under `traj`, which no adapter reads as a whole; each run's `traj` is a
 * list of OpenAI chat messages, read here with the `openai` adapter.
 */
describe("τ-bench airline runs (real, ids reused)", () => {
  interface Message {
    readonly role: string;
    readonly content?: string | null;
    readonly tool_call_id?: string;
    readonly tool_calls?: readonly { readonly id: string; readonly function: { readonly name: string } }[];
  }
  const runs = JSON.parse(readFileSync(join(data, "tau-bench/gpt-4o-airline.json"), "utf8")) as { traj: Message[] }[];

  it("pairs every call with a result recorded after it, never with another call's", () => {
    let runsReusingIds = 0;
    let callsReusingIds = 0;
    let firstCallPairingWouldMisattribute = 0;
    let fromEarlierResult = 0;
    let notTheEarliestUnanswered = 0;
    let calls = 0;
    for (const { traj } of runs) {
      // The calls in order with the message they are made in, and the result each one is owed:
      // a result answers the earliest call of its id still unanswered when it is recorded.
      const made: { id: string; message: number; owed?: string }[] = [];
      const unanswered = new Map<string, number[]>();
      const firstOfId = new Map<string, number>();
      const firstAnswers = new Map<string, string>();
      const resultsById = new Map<string, { message: number; content: string }[]>();
      traj.forEach((message, index) => {
        for (const call of message.tool_calls ?? []) {
          if (firstOfId.has(call.id)) callsReusingIds++;
          else firstOfId.set(call.id, made.length);
          unanswered.set(call.id, [...(unanswered.get(call.id) ?? []), made.length]);
          made.push({ id: call.id, message: index });
        }
        if (message.role === "tool" && message.tool_call_id !== undefined) {
          const content = message.content ?? "";
          resultsById.set(message.tool_call_id, [...(resultsById.get(message.tool_call_id) ?? []), { message: index, content }]);
          const owedTo = unanswered.get(message.tool_call_id)?.shift();
          if (owedTo !== undefined) made[owedTo]!.owed = content;
          if (!firstAnswers.has(message.tool_call_id)) firstAnswers.set(message.tool_call_id, content);
        }
      });
      if (made.length > firstOfId.size) runsReusingIds++;
      for (const call of made) {
        // Pairing by the first call of an id gave every call of the id the id's first answer.
        if (firstAnswers.get(call.id) !== call.owed) firstCallPairingWouldMisattribute++;
      }

      const read = readAnyTrace(JSON.stringify(traj), { format: "openai" });
      expect(read.diagnostics).toEqual([]);
      expect(read.trace.events).toHaveLength(made.length);
      read.trace.events.forEach((event, index) => {
        const call = made[index]!;
        calls++;
        expect(event.source?.id).toBe(call.id);
        if (event.output === undefined) return;
        const candidates = (resultsById.get(call.id) ?? []).filter((r) => r.content === event.output);
        if (candidates.every((r) => r.message <= call.message)) fromEarlierResult++;
        if (event.output !== call.owed) notTheEarliestUnanswered++;
      });
    }
    expect(runs).toHaveLength(200);
    // The data exercises reuse: 49 runs repeat an id, and first-call pairing gave 70 calls another call's output.
    expect(runsReusingIds).toBe(49);
    expect(callsReusingIds).toBeGreaterThan(0);
    expect(firstCallPairingWouldMisattribute).toBe(70);
    expect(calls).toBeGreaterThan(1000);
    expect(fromEarlierResult).toBe(0);
    expect(notTheEarliestUnanswered).toBe(0);
  });
});
