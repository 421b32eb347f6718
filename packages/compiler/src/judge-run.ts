import type { FileHandle } from "node:fs/promises";
import { diagnostic, stripByteOrderMark, type Diagnostic } from "@vigil/diagnostics";
import { keysComparedWithSets, needsTime, type CheckedStatement } from "@vigil/checker";
import type { TimeError } from "@vigil/engine";
import {
  createRecordingReader,
  isHandle,
  openRegularFile,
  readRecording,
  readRegularFilePieces,
  readRunFile,
  SignatureBuilder,
  splitRunFile,
  type ReadingPlace,
  type ReadRecordingOptions,
  type RecordingRun,
  type Signature,
  type TextOrigin,
  type TraceEvent,
  type TraceFormat,
} from "@vigil/trace";
import { reportOf, type CheckReport } from "./check.js";
import { engineOf, type DecisionEngine, type EngineChoice } from "./engines.js";
import { checkAgainstSignature, type CompiledPolicy } from "./compile.js";

/**
 * One pipeline for every run: read a recording (any format), ground its shell calls, check the
 * policy against the run's signature, and judge it with the chosen engine. `vigilc check` on one
 * trace, the corpus workers, and the runtime integrations all go through here, so a flag means the
 * same everywhere. Everything comes back as data; nothing is printed.
 */
export interface JudgeRunOptions extends EngineChoice {
  /** The recording's format, or `auto` (the default) to detect it. */
  readonly traceFormat?: TraceFormat | "auto";
  /** Ground shell calls (default: for recordings, not for canonical events). */
  readonly ground?: boolean;
  /**
   * Also make an event of each message of the conversation (`user_message`, `agent_message`, with
   * its `text`, in its place among the calls), in the chat recordings that hold them.
   */
  readonly messages?: boolean;
  /** Warnings about the trace or about the policy against this run's signature stop the run. */
  readonly strict?: boolean;
  /**
   * Against which signature the policy's names are checked (the closed world): `run` (the default),
   * this run's own; `corpus`, none here: the run is one of a corpus, whose runs each lack names the
   * others have, and the caller checks the policy once against the union of their signatures
   * (`RunJudgement.signature`). `signatureDiagnostics` is then empty, and `strict` stops the run on
   * the trace's warnings only.
   */
  readonly closedWorld?: "run" | "corpus";
  /** Keep the run's events in the result (for reports that show them). */
  readonly keepEvents?: boolean;
  /**
   * The evaluator's time budget for the whole run, in milliseconds (it also bounds each statement's
   * memory: see `EvaluationBudget`). Past it every statement is undecided and the run unsafe.
   */
  readonly budgetMs?: number;
  /**
   * How many witness events to locate per statement (the first ones), for reports that show them;
   * all by default. The witnesses' positions are always all reported.
   */
  readonly locateWitnesses?: number;
  /**
   * Whether to give the trace line of every witness (`witnessLines`), as SARIF needs: a run with
   * millions of witnesses then holds a line number for each. Off by default.
   */
  readonly witnessLines?: boolean;
  /**
   * Cancels the run (an editor's check made stale by a newer edit): looked at between the pieces of
   * the file read and every few thousand events. An aborted run rejects with `signal.reason`, and
   * its file is closed.
   */
  readonly signal?: AbortSignal;
}

/**
 * Where a run comes from: a file, read here, or text already read (standard input, say, or one run
 * of a file holding several).
 */
export interface RunSource {
  /** The name the run goes by in diagnostics and reports: the file it is in. */
  readonly file: string;
  /** The text; without it, `file` is read (a regular file only). */
  readonly text?: string;
  /**
   * For one run of a file holding several (a τ-bench results file, see `splitRunFile`): its name,
   * carried into the judgement and the reports, beside `file`.
   */
  readonly run?: string;
  /** With `text` cut from `file` (a run of a file of runs): where it starts in the file, so that lines are the file's. */
  readonly origin?: TextOrigin;
}

