import type { CheckedStatement } from "@vigil/checker";
import type { JsonValue, TraceEvent } from "@vigil/trace";
import { ruleId } from "@vigil/checker/ir";
import type { Containment } from "./containment.js";
import { Monitor, type Decision, type MonitorDecision, type Violation } from "./monitor.js";

/**
 * One tool call may be several events (a shell call and the commands grounded from it). The call
 * runs only if every one of them may: each event is decided on the run so far plus the call's
 * events before it, taken as having succeeded (their outputs are not known yet). The monitor keeps
 * no trace of the probe: a call becomes part of the run only when its result is recorded.
 *
 * Taking an earlier event of the same call as succeeded with no output is one of its possible
 * outcomes, so a violation every outcome would give is found (nothing is allowed that must be
 * blocked); a rule that reads the output of an earlier command of the same call may block a call
 * that some output would have let through (fail closed).
 *
 * Calls let run whose results have not come yet (parallel tool calls, the shell command whose
 * program opens a connection) are in flight: the call is decided both without them and after them
 * (taken as having succeeded), and must be allowed both ways. An unfinished call thus counts
 * against the agent where having run would break a rule (a secret read in flight before an
 * upload), and never as a prerequisite met before it has finished.
 */

/** One event of a call: the call itself, or a command grounded from it, with its result once known. */
export interface CallEvent {
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  readonly status?: "ok" | "error";
  readonly output?: string;
  /** When the call was made (epoch milliseconds); absent: the monitor's clock. */
  readonly time?: number;
}

/** An event of a trace as an event of a call: its action, arguments, result and time (its place and source dropped). */
export function callEventOf(event: TraceEvent): CallEvent {
  return {
    action: event.action,
    args: event.args,
    ...(event.status !== undefined ? { status: event.status } : {}),
    ...(event.output !== undefined ? { output: event.output } : {}),
    ...(event.time !== undefined ? { time: event.time } : {}),
  };
}

export interface CallDecision {
  readonly decision: Decision;
  /** Every rule a call's event would break, each once, with the witnesses of all its events. */
  readonly violations: readonly Violation[];
  /** Why the call could not be decided (it is then blocked). */
  readonly error?: string;
  /** The position the call's first event takes if it runs next. */
  readonly position: number;
  /** The run's containment after the decision (this call's, or an earlier one's); absent when the run is not contained. */
  readonly containment?: Containment;
  /** Set when the call is refused because the run was already halted, or quarantined and one of the call's events is not read-only. */
  readonly contained?: true;
}

/** The id of a probe: pending calls of a run's monitor are never kept, so no real call has it. */
const PROBE = "\u0000vigil-probe";

export function decideCall(
  monitor: Monitor,
  statements: readonly CheckedStatement[],
  events: readonly CallEvent[],
  decisionBudget?: number,
  inFlight: readonly CallEvent[] = [],
): CallDecision {
  const position = monitor.length + 1;
  if (events.length === 0) return { decision: "block", violations: [], error: "the call makes no event", position };
  // One call, one time: every event grounded from it is decided at the call's.
  const time = events[0]!.time ?? monitor.nextTime();
  const alone = probe(monitor, statements, [], events, time, decisionBudget);
  // Calls let run and not finished yet may have done their work by now (a secret read in flight
  // before this upload), or may still fail: the call must be allowed both ways, so an unfinished
  // call counts against it and never as a prerequisite met.
  const decided = inFlight.length === 0 ? alone : [...alone, ...probe(monitor, statements, inFlight, events, time, decisionBudget)];
  const errors = [...new Set(decided.flatMap((d) => (d.error !== undefined ? [d.error] : [])))];
  const violations = mergeViolations(decided.flatMap((d) => d.violations));
  const decision: Decision =
    errors.length > 0 || decided.some((d) => d.decision === "block") ? "block" : decided.some((d) => d.decision === "ask") ? "ask" : "allow";
  adoptContainment(monitor, decided);
  const contained = decided.some((d) => d.contained === true);
  return {
    decision,
    violations,
    ...(errors.length > 0 ? { error: errors.join("; ") } : {}),
    position,
    ...(monitor.containment !== undefined ? { containment: monitor.containment } : {}),
    ...(contained ? { contained: true as const } : {}),
  };
}

