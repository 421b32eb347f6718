import type { Violation } from "@vigil/compiler";
import { IN_FLIGHT_MS } from "./enforcer.js";
import { Monitor, ruleId } from "@vigil/engine";
import type { JsonValue } from "@vigil/trace";
import { readAudit } from "./audit-chain.js";
import type { CallEvent } from "./call-events.js";
import { decideCall, recordCall, verdictOf, type CallVerdict } from "@vigil/engine";
import type { EnforcedPolicy } from "./policy.js";
import type { Store } from "./store.js";

/**
 * What-if: every run of an audit log decided again under another policy. The log holds, in order,
 * each call as it was decided (its events, grounded) and each result as it was recorded (status
 * and output), so a run is fed to a fresh monitor of the other policy exactly as it happened: each
 * decision is taken again on the run so far, and each recorded result is added. The runs are what
 * they were (a call that ran is recorded even if the other policy would have blocked it; a call
 * that was blocked did not run); what changes is the answer each call would have got.
 *
 * Each event is replayed at the time the log gives it (the decision's and the result's events
 * carry their time); an event logged before times were kept is replayed at the time of its record.
 *
 * The run's containment (a broken `halt` or `quarantine` rule) is the monitor's state, so the
 * replayed monitor comes to it from the same decisions and results: a decision whose containment
 * differs (`halted by policy.rule`, `quarantined by …`, or none) is a change too.
 */

/** The verdict on a call (decide-call.ts), under the name the replay report has always used. */
export type Verdict = CallVerdict;

export interface ReplayedCall {
  /** The audit record of the original decision. */
  readonly seq: number;
  readonly callId?: string;
  readonly action: string;
  readonly args: JsonValue;
  /** The decision logged, and the one the other policy gives. */
  readonly was: Verdict;
  readonly now: Verdict;
  /** The rules the original decision named, and those the other policy's decision names. */
  readonly wasRules: readonly string[];
  readonly nowRules: readonly string[];
  /** The run's containment after the decision as logged, and under the other policy (`halted by p.r`); absent: none. */
  readonly wasContainment?: string;
  readonly nowContainment?: string;
  readonly error?: string;
}

export interface ReplayedRun {
  readonly runId: string;
  /** How many decisions were taken again. */
  readonly decisions: number;
  /** Calls refused before they could be judged (they have no events to judge again). */
  readonly unjudged: number;
  /** Calls the guard refused or put to a person whatever the policy said: another policy changes nothing of them. */
  readonly guarded: number;
  /** The decisions that differ. */
  readonly changed: readonly ReplayedCall[];
}

export interface ReplayReport {
  readonly policy: { readonly hash: string; readonly files: readonly string[] };
  readonly runs: readonly ReplayedRun[];
  readonly decisions: number;
  readonly changed: number;
}

interface RunReplay {
  readonly monitor: Monitor;
  decisions: number;
  unjudged: number;
  guarded: number;
  readonly changed: ReplayedCall[];
  /** The calls let run whose results are not in the log yet, by id: they were in flight for the decisions after them. */
  readonly inFlight: Map<string, CallEvent[]>;
}