export interface RunJudgement {
  readonly file: string;
  /** The run's name, for a run of a file holding several (`RunSource.run`). */
  readonly run?: string;
  /** The format the run was read as (undefined when none could be recognized). */
  readonly format?: TraceFormat;
  readonly detected: boolean;
  /** How many tool calls and messages (with `messages`) the recording holds, and how many events grounding added. */
  readonly calls: number;
  readonly messageEvents: number;
  readonly groundedEvents: number;
  /** How many events were judged (or read, when the run was stopped). */
  readonly eventCount: number;
  /** The events, when `keepEvents` was asked or the engine needed them whole. */
  readonly events?: readonly TraceEvent[];
  /** Problems reading the trace (errors, warnings, notes), in the order found. */
  readonly traceDiagnostics: readonly Diagnostic[];
  /** The policy against this run's signature: symbols the run does not exhibit (none with `closedWorld: "corpus"`). */
  readonly signatureDiagnostics: readonly Diagnostic[];
  /**
   * The run's signature as judging keeps it (`runSignatureBuilder`), when the run was read without
   * errors: for a corpus, whose names are judged against the union of its runs' signatures.
   */
  readonly signature?: Signature;
  /**
   * Why the run was not judged: `trace` (the trace has errors), `strict` (warnings under
   * `strict`). Absent when it was judged.
   */
  readonly stopped?: "trace" | "strict";
  readonly report?: CheckReport;
  /** The events at the first witnesses of each statement (`locateWitnesses`), for reports that show them. */
  readonly witnessEvents?: ReadonlyMap<number, TraceEvent>;
  /** With `witnessLines`: the trace line of every witness, by position, for reports that locate them (SARIF). */
  readonly witnessLines?: ReadonlyMap<number, number>;
}

/**
 * How many distinct values the run's signature keeps per argument name: beyond, the name's values
 * are open (none is reported as absent), so a long run of ever-new values costs bounded memory.
 */
const SIGNATURE_VALUES_PER_KEY = 10_000;

/** How many of the last events are at hand when a witness among them is found. */
const RECENT_EVENTS = 1024;

/** How many events are judged between two looks at the abort signal. */
const ABORT_CHECK_INTERVAL = 4096;

/**
 * How many events apart the places are where a second reading can start (see `ResumePoint`): a
 * second reading reads at most about this many events before the first it wants.
 */
const RESUME_INTERVAL = 8192;

/**
 * Judges one run against a compiled policy. Never throws on bad input; the policy must be `ok`.
 *
 * A file is read piece by piece and each event goes through the forward engine as soon as it is
 * read, so memory is bounded by the statements' state and the calls still waiting for a result,
 * not by the file (unless the events are kept, or the SMT engine needs them whole). When the run
 * has witnesses and its events were not kept, the file is read a second time for the events at
 * the witnesses, which reports locate.
 */
