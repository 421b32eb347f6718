import { diagnostic, LineIndex, type Diagnostic, type Severity } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import { groundTrace, type GroundingState } from "../grounding/ground-trace.js";
import { looksLikeAgentDojo, looksLikeChatMessages, readChatMessages } from "./agentdojo.js";
import { CallPairing, invalidLine, type DiagnosticSink } from "./calls.js";
import { canonicalEvent, canonicalReading, invalidCanonicalLine, splitJsonArray, type CanonicalReading } from "./canonical.js";
import { looksLikeClaudeCode, readClaudeCodeRecord, type ClaudeCodeReading } from "./claude-code.js";
import { detectTraceFormat, documentFormat, formatMismatch, isRecordLine, traceFormats, type TraceFormat } from "./detect.js";
import { isBlank, lineIndexOf, LineSplitter, lineSpan, type TextOrigin } from "./lines.js";
import { looksLikeMcp, McpLog } from "./mcp.js";
import { looksLikeTauBenchRun, runName } from "./tau-bench.js";

/**
 * The one reader of traces: a recording is pushed in pieces, its records are read one at a time
 * into calls and results, paired by a stateful step, grounded, and handed back as events as soon
 * as they are complete. `readTrace`, `readAnyTrace` and `readRecording` are this reader given the
 * whole text at once.
 *
 * Memory: line-oriented formats (canonical JSON Lines, Claude Code, MCP) are read line by line,
 * holding the unfinished last line, the calls still waiting for their result (and the complete
 * ones behind them, since events come out in order), and the ids already answered. A canonical
 * JSON array and the document formats (AgentDojo, OpenAI, a τ-bench run) are one JSON document:
 * they are held until the input ends. Until the format is decided the text is held too: usually the first line
 * decides it; a first line that is not JSON, in a text that may be one document spread over many
 * lines, is decided only on the whole text.
 */

export interface TraceReaderOptions {
  /** The file name used in diagnostics and event sources. */
  readonly file?: string;
  /** A format, or `auto` (the default) to detect it from the content. */
  readonly format?: TraceFormat | "auto";
  /** Ground shell calls; by default a recording (any format but canonical `jsonl`) is grounded. */
  readonly ground?: boolean;
  /**
   * Whether a requested format is checked against the text first (one T0008 instead of an error
   * per line, or an empty trace). `readTrace` reads canonical events without that check.
   */
  readonly checkRequestedFormat?: boolean;
  /**
   * Hand out only the events at these positions, of a run that was read before without errors (a
   * second reading, for the few events a report shows of a long run). In canonical JSON Lines that
   * is not grounded, a run without errors has exactly one event per non-blank line, so the lines of
   * the other positions are counted and not parsed; any other recording is read as usual (pairing
   * and grounding number events across records) and the other events are dropped.
   */
  readonly onlyPositions?: ReadonlySet<number>;
  /**
   * Where the text pushed starts, for a reading that starts again in the middle of canonical JSON
   * Lines read before (see `resumePoint`): the format is then `jsonl`, not grounded.
   */
  readonly startingAt?: ReadingPlace;
  /**
   * Also make an event of each message of the conversation, in its place among the calls: what
   * the user says is `user_message` and what the agent says in text is `agent_message`, each with
   * its whole text as the argument `text`, without status or output. System and developer
   * messages, and empty ones, make none. Read from chat recordings (OpenAI messages and Responses
   * items, AgentDojo, Claude Code, τ-bench); canonical events and MCP logs have no messages.
   */
  readonly messages?: boolean;
  /**
   * Where the text starts in the file it was cut from (a run of a file holding several runs), so
   * that the lines of events and diagnostics are the file's. The beginning of the file by default.
   */
  readonly origin?: TextOrigin;
}

/** A line of a canonical JSON Lines text where a reading can start: its number, offset, and the position of its event. */
export interface ReadingPlace {
  readonly line: number;
  readonly offset: number;
  readonly position: number;
}

/** How many diagnostics a reader keeps; the rest are counted in one closing diagnostic. */
export const DIAGNOSTICS_KEPT = 1000;