export function replayAudit(store: Store, policy: EnforcedPolicy, options: { readonly runId?: string } = {}): ReplayReport {
  const runs = new Map<string, RunReplay>();
  // The replay's clock is the time of the record being replayed: what times an event logged without its own.
  let recordTime = 0;
  const clock = (): number => recordTime;
  const runOf = (runId: string): RunReplay => {
    let run = runs.get(runId);
    if (run === undefined) runs.set(runId, (run = { monitor: new Monitor(policy.statements, { now: clock }), decisions: 0, unjudged: 0, guarded: 0, changed: [], inFlight: new Map() }));
    return run;
  };
  for (const record of readAudit(store, options.runId)) {
    const body = record.body;
    const logged = Date.parse(record.time);
    if (Number.isFinite(logged)) recordTime = logged;
    if (record.kind === "decision") {
      const run = runOf(record.runId);
      const call = body["call"] as { id?: string; action?: string } | undefined;
      const events = (body["events"] ?? []) as unknown as CallEvent[];
      if (events.length === 0) {
        run.unjudged++;
        continue;
      }
      const inFlight = [...run.inFlight].flatMap(([id, calls]) => (id === record.callId || !isInFlight(calls, events) ? [] : calls));
      // A call let run is in flight for the decisions after it, whoever decided it (the guard may have asked).
      if (record.callId !== undefined && record.outcome !== "block") run.inFlight.set(record.callId, events);
      if (Array.isArray(body["guard"]) && body["guard"].length > 0) {
        run.guarded++;
        continue;
      }
      run.decisions++;
      const decided = decideCall(run.monitor, policy.statements, events, undefined, inFlight);
      const now = verdictOf(decided.decision, decided.violations);
      const was = record.outcome as Verdict;
      const wasRules = ((body["violations"] ?? []) as unknown as Violation[]).map(ruleName);
      const nowRules = decided.violations.map(ruleName);
      const wasContainment = containmentName(body["containment"] as { state?: string; policy?: string; name?: string } | undefined);
      const nowContainment = containmentName(decided.containment);
      if (now !== was || wasRules.join("\n") !== nowRules.join("\n") || wasContainment !== nowContainment) {
        run.changed.push({
          seq: record.seq,
          ...(record.callId !== undefined ? { callId: record.callId } : {}),
          action: call?.action ?? events[0]!.action,
          args: events[0]!.args,
          was,
          now,
          wasRules,
          nowRules,
          ...(wasContainment !== undefined ? { wasContainment } : {}),
          ...(nowContainment !== undefined ? { nowContainment } : {}),
          ...(decided.error !== undefined ? { error: decided.error } : {}),
        });
      }
    } else if (record.kind === "message") {
      // A message is an event without a status (logs written before messages lost theirs say "ok": the same event).
      for (const event of (body["events"] ?? []) as unknown as CallEvent[]) {
        runOf(record.runId).monitor.observe({ action: event.action, args: event.args, ...(typeof event.time === "number" ? { time: event.time } : {}) });
      }
    } else if (record.kind === "result" && (record.outcome === "ok" || record.outcome === "error")) {
      const events = (body["events"] ?? []) as unknown as CallEvent[];
      recordCall(runOf(record.runId).monitor, events);
    }
    if (record.kind === "result" && record.callId !== undefined) runOf(record.runId).inFlight.delete(record.callId); else if (record.kind === "error" && record.outcome === "block") {
      runOf(record.runId).unjudged++;
    }
  }
  const replayed = [...runs].map(([runId, run]) => ({ runId, decisions: run.decisions, unjudged: run.unjudged, guarded: run.guarded, changed: run.changed }));
  return {
    policy: { hash: policy.hash, files: policy.files },
    runs: replayed,
    decisions: replayed.reduce((sum, run) => sum + run.decisions, 0),
    changed: replayed.reduce((sum, run) => sum + run.changed.length, 0),
  };
}

/** Whether a call decided with `calls` events was still in flight when `events` were decided (as the enforcer counts it). */
function isInFlight(calls: readonly CallEvent[], events: readonly CallEvent[]): boolean {
  const decidedAt = calls[0]?.time;
  const now = events[0]?.time;
  return decidedAt === undefined || now === undefined || now - decidedAt <= IN_FLIGHT_MS;
}

/** A containment in words, to compare: `halted by policy.rule`; undefined for none (or a record of before containment). */
function containmentName(containment: { readonly state?: string; readonly policy?: string; readonly name?: string } | undefined): string | undefined {
  if (containment === undefined || containment.policy === undefined || containment.name === undefined) return undefined;
  return `${containment.state ?? "contained"} by ${ruleId({ policy: containment.policy, name: containment.name })}`;
}

function ruleName(violation: Pick<Violation, "policy" | "name">): string {
  return ruleId(violation);
}