export async function judgeRun(policy: CompiledPolicy, source: RunSource, options: JudgeRunOptions = {}): Promise<RunJudgement> {
  if (!policy.ok) throw new Error("the policy has errors; fix them before judging a run (see its diagnostics)");
  const { signal } = options;
  signal?.throwIfAborted();
  // Given text is held whole anyway (and has no file to read again): its events are kept too.
  const keep = options.keepEvents === true || source.text !== undefined;
  const statements = policy.program.policies.flatMap((p) => p.statements);
  const locate = options.locateWitnesses ?? Infinity;
  // The events at the witnesses, caught as the witnesses are found: the current event, or one of
  // the last few (a `bresp` window, an `until` trigger); the rest are read again at the end.
  const witnessEvents = new Map<number, TraceEvent>();
  const witnessLines = new Map<number, number>();
  const located = statements.map(() => 0);
  const recent: (TraceEvent | undefined)[] = new Array<TraceEvent | undefined>(RECENT_EVENTS);
  const linesWanted = options.witnessLines === true;
  // The event being read: when a witness is found, the event that made it final (for `until`, the breaking event).
  let current: TraceEvent | undefined;
  const untilStatements = new Set(statements.flatMap((statement, index) => (statement.form === "until" ? [index] : [])));
  const witness = (statement: number, position: number): void => {
    if (!linesWanted && located[statement]! >= locate) return;
    const event = recent[position % RECENT_EVENTS];
    if (event?.position !== position) return;
    if (linesWanted) witnessLines.set(position, event.source?.line ?? 1);
    if (located[statement]! >= locate) return;
    located[statement]!++;
    witnessEvents.set(position, event);
    if (untilStatements.has(statement) && current !== undefined) witnessEvents.set(current.position, current);
  };
  const { engine, owned } = engineOf(options);
  try {
    return await judgeWith(engine);
  } finally {
    if (owned) await engine.dispose();
  }

  async function judgeWith(engine: DecisionEngine): Promise<RunJudgement> {
    const run = engine.start(statements, { budget: options.budgetMs !== undefined ? { timeMs: options.budgetMs } : {}, observer: { witness }, ...(signal !== undefined ? { signal } : {}) });
    const signature = runSignatureBuilder(policy);
    const kept: TraceEvent[] = [];
    let eventCount = 0;
    const take = (events: readonly TraceEvent[]): void => {
      for (const event of events) {
        if (signal !== undefined && eventCount % ABORT_CHECK_INTERVAL === 0) signal.throwIfAborted();
        eventCount++;
        signature.add(event);
        recent[event.position % RECENT_EVENTS] = event;
        current = event;
        run.step(event);
        if (keep) kept.push(event);
      }
    };
    const reading = readingOptions(source, options);
    // Where the file can be read again from, for the witness events read again at the end.
    const resumePoints: ResumePoint[] = [];

    let read: RecordingRead;
    if (source.text !== undefined) {
      const text = stripByteOrderMark(source.text);
      const whole = readRecording(text, reading);
      take(whole.trace.events);
      read = whole;
    } else {
      const streamed = await readFileEvents(source.file, reading, take, { stop: () => run.exhausted, resumePoints, ...(signal !== undefined ? { signal } : {}) });
      if ("code" in streamed) {
        return { file: source.file, ...runOf(source), detected: false, calls: 0, messageEvents: 0, groundedEvents: 0, eventCount: 0, traceDiagnostics: [streamed], signatureDiagnostics: [], stopped: "trace" };
      }
      read = streamed;
    }
    const about = {
      file: source.file,
      ...runOf(source),
      ...(read.format !== undefined ? { format: read.format } : {}),
      detected: read.detected,
      calls: read.calls,
      messageEvents: read.messageEvents,
      groundedEvents: read.groundedEvents,
      eventCount,
      ...(keep ? { events: kept } : {}),
      traceDiagnostics: read.diagnostics,
    };
    if (read.diagnostics.some((d) => d.severity === "error")) return { ...about, signatureDiagnostics: [], stopped: "trace" };
    const runSignature = signature.signature();
    const signatureDiagnostics = options.closedWorld === "corpus" ? [] : checkAgainstSignature(policy, runSignature);
    if (options.strict === true && [...read.diagnostics, ...signatureDiagnostics].some((d) => d.severity === "warning")) {
      return { ...about, signatureDiagnostics, signature: runSignature, stopped: "strict" };
    }
    const report = reportOf(statements, await run.finish(), engine.name, run.observations);
    // A rule that measures time on a run whose events lack times is undecided; the event is located.
    const timeError = run.observations.timeError;
    const traceDiagnostics = timeError === undefined ? about.traceDiagnostics : [...about.traceDiagnostics, timeDiagnostic(timeError, statements, source.file)];
    // The first witnesses of each statement as events, every witness as a line: what was not caught
    // while reading (witnesses only the end of the run makes final) is read again.
    const missing = new Set<number>();
    const missingEvents = new Set<number>();
    const wanted = (position: number, asEvent: boolean): void => {
      if (keep) {
        const event = kept[position - 1]!;
        if (linesWanted) witnessLines.set(position, event.source?.line ?? 1);
        if (asEvent) witnessEvents.set(position, event);
        return;
      }
      if (linesWanted && !witnessLines.has(position)) missing.add(position);
      if (asEvent && !witnessEvents.has(position)) {
        missing.add(position);
        missingEvents.add(position);
      }
    };
    for (const statement of report.statements) {
      const count = linesWanted ? statement.witnesses.length : Math.min(locate, statement.witnesses.length);
      for (let index = 0; index < count; index++) wanted(statement.witnesses[index]!, index < locate);
      // The events that broke the first intervals of an `until`, shown beside their triggers.
      if (keep && statement.brokenBy !== undefined) {
        for (const position of statement.brokenBy.slice(0, Math.min(locate, statement.brokenBy.length))) if (position > 0) witnessEvents.set(position, kept[position - 1]!);
      }
    }
    if (missing.size > 0) {
      for (const [position, event] of await readEventsAgain(source.file, reading, missing, resumePoints, signal)) {
        if (linesWanted) witnessLines.set(position, event.source?.line ?? 1);
        if (missingEvents.has(position)) witnessEvents.set(position, event);
      }
    }
    return { ...about, traceDiagnostics, signatureDiagnostics, signature: runSignature, report, witnessEvents, ...(linesWanted ? { witnessLines } : {}) };
  }
}

