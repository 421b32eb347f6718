import type { FinalVerdict, StatementStanding, Violation } from "@vigil/compiler";
import { Monitor, ruleId, violationOf } from "@vigil/engine";
import { isEventTime } from "@vigil/diagnostics";
import type { JsonValue } from "@vigil/trace";
import { anomalyBody, cancelBody, containmentJson, decisionBody, finishBody, messageBody, refusalBody, resultBody, stopBody } from "./audit-body.js";
import { appendAudit, type AuditRecord } from "./audit-chain.js";
import { callEvents, readCall, timeField, userMessageEvent, type CallEvent, type CallResultContent } from "./call-events.js";
import { decideCall, mergeViolations, recordCall, verdictOf, type CallVerdict, type Containment } from "@vigil/engine";
import { DecisionCauses, lookup } from "./decision-causes.js";
import { databaseFiles, describeFindings, Guard, vigilCodePaths, type GuardFinding, type GuardOptions } from "./guard.js";
import { LiveRuns, type LiveRun } from "./live-runs.js";
import type { EnforcedPolicy } from "./policy.js";
import { containedReason, containmentNote, decisionReason, describeViolation, printable, type InvolvedEvent } from "./reason.js";
import { RunQueries } from "./run-queries.js";
import type { Store } from "./store.js";

/**
 * Enforcement of one policy over many runs, with every run's state and every decision in the
 * database: `decide` before a call, `record` after it, `message` for what the user says, `stop`
 * when the agent wants to stop, `finish` when the run ends. Each is one transaction that holds the
 * write lock from its start: it reads the run's monitor state, decides or records, writes the new
 * state and the events, and appends the audit record, all committed together or not at all. So
 * processes that enforce the same run at the same time (hooks of parallel tool calls) each see the
 * others' committed work, never half of it, and a process killed at any point leaves the database
 * as it was before its transaction or after it.
 *
 * A run's monitor keeps only the calls that ran (recorded); a decided call waits in the `calls`
 * table until its result comes. A long-lived enforcer (the sidecar, the gateway) keeps each run's
 * monitor in memory and reads it again only when another process changed the run (live-runs.ts).
 * The events a decision names come from decision-causes.ts, and what each audit record holds from
 * audit-body.ts.
 *
 * A run's containment (a broken `halt` or `quarantine` rule) is the monitor's: the enforcer only
 * passes it on. A decision that contains the run writes the run's state (the refused call adds no
 * event, and the next process must find the run contained), and every entry point reads the
 * refusal and its reason from the decision (`containment`, `contained`).
 */

export interface ToolCall {
  /** The call's id (a tool_use id, a JSON-RPC id), to pair it with its result. */
  readonly id?: string;
  readonly action: string;
  /** The call's arguments (an object; anything else is refused). */
  readonly args: unknown;
  /** The directory the call runs in, against which the guard reads relative paths (default: the enforcer's). */
  readonly cwd?: string;
  /**
   * When the call is made, in epoch milliseconds (an integer): the time of each of its events. By
   * default the enforcer's clock (`EnforcerOptions.now`) when it is decided. The entry points that
   * take calls from the agent's side (the hook, the sidecar, the gateway) never set it: a time the
   * caller chose would let it space out the calls a rate limit counts.
   */
  readonly time?: number;
}

export interface ToolCallResult {
  /** The id of the decided call this is the result of. */
  readonly id?: string;
  /**
   * The tool the result is of: a check (a result of another tool than the call decided is an
   * anomaly), and without an id, which waiting call it answers. The call's arguments are those it
   * was decided with, never the result's.
   */
  readonly action?: string;
  readonly status: "ok" | "error";
  /** The output: a string, or content blocks (`{type: "text", text}`). */
  readonly content?: JsonValue;
}

