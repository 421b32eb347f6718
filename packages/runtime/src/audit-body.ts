import type { FinalVerdict, Violation } from "@vigil/compiler";
import type { Containment } from "@vigil/engine";
import type { JsonValue } from "@vigil/trace";
import { timeField, type CallEvent } from "./call-events.js";
import { findingsJson, type GuardFinding } from "./guard-findings.js";

/**
 * What each audit record the enforcer writes holds (its `body`, which the record's hash covers and
 * `vigilc audit` and replay read back): a decision's call and events, a result's events with their
 * positions, the violations, the guard's findings, the run's containment (a `halt` or `quarantine`
 * rule broken), and for a call that made no events a prefix of its arguments' text.
 */

/** An audit record's body. */
export type AuditBody = { readonly [key: string]: JsonValue };

/** What a decision record says of the call decided. */
export interface DecisionLogged {
  readonly callId: string;
  readonly action: string;
  /** The call's arguments as given: kept as text only when the call made no events. */
  readonly args: unknown;
  readonly events: readonly CallEvent[];
  /** The position the call's first event has (or would have had). */
  readonly position: number;
  readonly violations: readonly Violation[];
  readonly guard: readonly GuardFinding[];
  /** The guard was turned off. */
  readonly guardOff: boolean;
  /** Why the call could not be judged. */
  readonly error?: string;
  /** The run's containment after the decision (this call's or an earlier one's). */
  readonly containment?: Containment;
  /** The call was refused because the run was already contained. */
  readonly contained?: boolean;
}

/** The body of a `decision` record. */
export function decisionBody(decision: DecisionLogged): AuditBody {
  return {
    // The events hold the arguments as observed; a call that made none keeps a prefix of its arguments' text.
    call: { id: decision.callId, action: decision.action, ...(decision.events.length === 0 ? { argsText: argumentsText(decision.args) } : {}) },
    events: decision.events.map((e) => ({ action: e.action, args: e.args, ...timeField(e.time) })),
    position: decision.position,
    violations: violationsJson(decision.violations),
    ...(decision.guard.length > 0 ? { guard: findingsJson(decision.guard) } : {}),
    // A guard turned off is said on every decision it did not check.
    ...(decision.guardOff ? { guardOff: true } : {}),
    ...(decision.error !== undefined ? { error: decision.error } : {}),
    ...(decision.containment !== undefined ? { containment: containmentJson(decision.containment) } : {}),
    ...(decision.contained === true ? { contained: true } : {}),
  };
}

/** A run's containment as logged: the state, the rule (with its text and remediation), where and how it was broken. */
export function containmentJson(containment: Containment): AuditBody {
  return {
    state: containment.state,
    policy: containment.policy,
    name: containment.name,
    ...(containment.text !== undefined ? { text: containment.text } : {}),
    ...(containment.remediation !== undefined ? { remediation: containment.remediation } : {}),
    position: containment.position,
    by: containment.by,
  };
}

/** The body of the `result` record of a call that ran: its events with their positions, and the violations they reveal. */
export function resultBody(callId: string, action: string, events: readonly CallEvent[], positions: readonly number[], violations: readonly Violation[]): AuditBody {
  return {
    call: { id: callId, action },
    events: events.map((e, index) => ({
      position: positions[index]!,
      action: e.action,
      args: e.args,
      status: e.status ?? "ok",
      ...(e.output !== undefined ? { output: e.output } : {}),
      ...timeField(e.time),
    })),
    violations: violationsJson(violations),
  };
}

/** The body of the `result` record of a decided call that did not run. */
export function cancelBody(callId: string): AuditBody {
  return { call: { id: callId } };
}

/** The body of an `anomaly` record: a result of no call that was let run, and why. */
export function anomalyBody(why: string, result: { readonly action?: string; readonly status: "ok" | "error" }): AuditBody {
  return {
    anomaly: why,
    result: { ...(result.action !== undefined ? { action: result.action } : {}), status: result.status },
  };
}

/** The body of a `message` record: the message's event and the violations it makes. */
export function messageBody(position: number, event: CallEvent, time: number, violations: readonly Violation[]): AuditBody {
  return {
    events: [{ position, action: event.action, args: event.args, time }],
    violations: violationsJson(violations),
  };
}

/** The body of a `stop` record: whether the agent was already told once, and the rules still open. */
export function stopBody(active: boolean, open: readonly Violation[]): AuditBody {
  return { active, open: violationsJson(open) };
}

/** The body of a `finish` record: every rule's verdict. */
export function finishBody(verdicts: readonly FinalVerdict[]): AuditBody {
  return {
    verdicts: verdicts.map((v) => ({ policy: v.policy, name: v.name, holds: v.holds, witnesses: [...v.witnesses] })),
  };
}

/** The body of a `policy` record: the run was judged again under another policy. */
export function policyChangeBody(from: string, to: string, events: number): AuditBody {
  return { from, to, events };
}

/** The body of an `error` record: a call refused before it could be judged, and what is known of it. */
export function refusalBody(error: string, call?: { readonly action?: string; readonly args?: unknown }): AuditBody {
  return { error, ...(call?.action !== undefined ? { call: { action: call.action, argsText: argumentsText(call.args) } } : {}) };
}

function violationsJson(violations: readonly Violation[]): JsonValue {
  return violations.map((v) => ({
    policy: v.policy,
    name: v.name,
    form: v.form,
    response: v.response,
    ...(v.text !== undefined ? { text: v.text } : {}),
    ...(v.remediation !== undefined ? { remediation: v.remediation } : {}),
    witnesses: [...v.witnesses],
  }));
}

/** How much of the text of a refused call's arguments the log keeps. */
const REFUSED_ARGUMENTS_TEXT = 4096;

/** The start of a value's JSON text (a value that cannot be written, nested too deeply say, is described). */
function argumentsText(value: unknown): string {
  try {
    return (JSON.stringify(value) ?? "undefined").slice(0, REFUSED_ARGUMENTS_TEXT);
  } catch (error) {
    return `(not writable as JSON: ${(error as Error).message})`;
  }
}