/**
 * The builder of a run's signature as judging a run keeps it: the values of the argument names the
 * policy compares with sets, at most `SIGNATURE_VALUES_PER_KEY` per name.
 */
export function runSignatureBuilder(policy: CompiledPolicy): SignatureBuilder {
  return new SignatureBuilder({ maxValuesPerKey: SIGNATURE_VALUES_PER_KEY, valuesOf: keysComparedWithSets(policy.syntax) });
}

/** What `readRunSignature` gives: the run's signature and how it was read. */
export interface RunSignature {
  readonly signature: Signature;
  readonly eventCount: number;
  readonly format?: TraceFormat;
  readonly detected: boolean;
  readonly calls: number;
  readonly messageEvents: number;
  readonly groundedEvents: number;
  readonly traceDiagnostics: readonly Diagnostic[];
  /** For a file holding several runs (a τ-bench results file): how many, all read into the one signature. */
  readonly runs?: number;
}

/**
 * The signature Σ of a run (what `vigilc signature` prints), read as `judgeRun` reads a run: a file
 * piece by piece, so memory holds the signature, not the run. A file (or text) holding several
 * runs gives the signature of all its runs together: every action, argument name and value any
 * of them exhibits.
 */
export async function readRunSignature(source: RunSource, options: Pick<JudgeRunOptions, "traceFormat" | "ground" | "messages"> = {}): Promise<RunSignature> {
  const builder = new SignatureBuilder();
  const read = await readRunEvents(source, options, (events) => {
    for (const event of events) builder.add(event);
  });
  return { signature: builder.signature(), ...read };
}

/** How `readRunEvents` read a run (or a file of runs): its counts and diagnostics. */
export type RunEventsRead = Omit<RunSignature, "signature">;

/**
 * The events of a run, read as `judgeRun` reads them (a file piece by piece, shell calls grounded
 * once, messages with `messages`), handed to `take` as they are complete: memory holds what `take`
 * keeps, not the run. A file (or text) holding several runs gives each run's events with its name,
 * each run read on its own; a single run's are given without one (`source.run`, when it has one).
 */
export async function readRunEvents(
  source: RunSource,
  options: Pick<JudgeRunOptions, "traceFormat" | "ground" | "messages">,
  take: (events: readonly TraceEvent[], run: string | undefined) => void,
): Promise<RunEventsRead> {
  let eventCount = 0;
  const counted = (run: string | undefined) => (events: readonly TraceEvent[]) => {
    eventCount += events.length;
    take(events, run);
  };
  const reading = readingOptions(source, options);
  const failed = (problem: Diagnostic): RunEventsRead => ({ eventCount: 0, detected: false, calls: 0, messageEvents: 0, groundedEvents: 0, traceDiagnostics: [problem] });
  const text = source.text === undefined ? undefined : stripByteOrderMark(source.text);
  // A file of several runs: each run read on its own (its calls paired within it).
  const runFile = source.run !== undefined ? undefined : text !== undefined ? splitRunFile(text, { format: reading.format }) : await readRunFile(source.file, { format: reading.format });
  if (runFile !== undefined && "code" in runFile) return failed(runFile);
  let read: RecordingRead;
  if (runFile !== undefined) {
    read = readRuns(runFile.runs, reading, (events, run) => counted(run)(events));
    return { eventCount, ...recordingCounts(read), detected: reading.format === "auto", runs: runFile.runs.length };
  }
  const single = counted(source.run);
  if (text !== undefined) {
    const whole = readRecording(text, reading);
    single(whole.trace.events);
    read = whole;
  } else {
    const streamed = await readFileEvents(source.file, reading, single);
    if ("code" in streamed) return failed(streamed);
    read = streamed;
  }
  return { eventCount, ...recordingCounts(read) };
}

/** How a recording was read: its format, its counts, and the diagnostics of reading it. */
interface RecordingRead {
  readonly format?: TraceFormat;
  readonly detected: boolean;
  readonly calls: number;
  readonly messageEvents: number;
  readonly groundedEvents: number;
  readonly diagnostics: readonly Diagnostic[];
}

/**
 * E0004 at the event whose time a rule that measures time could not use: the rules it names are
 * undecided (fail closed), since a window measured without times would be a guess.
 */
