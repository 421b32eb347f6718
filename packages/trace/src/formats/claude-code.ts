import type { Diagnostic, LineIndex } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import { isJsonObject, type JsonValue } from "../value.js";
import { CallPairing, contentText, invalidLine, jsonLines, locate, malformedRecord } from "./calls.js";

/**
 * Claude Code transcripts: both the `--output-format stream-json` stream and the session files
 * under `~/.claude/projects/`. Lines of type `assistant` carry `tool_use` content blocks
 * (`{id, name, input}`); lines of type `user` carry `tool_result` blocks (`{tool_use_id,
 * content, is_error?}`), possibly out of order when calls ran in parallel. Other lines (system,
 * result, summaries, text blocks) hold no calls and are skipped.
 */
export function readClaudeCode(text: string, context: { readonly file?: string; readonly lines: LineIndex; readonly diagnostics: Diagnostic[] }): TraceEvent[] {
  const pairing = new CallPairing(context);
  for (const record of jsonLines(text)) {
    if (record.error !== undefined) {
      context.diagnostics.push(invalidLine(record, context));
      continue;
    }
    const value = record.value;
    if (!isJsonObject(value)) continue;
    const message = value["message"];
    if (!isJsonObject(message) || !Array.isArray(message["content"])) continue;
    for (const block of message["content"]) {
      if (!isJsonObject(block)) continue;
      if (block["type"] === "tool_use") {
        const name = block["name"];
        if (typeof name !== "string") {
          context.diagnostics.push(malformedRecord("the `tool_use` block on line {line} has no `name` (a string naming the tool)", record.offset, context));
          continue;
        }
        pairing.call({
          ...(typeof block["id"] === "string" ? { id: block["id"] } : {}),
          action: name,
          args: block["input"] ?? {},
          ...locate(context.lines, record.offset),
          raw: block as JsonValue,
        });
      } else if (block["type"] === "tool_result") {
        if (typeof block["tool_use_id"] !== "string") {
          context.diagnostics.push(malformedRecord("the `tool_result` block on line {line} has no `tool_use_id` naming the call it answers", record.offset, context));
          continue;
        }
        const output = contentText(block["content"]);
        pairing.result({
          callId: block["tool_use_id"],
          status: block["is_error"] === true ? "error" : "ok",
          ...(output !== undefined ? { output } : {}),
          ...locate(context.lines, record.offset),
        });
      }
    }
  }
  return pairing.finish();
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
