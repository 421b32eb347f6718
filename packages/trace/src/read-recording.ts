import type { Diagnostic } from "@vigil/diagnostics";
import type { Trace } from "./event.js";
import { readAnyTrace, type ReadAnyTraceOptions, type TraceFormat } from "./formats/index.js";
import { groundTrace } from "./grounding/ground.js";

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
  /** Reading and grounding diagnostics, errors first in the order they were found. */
  readonly diagnostics: Diagnostic[];
  /** The format the events were read as (undefined when none could be recognized). */
  readonly format?: TraceFormat;
  /** Whether the format was detected rather than requested. */
  readonly detected: boolean;
  /** How many events the recording itself holds, before grounding added any. */
  readonly calls: number;
  /** How many events grounding added. */
  readonly groundedEvents: number;
}

/**
 * Reads a recording in any supported format and grounds its shell calls: what `vigilc check` does
 * with a trace file. Never throws on user input. A recording with reading errors is not grounded
 * (its events are incomplete; the errors are what the caller reports).
 */
export function readRecording(text: string, options: ReadRecordingOptions = {}): ReadRecordingResult {
  const read = readAnyTrace(text, options);
  const calls = read.trace.events.length;
  const about = { detected: read.detected, calls, ...(read.format !== undefined ? { format: read.format } : {}) };
  const ground = options.ground ?? (read.format !== undefined && read.format !== "jsonl");
  if (!ground || read.diagnostics.some((d) => d.severity === "error")) {
    return { ...about, trace: read.trace, diagnostics: read.diagnostics, groundedEvents: 0 };
  }
  const grounded = groundTrace(read.trace.events);
  return {
    ...about,
    trace: { ...read.trace, events: grounded.events },
    diagnostics: [...read.diagnostics, ...grounded.diagnostics],
    groundedEvents: grounded.events.length - calls,
  };
}
