import { isEventTime, type Diagnostic } from "@vigil/diagnostics";
import type { TraceEvent } from "./event.js";
import { CallPairing, contentText } from "./formats/calls.js";
import { lineStart } from "./grounding/absolute-paths.js";
import { groundedDirectory, type GroundedDirectory } from "./grounding/grounded-command.js";
import { groundTrace } from "./grounding/ground-trace.js";
import type { JsonValue } from "./value.js";

/**
 * The events of one tool call made live (in an agent's call path, not read from a recording),
 * made by the same steps every trace adapter uses: the call's arguments accepted and observed by
 * the call pairing (arguments that are not an object, nested too deep, or holding numbers they
 * cannot hold are refused; long strings are cut), its result's content observed as an output, and
 * a shell call grounded into the commands it runs. So a call decided in the call path is the call
 * `vigilc check` reads from a transcript of the same run, whatever agent made it.
 */

export interface LiveCall {
  /** The call's id, to name it in its events' source. */
  readonly id?: string;
  readonly action: string;
  /** The call's named arguments (anything else is refused). */
  readonly args: unknown;
  /** What the call returned, when it has run: without it, the events are pending (no status). */
  readonly result?: LiveResult;
  /** The absolute working directory the call runs in, when it is known: grounding takes relative paths against it. */
  readonly cwd?: string;
  /** When the call was made (epoch milliseconds, see `TraceEvent.time`): every event of the call has it. */
  readonly time?: number;
}

export interface LiveResult {
  readonly status: "ok" | "error";
  /** A string, or content blocks (`{type: "text", text}`), as an MCP result or a transcript holds them. */
  readonly content?: JsonValue;
}

export interface LiveCallEvents {
  /** The call's own event, then the events grounded from it; empty when the call was refused. */
  readonly events: readonly TraceEvent[];
  /**
   * Where each event's command runs, by its index in `events` (see `GroundedDirectory`), from the
   * directory the call runs in: beside the events, not among their arguments, which are what
   * policies match. The call's own event runs where the call does; an event grounding places
   * nowhere (an `unknown_command` for a line too complex to parse, text the line evaluates) has none.
   */
  readonly directories: readonly (GroundedDirectory | undefined)[];
  /** Why the call makes no event (its arguments were refused), in words; empty when it makes some. */
  readonly errors: readonly string[];
  /** What reading the call noted without refusing it: a command line that does not parse (T0011), an argument cut. */
  readonly notes: readonly Diagnostic[];
}

/** A live call is at no place in a file: its span is empty. */
const NOWHERE = { start: 0, end: 0, line: 0, column: 0, endLine: 0, endColumn: 0 };

export function liveCallEvents(call: LiveCall): LiveCallEvents {
  if (call.time !== undefined && !isEventTime(call.time)) {
    return { events: [], directories: [], errors: [`the time of the \`${call.action}\` call (${String(call.time)}) is not a whole number of epoch milliseconds within the years 0000–9999`], notes: [] };
  }
  const diagnostics: Diagnostic[] = [];
  const pairing = new CallPairing({ diagnostics });
  // The pairing needs an id to pair the result with its call; a call without one gets a private id.
  const id = call.id ?? "\u0000live-call";
  let source: string;
  try {
    source = JSON.stringify(call.args) ?? "undefined";
  } catch (error) {
    return { events: [], directories: [], errors: [`the arguments of the \`${call.action}\` call cannot be read (${(error as Error).message})`], notes: [] };
  }
  pairing.call({
    id,
    action: call.action,
    args: call.args ?? {},
    line: 0,
    span: NOWHERE,
    raw: { name: call.action },
    source,
    ...(call.cwd !== undefined ? { cwd: call.cwd } : {}),
    ...(call.time !== undefined ? { time: call.time } : {}),
  });
  if (call.result !== undefined) {
    const output = contentText(call.result.content);
    pairing.result({ callId: id, status: call.result.status, ...(output !== undefined ? { output } : {}), line: 0, span: NOWHERE });
  }
  const recorded = pairing.finish();
  const errors = diagnostics.filter((d) => d.severity === "error").map((d) => d.message);
  if (recorded.length === 0) return { events: [], directories: [], errors: errors.length > 0 ? errors : [`the \`${call.action}\` call makes no event`], notes: diagnostics };
  // `cd NAME` may search CDPATH when this process's environment (the agent's shell's, in a hook) sets it.
  // The call's arguments are the agent's: only the host's own `cwd` places its paths.
  const grounded = groundTrace(recorded, { cdpath: (process.env["CDPATH"] ?? "") !== "", directoryArguments: false });
  return {
    events: grounded.events.map((event) => liveEvent(event, recorded[0]!)),
    directories: grounded.events.map((event) => (event.source?.groundedFrom === undefined ? { at: lineStart } : groundedDirectory(event.args))),
    errors,
    notes: [...diagnostics.filter((d) => d.severity !== "error"), ...grounded.diagnostics],
  };
}

/**
 * A grounded event as the call path takes it. The runtime records every event of a call that ran
 * with a status (its store tells a message by a missing one): a command whose status the result
 * does not show takes the call's, as it did before grounding knew statuses. And its guard reads
 * every argument but grounding's own as a word that may be a path or an option, so `argv`, which
 * repeats the command's words, is left out here until the guard knows it.
 */
function liveEvent(event: TraceEvent, call: TraceEvent): TraceEvent {
  if (event.source?.groundedFrom === undefined) return event;
  const { argv: _argv, ...args } = event.args;
  const status = event.status ?? call.status;
  return { ...event, args, ...(status !== undefined ? { status } : {}) };
}