export interface EnforcedDecision {
  readonly runId: string;
  readonly callId: string;
  /** What the caller does: run the call (`allow`), refuse it (`block`), or ask a person (`ask`). */
  readonly decision: "allow" | "block" | "ask";
  /** As logged: `warn` is an allowed call that breaks a `warn` rule. */
  readonly verdict: CallVerdict;
  readonly violations: readonly Violation[];
  /** What the guard refuses in the call, whatever the policy says (see guard.ts). */
  readonly guard: readonly GuardFinding[];
  /** The events of the call (more than one for a shell call: the commands it runs). */
  readonly events: readonly CallEvent[];
  /** The events named by the violations' witnesses. */
  readonly involved: readonly InvolvedEvent[];
  /** Why the call could not be judged (it is then blocked). */
  readonly error?: string;
  /** The run's containment after the decision (set by this call, or earlier); absent when the run is not contained. */
  readonly containment?: Containment;
  /** Set when the call is refused because the run was already halted, or quarantined and the call is not read-only. */
  readonly contained?: true;
  /** The rule, its text, the events involved and the remediation, in words. */
  readonly reason: string;
  readonly audit: AuditRecord;
}

export interface EnforcedRecord {
  readonly runId: string;
  readonly callId?: string;
  readonly positions: readonly number[];
  /** Violations only the complete events reveal (a failure, an output): the call ran, so they are reported. */
  readonly violations: readonly Violation[];
  readonly reason?: string;
  /** Absent for a second result of a call already recorded, which is not recorded again. */
  readonly audit?: AuditRecord;
  readonly duplicate?: true;
  /** Why the result was not recorded: it is of no call this enforcer let run (logged as an anomaly). */
  readonly anomaly?: string;
  /** The run's containment after the result; absent when the run is not contained. */
  readonly containment?: Containment;
}

export interface StopDecision {
  readonly runId: string;
  /** True when the run may not stop yet: a rule still waits for a call the agent can make. */
  readonly block: boolean;
  /** The rules the end of the run would break now (obligations still open). */
  readonly open: readonly Violation[];
  readonly reason?: string;
  readonly audit: AuditRecord;
}

export interface FinishOutcome {
  readonly runId: string;
  readonly verdict: "safe" | "unsafe";
  readonly verdicts: readonly FinalVerdict[];
  readonly audit: AuditRecord;
}

export interface RunStanding {
  readonly runId: string;
  readonly events: number;
  readonly statements: readonly StatementStanding[];
  /** Calls decided and allowed whose results were not recorded. */
  readonly pendingCalls: number;
}

export interface EnforcerOptions {
  /** The monitor's budget of work for one decision (default the monitor's `DECISION_BUDGET`): a decision that would do more blocks the call. */
  readonly decisionBudget?: number;
  /** How many runs' monitors a long-lived enforcer keeps in memory (default 1,000); others are read from the database when used. */
  readonly runsKeptInMemory?: number;
  /**
   * The guard of Vigil's own state (guard.ts), on by default: it always protects the database, the
   * policy's files and Vigil's code, and these options add to it. `false` turns it off, which every
   * decision then logs.
   */
  readonly guard?: GuardOptions | false;
  /** The directory calls run in when a call does not say (default: this process's). */
  readonly cwd?: string;
  /**
   * The environment the calls' shell starts with, when it is this process's too (a Claude Code
   * hook's): the guard reads a variable a command line does not set as its value here.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /**
   * The clock, in epoch milliseconds (default `Date.now`): the time of an event that does not carry
   * its own (a call when it is decided, a message when it is said), which windows of time
   * (`bresp[5m]`, `limit[3 per 1m]`) are measured with. Every event is stored with its time.
   */
  readonly now?: () => number;
}

/**
 * How long a call let run may be in flight: past Claude Code's longest shell command (10 minutes),
 * a call whose result never came is no longer taken as running.
 */
export const IN_FLIGHT_MS = 15 * 60_000;

export class Enforcer {
  private readonly runs: LiveRuns;
  private readonly causes: DecisionCauses;
  private readonly budget: number | undefined;

  constructor(
    readonly store: Store,
    readonly policy: EnforcedPolicy,
    options: EnforcerOptions = {},
  ) {
    this.budget = options.decisionBudget;
    this.cwd = options.cwd ?? process.cwd();
    this.env = options.env;
    this.now = options.now ?? Date.now;
    this.queries = new RunQueries(store.db);
    this.runs = new LiveRuns(store, policy, this.queries, { decisionBudget: this.budget, runsKeptInMemory: options.runsKeptInMemory ?? 1000, now: this.now });
    this.causes = new DecisionCauses(this.queries, policy.statements);
    this.guard =
      options.guard === false
        ? undefined
        : new Guard(
            [...databaseFiles(store.path), ...policy.files.map((path) => ({ path, what: "a file of the policy in force" })), ...vigilCodePaths()],
            options.guard ?? {},
          );
  }