/** The first diagnostics, and a count of the rest by their highest severity. */
class KeptDiagnostics implements DiagnosticSink {
  private readonly kept: Diagnostic[] = [];
  private dropped = 0;
  private droppedErrors = 0;
  private droppedSeverity: Severity = "info";
  private withClosing: Diagnostic[] | undefined;
  /** Errors found, kept or not: an error anywhere means the run must not be judged. */
  errors = 0;

  constructor(private readonly file: string | undefined) {}

  push(found: Diagnostic): void {
    if (found.severity === "error") this.errors++;
    if (this.kept.length < DIAGNOSTICS_KEPT) {
      this.kept.push(found);
      return;
    }
    this.dropped++;
    if (found.severity === "error") this.droppedErrors++;
    if (severityRank[found.severity] > severityRank[this.droppedSeverity]) this.droppedSeverity = found.severity;
    this.withClosing = undefined;
  }

  get list(): readonly Diagnostic[] {
    if (this.dropped === 0) return this.kept;
    const errors = this.droppedErrors > 0 ? ` (${this.droppedErrors} of them ${this.droppedErrors === 1 ? "an error" : "errors"})` : "";
    const closing = diagnostic("T0015", `${this.dropped} more ${this.dropped === 1 ? "diagnostic" : "diagnostics"} of the trace ${this.dropped === 1 ? "is" : "are"} not listed${errors}; only the first ${DIAGNOSTICS_KEPT} are kept`, {
      severity: this.droppedSeverity,
      ...(this.file !== undefined ? { file: this.file } : {}),
      help: "fix the problems listed, or read the trace in parts, to see the others",
    });
    return (this.withClosing ??= [...this.kept, closing]);
  }
}

const severityRank: Readonly<Record<Severity, number>> = { info: 0, warning: 1, error: 2 };

/** How a decided trace is read: line by line, as one document once the input ends, or not at all. */
type Layout = "lines" | "document" | "rejected";

export class TraceReader {
  private readonly file: string | undefined;
  private readonly requested: TraceFormat | "auto";
  private readonly checkRequestedFormat: boolean;
  private readonly groundOption: boolean | undefined;
  private readonly onlyPositions: ReadonlySet<number> | undefined;
  private readonly startingAt: ReadingPlace | undefined;
  private readonly messages: boolean;
  private readonly origin: TextOrigin | undefined;
  /** Whether lines at unwanted positions are skipped unread (see `onlyPositions`). */
  private skipUnwanted = false;
  private readonly sink: KeptDiagnostics;
  private decided: { readonly format: TraceFormat | undefined; readonly layout: Layout } | undefined;
  private ground = false;
  /** Where a Claude Code transcript last stated the working directory. */
  private readonly claudeCode: ClaudeCodeReading = {};
  /** What grounding keeps from one batch of calls to the next. */
  private readonly grounding: GroundingState = {};
  private ended = false;

  /** The text held while the format is undecided, or while a document is read. */
  private held = "";
  /** Detection: how far the held text has been looked at, and what its first lines were. */
  private scanned = 0;
  private firstCharacter: string | undefined;
  private nonBlankLines = 0;
  private firstLineParses = false;
  private firstValue: unknown;
  private recordMatched = false;

  /** Reading the lines of the decided format. */
  private splitter: LineSplitter | undefined;
  private readonly canonical: CanonicalReading;
  private pairing: CallPairing | undefined;
  private mcp: McpLog | undefined;
  /** The recording's events completed in the current step, before grounding. */
  private batch: TraceEvent[] = [];
  private canonicalEvents = 0;
  /** Canonical events skipped unread in the current step (see `onlyPositions`). */
  private skipped = 0;

  /** Counts: the recording's events, the messages among them, those grounding added, and all events handed out. */
  private recorded = 0;
  private documentMessages = 0;
  groundedEvents = 0;
  private delivered = 0;