/**
 * A call of several events, or one decided after the calls in flight, is decided on a copy of the
 * run's monitor: a containment its refusal set there is the run's too. Only one set by refusing an
 * event of this call counts: one the copy set on recording a call in flight (taken as having
 * succeeded) is the run's only when that call's result says so.
 */
function adoptContainment(monitor: Monitor, decided: readonly MonitorDecision[]): void {
  for (const d of decided) if (d.containment?.by === "decision" && d.containment.position >= monitor.length + 1) monitor.enterContainment(d.containment);
}

/**
 * Decides each of `events` on the run so far, then `before` (taken as having succeeded, with no
 * output known), then the events before it, and forgets it all: the monitor keeps no trace.
 */
function probe(monitor: Monitor, statements: readonly CheckedStatement[], before: readonly CallEvent[], events: readonly CallEvent[], time: number, decisionBudget: number | undefined) {
  if (before.length === 0 && events.length === 1) {
    const decided = monitor.decide({ id: PROBE, action: events[0]!.action, args: events[0]!.args, time });
    monitor.cancel(PROBE);
    return [decided];
  }
  const scratch = new Monitor(statements, { restore: monitor.snapshot(), now: () => time, ...(decisionBudget !== undefined ? { decisionBudget } : {}) });
  // What is in flight happened before this call, if at all: at the time it was decided, at the latest at this call's.
  before.forEach((event) => scratch.record({ action: event.action, args: event.args, status: "ok", time: Math.min(event.time ?? time, time) }));
  return events.map((event, index) => {
    const id = `${PROBE}${index}`;
    const decided = scratch.decide({ id, action: event.action, args: event.args, time });
    if (index < events.length - 1) scratch.record({ id, action: event.action, args: event.args, status: "ok" });
    return decided;
  });
}

/** What recording a call's events revealed: violations only the complete events show. */
export interface CallRecord {
  /** The positions the call's events took, in order. */
  readonly positions: readonly number[];
  readonly violations: readonly Violation[];
}

/** Adds a call's events, with their statuses and outputs, to the run. */
export function recordCall(monitor: Monitor, events: readonly CallEvent[]): CallRecord {
  const positions: number[] = [];
  const violations: Violation[] = [];
  for (const event of events) {
    // A command whose outcome the recording does not show (grounding leaves its status out) is
    // added with no status, as the offline reading has it: it satisfies neither `status = ok` nor
    // `status = error`.
    const output = event.output !== undefined ? { output: event.output } : {};
    const time = event.time !== undefined ? { time: event.time } : {};
    const recorded =
      event.status === undefined
        ? monitor.observe({ action: event.action, args: event.args, ...output, ...time })
        : monitor.record({ id: PROBE, action: event.action, args: event.args, status: event.status, ...output, ...time });
    positions.push(recorded.position);
    violations.push(...recorded.violations);
  }
  return { positions, violations: mergeViolations(violations) };
}

/** One violation per rule, with the witnesses of all of them, in the order the rules were first broken. */
export function mergeViolations(violations: readonly Violation[]): Violation[] {
  const byRule = new Map<string, Violation>();
  for (const violation of violations) {
    const key = ruleId(violation);
    const seen = byRule.get(key);
    if (seen === undefined) byRule.set(key, violation);
    else byRule.set(key, { ...seen, witnesses: [...new Set([...seen.witnesses, ...violation.witnesses])].sort((a, b) => a - b) });
  }
  return [...byRule.values()];
}

/**
 * The verdict on a call, as logged and replayed: `allow`, `warn` (allowed, breaking a `warn`
 * rule), `ask` (a person decides) or `block`.
 */
export type CallVerdict = "allow" | "warn" | "ask" | "block";

/** How a decision is logged: `warn` is an allowed call that breaks a `warn` rule. */
export function verdictOf(decision: Decision, violations: readonly Violation[]): CallVerdict {
  return decision === "allow" && violations.length > 0 ? "warn" : decision;
}