  /** The guard in force; undefined when it was turned off. */
  readonly guard: Guard | undefined;
  private readonly cwd: string;
  private readonly env: Readonly<Record<string, string | undefined>> | undefined;
  private readonly queries: RunQueries;
  /** The clock that times events that do not carry their own time. */
  private readonly now: () => number;

  /** The clock's now, in whole milliseconds; a clock that gives no time fails the operation (a call is then refused). */
  private clock(): number {
    const time = Math.floor(this.now());
    if (!isEventTime(time)) throw new Error(`the enforcer's clock gave ${String(time)}, not a time in epoch milliseconds`);
    return time;
  }

  /** Decides a call before it runs, and logs the decision. Never throws on a bad call: it is blocked with the reason. */
  decide(runId: string, call: ToolCall): EnforcedDecision {
    return this.runs.transaction(runId, (run) => {
      const callId = call.id ?? this.freshCallId(runId);
      let events: CallEvent[] = [];
      let guard: GuardFinding[] = [];
      let decided;
      const earlier = this.queries.call(runId, callId);
      const containedBefore = run.monitor.containment;
      try {
        // An id names one call: deciding again a call that ran (or was said not to) would let its
        // result be recorded a second time.
        if (earlier !== undefined && earlier.state !== "pending") throw new Error(`a call with the id \`${callId}\` was already decided in this run and ${earlier.state === "recorded" ? "ran" : "was cancelled"}`);
        // The call's own time, or the clock's: every event of the call has it, and keeps it when the call is recorded.
        const read = readCall(call.action, call.args, callId, undefined, call.time ?? this.clock());
        events = read.events;
        guard = this.guard?.check(events, { cwd: call.cwd ?? this.cwd, notes: read.notes, ...(this.env !== undefined ? { env: this.env } : {}) }) ?? [];
        decided = decideCall(run.monitor, this.policy.statements, events, this.budget, this.inFlight(runId, callId, events[0]?.time ?? this.clock()));
      } catch (error) {
        decided = { decision: "block" as const, violations: [], error: (error as Error).message, position: run.monitor.length + 1 };
      }
      const containment = run.monitor.containment;
      const contained = "contained" in decided && decided.contained === true;
      // Refusing a call that breaks a `halt` or `quarantine` rule contains the run: that is state.
      if (containment !== containedBefore) this.runs.saveState(run);
      // The guard's refusal stands whatever the policy says; its `ask` is at least an `ask`.
      if (guard.some((f) => f.response === "block")) decided = { ...decided, decision: "block" as const };
      else if (guard.length > 0 && decided.decision === "allow") decided = { ...decided, decision: "ask" as const };
      const verdict = verdictOf(decided.decision, decided.violations);
      const causes = this.causes.of(runId, decided.violations, decided.position);
      const involved = this.causes.involvedEvents(runId, decided.violations, events, decided.position, causes);
      const reason = reasonOf(verdict, call.action, decided, lookup(involved), causes, describeFindings(guard), contained ? containment : undefined, containment !== containedBefore ? containment : undefined);
      if (earlier === undefined || earlier.state === "pending") {
        // The call as decided, with its arguments as given: its result is recorded against these.
        this.queries.upsertPendingCall(runId, callId, call.action, JSON.stringify(events), decided.decision, argumentsJson(call.args));
      }
      const audit = this.runs.append(
        run,
        "decision",
        verdict,
        callId,
        decisionBody({
          callId,
          action: call.action,
          args: call.args,
          events,
          position: decided.position,
          violations: decided.violations,
          guard,
          guardOff: this.guard === undefined,
          ...(decided.error !== undefined ? { error: decided.error } : {}),
          ...(containment !== undefined ? { containment } : {}),
          ...(contained ? { contained } : {}),
        }),
      );
      if (earlier === undefined || earlier.state === "pending") this.queries.setCallAudit(runId, callId, audit.seq);
      return {
        runId,
        callId,
        decision: decided.decision,
        verdict,
        violations: decided.violations,
        guard,
        events,
        involved,
        ...(decided.error !== undefined ? { error: decided.error } : {}),
        ...(containment !== undefined ? { containment } : {}),
        ...(contained ? { contained: true as const } : {}),
        reason,
        audit,
      };
    });
  }


