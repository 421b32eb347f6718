import type { Span } from "@vigil/diagnostics";
import { isJsonObject, type JsonValue } from "../value.js";
import { contentText, malformedRecord, type CallPairing, type LineRecord, type RecordContext, type ToolResult } from "./calls.js";

/**
 * MCP JSON-RPC logs: one JSON-RPC message per line (bare, or under a `message` field as many
 * proxies log them), or a JSON-RPC batch on a line (an array of messages, as MCP 2025-03-26
 * allowed). Each `tools/call` request `{id, method, params: {name, arguments}}` is an event; the
 * response with the same id gives its status (`result.isError`, or a JSON-RPC `error`) and its
 * output (the text content). Other methods are not tool calls and are skipped.
 *
 * One line at a time. Responses to other requests (initialize, tools/list, …) share the id space,
 * and ids may be reused once answered: a response answers the earliest unanswered request of its
 * id, so the log remembers the kind of each request still waiting for its response.
 */
export class McpLog {
  private readonly requests = new Map<string, ("call" | "other")[]>();

  constructor(
    private readonly pairing: CallPairing,
    private readonly context: RecordContext,
  ) {}

  record(record: LineRecord): void {
    const batch = Array.isArray(record.value) ? record.value : [record.value];
    for (const element of batch) {
      const message = jsonRpcMessage(element);
      if (message === undefined) continue;
      const id = message["id"] === undefined || message["id"] === null ? undefined : String(message["id"]);
      if (message["method"] === "tools/call") {
        const params = isJsonObject(message["params"]) ? message["params"] : {};
        const name = params["name"];
        if (typeof name !== "string") {
          this.context.diagnostics.push(malformedRecord("the `tools/call` request on line {line} has no tool `name` in its `params`", record, this.context.file));
          continue;
        }
        if (id !== undefined) awaitResponse(this.requests, id, "call");
        this.pairing.call({
          ...(id !== undefined ? { id } : {}),
          action: name,
          args: params["arguments"] ?? {},
          line: record.line,
          span: record.span,
          raw: message as JsonValue,
          source: record.text,
        });
      } else if (message["method"] !== undefined) {
        if (id !== undefined) awaitResponse(this.requests, id, "other");
      } else if (id !== undefined && ("result" in message || "error" in message)) {
        const waiting = this.requests.get(id);
        const answers = waiting?.shift();
        if (waiting?.length === 0) this.requests.delete(id);
        if (answers === "other") continue;
        const result = toolResult(id, message, { line: record.line, span: record.span });
        // A response to no pending request is a second answer to a call, or belongs to none.
        if (result !== undefined) this.pairing.result(result, "ignore");
      }
    }
  }
}

function awaitResponse(requests: Map<string, ("call" | "other")[]>, id: string, kind: "call" | "other"): void {
  const waiting = requests.get(id);
  if (waiting === undefined) requests.set(id, [kind]);
  else waiting.push(kind);
}

/** The status and output of a response to a `tools/call` request: `result.isError`, or a JSON-RPC `error`. */
function toolResult(id: string, message: Record<string, JsonValue>, where: { line: number; span: Span }): ToolResult | undefined {
  const result = message["result"];
  const error = message["error"];
  if (isJsonObject(error)) {
    return { callId: id, status: "error", output: typeof error["message"] === "string" ? error["message"] : JSON.stringify(error), ...where };
  }
  if (isJsonObject(result)) {
    const output = contentText(result["content"]) ?? (result["structuredContent"] !== undefined ? JSON.stringify(result["structuredContent"]) : undefined);
    return { callId: id, status: result["isError"] === true ? "error" : "ok", ...(output !== undefined ? { output } : {}), ...where };
  }
  return undefined;
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
