import type { LineIndex } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import { isJsonObject, type JsonValue } from "../value.js";
import { CallPairing, contentText, locate, malformedRecord, messageText, type DiagnosticSink } from "./calls.js";
import { arrayElementRanges, topLevelValueOffset, type TextRange } from "./json-text.js";

/** A chat document being read: its file, its lines (the document is held whole), and the diagnostics. */
interface DocumentContext {
  readonly file?: string;
  readonly lines: LineIndex;
  readonly diagnostics: DiagnosticSink;
}

/**
 * OpenAI-style chat transcripts, in two dialects:
 * - AgentDojo run files: `{suite_name, …, messages}`, tool calls as `{function, args, id}` with
 *   named `args`, results as `role: "tool"` messages with `tool_call_id` and `error` (null or text);
 * - OpenAI chat messages: a list of messages (or `{messages}`), tool calls as
 *   `{id, type: "function", function: {name, arguments}}` where `arguments` is a JSON string.
 *   A result's status is `error` only when the message says so (`error`, `is_error`);
 * - OpenAI Responses API items (a list, or `{input}` / `{output}`, as the Agents SDK records a
 *   run): `{type: "function_call", call_id, name, arguments}` and its
 *   `{type: "function_call_output", call_id, output}`; the format has no error flag, so a result
 *   is `ok`;
 * - a τ-bench run: `{task_id, trial, …, traj}`, whose `traj` is OpenAI chat messages.
 *
 * With `messages`, each message of the user or of the assistant with text is an event too, before
 * the calls the same message makes: `user_message` or `agent_message` with its `text`, located at
 * the line where the message starts (`role: "user" | "assistant"`, or a Responses `message` item
 * of those roles; system, developer and tool messages make none).
 */
export function readChatMessages(
  document: unknown,
  text: string,
  context: DocumentContext,
  options: { readonly messages?: boolean } = {},
): { events: TraceEvent[]; messages: number } {
  const place = chatItemsPlace(document);
  const messages = place?.items ?? [];
  // Calls and results go to the pairing in message order, so a result answers the earliest call of
  // its id still unanswered at that point of the conversation.
  const pairing = new CallPairing(context);
  const find = locator(text);
  // Where each message starts in the text, found (by one scan) only when a message makes an event.
  let ranges: TextRange[] | undefined;
  const messageStart = (index: number): number => (ranges ??= itemRanges(text, place?.key))[index]?.start ?? 0;
  for (const [index, message] of messages.entries()) {
    if (!isJsonObject(message)) continue;
    if (message["type"] === "function_call" || message["type"] === "function_call_output") {
      readResponsesItem(message, index, { pairing, find, text, context });
      continue;
    }
    if (options.messages === true && (message["role"] === "user" || message["role"] === "assistant")) {
      const said = messageText(message["content"]);
      if (said !== undefined) {
        pairing.message({ action: message["role"] === "user" ? "user_message" : "agent_message", text: said, ...locate(context.lines, messageStart(index)), raw: message as JsonValue });
      }
    }
    const toolCalls = message["tool_calls"];
    if (Array.isArray(toolCalls)) {
      for (const [callIndex, call] of toolCalls.entries()) {
        const id = isJsonObject(call) && typeof call["id"] === "string" ? call["id"] : undefined;
        // The call's own `"id"`, not a later result's `"tool_call_id"` of the same id (ids repeat within a run).
        const offset = id !== undefined ? find(new RegExp(`"id"\\s*:\\s*${jsonString(id)}`, "g")) : 0;
        const fn = isJsonObject(call) ? call["function"] : undefined;
        // AgentDojo: {function: name, args: {…}}; OpenAI: {function: {name, arguments: "<json>"}}.
        const name = typeof fn === "string" ? fn : isJsonObject(fn) && typeof fn["name"] === "string" ? fn["name"] : undefined;
        if (!isJsonObject(call) || name === undefined) {
          const where = `\`messages[${index}].tool_calls[${callIndex}]\`${id !== undefined ? " (line {line})" : ""}`;
          context.diagnostics.push(malformedRecord(`the tool call ${where} names no function (\`function\` or \`function.name\`)`, locate(context.lines, offset), context.file));
          continue;
        }
        const args = isJsonObject(fn) ? parseArguments(fn["arguments"]) : (call["args"] ?? {});
        const source = isJsonObject(fn) && typeof fn["arguments"] === "string" ? fn["arguments"] : text;
        pairing.call({ ...(id !== undefined ? { id } : {}), action: name, args, ...locate(context.lines, offset), raw: call as JsonValue, source });
      }
    }
    if (message["role"] !== "tool") continue;
    if (typeof message["tool_call_id"] !== "string") {
      context.diagnostics.push(malformedRecord(`the tool result \`messages[${index}]\` has no \`tool_call_id\` naming the call it answers`, locate(context.lines, 0), context.file));
    } else {
      const error = message["error"];
      const failed = (typeof error === "string" && error !== "") || message["is_error"] === true;
      const output = contentText(message["content"]);
      pairing.result({
        callId: message["tool_call_id"],
        status: failed ? "error" : "ok",
        ...(output !== undefined ? { output: failed && typeof error === "string" && (output === "" || output === undefined) ? error : output } : {}),
        ...locate(context.lines, find(new RegExp(`"tool_call_id"\\s*:\\s*${jsonString(message["tool_call_id"])}`, "g"))),
      });
    }
  }
  const events = pairing.finish();
  return { events, messages: pairing.messages };
}