function timeDiagnostic(error: TimeError, statements: readonly CheckedStatement[], file: string | undefined): Diagnostic {
  const rules = statements.filter(needsTime).map((statement) => `\`${statement.name}\``);
  const source = error.source;
  return diagnostic("E0004", `${error.reason}: ${rules.length === 1 ? "the rule" : "the rules"} ${rules.join(", ")} ${rules.length === 1 ? "is" : "are"} undecided`, {
    ...(source?.span !== undefined ? { span: source.span } : {}),
    ...((source?.file ?? file) !== undefined ? { file: source?.file ?? file } : {}),
    help: "give every event its time (`time` in a canonical trace: ISO 8601 with a zone, or epoch milliseconds; Claude Code transcripts carry `timestamp`), or judge the run without the rules that measure time",
  });
}

function recordingCounts(read: RecordingRead): Omit<RunSignature, "signature" | "eventCount" | "runs"> {
  return {
    ...(read.format !== undefined ? { format: read.format } : {}),
    detected: read.detected,
    calls: read.calls,
    messageEvents: read.messageEvents,
    groundedEvents: read.groundedEvents,
    traceDiagnostics: read.diagnostics,
  };
}

/** The runs of a file of runs, each read whole in its own format and place: their counts and diagnostics summed. */
function readRuns(runs: readonly RecordingRun[], reading: ReadRecordingOptions, take: (events: readonly TraceEvent[], run: string) => void): RecordingRead {
  let calls = 0;
  let messageEvents = 0;
  let groundedEvents = 0;
  const diagnostics: Diagnostic[] = [];
  for (const run of runs) {
    const read = readRecording(run.text, { ...reading, format: "tau-bench", origin: run.origin });
    take(read.trace.events, run.name);
    calls += read.calls;
    messageEvents += read.messageEvents;
    groundedEvents += read.groundedEvents;
    for (const found of read.diagnostics) diagnostics.push(found);
  }
  return { format: "tau-bench", detected: false, calls, messageEvents, groundedEvents, diagnostics };
}

/** How `judgeRun` and `readRunSignature` read a run: the options of the reader. */
function readingOptions(source: RunSource, options: Pick<JudgeRunOptions, "traceFormat" | "ground" | "messages">): ReadRecordingOptions & { readonly format: TraceFormat | "auto" } {
  return {
    file: source.file,
    format: options.traceFormat ?? "auto",
    ...(options.ground !== undefined ? { ground: options.ground } : {}),
    ...(options.messages === true ? { messages: true } : {}),
    ...(source.text !== undefined && source.origin !== undefined ? { origin: source.origin } : {}),
  };
}

/** The run's name, when the source is a run of a file of runs. */
function runOf(source: RunSource): { run?: string } {
  return source.run !== undefined ? { run: source.run } : {};
}

/** A line of a file where a second reading can start: the reader's place there, and the line's first byte. */
interface ResumePoint {
  readonly place: ReadingPlace;
  readonly byte: number;
}

/** How a file is read: when to stop, which events only, from where, and the signal that cancels the reading. */
interface FileReading {
  /** Whether to stop reading (the run is past its budget, or every event wanted is found); the rest is not read. */
  readonly stop?: () => boolean;
  /** Only the events at these positions, of a run read before without errors (see `createRecordingReader`). */
  readonly only?: ReadonlySet<number>;
  /** With `only`: start at this line of the file instead of its beginning. */
  readonly from?: ResumePoint;
  /** Where to note the places a second reading could start from, every `RESUME_INTERVAL` events. */
  readonly resumePoints?: ResumePoint[];
  readonly signal?: AbortSignal;
}

/** How a file was read: as `readRecording` says, or why it could not be read. */
type FileRead = Diagnostic | RecordingRead;

/** Reads a regular file piece by piece, handing each completed event to `take`. */
async function readFileEvents(file: string, options: ReadRecordingOptions, take: (events: readonly TraceEvent[]) => void, reading: FileReading = {}): Promise<FileRead> {
  const handle = await openRegularFile(file);
  if (!isHandle(handle)) return handle;
  try {
    return await readOpenFileEvents(handle, file, options, take, reading);
  } finally {
    await handle.close();
  }
}