  constructor(options: TraceReaderOptions = {}) {
    this.file = options.file;
    this.requested = options.format ?? "auto";
    this.checkRequestedFormat = options.checkRequestedFormat ?? true;
    this.groundOption = options.ground;
    this.onlyPositions = options.onlyPositions;
    this.startingAt = options.startingAt;
    this.messages = options.messages === true;
    this.origin = options.origin;
    this.sink = new KeptDiagnostics(this.file);
    this.canonical = canonicalReading(this.file, this.sink);
    if (this.startingAt !== undefined) {
      // The events before the starting line were read before: numbering goes on from them.
      this.canonicalEvents = this.startingAt.position - 1;
      this.delivered = this.startingAt.position - 1;
    }
  }

  get diagnostics(): readonly Diagnostic[] {
    return this.sink.list;
  }

  get format(): TraceFormat | undefined {
    return this.decided?.format;
  }

  get detected(): boolean {
    return this.requested === "auto";
  }

  /** How many of the recording's events (so far) are tool calls. */
  get calls(): number {
    return this.recorded - this.messageEvents;
  }

  /** How many of the recording's events (so far) are messages (with the `messages` option). */
  get messageEvents(): number {
    return this.documentMessages + (this.pairing?.messages ?? 0);
  }

  /**
   * Where a reading of the same text could start again, between the text pushed so far and the
   * rest: in canonical JSON Lines that is not grounded, every line is read on its own and numbered
   * from the events before it, so a reading can start at a line given its number, its offset and
   * the position of the next event. Undefined for other recordings, and while a line is unfinished.
   */
  resumePoint(): ReadingPlace | undefined {
    if (this.decided?.format !== "jsonl" || this.decided.layout !== "lines" || this.ground || this.ended) return undefined;
    const next = this.splitter!.nextLine;
    return next === undefined ? undefined : { ...next, position: this.canonicalEvents + 1 };
  }

  /** Reads the next piece of the text; returns the events completed so far. */
  push(chunk: string): TraceEvent[] {
    return this.step(chunk, false);
  }

  /** Ends the input; returns the remaining events. */
  end(): TraceEvent[] {
    return this.step("", true);
  }

  /**
   * Reads a whole text as the last piece: one step, so that grounding, which is skipped once an
   * error is known, sees every error of the text before it grounds any event.
   */
  readAll(text: string): TraceEvent[] {
    return this.step(text, true);
  }

  private step(chunk: string, final: boolean): TraceEvent[] {
    if (this.ended) throw new Error("the trace reader has ended: no text can be pushed after end()");
    if (this.decided === undefined) {
      this.held += chunk;
      const decision = this.decide(final);
      if (decision !== undefined) this.start(decision);
    } else if (this.decided.layout === "lines") this.splitter!.push(chunk);
    else if (this.decided.layout === "document") this.held += chunk;
    if (final) {
      this.ended = true;
      if (this.decided?.layout === "lines") this.splitter!.end();
      else if (this.decided?.layout === "document") this.readDocument();
      if (this.pairing !== undefined) this.addToBatch(this.pairing.finish());
    } else if (this.pairing !== undefined) this.addToBatch(this.pairing.take());
    const recorded = this.batch;
    this.batch = [];
    return this.deliver(recorded);
  }

  /** Adds events to the batch one by one: a spread of a list as long as the input could overflow the stack. */
  private addToBatch(events: readonly TraceEvent[]): void {
    for (const event of events) this.batch.push(event);
  }

  /** Starts reading once the format is decided, with the text held so far. */
  private start(decision: { readonly format: TraceFormat | undefined; readonly layout: Layout }): void {
    this.decided = decision;
    const format = decision.format;
    this.ground = this.groundOption ?? (format !== undefined && format !== "jsonl");
    if (decision.layout === "rejected") {
      this.held = "";
      return;
    }
    // The chat documents are paired when they are read whole; line formats pair as they go.
    if (format === "claude-code" || format === "mcp") this.pairing = new CallPairing(this.context());
    if (format === "mcp") this.mcp = new McpLog(this.pairing!, this.context());
    if (decision.layout !== "lines") return;
    this.skipUnwanted = this.onlyPositions !== undefined && format === "jsonl" && !this.ground;
    const start = this.startingAt ?? (this.origin !== undefined ? { line: this.origin.line, offset: this.origin.offset } : undefined);
    this.splitter = new LineSplitter(format === "jsonl" ? this.canonicalLine : format === "mcp" ? this.mcpLine : this.claudeCodeLine, start);
    const held = this.held;
    this.held = "";
    this.splitter.push(held);
  }

