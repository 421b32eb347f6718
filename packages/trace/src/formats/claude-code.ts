import type { JsonValue } from "../value.js";
import { isJsonObject } from "../value.js";
import { contentText, malformedRecord, messageText, type CallPairing, type LineRecord, type RecordContext } from "./calls.js";

/**
 * Claude Code transcripts: both the `--output-format stream-json` stream and the session files
 * under `~/.claude/projects/`. Lines of type `assistant` carry `tool_use` content blocks
 * (`{id, name, input}`); lines of type `user` carry `tool_result` blocks (`{tool_use_id,
 * content, is_error?}`), possibly out of order when calls ran in parallel. Other lines (system,
 * result, summaries, text blocks) hold no calls and are skipped.
 *
 * One line at a time: its calls and results go to the pairing in the order the line holds them.
 *
 * With `messages`, what the user says and what the agent says in text are events too: a `user`
 * line whose content is the user's text (a string, or `text` blocks; a line of `tool_result`
 * blocks only is no message) is a `user_message`, and the `text` blocks of an `assistant` line
 * are an `agent_message` (before the line's calls; `thinking` blocks are not messages). Lines
 * Claude Code wrote itself rather than the user (`isMeta`, `isSynthetic`: a skill's text, a
 * caveat) and those of a subagent (`isSidechain`, `parent_tool_use_id`: the prompt its parent
 * gave it) make no message.
 */
export function readClaudeCodeRecord(record: LineRecord, pairing: CallPairing, context: RecordContext, messages = false, state: ClaudeCodeReading = {}): void {
  const value = record.value;
  if (!isJsonObject(value)) return;
  // The working directory: every line of a session file states it, the stream's `system` line once.
  const cwd = value["cwd"];
  if (typeof cwd === "string" && cwd !== "") state.cwd = { path: cwd, line: record.line };
  const message = value["message"];
  if (messages && isJsonObject(message)) readMessage(value, message, record, pairing);
  if (!isJsonObject(message) || !Array.isArray(message["content"])) return;
  for (const block of message["content"]) {
    if (!isJsonObject(block)) continue;
    if (block["type"] === "tool_use") {
      const name = block["name"];
      if (typeof name !== "string") {
        context.diagnostics.push(malformedRecord("the `tool_use` block on line {line} has no `name` (a string naming the tool)", record, context.file));
        continue;
      }
      pairing.call({
        ...(typeof block["id"] === "string" ? { id: block["id"] } : {}),
        action: name,
        args: block["input"] ?? {},
        line: record.line,
        span: record.span,
        raw: block as JsonValue,
        source: record.text,
        ...(state.cwd !== undefined ? { cwd: state.cwd.path, cwdLine: state.cwd.line } : {}),
      });
    } else if (block["type"] === "tool_result") {
      if (typeof block["tool_use_id"] !== "string") {
        context.diagnostics.push(malformedRecord("the `tool_result` block on line {line} has no `tool_use_id` naming the call it answers", record, context.file));
        continue;
      }
      const output = contentText(block["content"]);
      pairing.result({
        callId: block["tool_use_id"],
        status: block["is_error"] === true ? "error" : "ok",
        ...(output !== undefined ? { output } : {}),
        line: record.line,
        span: record.span,
      });
    }
  }
}

/** What reading a Claude Code transcript keeps from one line to the next: the working directory last stated, and where. */
export interface ClaudeCodeReading {
  cwd?: { readonly path: string; readonly line: number };
}

/** The message of a `user` or `assistant` line, if it is one the user or the main agent said. */
function readMessage(value: { readonly [key: string]: JsonValue }, message: { readonly [key: string]: JsonValue }, record: LineRecord, pairing: CallPairing): void {
  const type = value["type"];
  if (type !== "user" && type !== "assistant") return;
  if (value["isMeta"] === true || value["isSynthetic"] === true || value["isSidechain"] === true || typeof value["parent_tool_use_id"] === "string") return;
  const text = messageText(message["content"]);
  if (text === undefined) return;
  pairing.message({ action: type === "user" ? "user_message" : "agent_message", text, line: record.line, span: record.span, raw: message as JsonValue });
}

/** Whether a parsed first line looks like a Claude Code transcript line. */
export function looksLikeClaudeCode(value: unknown): boolean {
  if (!isJsonObject(value)) return false;
  const type = value["type"];
  return (
    typeof type === "string" &&
    ["system", "assistant", "user", "result", "summary"].includes(type) &&
    (value["session_id"] !== undefined || value["sessionId"] !== undefined || isJsonObject(value["message"]))
  );
}
