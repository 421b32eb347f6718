import type { Diagnostic, LineIndex } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import { isJsonObject, type JsonValue } from "../value.js";
import { callsToEvents, contentText, invalidLine, jsonLines, malformedRecord, type ToolCall, type ToolResult } from "./calls.js";

/**
 * MCP JSON-RPC logs: one JSON-RPC message per line (bare, or under a `message` field as many
 * proxies log them), or a JSON-RPC batch on a line (an array of messages, as MCP 2025-03-26
 * allowed). Each `tools/call` request `{id, method, params: {name, arguments}}` is an event; the response with the same id gives its status (`result.isError`, or a JSON-RPC `error`)
 * and its output (the text content). Other methods are not tool calls and are skipped.
 */
export function readMcp(text: string, context: { readonly file?: string; readonly lines: LineIndex; readonly diagnostics: Diagnostic[] }): TraceEvent[] {
  const calls: ToolCall[] = [];
  const results: ToolResult[] = [];
  const responses: { id: string; message: Record<string, JsonValue>; offset: number }[] = [];
  const callIds = new Set<string>();
  for (const record of jsonLines(text)) {
    if (record.error !== undefined) {
      context.diagnostics.push(invalidLine(record, context));
      continue;
    }
    const batch = Array.isArray(record.value) ? record.value : [record.value];
    for (const element of batch) {
      const message = jsonRpcMessage(element);
      if (message === undefined) continue;
      const id = message["id"] === undefined || message["id"] === null ? undefined : String(message["id"]);
      if (message["method"] === "tools/call") {
        const params = isJsonObject(message["params"]) ? message["params"] : {};
        const name = params["name"];
        if (typeof name !== "string") {
          context.diagnostics.push(malformedRecord("the `tools/call` request on line {line} has no tool `name` in its `params`", record.offset, context));
          continue;
        }
        if (id !== undefined) callIds.add(id);
        calls.push({ ...(id !== undefined ? { id } : {}), action: name, args: params["arguments"] ?? {}, offset: record.offset, raw: message as JsonValue });
      } else if (id !== undefined && message["method"] === undefined && ("result" in message || "error" in message)) {
        responses.push({ id, message, offset: record.offset });
      }
    }
  }
  // Responses to other requests (initialize, tools/list, …) share the id space: keep only answers to calls.
  for (const { id, message, offset } of responses) {
    if (!callIds.has(id)) continue;
    const result = message["result"];
    const error = message["error"];
    if (isJsonObject(error)) {
      results.push({ callId: id, status: "error", output: typeof error["message"] === "string" ? error["message"] : JSON.stringify(error), offset });
    } else if (isJsonObject(result)) {
      const output = contentText(result["content"]) ?? (result["structuredContent"] !== undefined ? JSON.stringify(result["structuredContent"]) : undefined);
      results.push({ callId: id, status: result["isError"] === true ? "error" : "ok", ...(output !== undefined ? { output } : {}), offset });
    }
  }
  return callsToEvents(calls, results, { ...context, format: "mcp" });
}

function jsonRpcMessage(value: unknown): Record<string, JsonValue> | undefined {
  if (!isJsonObject(value)) return undefined;
  if (value["jsonrpc"] === "2.0") return value as Record<string, JsonValue>;
  const inner = value["message"];
  if (isJsonObject(inner) && inner["jsonrpc"] === "2.0") return inner as Record<string, JsonValue>;
  return undefined;
}

export function looksLikeMcp(value: unknown): boolean {
  if (Array.isArray(value)) return value.length > 0 && value.every((element) => jsonRpcMessage(element) !== undefined);
  return jsonRpcMessage(value) !== undefined;
}
