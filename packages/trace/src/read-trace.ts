import type { Diagnostic } from "@vigil/diagnostics";
import type { Trace } from "./event.js";
import { TraceReader } from "./formats/reader.js";

export { maximumValueDepth, tooDeep } from "./formats/values.js";

export interface ReadTraceOptions {
  /** The file name used in diagnostics and event sources. */
  readonly file?: string;
}

export interface ReadTraceResult {
  readonly trace: Trace;
  /** Problems found; when any is an error, the trace must not be judged. */
  readonly diagnostics: Diagnostic[];
}

/**
 * Reads a trace in the canonical format: JSON Lines (one event per line; blank lines ignored) or a
 * JSON array of events (the first non-blank character is `[`). Events are numbered from 1 in file
 * order. Never throws: every problem is a diagnostic naming the line and the field.
 */
export function readTrace(text: string, options: ReadTraceOptions = {}): ReadTraceResult {
  const reader = new TraceReader({ ...options, format: "jsonl", ground: false, checkRequestedFormat: false });
  const events = reader.readAll(text);
  return { trace: options.file === undefined ? { events } : { events, file: options.file }, diagnostics: [...reader.diagnostics] };
}
