import type { Diagnostic } from "@vigil/diagnostics";
import type { Trace, TraceEvent } from "./event.js";
import type { ReadAnyTraceOptions, TraceFormat } from "./formats/index.js";
import { TraceReader, type ReadingPlace } from "./formats/reader.js";

export type { ReadingPlace } from "./formats/reader.js";

export interface ReadRecordingOptions extends ReadAnyTraceOptions {
  /**
   * Ground shell calls into the commands they run. By default a recording of an agent (any format
   * but canonical `jsonl`) is grounded and canonical events are taken as given.
   */
  readonly ground?: boolean;
}

export interface ReadRecordingResult {
  /** The events: the recording's tool calls, each followed by the events grounded from it. */
  readonly trace: Trace;
  /** Reading and grounding diagnostics, in the order they were found. */
  readonly diagnostics: Diagnostic[];
  /** The format the events were read as (undefined when none could be recognized). */
  readonly format?: TraceFormat;
  /** Whether the format was detected rather than requested. */
  readonly detected: boolean;
  /** How many of the recording's own events are tool calls (grounding adds events after some of them). */
  readonly calls: number;
  /** How many of the recording's own events are messages (with the `messages` option). */
  readonly messageEvents: number;
  /** How many events grounding added. */
  readonly groundedEvents: number;
}

/**
 * A recording read piece by piece: records are read one at a time into calls and results, paired
 * by a stateful step and grounded, so a long canonical JSON Lines trace is read in memory bounded
 * by the calls still waiting for a result. Canonical JSON arrays and the document formats
 * (AgentDojo, OpenAI, a τ-bench run) are one JSON document each, held until `end()`.
 */
export interface RecordingReader {
  /**
   * Feeds the next piece of the text (any split, even inside a line or a UTF-16 pair); returns the
   * events completed so far, in position order (positions 1, 2, …, consecutive across calls).
   */
  push(chunk: string): TraceEvent[];
  /**
   * Ends the input; returns the remaining events (calls without a result come out without status).
   * Pushing after the end is a mistake of the caller, not of the input: it throws.
   */
  end(): TraceEvent[];
  /**
   * Every diagnostic so far (errors mean the run must not be judged). The first 1,000 are kept;
   * the rest are counted in one closing diagnostic (T0015) with the highest severity among them.
   */
  readonly diagnostics: readonly Diagnostic[];
  /** The format, once it is decided (on the first records, or at the end). */
  readonly format: TraceFormat | undefined;
  /** Whether the format is detected rather than requested. */
  readonly detected: boolean;
  /** How many tool calls the recording holds (so far). */
  readonly calls: number;
  /** How many messages the recording holds (so far), with the `messages` option. */
  readonly messageEvents: number;
  /** How many events grounding added (so far). */
  readonly groundedEvents: number;
  /**
   * Where a reading of the same recording could start again, between the text pushed so far and
   * the rest (`createRecordingReader`'s `from`): in canonical JSON Lines that is not grounded, at
   * the next line when the text pushed so far ends at a line end. Undefined otherwise.
   */
  resumePoint(): ReadingPlace | undefined;
}

/** A second reading of a run read before without errors: only the events at some positions, maybe from a line on. */
export interface Rereading {
  /** The positions of the events wanted; the reader hands out only those. */
  readonly positions: ReadonlySet<number>;
  /**
   * Where the text pushed starts: a `resumePoint` of the first reading, for a text that starts at
   * that line (a file read from the byte where that line starts). The beginning by default.
   */
  readonly from?: ReadingPlace;
}

/**
 * A reader for a recording given in pieces. Shell calls are grounded as for `readRecording`: each
 * piece's completed events are grounded when they are handed out, unless an error has been found
 * by then (a run with errors is not judged).
 *
 * With `rereading`, the reader hands out only the events at some positions, of a run that was read
 * before without errors: a second reading for the few events a report shows. Canonical JSON Lines
 * (not grounded) has one event per non-blank line in such a run, so the other lines are counted
 * and not parsed, and the reading may start at a line the first reading gave as a `resumePoint`;
 * other recordings are read whole and the other events dropped.
 */
export function createRecordingReader(options: ReadRecordingOptions = {}, rereading?: Rereading): RecordingReader {
  if (rereading === undefined) return new TraceReader(options);
  if (rereading.from === undefined) return new TraceReader({ ...options, onlyPositions: rereading.positions });
  // Only canonical JSON Lines read without grounding has resume points: the rest is read as such.
  return new TraceReader({ ...options, format: "jsonl", ground: false, checkRequestedFormat: false, onlyPositions: rereading.positions, startingAt: rereading.from });
}

/**
 * Reads a recording in any supported format and grounds its shell calls: what `vigilc check` does
 * with a trace file. Never throws on user input. A recording with reading errors is not grounded
 * (its events are incomplete; the errors are what the caller reports): the text is read as one
 * final piece, so every error is known before any event is grounded.
 */
export function readRecording(text: string, options: ReadRecordingOptions = {}): ReadRecordingResult {
  const reader = new TraceReader(options);
  const events = reader.readAll(text);
  return {
    trace: options.file === undefined ? { events } : { events, file: options.file },
    diagnostics: [...reader.diagnostics],
    ...(reader.format !== undefined ? { format: reader.format } : {}),
    detected: reader.detected,
    calls: reader.calls,
    messageEvents: reader.messageEvents,
    groundedEvents: reader.groundedEvents,
  };
}
