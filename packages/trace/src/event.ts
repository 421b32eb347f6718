import type { Span } from "@vigil/diagnostics";
import type { JsonValue } from "./value.js";

/** The outcome of a call: `ok` (s(e) = ⊤), `error` (s(e) = ⊥), or unknown while it is pending. */
export type EventStatus = "ok" | "error";

/** Where an event came from, so verdicts and reports point at the original record. */
export interface EventSource {
  /** The trace file, as given by the user. */
  readonly file?: string;
  /** The 1-based line of the file where the event's record starts. */
  readonly line?: number;
  /** Where the record (or, in a document holding many, the call) is in the file, for diagnostics. */
  readonly span?: Span;
  /** Adapter-specific identity of the record (a tool-call id, a JSON-RPC id). */
  readonly id?: string;
  /** The call as the recording holds it, for reports that show the original record. */
  readonly raw?: JsonValue;
  /** For an event grounded from a shell call: the position of that call's event. */
  readonly groundedFrom?: number;
  /** The working directory the recording states for the call (Claude Code's `cwd`), as written. */
  readonly cwd?: string;
  /** The line of the recording that states `cwd` (the call's own, or an earlier one). */
  readonly cwdLine?: number;
}

/**
 * What an event is: a tool `call` (with a status once it has a result), or a `message` of the
 * conversation (`user_message`, `agent_message`, with its `text`), which has no status and no output.
 */
export type EventKind = "call" | "message";

/**
 * A typed event e = ⟨a(e), e[·], s(e), o(e)⟩ (the paper's Section 4.2): an action, a partial map
 * from argument names to values, a status, and a bounded observation of the output.
 */
export interface TraceEvent {
  /** 1-based position in the trace: e_1 ≺ e_2 ≺ … */
  readonly position: number;
  /** `message` for a message of the conversation; absent for a call (every event a recording's tool use makes). */
  readonly kind?: EventKind;
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  /** Absent when the call has no result yet; such an event satisfies neither `status = ok` nor `status = error`. */
  readonly status?: EventStatus;
  /** The output, cut to {@link OUTPUT_OBSERVATION_CAP} characters; absent when the call produced none. */
  readonly output?: string;
  /** True when `output` was cut. */
  readonly outputTruncated?: boolean;
  /** True when a string in `args` was cut to {@link ARGUMENT_OBSERVATION_CAP} characters. */
  readonly argsTruncated?: boolean;
  /**
   * When the event happened: an integer, milliseconds since the Unix epoch (1970-01-01T00:00:00Z,
   * UTC), from 0000-01-01 to 9999-12-31 (`isEventTime` of `@vigil/diagnostics`). A call's time is
   * when it was made (the line holding it, in a transcript), and the events grounded from a shell
   * call take the call's. Absent when the recording does not say; 0 is a time like any other (a
   * test file's offsets count from epoch 0).
   */
  readonly time?: number;
  readonly source?: EventSource;
}

/**
 * The bounded observation o(e) keeps the first 65,536 UTF-16 code units of an output. A wildcard on
 * the output sees only that prefix; the cut never splits a surrogate pair.
 */
export const OUTPUT_OBSERVATION_CAP = 65_536;

export function observeOutput(output: string): { output: string; truncated: boolean } {
  if (output.length <= OUTPUT_OBSERVATION_CAP) return { output, truncated: false };
  return { output: cutText(output, OUTPUT_OBSERVATION_CAP), truncated: true };
}

/**
 * Arguments are observed like outputs: every string value in them (at any depth) keeps its first
 * 65,536 UTF-16 code units, so one huge argument (a file's contents written by a tool) cannot make
 * every later stage, which compares and hashes argument values, cost as much as the file.
 */
export const ARGUMENT_OBSERVATION_CAP = 65_536;

/**
 * The arguments with every string longer than {@link ARGUMENT_OBSERVATION_CAP} cut. Objects are
 * copied only along the paths to a cut string, each key kept as an own property (so `__proto__` is
 * an argument name like any other).
 */
export function observeArguments(args: { readonly [key: string]: JsonValue }): { args: { readonly [key: string]: JsonValue }; truncated: boolean } {
  const state = { truncated: false };
  const observed = observeValue(args, state) as { readonly [key: string]: JsonValue };
  return { args: observed, truncated: state.truncated };
}

function observeValue(value: JsonValue, state: { truncated: boolean }): JsonValue {
  if (typeof value === "string") {
    if (value.length <= ARGUMENT_OBSERVATION_CAP) return value;
    state.truncated = true;
    return cutText(value, ARGUMENT_OBSERVATION_CAP);
  }
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    let copy: JsonValue[] | undefined;
    value.forEach((element: JsonValue, index: number) => {
      const observed = observeValue(element, state);
      if (observed !== element) (copy ??= [...value])[index] = observed;
    });
    return copy ?? value;
  }
  let copy: Record<string, JsonValue> | undefined;
  const object = value as { readonly [key: string]: JsonValue };
  for (const key of Object.keys(object)) {
    const element = object[key]!;
    const observed = observeValue(element, state);
    if (observed === element) continue;
    copy ??= { ...object };
    // A defined property, not an assignment: assigning `__proto__` would set the prototype.
    Object.defineProperty(copy, key, { value: observed, enumerable: true, writable: true, configurable: true });
  }
  return copy ?? value;
}

/** The first `cap` code units of a text, one fewer when the last would be half a surrogate pair. */
function cutText(text: string, cap: number): string {
  let end = cap;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return text.slice(0, end);
}

/** A trace: its events in execution order, and the file they were read from. */
export interface Trace {
  readonly events: readonly TraceEvent[];
  readonly file?: string;
}
