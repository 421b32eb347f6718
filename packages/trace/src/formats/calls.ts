import { diagnostic, type Diagnostic, type LineIndex, type Span } from "@vigil/diagnostics";
import { ARGUMENT_OBSERVATION_CAP, observeArguments, observeOutput, type TraceEvent } from "../event.js";
import { isJsonObject, type JsonValue } from "../value.js";
import { isBlank, lineSpan } from "./lines.js";
import { LONG_STRING, maximumValueDepth, numberDiagnostic, numberProblems, OUT_OF_RANGE, TOO_DEEP, tooDeep, UNSAFE_INTEGER, valueFlags } from "./values.js";

/**
 * What every adapter extracts from a recording: tool calls and their results, handed one at a time
 * and in the order the recording holds them to a {@link CallPairing}, which turns them into typed
 * events. So pairing, statuses, output observation and source references work the same for every
 * format.
 */
export interface ToolCall {
  /** The recording's identity of the call (a tool_use id, a tool_call_id, a JSON-RPC id). */
  readonly id?: string;
  readonly action: string;
  /** The named arguments: an object, or the value that should have been one (reported, T0009). */
  readonly args: unknown;
  /** The 1-based line where the call is recorded; 0 for a call made live, which has no line. */
  readonly line: number;
  /** Where the call is recorded, for diagnostics and the event's source. */
  readonly span: Span;
  /** The raw call as recorded, kept on the event's source. */
  readonly raw: JsonValue;
  /** The JSON text the arguments were parsed from: a line, a document, or an `arguments` string. */
  readonly source: string;
  /** The working directory the recording states for the call, and the line stating it. */
  readonly cwd?: string;
  readonly cwdLine?: number;
  /** When the call was made (epoch milliseconds), where the recording says: its event's `time`. */
  readonly time?: number;
}

/**
 * A message of the conversation, as an event (with the `messages` option of the reader): what the
 * user said (`user_message`) or what the agent said in text (`agent_message`), with the whole text
 * as the argument `text`. It has no status and no output: it is no call that ran.
 */
export interface ChatMessage {
  readonly action: MessageAction;
  readonly text: string;
  /** The 1-based line where the message is recorded. */
  readonly line: number;
  readonly span: Span;
  /** The message as recorded, kept on the event's source. */
  readonly raw: JsonValue;
  /** When the message was said (epoch milliseconds), where the recording says: its event's `time`. */
  readonly time?: number;
}

/** The actions of message events. */
export type MessageAction = "user_message" | "agent_message";

export interface ToolResult {
  readonly callId: string;
  readonly status: "ok" | "error";
  readonly output?: string;
  readonly line: number;
  readonly span: Span;
}

/** Where diagnostics go: an array, or a sink that keeps a bounded number of them. */
export interface DiagnosticSink {
  push(diagnostic: Diagnostic): unknown;
}

export interface PairingContext {
  readonly file?: string;
  readonly diagnostics: DiagnosticSink;
}

/** A call waiting in the pairing, in position order. */
interface PendingCall {
  readonly call: ToolCall;
  /** 0 for a call that makes no event (its arguments were rejected) but may still be answered. */
  readonly position: number;
  /** The accepted arguments, with long strings cut. */
  readonly args?: { readonly [key: string]: JsonValue };
  readonly argsTruncated?: boolean;
  result?: ToolResult;
  /** True once the call can be emitted: it is answered, or it has no id and can never be. */
  complete: boolean;
  /** True for a message of the conversation (complete from the start, never answered). */
  readonly message?: boolean;
}

/**
 * The stateful step that pairs calls with results. A result answers the earliest call of its id
 * that is still unanswered: recordings reuse ids (OpenAI chat runs repeat a `tool_call_id` across
 * turns), so pairing with the first call of an id would hand a later call's output to an earlier
 * one. A result with no unanswered call of its id is a second answer (T0010) when the id was
 * answered before, and otherwise answers no call that precedes it (T0007).
 *
 * Events come out in position order as soon as every call before them is complete, so the memory
 * held is the unanswered calls and those behind them, plus the ids already answered (to tell a
 * second answer from an orphan).
 */
