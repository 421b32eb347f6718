import { diagnostic, type Diagnostic, type LineIndex } from "@vigil/diagnostics";
import { observeOutput, type TraceEvent } from "../event.js";
import { maximumValueDepth, tooDeep } from "../read-trace.js";
import { isJsonObject, type JsonValue } from "../value.js";

/**
 * What every adapter extracts from a recording: tool calls in the order they were made, each with
 * its result when one was recorded. `callsToEvents` turns them into typed events, so that pairing,
 * statuses, output observation and source references work the same for every format.
 */
export interface ToolCall {
  /** The recording's identity of the call (a tool_use id, a tool_call_id, a JSON-RPC id). */
  readonly id?: string;
  readonly action: string;
  /** The named arguments: an object, or the value that should have been one (reported, T0009). */
  readonly args: unknown;
  /** Where the call is recorded in the text (an offset), for its line. */
  readonly offset: number;
  /** The raw call as recorded, kept on the event's source. */
  readonly raw: JsonValue;
}

export interface ToolResult {
  readonly callId: string;
  readonly status: "ok" | "error";
  readonly output?: string;
  readonly offset: number;
}

export function callsToEvents(
  calls: readonly ToolCall[],
  results: readonly ToolResult[],
  context: { readonly file?: string; readonly lines: LineIndex; readonly diagnostics: Diagnostic[]; readonly format: string },
): TraceEvent[] {
  const { file, lines, diagnostics } = context;
  const located = (offset: number) => ({ span: lines.span(offset, offset), ...(file !== undefined ? { file } : {}) });
  const byId = new Map<string, ToolCall>();
  for (const call of calls) if (call.id !== undefined && !byId.has(call.id)) byId.set(call.id, call);
  const answers = new Map<string, ToolResult>();
  for (const result of results) {
    const line = lines.position(result.offset).line;
    if (!byId.has(result.callId)) {
      diagnostics.push(
        diagnostic("T0007", `the tool result on line ${line} answers the call \`${result.callId}\`, which the trace does not contain`, {
          ...located(result.offset),
          help: "the recording may be truncated at its start, or come from another session",
        }),
      );
    } else if (answers.has(result.callId)) {
      diagnostics.push(diagnostic("T0010", `the call \`${result.callId}\` is answered again on line ${line}; the first answer is kept`, located(result.offset)));
    } else answers.set(result.callId, result);
  }
  const events: TraceEvent[] = [];
  let truncatedReported = false;
  for (const call of calls) {
    const line = lines.position(call.offset).line;
    const deep = tooDeep(call.args);
    if (deep !== undefined) {
      diagnostics.push(
        diagnostic("T0009", `the argument \`${deep.split(".")[0]}\` of the \`${call.action}\` call on line ${line} nests values more than ${maximumValueDepth} levels deep`, located(call.offset)),
      );
      continue;
    }
    if (!isJsonObject(call.args)) {
      diagnostics.push(
        diagnostic("T0009", `the arguments of the \`${call.action}\` call on line ${line} are not a JSON object`, {
          ...located(call.offset),
          help: "tool arguments must be named: an object from argument names to values",
        }),
      );
      continue;
    }
    const result = call.id !== undefined ? answers.get(call.id) : undefined;
    let output: { output: string; truncated: boolean } | undefined;
    if (result?.output !== undefined) {
      output = observeOutput(result.output);
      if (output.truncated && !truncatedReported) {
        truncatedReported = true;
        diagnostics.push(
          diagnostic("T0005", `the output of the \`${call.action}\` call on line ${line} is cut to the observation cap`, located(result.offset)),
        );
      }
    }
    events.push({
      position: events.length + 1,
      action: call.action,
      args: call.args,
      // A call with no recorded result has no status: it satisfies neither `status = ok` nor `status = error`.
      ...(result !== undefined ? { status: result.status } : {}),
      ...(output !== undefined ? { output: output.output } : {}),
      ...(output?.truncated === true ? { outputTruncated: true } : {}),
      source: { ...(file !== undefined ? { file } : {}), line, span: lines.span(call.offset, call.offset), ...(call.id !== undefined ? { id: call.id } : {}), raw: call.raw },
    });
  }
  return events;
}

/** The text of a tool result's content: a string, or the text parts of a list of content blocks. */
export function contentText(content: unknown): string | undefined {
  if (content === undefined || content === null) return undefined;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      if (typeof part === "string") parts.push(part);
      else if (isJsonObject(part)) {
        const text = part["text"] ?? part["content"];
        if (typeof text === "string") parts.push(text);
        else if (part["type"] !== undefined) parts.push(`[${String(part["type"])}]`);
      }
    }
    return parts.join("\n");
  }
  return JSON.stringify(content);
}

/**
 * Offsets of the records of a JSON Lines text: one per non-blank line, with its parsed value or
 * the parse error.
 */
export interface JsonLine {
  readonly line: number;
  readonly offset: number;
  readonly text: string;
  readonly value?: unknown;
  readonly error?: string;
}

export function jsonLines(text: string): JsonLine[] {
  return [...eachJsonLine(text)];
}

/** The records of {@link jsonLines}, parsed one at a time, for a caller that may stop early. */
export function* eachJsonLine(text: string): Generator<JsonLine> {
  let offset = 0;
  for (const [index, rawLine] of text.split("\n").entries()) {
    const start = offset;
    offset += rawLine.length + 1;
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === "") continue;
    try {
      yield { line: index + 1, offset: start, text: line, value: JSON.parse(line) as unknown };
    } catch (error) {
      yield { line: index + 1, offset: start, text: line, error: (error as Error).message };
    }
  }
}

/**
 * A T0002 diagnostic for a call or a result that lacks what an event or its pairing needs (a tool
 * name, a call id). It is an error, not a skip: a trace missing a call could pass a rule it breaks.
 */
export function malformedRecord(what: string, offset: number, context: { readonly file?: string; readonly lines: LineIndex }): Diagnostic {
  return diagnostic("T0002", what.replace("{line}", String(context.lines.position(offset).line)), {
    span: context.lines.span(offset, offset),
    ...(context.file !== undefined ? { file: context.file } : {}),
  });
}

/** A T0001 diagnostic for a JSON Lines record that does not parse. */
export function invalidLine(record: JsonLine, context: { readonly file?: string; readonly lines: LineIndex }): Diagnostic {
  const message = record.error!.replace(/ in JSON at position \d+.*$/s, "");
  return diagnostic("T0001", `line ${record.line} is not valid JSON: ${message.charAt(0).toLowerCase()}${message.slice(1)}`, {
    span: context.lines.span(record.offset, record.offset + record.text.length),
    ...(context.file !== undefined ? { file: context.file } : {}),
    help: "the line may be truncated; each line must hold one complete JSON object",
  });
}