  /**
   * The events of the run's other calls in flight at `time`: let run, no result yet, and decided
   * within IN_FLIGHT_MS before it (a result that never comes, of a call Claude Code's own
   * permissions then refused, must not weigh on the run for ever).
   */
  private inFlight(runId: string, callId: string, time: number): CallEvent[] {
    return this.queries.callsInFlight(runId).flatMap((row) => {
      if (row.call_id === callId) return [];
      const events = JSON.parse(row.events) as CallEvent[];
      const decidedAt = events[0]?.time;
      return decidedAt === undefined || time - decidedAt <= IN_FLIGHT_MS ? events : [];
    });
  }

  /**
   * Records what a call did. Only a call this enforcer decided and let run (allowed, or put to a
   * person who then let it run) can be recorded, once, with the arguments it was decided with: a
   * result of a call that was refused, cancelled, never decided, or of another tool, is logged as
   * an anomaly and changes nothing (otherwise whoever can send results could add a prerequisite
   * that never ran). The call is named by its id; without an id, it is the latest decided call
   * still waiting (of the result's `action`, if it names one).
   */
  record(runId: string, result: ToolCallResult): EnforcedRecord {
    return this.runs.transaction(runId, (run) => {
      const decided = result.id !== undefined ? this.queries.call(runId, result.id) : this.queries.latestWaitingCall(runId, result.action);
      const named = result.id !== undefined ? `the call \`${result.id}\`` : `a call${result.action !== undefined ? ` of \`${result.action}\`` : ""} without an id`;
      let anomaly: string | undefined;
      if (decided === undefined) anomaly = `${named} was never decided in run \`${runId}\``;
      else if (decided.state === "recorded") {
        // A second result of the same call (a hook delivered twice, say): the first is kept, as a trace reader keeps it.
        return { runId, callId: decided.call_id, positions: [], violations: [], duplicate: true };
      } else if (decided.state === "cancelled") anomaly = `${named} was cancelled: it did not run`;
      else if (decided.decision !== "allow" && decided.decision !== "ask") anomaly = `${named} was refused (${decided.decision}): it cannot have run`;
      else if (result.action !== undefined && result.action !== decided.action) anomaly = `${named} was decided as a \`${decided.action}\` call, and the result is of \`${result.action}\``;
      if (anomaly !== undefined || decided === undefined) {
        const why = anomaly ?? `${named} was never decided`;
        const audit = this.runs.append(run, "anomaly", "note", result.id ?? decided?.call_id, anomalyBody(why, result));
        return { runId, ...(result.id !== undefined ? { callId: result.id } : {}), positions: [], violations: [], anomaly: why, audit };
      }
      const callId = decided.call_id;
      const action = decided.action;
      const decidedEvents = JSON.parse(decided.events) as CallEvent[];
      // The arguments it was decided with (a database of before they were kept: the call's own event's, as observed).
      const args = decided.args !== null ? (JSON.parse(decided.args) as unknown) : (decidedEvents[0]?.args ?? {});
      this.queries.markRecorded(runId, callId);
      // The call's events keep the time it was decided at (a call decided before times were kept: now).
      return this.addCall(run, callId, action, args, result, decidedEvents[0]?.time ?? this.clock());
    });
  }

  /**
   * Adds a call that ran to the run: its events again, with the result (the same grounding, now
   * with the status and the output), the state, and the `result` record. `body` adds to the record.
   */
  private addCall(
    run: LiveRun,
    callId: string,
    action: string,
    args: unknown,
    result: { readonly status: "ok" | "error"; readonly content?: JsonValue },
    time: number,
    body: { readonly [key: string]: JsonValue } = {},
  ): EnforcedRecord {
    const runId = run.runId;
    const events = callEvents(action, args, callId, { status: result.status, ...(result.content !== undefined ? { content: result.content } : {}) } satisfies CallResultContent, time);
    const containedBefore = run.monitor.containment;
    const recorded = recordCall(run.monitor, events);
    const containment = run.monitor.containment;
    const entered = containment !== containedBefore ? containment : undefined;
    events.forEach((event, index) =>
      this.queries.insertEvent(runId, recorded.positions[index]!, event.action, JSON.stringify(event.args), event.status ?? "ok", event.output ?? null, callId, event.time ?? null),
    );
    this.runs.saveState(run);
    const firstPosition = recorded.positions[0] ?? run.monitor.length + 1;
    const causes = this.causes.of(runId, recorded.violations, firstPosition);
    const involved = this.causes.involvedEvents(runId, recorded.violations, [], run.monitor.length + 1, causes);
    const described = recorded.violations.map((v) => describeViolation(v, lookup(involved), causes.get(ruleId(v)) ?? []));
    const lines = entered !== undefined ? [...described, containmentNote(entered)] : described;
    const reason = lines.length > 0 ? lines.join("\n") : undefined;
    const logged: { readonly [key: string]: JsonValue } = entered !== undefined ? { containment: containmentJson(entered) } : {};
    const audit = this.runs.append(run, "result", result.status, callId, { ...resultBody(callId, action, events, recorded.positions, recorded.violations), ...logged, ...body });
    return { runId, callId, positions: recorded.positions, violations: recorded.violations, ...(reason !== undefined ? { reason } : {}), ...(containment !== undefined ? { containment } : {}), audit };
  }

  /**
   * Records a message of the user as an event (`user_message` with its `text`), at `time` (epoch
   * milliseconds) when given, otherwise at the clock's now.
   */
  message(runId: string, text: string, time?: number): EnforcedRecord {
    if (time !== undefined && !isEventTime(time)) throw new TypeError(`the time of a message must be whole epoch milliseconds within the years 0000–9999, not ${String(time)}`);
    return this.runs.transaction(runId, (run) => this.addMessage(run, text, time ?? this.clock()));
  }

  private addMessage(run: LiveRun, text: string, time: number, body: { readonly [key: string]: JsonValue } = {}): EnforcedRecord {
    const event = userMessageEvent(text, time);
    const observed = run.monitor.observe(event);
    const violations = mergeViolations(observed.violations);
    // No status: the row's status is NULL, which is how a message is told from a call when the run is judged again.
    this.queries.insertEvent(run.runId, observed.position, event.action, JSON.stringify(event.args), null, null, null, time);
    this.runs.saveState(run);
    const audit = this.runs.append(run, "message", "ok", undefined, { ...messageBody(observed.position, event, time, violations), ...body });
    return { runId: run.runId, positions: [observed.position], violations, audit };
  }

  /** Whether the database holds a run of this id (its state was written at least once). */
  hasRun(runId: string): boolean {
    return this.queries.hasRun(runId);
  }

  /** A decided call that did not run (a person refused it, say). Returns false when no such call waits. */
  cancel(runId: string, callId: string): boolean {
    return this.runs.transaction(runId, (run) => {
      if (!this.queries.cancelWaiting(runId, callId)) return false;
      this.runs.append(run, "result", "cancel", callId, cancelBody(callId));
      return true;
    });
  }

  /**
   * Whether the agent may stop: not while a rule waits for a call it can still make (a `resp`
   * without its response, say), unless it was already told so once (`active`, Claude Code's
   * `stop_hook_active`), so that it cannot loop forever, and never on a halted or quarantined run.
   */
  stop(runId: string, active: boolean): StopDecision {
    return this.runs.transaction(runId, (run) => {
      const standing = run.monitor.standing();
      const final = this.finalVerdicts(run);
      const open: Violation[] = [];
      final.forEach((verdict, index) => {
        const before = new Set(standing[index]!.witnesses);
        const fresh = verdict.witnesses.filter((w) => !before.has(w));
        if (fresh.length === 0) return;
        open.push(violationOf(this.policy.statements[index]!, fresh));
      });
      // A contained run is not held back: the calls the waiting rules need would be refused.
      const containment = run.monitor.containment;
      const block = open.length > 0 && !active && containment === undefined;
      const involved = this.causes.involvedEvents(runId, open, [], run.monitor.length + 1);
      const reason =
        open.length === 0
          ? undefined
          : [
              block
                ? "Vigil: the run cannot end yet; these rules still wait for something to happen. Do it now, then finish:"
                : containment !== undefined
                  ? `Vigil: the run ends ${containment.state} by rule \`${printable(containment.policy)}.${printable(containment.name)}\`, with these rules still waiting:`
                  : "Vigil: the run ends with these rules still waiting (the agent was told once already):",
              ...open.map((v) => describeViolation(v, lookup(involved))),
            ].join("\n");
      const audit = this.runs.append(run, "stop", block ? "block" : "allow", undefined, stopBody(active, open));
      return { runId, block, open, ...(reason !== undefined ? { reason } : {}), audit };
    });
  }

  /** The run has ended: the verdict of every rule, logged. The run may still go on afterwards. */
  finish(runId: string): FinishOutcome {
    return this.runs.transaction(runId, (run) => {
      const verdicts = this.finalVerdicts(run);
      const verdict = verdicts.every((v) => v.holds) ? "safe" : "unsafe";
      const audit = this.runs.append(run, "finish", verdict, undefined, finishBody(verdicts));
      return { runId, verdict, verdicts, audit };
    });
  }

  /** Each rule's standing on the run so far (read only; logs nothing). */
  standing(runId: string): RunStanding {
    return this.runs.transaction(runId, (run) => ({
      runId,
      events: run.monitor.length,
      statements: run.monitor.standing(),
      pendingCalls: this.queries.countUnrecordedAllowedCalls(runId),
    }));
  }

  /**
   * Logs a call refused before it could be judged (its payload or the policy could not be read):
   * the refusal is a decision too.
   */
  refuse(runId: string, error: string, call?: RefusedCall): AuditRecord {
    return logRefusal(this.store, runId, error, call, this.policy.hash);
  }

  /** Forgets the monitors kept in memory (they are read again from the database). */
  forget(runId?: string): void {
    this.runs.forget(runId);
  }

  /**
   * The verdicts if the run ended now. A call that was allowed and never recorded may have run:
   * it is judged as a call without a result (fail closed), as the monitor's `finish` does.
   */
  private finalVerdicts(run: LiveRun): FinalVerdict[] {
    const unrecorded = this.queries.unrecordedAllowedCalls(run.runId);
    if (unrecorded.length === 0) return run.monitor.finish();
    const scratch = new Monitor(this.policy.statements, { restore: run.monitor.snapshot(), now: this.now });
    unrecorded.forEach((call, index) => {
      (JSON.parse(call.events) as CallEvent[]).forEach((event, offset) => scratch.decide({ id: `${index}.${offset}`, action: event.action, args: event.args, ...timeField(event.time) }));
    });
    return scratch.finish();
  }

  private freshCallId(runId: string): string {
    const count = this.queries.countCalls(runId);
    return `call-${count + 1}`;
  }
}