/** A Responses API function call or its output. */
function readResponsesItem(
  item: Record<string, JsonValue>,
  index: number,
  into: { pairing: CallPairing; find: (pattern: RegExp) => number; text: string; context: DocumentContext },
): void {
  const callId = typeof item["call_id"] === "string" ? item["call_id"] : undefined;
  const offset = callId !== undefined ? into.find(new RegExp(`"call_id"\\s*:\\s*${jsonString(callId)}`, "g")) : 0;
  if (item["type"] === "function_call") {
    if (typeof item["name"] !== "string") {
      into.context.diagnostics.push(malformedRecord(`the function call \`items[${index}]\` has no \`name\``, locate(into.context.lines, offset), into.context.file));
      return;
    }
    const source = typeof item["arguments"] === "string" ? item["arguments"] : into.text;
    into.pairing.call({ ...(callId !== undefined ? { id: callId } : {}), action: item["name"], args: parseArguments(item["arguments"]), ...locate(into.context.lines, offset), raw: item as JsonValue, source });
  } else if (callId === undefined) {
    into.context.diagnostics.push(malformedRecord(`the function call output \`items[${index}]\` has no \`call_id\` naming the call it answers`, locate(into.context.lines, 0), into.context.file));
  } else {
    const output = contentText(item["output"]);
    into.pairing.result({ callId, status: "ok", ...(output !== undefined ? { output } : {}), ...locate(into.context.lines, offset) });
  }
}

/** The messages or items of a chat document: a list, or the list under `messages`, `input` or `output`. */
function chatItems(document: unknown): unknown[] | undefined {
  if (Array.isArray(document)) return document;
  if (!isJsonObject(document)) return undefined;
  for (const key of ["messages", "input", "output"]) {
    const items = document[key];
    if (Array.isArray(items)) return items;
  }
  return undefined;
}

/** The items of a chat document being read, and the key of the top-level object holding them (none for a list); a τ-bench run's are its `traj`. */
function chatItemsPlace(document: unknown): { items: unknown[]; key?: string } | undefined {
  if (Array.isArray(document)) return { items: document };
  if (!isJsonObject(document)) return undefined;
  for (const key of ["messages", "input", "output", "traj"]) {
    const items = document[key];
    if (Array.isArray(items)) return { items, key };
  }
  return undefined;
}

/** Where each item of a chat document starts and ends in its text: the top-level list, or the list under `key`. */
function itemRanges(text: string, key: string | undefined): TextRange[] {
  const open = key === undefined ? text.search(/\S/) : topLevelValueOffset(text, key);
  return open !== undefined && open >= 0 && text[open] === "[" ? arrayElementRanges(text, open) : [];
}

const responsesItemTypes = new Set(["message", "function_call", "function_call_output", "reasoning", "web_search_call", "file_search_call", "computer_call", "computer_call_output"]);

/** `arguments` is JSON text in the OpenAI format; an object is accepted as is. */
function parseArguments(value: unknown): unknown {
  if (typeof value !== "string") return value ?? {};
  if (value.trim() === "") return {};
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return value;
  }
}

/**
 * Finds where a call or a result is in the text, for its line number. Messages are visited in
 * document order, so each search starts where the previous match was found (linear over the whole
 * document); a pattern not found after that point is looked for from the start, and a pattern
 * found nowhere is placed at offset 0.
 */
function locator(text: string): (pattern: RegExp) => number {
  let cursor = 0;
  const search = (pattern: RegExp, from: number) => {
    pattern.lastIndex = from;
    return pattern.exec(text)?.index ?? -1;
  };
  return (pattern) => {
    const ahead = search(pattern, cursor);
    if (ahead >= 0) {
      cursor = ahead + 1;
      return ahead;
    }
    return Math.max(0, search(pattern, 0));
  };
}

/** A global pattern for a JSON string literal, as it is written in the text. */
function jsonString(value: string): string {
  return JSON.stringify(value).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

export function looksLikeAgentDojo(value: unknown): boolean {
  return isJsonObject(value) && Array.isArray(value["messages"]) && ("suite_name" in value || "pipeline_name" in value);
}

export function looksLikeChatMessages(value: unknown): boolean {
  const items = chatItems(value);
  return (
    items !== undefined &&
    items.length > 0 &&
    items.every((m) => isJsonObject(m) && (typeof m["role"] === "string" || (typeof m["type"] === "string" && responsesItemTypes.has(m["type"]))))
  );
}
