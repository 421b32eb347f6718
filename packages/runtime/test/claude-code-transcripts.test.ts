import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readRecording } from "@vigil/trace";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runClaudeCodeHook, Store } from "../src/index.js";

/**
 * Real Claude Code sessions (stream-json transcripts of Claude Code 2.1.19, kept outside the
 * repository and read in place) played through the hook as Claude Code would have called it:
 * each `tool_use` as a PreToolUse event, each `tool_result` as a PostToolUse event whose
 * `tool_response` is the transcript's structured copy of the result (`tool_use_result`). The
 * events the hook records must be the events `vigilc check` reads from the transcript: the same
 * actions and arguments, the same grounding of every Bash command, the same statuses.
 */

const transcripts = join(import.meta.dirname, "..", "..", "..", "..", "shared", "data", "claude-code");
const files = existsSync(transcripts) ? readdirSync(transcripts).filter((file) => file.endsWith(".jsonl")) : [];

let scratch = "";
let policy = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-transcripts-"));
  policy = join(scratch, "permissive.vigil");
  writeFileSync(policy, "policy p {\n  /// Nothing real is called this.\n  rule r: abs(action in {no_such_tool})\n}\n");
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface Block {
  readonly type: string;
  readonly id?: string;
  readonly name?: string;
  readonly input?: unknown;
  readonly tool_use_id?: string;
  readonly is_error?: boolean;
}

describe.skipIf(files.length === 0)("real Claude Code transcripts through the hook", () => {
  it.each(files)("%s: the hook records the events the trace adapter reads", async (file) => {
    const text = readFileSync(join(transcripts, file), "utf8");
    const database = join(scratch, `${file}.db`);
    const session = file;
    // The directory the session ran in, as its first line (`system` `init`) says.
    const cwd = (JSON.parse(text.slice(0, text.indexOf("\n"))) as { cwd?: string }).cwd ?? "/root";
    const names = new Map<string, { name: string; input: unknown }>();
    // The transcript as Claude Code writes it while the session runs: a call's line is written before
    // its PreToolUse event, a result's line after its PostToolUse event.
    const transcript = join(scratch, `${file}.live.jsonl`);
    writeFileSync(transcript, "");
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      const record = JSON.parse(line) as { type?: string; message?: { content?: unknown }; tool_use_result?: unknown };
      const content = Array.isArray(record.message?.content) ? (record.message.content as Block[]) : [];
      const answersCalls = content.some((block) => block.type === "tool_result");
      if (!answersCalls) appendFileSync(transcript, `${line}\n`);
      for (const block of content) {
        let event: Record<string, unknown> | undefined;
        if (block.type === "tool_use" && block.id !== undefined && block.name !== undefined) {
          names.set(block.id, { name: block.name, input: block.input });
          event = { hook_event_name: "PreToolUse", tool_name: block.name, tool_input: block.input, tool_use_id: block.id };
        } else if (block.type === "tool_result" && block.tool_use_id !== undefined) {
          const call = names.get(block.tool_use_id)!;
          event =
            block.is_error === true
              ? { hook_event_name: "PostToolUseFailure", tool_name: call.name, tool_input: call.input, tool_use_id: block.tool_use_id, error: String(record.tool_use_result).replace(/^Error: /, "") }
              : { hook_event_name: "PostToolUse", tool_name: call.name, tool_input: call.input, tool_use_id: block.tool_use_id, tool_response: record.tool_use_result };
        }
        if (event === undefined) continue;
        const answer = await runClaudeCodeHook(JSON.stringify({ session_id: session, transcript_path: transcript, cwd, permission_mode: "default", ...event }), {
          policyFiles: [policy],
          db: database,
        });
        expect(answer.exitCode).toBe(0);
        // Ordinary work: neither the policy nor the guard objects, so the hook leaves every call to
        // Claude Code's own permission rules (it answers nothing).
        if (event["hook_event_name"] === "PreToolUse") expect(answer.stdout, `${String(event["tool_name"])} ${JSON.stringify(event["tool_input"]).slice(0, 300)}`).toBe("");
      }
      if (answersCalls) appendFileSync(transcript, `${line}\n`);
    }

    const read = readRecording(text, { file, format: "claude-code" });
    expect(read.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    // The hook grounds a call without the working directory (the runtime does not pass its `cwd` to
    // grounding): the transcript is read for the comparison as it grounds it, without its `cwd`.
    const withoutCwd = text
      .split("\n")
      .map((line) => (line.trim() === "" ? line : JSON.stringify({ ...(JSON.parse(line) as object), cwd: undefined })))
      .join("\n");
    const asHook = readRecording(withoutCwd, { file, format: "claude-code" });
    // Per call, in order: the call's own event and the events grounded from it. In the call path, a
    // grounded command whose status its result does not show takes the call's, and has no `argv`
    // (see liveCallEvents).
    const expected = new Map<string, { action: string; args: unknown; status: string | undefined }[]>();
    const callStatus = new Map<string, string | undefined>();
    for (const event of asHook.trace.events) {
      const id = event.source!.id!;
      if (event.source?.groundedFrom === undefined) callStatus.set(id, event.status);
      const status = event.status ?? callStatus.get(id);
      if (status === undefined) continue; // a call the run was cut off before it answered
      const { argv: _argv, ...args } = event.args;
      expected.set(id, [...(expected.get(id) ?? []), { action: event.action, args: event.source?.groundedFrom === undefined ? event.args : args, status }]);
    }
    const store = Store.open(database, { mustExist: true });
    try {
      const rows = store.db.prepare("SELECT call_id, action, args, status FROM events WHERE run_id = ? ORDER BY position").all(session) as {
        call_id: string;
        action: string;
        args: string;
        status: string;
      }[];
      const recorded = new Map<string, { action: string; args: unknown; status: string | undefined }[]>();
      for (const row of rows) recorded.set(row.call_id, [...(recorded.get(row.call_id) ?? []), { action: row.action, args: JSON.parse(row.args) as unknown, status: row.status }]);
      expect(recorded).toEqual(expected);
      // The guard refused nothing: no decision of the log names it.
      const guarded = store.db.prepare("SELECT COUNT(*) AS n FROM audit WHERE kind = 'decision' AND (outcome <> 'allow' OR body LIKE '%\"guard\"%')").get() as { n: number };
      expect(guarded.n).toBe(0);
      // A Bash command's output is its standard output, as the transcript's tool_result holds it
      // (for a command sent to the background, the start of it: the response has no file name).
      const bash = read.trace.events.filter((e) => e.action === "Bash" && e.status === "ok" && e.output !== undefined);
      for (const event of bash) {
        const row = store.db.prepare("SELECT output FROM events WHERE run_id = ? AND call_id = ? AND action = 'Bash'").get(session, event.source!.id) as { output: string | null };
        if (event.output!.startsWith("Command running in background")) expect(event.output!.startsWith(row.output ?? "")).toBe(true);
        else expect(row.output ?? "").toBe(event.output);
      }
    } finally {
      store.close();
    }
  });
});