/** `readFileEvents` on a file already open, which stays open (to read several stretches of it). */
async function readOpenFileEvents(
  handle: FileHandle,
  file: string,
  options: ReadRecordingOptions,
  take: (events: readonly TraceEvent[]) => void,
  { stop, only, from, resumePoints, signal }: FileReading,
): Promise<FileRead> {
  const reader = createRecordingReader(options, only !== undefined ? { positions: only, ...(from !== undefined ? { from: from.place } : {}) } : undefined);
  let stopped = false;
  try {
    for await (const piece of readRegularFilePieces(handle, { start: from?.byte ?? 0 })) {
      signal?.throwIfAborted();
      take(reader.push(piece.text));
      if (resumePoints !== undefined && piece.nextLineByte !== undefined) {
        const place = reader.resumePoint();
        const last = resumePoints.at(-1)?.place.position ?? 1;
        if (place !== undefined && place.position - last >= RESUME_INTERVAL) resumePoints.push({ place, byte: piece.nextLineByte });
      }
      if (stop?.() === true) {
        stopped = true;
        break;
      }
    }
  } catch (error) {
    // A cancelled reading rejects with the signal's reason; only a failure to read is a diagnostic.
    signal?.throwIfAborted();
    return diagnostic("T0004", `cannot read the trace \`${file}\`: ${(error as Error).message}`, { file });
  }
  // A reading stopped early is not ended: its last line is cut off, which is no fault of the file.
  if (!stopped) take(reader.end());
  return {
    ...(reader.format !== undefined ? { format: reader.format } : {}),
    detected: reader.detected,
    calls: reader.calls,
    messageEvents: reader.messageEvents,
    groundedEvents: reader.groundedEvents,
    diagnostics: reader.diagnostics,
  };
}

/**
 * The events at some positions of a run read from a file and judged (a second reading, keeping only
 * those): what a report that shows a few events of a long run needs, in memory bounded by the
 * positions. The reading stops at the last position wanted; in canonical JSON Lines the lines
 * before it are counted, not parsed (the run was read without errors: one event per line).
 */
export async function readEventsAt(file: string, options: ReadRecordingOptions, positions: ReadonlySet<number>, signal?: AbortSignal): Promise<Map<number, TraceEvent>> {
  return readEventsAgain(file, options, positions, [], signal);
}

/**
 * `readEventsAt`, reading only around the positions wanted when the first reading noted where it
 * could start again: positions close together are one stretch, read from the last resume point
 * before it up to its last position. Should a stretch not give every event it wants (the file
 * changed since), the file is read again from its beginning.
 */
async function readEventsAgain(
  file: string,
  options: ReadRecordingOptions,
  positions: ReadonlySet<number>,
  resumePoints: readonly ResumePoint[],
  signal?: AbortSignal,
): Promise<Map<number, TraceEvent>> {
  const found = new Map<number, TraceEvent>();
  const take = (events: readonly TraceEvent[]): void => {
    for (const event of events) if (positions.has(event.position)) found.set(event.position, event);
  };
  const cancel = signal !== undefined ? { signal } : {};
  const handle = resumePoints.length > 0 ? await openRegularFile(file) : undefined;
  if (handle !== undefined && isHandle(handle)) {
    const sorted = [...positions].sort((a, b) => a - b);
    let resumed = true;
    // The resume point of each stretch: the last at or before its first position (both ascend).
    let point = -1;
    try {
      for (let first = 0; first < sorted.length && resumed; ) {
        // A stretch: positions less than a resume interval apart.
        let end = first + 1;
        while (end < sorted.length && sorted[end]! - sorted[end - 1]! < RESUME_INTERVAL) end++;
        const stretch = new Set(sorted.slice(first, end));
        const last = sorted[end - 1]!;
        while (point + 1 < resumePoints.length && resumePoints[point + 1]!.place.position <= sorted[first]!) point++;
        const from = resumePoints[point];
        const read = await readOpenFileEvents(handle, file, options, take, { only: stretch, stop: () => found.has(last), ...(from !== undefined ? { from } : {}), ...cancel });
        resumed = !("code" in read) && !read.diagnostics.some((d) => d.severity === "error") && [...stretch].every((position) => found.has(position));
        first = end;
      }
    } finally {
      await handle.close();
    }
    if (resumed) return found;
    found.clear();
  }
  if (positions.size > 0) await readFileEvents(file, options, take, { only: positions, stop: () => found.size === positions.size, ...cancel });
  return found;
}
