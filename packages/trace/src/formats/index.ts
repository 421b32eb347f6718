import type { Diagnostic } from "@vigil/diagnostics";
import type { Trace } from "../event.js";
import type { TraceFormat } from "./detect.js";
import type { TextOrigin } from "./lines.js";
import { TraceReader } from "./reader.js";

export { detectTraceFormat, traceFormatDescriptions, traceFormats, type TraceFormat } from "./detect.js";

export interface ReadAnyTraceOptions {
  readonly file?: string;
  /** A format, or `auto` (the default) to detect it from the content. */
  readonly format?: TraceFormat | "auto";
  /**
   * Also make an event of each message of the conversation (`user_message`, `agent_message`, with
   * its `text`), in its place among the calls; see `TraceReaderOptions.messages`.
   */
  readonly messages?: boolean;
  /** Where the text starts in the file it was cut from (a run of a file of runs), so that lines are the file's. */
  readonly origin?: TextOrigin;
}

export interface ReadAnyTraceResult {
  readonly trace: Trace;
  readonly diagnostics: Diagnostic[];
  /** The format the events were read as (undefined when none could be recognized). */
  readonly format?: TraceFormat;
  /** Whether the format was detected rather than requested. */
  readonly detected: boolean;
}

/**
 * Reads a recording in any supported format into typed events, without grounding. Never throws:
 * an unrecognized format, malformed records and results without calls are diagnostics naming the
 * line.
 */
export function readAnyTrace(text: string, options: ReadAnyTraceOptions = {}): ReadAnyTraceResult {
  const reader = new TraceReader({ ...options, ground: false });
  const events = reader.readAll(text);
  const file = options.file;
  return {
    trace: file === undefined ? { events } : { events, file },
    diagnostics: [...reader.diagnostics],
    ...(reader.format !== undefined ? { format: reader.format } : {}),
    detected: reader.detected,
  };
}