/** What is known of a call refused before it could be judged. */
export interface RefusedCall {
  readonly id?: string;
  readonly action?: string;
  readonly args?: unknown;
}

/**
 * Logs a call refused before it could be judged, in its own transaction: with the policy's hash
 * when the policy could be read, without when it is the policy that could not be.
 */
export function logRefusal(store: Store, runId: string, error: string, call?: RefusedCall, policyHash?: string): AuditRecord {
  return store.write(() =>
    appendAudit(store, {
      runId,
      kind: "error",
      outcome: "block",
      ...(policyHash !== undefined ? { policyHash } : {}),
      ...(call?.id !== undefined ? { callId: call.id } : {}),
      body: refusalBody(error, call),
    }),
  );
}

/**
 * A decision's reason: on a contained run (`refusedBy`), the rule that contained it; otherwise the
 * rules the call breaks, and when it has just contained the run (`entered`), what that means for
 * the calls after it.
 */
function reasonOf(
  verdict: CallVerdict,
  action: string,
  decided: { readonly violations: readonly Violation[]; readonly error?: string },
  involved: (position: number) => InvolvedEvent | undefined,
  causes: ReadonlyMap<string, readonly number[]>,
  guard: readonly string[],
  refusedBy: Containment | undefined,
  entered: Containment | undefined,
): string {
  if (refusedBy !== undefined && decided.error === undefined) return [containedReason(action, refusedBy), ...guard.map((line) => `  ${printable(line)}`)].join("\n");
  const reason = decisionReason(verdict, action, decided.violations, involved, decided.error, (v) => causes.get(ruleId(v)) ?? [], guard);
  return entered !== undefined ? `${reason}\n${containmentNote(entered)}` : reason;
}

/** A call's arguments as JSON text, as given (null when they cannot be written: the call is refused anyway). */
function argumentsJson(value: unknown): string | null {
  try {
    return JSON.stringify(value ?? {}) ?? null;
  } catch {
    return null;
  }
}
