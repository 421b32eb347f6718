import { diagnostic, parseDateTime } from "@vigil/diagnostics";
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
 *
 * Times: a session file stamps every line (`"timestamp": "2026-01-26T03:08:48.123Z"`); a call's
 * event takes the timestamp of the `assistant` line holding its `tool_use`, and a message's event
 * that of its line. The `--output-format stream-json` stream has no timestamps: its events have no
 * time. A timestamp that is not an ISO 8601 date-time with a time zone is an error (T0016).
 */
export function readClaudeCodeRecord(record: LineRecord, pairing: CallPairing, context: RecordContext, messages = false, state: ClaudeCodeReading = {}): void {
  const value = record.value;
  if (!isJsonObject(value)) return;
  // The working directory: every line of a session file states it, the stream's `system` line once.
  const cwd = value["cwd"];
  if (typeof cwd === "string" && cwd !== "") state.cwd = { path: cwd, line: record.line };
  const message = value["message"];
  // The line's time, read once, when the line makes an event.
  let time: number | null | undefined;
  const lineTime = (): number | undefined => {
    if (time === undefined) time = readTimestamp(value["timestamp"], record, context);
    return time ?? undefined;
  };
  if (messages && isJsonObject(message)) readMessage(value, message, record, pairing, lineTime);
  if (!isJsonObject(message) || !Array.isArray(message["content"])) return;
  for (const block of message["content"]) {
    if (!isJsonObject(block)) continue;
    if (block["type"] === "tool_use") {
      const name = block["name"];
      if (typeof name !== "string") {
        context.diagnostics.push(malformedRecord("the `tool_use` block on line {line} has no `name` (a string naming the tool)", record, context.file));
        continue;
      }
      const at = lineTime();
      pairing.call({
        ...(typeof block["id"] === "string" ? { id: block["id"] } : {}),
        action: name,
        args: block["input"] ?? {},
        line: record.line,
        span: record.span,
        raw: block as JsonValue,
        source: record.text,
        ...(state.cwd !== undefined ? { cwd: state.cwd.path, cwdLine: state.cwd.line } : {}),
        ...(at !== undefined ? { time: at } : {}),
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
function readMessage(
  value: { readonly [key: string]: JsonValue },
  message: { readonly [key: string]: JsonValue },
  record: LineRecord,
  pairing: CallPairing,
  lineTime: () => number | undefined,
): void {
  const type = value["type"];
  if (type !== "user" && type !== "assistant") return;
  if (value["isMeta"] === true || value["isSynthetic"] === true || value["isSidechain"] === true || typeof value["parent_tool_use_id"] === "string") return;
  const text = messageText(message["content"]);
  if (text === undefined) return;
  const time = lineTime();
  pairing.message({ action: type === "user" ? "user_message" : "agent_message", text, line: record.line, span: record.span, raw: message as JsonValue, ...(time !== undefined ? { time } : {}) });
}

/**
 * The epoch milliseconds of a line's `timestamp`: undefined when the line has none, null (with a
 * T0016 error) when it is not an ISO 8601 date-time with a time zone.
 */
function readTimestamp(timestamp: JsonValue | undefined, record: LineRecord, context: RecordContext): number | null | undefined {
  if (timestamp === undefined) return undefined;
  const time = typeof timestamp === "string" ? parseDateTime(timestamp) : undefined;
  if (time !== undefined) return time;
  const json = JSON.stringify(timestamp);
  const written = json.length <= 42 ? json : `${json.slice(0, 41)}…`;
  context.diagnostics.push(
    diagnostic("T0016", `the \`timestamp\` of line ${record.line}, ${written}, is not an ISO 8601 date-time with a time zone`, {
      span: record.span,
      ...(context.file !== undefined ? { file: context.file } : {}),
      help: 'Claude Code writes "2026-01-26T03:08:48.123Z"; the line\'s events cannot be given a time',
    }),
  );
  return null;
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