  private context(): { file?: string; diagnostics: DiagnosticSink } {
    return this.file !== undefined ? { file: this.file, diagnostics: this.sink } : { diagnostics: this.sink };
  }

  private readonly canonicalLine = (text: string, line: number, offset: number): void => {
    if (this.skipUnwanted && !this.onlyPositions!.has(this.canonicalEvents + 1)) {
      this.canonicalEvents++;
      this.skipped++;
      return;
    }
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.sink.push(invalidCanonicalLine((error as Error).message, text, line, offset, this.file));
      return;
    }
    const event = canonicalEvent(value, { line, span: lineSpan(line, offset, 0, text.length), source: text }, this.canonicalEvents + 1, this.canonical);
    if (event === undefined) return;
    this.canonicalEvents++;
    this.batch.push(event);
  };

  private readonly claudeCodeLine = (text: string, line: number, offset: number): void => {
    const value = this.parseRecordingLine(text, line, offset);
    if (value !== invalid) readClaudeCodeRecord({ value, line, span: lineSpan(line, offset, 0, 0), text }, this.pairing!, this.context(), this.messages, this.claudeCode);
  };

  private readonly mcpLine = (text: string, line: number, offset: number): void => {
    const value = this.parseRecordingLine(text, line, offset);
    if (value !== invalid) this.mcp!.record({ value, line, span: lineSpan(line, offset, 0, 0), text });
  };

  private parseRecordingLine(text: string, line: number, offset: number): unknown {
    try {
      return JSON.parse(text);
    } catch (error) {
      this.sink.push(invalidLine((error as Error).message, text, line, offset, this.file));
      return invalid;
    }
  }

  /**
   * The format and layout, once the text held so far settles them (undefined: hold more). The
   * rules are those of `detectTraceFormat` and `formatMismatch` on the whole text, applied only
   * when the lines seen are enough for them to give the same answer as the whole text would.
   */
  private decide(final: boolean): { format: TraceFormat | undefined; layout: Layout } | undefined {
    if (final) return this.decideOnWholeText();
    const text = this.held;
    if (this.firstCharacter === undefined) {
      const first = text.search(/\S/);
      if (first < 0) return undefined;
      this.firstCharacter = text[first];
    }
    const requested = this.requested;
    if (requested === "agentdojo" || requested === "openai" || requested === "tau-bench") return { format: requested, layout: "document" };
    if (requested === "jsonl" && (this.firstCharacter === "[" || !this.checkRequestedFormat)) return { format: "jsonl", layout: this.firstCharacter === "[" ? "document" : "lines" };
    this.scanLines();
    if (this.nonBlankLines === 0) return undefined;
    // A first line that is not JSON, in a text that may be one JSON document spread over lines,
    // is settled only by the whole text (it may be the document, or a truncated first record).
    const mayBeOneDocument = this.firstCharacter === "[" || this.firstCharacter === "{";
    if (requested !== "auto") {
      if (!this.firstLineParses) return mayBeOneDocument ? undefined : { format: requested, layout: "lines" };
      if (requested === "jsonl" || this.recordMatched) return { format: requested, layout: "lines" };
      return undefined;
    }
    // A first line that parses, followed by more text, means the text is not one document; so does
    // a first line that would be read as JSON Lines even if it were the whole text.
    if (mayBeOneDocument) {
      if (!this.firstLineParses) return undefined;
      const more = this.nonBlankLines > 1 || /\S/.test(text.slice(this.scanned));
      if (!more && documentFormat(this.firstValue) !== "lines") return undefined;
    }
    // Detection decides on the first record line among the first 20 records, or else on those 20
    // records and the first 4,096 characters: the held text decides as the whole text would.
    if (!this.recordMatched && (this.nonBlankLines < detectionLines || this.scanned < detectionHead)) return undefined;
    return this.layoutOf(detectTraceFormat(text), text);
  }

  /** Looks at the lines completed since the last look, parsing only as many as detection needs. */
  private scanLines(): void {
    const text = this.held;
    let newline: number;
    while ((newline = text.indexOf("\n", this.scanned)) >= 0) {
      const raw = text.slice(this.scanned, newline);
      this.scanned = newline + 1;
      const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
      if (isBlank(line)) continue;
      this.nonBlankLines++;
      const needed = this.requested === "auto" ? this.nonBlankLines <= detectionLines && !this.recordMatched : this.requested === "jsonl" ? this.nonBlankLines === 1 : !this.recordMatched;
      if (!needed) continue;
      let value: unknown;
      let parses = true;
      try {
        value = JSON.parse(line);
      } catch {
        parses = false;
      }
      if (this.nonBlankLines === 1) {
        this.firstLineParses = parses;
        this.firstValue = value;
      }
      if (!parses) continue;
      const matches = this.requested === "auto" ? isRecordLine(value) : this.requested === "claude-code" ? looksLikeClaudeCode(value) : looksLikeMcp(value);
      if (matches) this.recordMatched = true;
    }
  }

  /** The decision on the whole text, when the input has ended before the first lines settled it. */
  private decideOnWholeText(): { format: TraceFormat | undefined; layout: Layout } {
    const text = this.held;
    if (this.requested === "auto") return this.layoutOf(detectTraceFormat(text), text);
    if (this.checkRequestedFormat) {
      const mismatch = formatMismatch(text, this.requested);
      if (mismatch !== undefined) {
        const detected = detectTraceFormat(text);
        this.sink.push(
          diagnostic("T0008", mismatch, {
            span: this.firstCharacterSpan(text),
            ...(this.file !== undefined ? { file: this.file } : {}),
            help:
              detected !== undefined && detected !== this.requested
                ? `it reads as \`${detected}\`: leave out --trace-format to detect it, or name that format`
                : `name the recording's format with --trace-format (${traceFormats.join(", ")})`,
          }),
        );
        return { format: this.requested, layout: "rejected" };
      }
    }
    return this.layoutOf(this.requested, text);
  }

  private layoutOf(format: TraceFormat | undefined, text: string): { format: TraceFormat | undefined; layout: Layout } {
    if (format === undefined) {
      this.sink.push(
        diagnostic("T0008", "the trace's format is not recognized", {
          span: this.firstCharacterSpan(text),
          ...(this.file !== undefined ? { file: this.file } : {}),
          help: `name it with --trace-format (${traceFormats.join(", ")})`,
        }),
      );
      return { format, layout: "rejected" };
    }
    if (format === "agentdojo" || format === "openai" || format === "tau-bench") return { format, layout: "document" };
    if (format === "jsonl" && text.trimStart().startsWith("[")) return { format, layout: "document" };
    return { format, layout: "lines" };
  }

  /** The span of a text's first character, where a diagnostic about the whole text points. */
  private firstCharacterSpan(text: string) {
    return lineIndexOf(text.slice(0, 2), this.origin).span(0, Math.min(text.length, 1));
  }

  /** Reads the held document: a canonical JSON array, or a chat document. */
  private readDocument(): void {
    const text = this.held;
    this.held = "";
    const lines = lineIndexOf(text, this.origin);
    const format = this.decided!.format;
    if (format === "jsonl") {
      for (const element of splitJsonArray(text, lines, this.file, this.sink)) {
        const event = canonicalEvent(element.value, { line: element.line, span: element.span, source: text }, this.canonicalEvents + 1, this.canonical);
        if (event === undefined) continue;
        this.canonicalEvents++;
        this.batch.push(event);
      }
      return;
    }
    const document = this.parseDocument(text, lines);
    if (document === undefined) return;
    const start = lines.span(0, Math.min(text.length, 1));
    if (format === "tau-bench" && Array.isArray(document) && document.length > 0) {
      // A file of runs is a corpus, not one run: reading its runs as one would judge them as one.
      const runs = document.length;
      this.sink.push(
        diagnostic("T0008", `the trace holds ${runs} τ-bench ${runs === 1 ? "run" : "runs"}, not one run`, {
          span: start,
          ...(this.file !== undefined ? { file: this.file } : {}),
          help: `\`vigilc check\` reads such a file as a corpus of its runs; \`--run NAME\` chooses one (named by task and trial, such as \`${runName(document[0], 1)}\`)`,
        }),
      );
      return;
    }
    const recognized =
      format === "agentdojo" ? looksLikeAgentDojo(document) || looksLikeChatMessages(document) : format === "tau-bench" ? looksLikeTauBenchRun(document) : looksLikeChatMessages(document);
    if (!recognized) {
      const expected = format === "agentdojo" ? "an AgentDojo run" : format === "tau-bench" ? "a τ-bench run (an object whose `traj` is a list of chat messages)" : "a list of chat messages";
      this.sink.push(diagnostic("T0008", `the trace is JSON but not ${expected}`, { span: start, ...(this.file !== undefined ? { file: this.file } : {}) }));
      return;
    }
    const read = readChatMessages(document, text, { ...this.context(), lines }, { messages: this.messages });
    this.documentMessages += read.messages;
    this.addToBatch(read.events);
  }

  private parseDocument(text: string, lines: LineIndex): unknown {
    try {
      return JSON.parse(text) as unknown;
    } catch (error) {
      const match = /position (\d+)/.exec((error as Error).message);
      const at = match ? Math.min(Number(match[1]), text.length) : text.length;
      this.sink.push(
        diagnostic("T0001", `the trace is not valid JSON: ${(error as Error).message.replace(/ in JSON at position \d+.*$/s, "")}`, {
          span: lines.span(at, at),
          ...(this.file !== undefined ? { file: this.file } : {}),
          help: "the file may be truncated",
        }),
      );
      return undefined;
    }
  }

  /**
   * Hands out the recording's events of one step: grounded (unless an error has been found by
   * now: such a run is not judged, and its events may be incomplete), and numbered on from the
   * events handed out before.
   */
  private deliver(recorded: TraceEvent[]): TraceEvent[] {
    if (this.skipUnwanted) {
      // Canonical events, not grounded: their positions are already the positions handed out.
      this.recorded += recorded.length + this.skipped;
      this.delivered += recorded.length + this.skipped;
      this.skipped = 0;
      return recorded;
    }
    this.recorded += recorded.length;
    const base = this.delivered;
    let events: TraceEvent[];
    if (this.ground && this.sink.errors === 0 && recorded.length > 0) {
      const grounded = groundTrace(recorded, { state: this.grounding });
      for (const found of grounded.diagnostics) this.sink.push(found);
      this.groundedEvents += grounded.events.length - recorded.length;
      events = base === 0 ? grounded.events : grounded.events.map((event) => renumbered(event, event.position + base, base));
    } else {
      // The batch is this step's own list: a position is corrected in place, where it differs.
      events = recorded;
      for (let index = 0; index < events.length; index++) {
        if (events[index]!.position !== base + index + 1) events[index] = renumbered(events[index]!, base + index + 1, 0);
      }
    }
    this.delivered += events.length;
    const only = this.onlyPositions;
    return only === undefined ? events : events.filter((event) => only.has(event.position));
  }
}

/** A unique value for a line that does not parse (`undefined` and `null` are JSON values a line may hold). */
const invalid: unique symbol = Symbol("invalid");

/** Detection looks at this many records, and at this many characters of the text's head. */
const detectionLines = 20;
const detectionHead = 4096;

/** The event at another position; a grounded event's `groundedFrom` moves by `shift`. */
function renumbered(event: TraceEvent, position: number, shift: number): TraceEvent {
  const source = event.source;
  if (shift === 0 || source?.groundedFrom === undefined) return { ...event, position };
  return { ...event, position, source: { ...source, groundedFrom: source.groundedFrom + shift } };
}