export class CallPairing {
  private readonly queue: PendingCall[] = [];
  private head = 0;
  private readonly unanswered = new Map<string, PendingCall[]>();
  private readonly answered = new Set<string>();
  private positions = 0;
  private truncatedReported = false;
  private argumentsCutReported = false;
  private messagesOut = 0;

  constructor(private readonly context: PairingContext) {}

  /** How many events the pairing has numbered so far. */
  get events(): number {
    return this.positions;
  }

  /** How many of the events handed out so far are messages (the rest are calls). */
  get messages(): number {
    return this.messagesOut;
  }

  /**
   * A message of the conversation: an event in its place among the calls, complete at once (it
   * waits only for the calls before it). Its text is observed like any argument.
   */
  message(message: ChatMessage): void {
    const observed = observeArguments({ text: message.text });
    if (observed.truncated && !this.argumentsCutReported) {
      this.argumentsCutReported = true;
      this.context.diagnostics.push(
        diagnostic("T0014", `the text of the \`${message.action}\` on line ${message.line} is longer than ${ARGUMENT_OBSERVATION_CAP} characters; only its first ${ARGUMENT_OBSERVATION_CAP} are observed`, {
          ...this.located(message.span),
          help: "a condition on `text` sees the observed prefix only",
        }),
      );
    }
    const call: ToolCall = { action: message.action, args: observed.args, line: message.line, span: message.span, raw: message.raw, source: "", ...(message.time !== undefined ? { time: message.time } : {}) };
    this.queue.push({ call, position: ++this.positions, args: observed.args, ...(observed.truncated ? { argsTruncated: true } : {}), complete: true, message: true });
  }

  call(call: ToolCall): void {
    const accepted = this.acceptArguments(call);
    const entry: PendingCall =
      accepted !== undefined
        ? { call, position: ++this.positions, args: accepted.args, ...(accepted.truncated ? { argsTruncated: true } : {}), complete: call.id === undefined }
        : { call, position: 0, complete: call.id === undefined };
    if (accepted) this.queue.push(entry);
    if (call.id === undefined) return;
    // A rejected call stays answerable, so that its result is not reported as an orphan too.
    const waiting = this.unanswered.get(call.id);
    if (waiting === undefined) this.unanswered.set(call.id, [entry]);
    else waiting.push(entry);
  }

  /**
   * Pairs a result with the earliest unanswered call of its id. `orphans: "ignore"` is for formats
   * where a result may answer something other than a tool call (MCP responses to other requests).
   */
  result(result: ToolResult, orphans: "report" | "ignore" = "report"): void {
    const id = result.callId;
    const waiting = this.unanswered.get(id);
    if (waiting !== undefined) {
      const entry = waiting.shift()!;
      if (waiting.length === 0) this.unanswered.delete(id);
      this.answered.add(id);
      entry.result = result;
      entry.complete = true;
      return;
    }
    const where = this.located(result.span);
    if (this.answered.has(id)) {
      this.context.diagnostics.push(diagnostic("T0010", `the call \`${id}\` is answered again on line ${result.line}; the first answer is kept`, where));
    } else if (orphans === "report") {
      this.context.diagnostics.push(
        diagnostic("T0007", `the tool result on line ${result.line} answers the call \`${id}\`, which does not occur before it in the trace`, {
          ...where,
          help: "the recording may be truncated at its start, or come from another session",
        }),
      );
    }
  }

  /** The events whose calls are complete and not preceded by an incomplete one, in position order. */
  take(): TraceEvent[] {
    const events: TraceEvent[] = [];
    while (this.head < this.queue.length && this.queue[this.head]!.complete) events.push(this.toEvent(this.queue[this.head++]!));
    this.compact();
    return events;
  }

