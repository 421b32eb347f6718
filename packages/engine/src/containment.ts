import { ruleId, type CheckedStatement } from "@vigil/checker/ir";
import type { TraceEvent } from "@vigil/trace";
import { matchesPattern } from "./atoms.js";

/**
 * Containment: the run state the responses `halt` and `quarantine` put a run in. When a `halt`
 * rule is broken, the run is halted: every later call is refused. When a `quarantine` rule is
 * broken, the run is quarantined: only calls its policy's `read_only` pattern matches may still
 * run (and are decided as usual); every other call is refused. A halted run stays halted; a
 * quarantined run becomes halted when a `halt` rule is broken; the first rule to contain the run in
 * the stronger state is the one named.
 *
 * The monitor is the one place that sets it (monitor.ts), on the events and refusals it sees, so
 * everything that feeds it the same calls (a monitor restored from a snapshot, a replay of the
 * audit log) comes to the same state.
 */

/** A rule's break that contained the run. JSON-compatible: it is part of the monitor's snapshot. */
export interface Containment {
  readonly state: "halted" | "quarantined";
  /** The rule that contained the run, with its `///` text and remediation. */
  readonly policy: string;
  readonly name: string;
  readonly text?: string;
  readonly remediation?: string;
  /**
   * Where the rule was broken: the position of the event that broke it, or for a call refused
   * before it ran, the position it would have taken.
   */
  readonly position: number;
  /** `decision`: a call that would break the rule was refused (it never ran); `record`: an event that happened broke it. */
  readonly by: "decision" | "record";
}

/** The responses that contain the run. */
export function containsRun(response: string): response is "halt" | "quarantine" {
  return response === "halt" || response === "quarantine";
}

/**
 * The containment the broken statements put the run in, given the one it is in (`current`):
 * halted stays halted; a broken `halt` rule halts it; a broken `quarantine` rule quarantines a run
 * not contained yet. Returns `current` when nothing changes.
 */
export function containmentAfter(
  current: Containment | undefined,
  broken: readonly CheckedStatement[],
  position: number,
  by: Containment["by"],
): Containment | undefined {
  if (current?.state === "halted") return current;
  const halt = broken.find((statement) => statement.response === "halt");
  if (halt !== undefined) return containmentOf(halt, "halted", position, by);
  if (current !== undefined) return current;
  const quarantine = broken.find((statement) => statement.response === "quarantine");
  return quarantine === undefined ? undefined : containmentOf(quarantine, "quarantined", position, by);
}

/** The stronger of two containments: halted over quarantined, the earlier of two of one state. */
export function strongerContainment(current: Containment | undefined, found: Containment | undefined): Containment | undefined {
  if (found === undefined || current?.state === "halted") return current;
  if (current === undefined || found.state === "halted") return found;
  return current;
}

function containmentOf(statement: CheckedStatement, state: Containment["state"], position: number, by: Containment["by"]): Containment {
  return {
    state,
    policy: statement.policy,
    name: statement.name,
    ...(statement.doc !== undefined ? { text: statement.doc } : {}),
    ...(statement.remediation !== undefined ? { remediation: statement.remediation } : {}),
    position,
    by,
  };
}

/**
 * Whether a call may still run on a run in this containment (before the policy judges it as
 * usual): never on a halted run; on a quarantined one, when the quarantining rule's `read_only`
 * pattern matches the call. The call has not run: conditions on its status or output do not hold.
 * A rule the statements no longer carry (or carry without `read_only`) lets nothing through.
 */
export function passesContainment(containment: Containment, statements: readonly CheckedStatement[], event: TraceEvent): boolean {
  if (containment.state === "halted") return false;
  const rule = statements.find((statement) => statement.response === "quarantine" && ruleId(statement) === ruleId(containment));
  return rule?.readOnly !== undefined && matchesPattern(rule.readOnly, event);
}