  /** Every remaining event: the input has ended, so a call without a result has no status. */
  finish(): TraceEvent[] {
    const events: TraceEvent[] = [];
    while (this.head < this.queue.length) events.push(this.toEvent(this.queue[this.head++]!));
    this.compact();
    return events;
  }

  private compact(): void {
    if (this.head === this.queue.length) {
      this.queue.length = 0;
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue.splice(0, this.head);
      this.head = 0;
    }
  }

  /**
   * The arguments of a call if they make an event: a JSON object, not nested too deep, holding
   * only numbers it can hold as written; strings longer than the observation cap are cut.
   */
  private acceptArguments(call: ToolCall): { args: { readonly [key: string]: JsonValue }; truncated: boolean } | undefined {
    const where = this.located(call.span);
    const flags = valueFlags(call.args, 0);
    if ((flags & TOO_DEEP) !== 0) {
      const deep = tooDeep(call.args) ?? "";
      this.context.diagnostics.push(
        diagnostic("T0009", `the argument \`${deep.split(".")[0]}\` of the \`${call.action}\` call${onLine(call.line)} nests values more than ${maximumValueDepth} levels deep`, where),
      );
      return undefined;
    }
    if (!isJsonObject(call.args)) {
      this.context.diagnostics.push(
        diagnostic("T0009", `the arguments of the \`${call.action}\` call${onLine(call.line)} are not a JSON object`, {
          ...where,
          help: "tool arguments must be named: an object from argument names to values",
        }),
      );
      return undefined;
    }
    if ((flags & (OUT_OF_RANGE | UNSAFE_INTEGER)) !== 0) {
      const problems = numberProblems(call.args, call.source);
      for (const problem of problems) {
        this.context.diagnostics.push(numberDiagnostic(problem, `the argument \`${problem.path}\` of the \`${call.action}\` call${onLine(call.line)}`, where));
      }
      if (problems.length > 0) return undefined;
    }
    if ((flags & LONG_STRING) === 0) return { args: call.args, truncated: false };
    if (!this.argumentsCutReported) {
      this.argumentsCutReported = true;
      this.context.diagnostics.push(
        diagnostic("T0014", `an argument of the \`${call.action}\` call${onLine(call.line)} is longer than ${ARGUMENT_OBSERVATION_CAP} characters; only its first ${ARGUMENT_OBSERVATION_CAP} are observed`, {
          ...where,
          help: "a condition on that argument sees the observed prefix only",
        }),
      );
    }
    return { args: observeArguments(call.args).args, truncated: true };
  }

  private toEvent(entry: PendingCall): TraceEvent {
    const { call, result } = entry;
    const file = this.context.file;
    if (entry.message === true) this.messagesOut++;
    let output: { output: string; truncated: boolean } | undefined;
    if (result?.output !== undefined) {
      output = observeOutput(result.output);
      if (output.truncated && !this.truncatedReported) {
        this.truncatedReported = true;
        this.context.diagnostics.push(diagnostic("T0005", `the output of the \`${call.action}\` call${onLine(call.line)} is cut to the observation cap`, this.located(result.span)));
      }
    }
    return {
      position: entry.position,
      ...(entry.message === true ? { kind: "message" as const } : {}),
      action: call.action,
      args: entry.args!,
      ...(entry.argsTruncated === true ? { argsTruncated: true } : {}),
      // A call with no recorded result has no status: it satisfies neither `status = ok` nor `status = error`.
      ...(result !== undefined ? { status: result.status } : {}),
      ...(output !== undefined ? { output: output.output } : {}),
      ...(output?.truncated === true ? { outputTruncated: true } : {}),
      ...(call.time !== undefined ? { time: call.time } : {}),
      source: {
        ...(file !== undefined ? { file } : {}),
        line: call.line,
        span: call.span,
        ...(call.id !== undefined ? { id: call.id } : {}),
        raw: call.raw,
        ...(call.cwd !== undefined ? { cwd: call.cwd, ...(call.cwdLine !== undefined ? { cwdLine: call.cwdLine } : {}) } : {}),
      },
    };
  }

  private located(span: Span): { span: Span; file?: string } {
    return { span, ...(this.context.file !== undefined ? { file: this.context.file } : {}) };
  }
}

/** Where a call is, in a message: ` on line N`, or nothing for a call made live (line 0). */
export function onLine(line: number): string {
  return line > 0 ? ` on line ${line}` : "";
}

/** The line and the empty span at an offset of a text, where an adapter records a call or a result. */
export function locate(lines: LineIndex, offset: number): { line: number; span: Span } {
  const span = lines.span(offset, offset);
  return { line: span.line, span };
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
 * The text of a chat message's content: a string, or the text parts of a list of parts joined
 * with line breaks (`{type: "text" | "input_text" | "output_text", text}` as OpenAI writes them,
 * `{type: "text", content}` as AgentDojo does, or plain strings). Parts that are not text (images,
 * refusals, tool calls and results) and empty parts are left out. Undefined when there is no text, or only an
 * empty one: such a message makes no event.
 */
export function messageText(content: unknown): string | undefined {
  let text: string | undefined;
  if (typeof content === "string") text = content;
  else if (Array.isArray(content)) {
    const parts: string[] = [];
    for (const part of content) {
      const value = typeof part === "string" ? part : isJsonObject(part) && textPartTypes.has(part["type"] as string) ? (typeof part["text"] === "string" ? part["text"] : part["content"]) : undefined;
      if (typeof value === "string" && value !== "") parts.push(value);
    }
    text = parts.join("\n");
  }
  return text === undefined || text === "" ? undefined : text;
}

const textPartTypes = new Set(["text", "input_text", "output_text"]);

/**
 * The records of a JSON Lines text: one per non-blank line, with its parsed value or the parse
 * error. Format detection reads the first few this way, and may stop early.
 */
export interface JsonLine {
  readonly line: number;
  readonly offset: number;
  readonly text: string;
  readonly value?: unknown;
  readonly error?: string;
}

export function* eachJsonLine(text: string): Generator<JsonLine> {
  let offset = 0;
  for (const [index, rawLine] of text.split("\n").entries()) {
    const start = offset;
    offset += rawLine.length + 1;
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (isBlank(line)) continue;
    try {
      yield { line: index + 1, offset: start, text: line, value: JSON.parse(line) as unknown };
    } catch (error) {
      yield { line: index + 1, offset: start, text: line, error: (error as Error).message };
    }
  }
}

/** Where an adapter found a call or a result, and the file, for a diagnostic about it. */
export interface RecordContext {
  readonly file?: string;
  readonly diagnostics: DiagnosticSink;
}

/**
 * A T0002 diagnostic for a call or a result that lacks what an event or its pairing needs (a tool
 * name, a call id). It is an error, not a skip: a trace missing a call could pass a rule it breaks.
 */
export function malformedRecord(what: string, where: { readonly line: number; readonly span: Span }, file: string | undefined): Diagnostic {
  return diagnostic("T0002", what.replace("{line}", String(where.line)), { span: where.span, ...(file !== undefined ? { file } : {}) });
}

/** A T0001 diagnostic for a JSON Lines record of a recording that does not parse. */
export function invalidLine(error: string, text: string, line: number, offset: number, file: string | undefined): Diagnostic {
  const message = error.replace(/ in JSON at position \d+.*$/s, "");
  return diagnostic("T0001", `line ${line} is not valid JSON: ${message.charAt(0).toLowerCase()}${message.slice(1)}`, {
    span: lineSpan(line, offset, 0, text.length),
    ...(file !== undefined ? { file } : {}),
    help: "the line may be truncated; each line must hold one complete JSON object",
  });
}

/** A record of a JSON Lines recording, parsed: its value, line, the empty span at its start, and its text. */
export interface LineRecord {
  readonly value: unknown;
  readonly line: number;
  readonly span: Span;
  readonly text: string;
}
