import { needsTime, ruleId, type CheckedStatement } from "@vigil/checker/ir";
import type { JsonValue, TraceEvent } from "@vigil/trace";
import { containmentAfter, containsRun, passesContainment, strongerContainment, type Containment } from "./containment.js";
import { Dispatch } from "./dispatch.js";
import type { MachineState } from "./machine-state.js";
import { createMachine } from "./machines.js";
import { sortedUnique } from "./machines/shared.js";
import type { StatementMachine } from "./machines/statement-machine.js";

/**
 * The online monitor: the forward machines of a policy's statements, fed one tool call at a time
 * (Section 6, "Deployment"). Before a call runs, `decide` says whether the trace so far plus that
 * call breaks a statement for good; after it ran, `record` adds it, with its status and output, to
 * the trace; when the run ends, `finish` judges the obligations still open. Run over a whole trace
 * call by call, it reports exactly the witnesses of the offline check, each as soon as it is final.
 *
 * A call that has not run is judged as if it will succeed, with an output not known yet: `decide`
 * blocks it when, given that it succeeds, every possible output breaks a statement for good (so a
 * rule about successful calls, `prec(warp and status = ok, validate)`, blocks the warp before it
 * runs, and `output ~ p` never blocks). Every statement is judged again on the complete event when
 * the result is recorded; a violation found only then (a failure, an output) cannot be blocked, the
 * call already ran, and `record` returns it.
 *
 * The monitor also keeps the run's containment (containment.ts). A call that would break a `halt`
 * or `quarantine` rule is refused, and refusing it already contains the run: the agent tried what
 * the rule forbids, and the next call is judged on a halted (or quarantined) run, whether or not
 * the refused call is ever heard of again. A break found only when an event is recorded (the call
 * ran) contains the run from the next call on. The state is in the snapshot: a restored monitor
 * refuses what the saved one would.
 */

/** A call the agent is about to make. */
export interface PendingCall {
  /** The caller's identity of the call (a tool_use id, a JSON-RPC id), to pair it with its result. */
  readonly id?: string;
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  /** When the call is made, in epoch milliseconds; absent: the monitor's clock when it is decided. */
  readonly time?: number;
}

/** What became of a call. `action` and `args` are needed only for a call that was never decided. */
export interface CallResult {
  readonly id?: string;
  readonly action?: string;
  readonly args?: { readonly [key: string]: JsonValue };
  readonly status: "ok" | "error";
  readonly output?: string;
  /** For a call never decided: when it was made (epoch milliseconds); absent: the monitor's clock. */
  readonly time?: number;
}

export type Response = "block" | "warn" | "ask" | "halt" | "quarantine";
export type Decision = "allow" | "block" | "ask";

/** A statement the pending call (or a recorded result) breaks for good. */
export interface Violation {
  readonly policy: string;
  readonly name: string;
  readonly form: CheckedStatement["form"];
  /** The rule's `///` text. */
  readonly text?: string;
  /** What the rule says a violation does. */
  readonly response: Response;
  /** The rule's remediation message, in words an agent can act on. */
  readonly remediation?: string;
  /** The offending events (for `until`, the triggers of the broken intervals), ascending. */
  readonly witnesses: readonly number[];
}

export interface MonitorDecision {
  readonly decision: Decision;
  /** Every statement the call would break: `block` and `ask` ones decide, `warn` ones are reported. */
  readonly violations: readonly Violation[];
  /** The position the call takes in the trace if it runs next. */
  readonly position: number;
  /** Set when the monitor could not decide and blocked the call: why (fail closed). */
  readonly error?: string;
  /** The run's containment after the decision (set by this call, or earlier); absent when the run is not contained. */
  readonly containment?: Containment;
  /** Set when the call is refused because the run was already halted, or quarantined and the call is not read-only. */
  readonly contained?: true;
}

export interface RecordOutcome {
  /** The position the call took in the trace. */
  readonly position: number;
  /** Violations found only on the complete event (they read its status or output). */
  readonly violations: readonly Violation[];
  /** The run's containment after the event (set by it, or earlier); absent when the run is not contained. */
  readonly containment?: Containment;
}

/** A statement's standing on the trace so far. */
export type StandingVerdict = "violated" | "open";

export interface StatementStanding {
  readonly policy: string;
  readonly name: string;
  /** `violated` is final; `open` means no event breaks it yet (it holds if the run ended now unless obligations are open). */
  readonly verdict: StandingVerdict;
  readonly witnesses: readonly number[];
  /** Events whose condition is not decided yet (waiting for a response, say). */
  readonly openObligations: number;
}

export interface FinalVerdict {
  readonly policy: string;
  readonly name: string;
  readonly holds: boolean;
  readonly witnesses: readonly number[];
}

/** The monitor's state as JSON-compatible data: what survives between processes. */
export interface MonitorSnapshot {
  readonly version: 1;
  /** The statements' identities, to refuse a snapshot of another policy. */
  readonly statements: readonly string[];
  readonly events: number;
  readonly machines: readonly MachineState[];
  readonly witnesses: readonly (readonly number[])[];
  readonly pending: readonly PendingEntry[];
  /** The time of the latest event read (epoch milliseconds), the earliest the next one can have. */
  readonly time?: number;
  /** The run's containment, when a `halt` or `quarantine` rule was broken (absent in a snapshot of before it was kept: none). */
  readonly containment?: Containment;
}

interface PendingEntry {
  readonly id?: string;
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  readonly decision: Decision;
  /** The time the call was decided at: the event's time when it is recorded. */
  readonly time: number;
  /** Per statement index, the witnesses `decide` reported for this call. */
  readonly reported: readonly (readonly [number, readonly number[]])[];
}

export interface MonitorOptions {
  /** Resume from a snapshot of a monitor of the same policy. */
  readonly restore?: MonitorSnapshot;
  /**
   * How much work one decision may do, in units of work (default {@link DECISION_BUDGET}): each
   * statement the call's action may concern counts one, and one more for each obligation it holds
   * open, which is what probing it may examine. A decision that would do more blocks the call with
   * the reason: a monitor that cannot keep up fails closed. Counted, not timed, so the decision is
   * the same on a loaded machine as on an idle one.
   */
  readonly decisionBudget?: number;
  /**
   * How many obligations one statement may hold open (default ten million): past it the statement
   * cannot be judged within its memory budget, and every later call is blocked with the reason.
   */
  readonly openObligations?: number;
  /**
   * The clock that times an event that does not carry its own time, in epoch milliseconds (default
   * `Date.now`): windows of time (`bresp[5m]`, `limit[3 per 1m]`) are measured with it.
   */
  readonly now?: () => number;
}

/** The default budget of one decision, in units of work (see {@link MonitorOptions.decisionBudget}). */
export const DECISION_BUDGET = 50_000_000;

/** How often (in recorded calls) the statements' memory budgets are checked. */
const OBLIGATION_CHECK_INTERVAL = 1024;

interface MonitoredStatement {
  readonly statement: CheckedStatement;
  readonly id: string;
  machine: StatementMachine;
  witnesses: number[];
}

export class Monitor {
  private readonly statements: MonitoredStatement[];
  /** The checked statements, in the order of `statements`: what containment looks its rule up in. */
  private readonly checked: readonly CheckedStatement[];
  private events = 0;
  private pending: PendingEntry[] = [];
  private dispatch: Dispatch;

  private readonly decisionBudget: number;
  private readonly now: () => number;
  /** Whether a statement measures time: only then is the clock read for an event without a time. */
  private readonly clocked: boolean;
  /** The time of the latest event read: times never go back (a clock stepping back is not the agent's doing). */
  private time = -Infinity;
  private readonly openObligationLimit: number;
  /** Set when a statement is past its memory budget: why every call is now blocked. */
  private exhausted: string | undefined;
  /** The run's containment: set when a `halt` or `quarantine` rule is broken, never lifted. */
  private contained: Containment | undefined;

  constructor(statements: readonly CheckedStatement[], options: MonitorOptions = {}) {
    this.decisionBudget = options.decisionBudget ?? DECISION_BUDGET;
    this.openObligationLimit = options.openObligations ?? 10_000_000;
    this.now = options.now ?? Date.now;
    this.clocked = statements.some(needsTime);
    this.checked = statements;
    this.statements = statements.map((statement) => ({
      statement,
      id: `${ruleId(statement)}:${statement.form}`,
      machine: createMachine(statement),
      witnesses: [],
    }));
    this.dispatch = new Dispatch(this.statements.map((entry) => entry.machine));
    if (options.restore !== undefined) this.restore(options.restore);
  }

  /**
   * Whether the call may run: `block` when it would break a `block`, `halt` or `quarantine`
   * statement for good (the last two also contain the run), `ask` when it would break an `ask`
   * statement (a person decides), `allow` otherwise (broken `warn` statements are listed). On a
   * halted run every call is blocked, and on a quarantined one every call the `read_only` pattern
   * does not match (`contained`). Never throws: an internal error blocks the call and says why.
   */
  decide(call: PendingCall): MonitorDecision {
    const position = this.events + 1;
    if (this.exhausted !== undefined) return { decision: "block", violations: [], position, error: this.exhausted };
    try {
      const time = this.timeOf(call.time);
      const event = eventOf(call, position, time);
      if (this.contained?.state === "halted") {
        // Nothing more can happen to a halted run: the rules need not be asked.
        this.pending.push({ ...(call.id !== undefined ? { id: call.id } : {}), action: call.action, args: call.args, decision: "block", time, reported: [] });
        return { decision: "block", violations: [], position, containment: this.contained, contained: true };
      }
      const violations: Violation[] = [];
      const reported: [number, number[]][] = [];
      const machines = this.dispatch.machinesFor(event.action);
      let work = 0;
      for (const index of machines) work += 1 + this.statements[index]!.machine.openObligations();
      if (work > this.decisionBudget) {
        return { decision: "block", violations: [], position, error: `the decision would take ${work.toLocaleString("en")} units of work (the statements it concerns and their open obligations), past its budget of ${this.decisionBudget.toLocaleString("en")}` };
      }
      for (const index of machines) {
        const entry = this.statements[index]!;
        const witnesses = entry.machine.probe(event);
        if (witnesses.length === 0) continue;
        reported.push([index, witnesses]);
        violations.push(violationOf(entry.statement, witnesses));
      }
      // A call a quarantined run may not make is still judged: one that would break a `halt` rule halts the run.
      const confined = this.contained !== undefined && !passesContainment(this.contained, this.checked, event);
      // Most calls break nothing: nothing to contain.
      if (reported.length > 0) this.contain(reported.map(([index]) => this.statements[index]!.statement), position, "decision");
      const decision = confined ? "block" : decisionOf(violations);
      this.pending.push({ ...(call.id !== undefined ? { id: call.id } : {}), action: call.action, args: call.args, decision, time, reported });
      return { decision, violations, position, ...(this.contained !== undefined ? { containment: this.contained } : {}), ...(confined ? { contained: true as const } : {}) };
    } catch (error) {
      return { decision: "block", violations: [], position, error: `the monitor could not decide the call: ${(error as Error).message}` };
    }
  }

  /**
   * Adds a call that ran to the trace, with its status and output. The call is the pending one of
   * the same id (or, without an id, the latest decided call); a call that was never decided is
   * added as given. Returns the violations that the complete event reveals and `decide` could not
   * see (statements that read the status or the output).
   */
  record(result: CallResult): RecordOutcome {
    const index = this.pendingIndex(result.id);
    const entry = index === undefined ? undefined : this.pending.splice(index, 1)[0]!;
    if (entry === undefined && (result.action === undefined || result.args === undefined)) {
      throw new Error(
        result.id === undefined
          ? "a result without a call: give the call's id, or its action and args"
          : `no pending call has the id \`${result.id}\`, and the result does not say which call it answers (action, args)`,
      );
    }
    const call = entry ?? { action: result.action!, args: result.args!, time: this.timeOf(result.time) };
    return this.append(call, { status: result.status, ...(result.output !== undefined ? { output: result.output } : {}) }, entry?.reported);
  }

  /**
   * Adds an event with no status: a message of the conversation (`user_message` with its `text`),
   * as in a trace read with messages, or a call whose result never came (with what output it left,
   * if any). Returns the violations it makes final.
   */
  observe(event: { readonly action: string; readonly args: { readonly [key: string]: JsonValue }; readonly output?: string; readonly time?: number }): RecordOutcome {
    return this.append({ action: event.action, args: event.args, time: this.timeOf(event.time) }, event.output !== undefined ? { output: event.output } : {});
  }

  /** The time the next event gets when it carries none: the clock's now, never before the latest event's. */
  nextTime(): number {
    return this.timeOf(undefined);
  }

  /**
   * The time of the next event: its own, or the clock's now; never before the latest event's (a
   * time earlier than that is read as that time, so windows never run backwards).
   */
  private timeOf(given: number | undefined): number {
    // No rule measures time: an event without one keeps the latest time (the clock is not read).
    const time = Math.max(given ?? (this.clocked ? this.now() : this.time), this.time);
    return Number.isFinite(time) ? time : 0;
  }

  /** Steps every statement on the next event of the trace; `announced`: witnesses `decide` already reported. */
  private append(
    call: { readonly action: string; readonly args: { readonly [key: string]: JsonValue }; readonly time: number },
    result: { readonly status?: "ok" | "error"; readonly output?: string },
    announcedByStatement?: readonly (readonly [number, readonly number[]])[],
  ): RecordOutcome {
    const position = ++this.events;
    const time = Math.max(call.time, this.time);
    this.time = time;
    const event: TraceEvent = { ...eventOf(call, position, time), ...result };
    const violations: Violation[] = [];
    const broken: CheckedStatement[] = [];
    for (const statementIndex of this.dispatch.machinesFor(event.action)) {
      const statement = this.statements[statementIndex]!;
      const witnesses = statement.machine.step(event);
      if (witnesses.length === 0) continue;
      for (const witness of witnesses) statement.witnesses.push(witness);
      const announced = announcedByStatement?.find(([i]) => i === statementIndex)?.[1] ?? [];
      const fresh = witnesses.filter((w) => !announced.includes(w));
      if (fresh.length > 0) violations.push(violationOf(statement.statement, fresh));
      broken.push(statement.statement);
    }
    if (position % OBLIGATION_CHECK_INTERVAL === 0) this.checkMemoryBudget();
    this.contain(broken, position, "record");
    return { position, violations, ...(this.contained !== undefined ? { containment: this.contained } : {}) };
  }

  /** Contains the run when one of the broken statements is a `halt` or `quarantine` rule (containment.ts). */
  private contain(broken: readonly CheckedStatement[], position: number, by: Containment["by"]): void {
    if (broken.some((statement) => containsRun(statement.response))) this.contained = containmentAfter(this.contained, broken, position, by);
  }

  /** The run's containment: absent until a `halt` or `quarantine` rule is broken. */
  get containment(): Containment | undefined {
    return this.contained;
  }

  /**
   * Puts the run in a containment found by deciding on a copy of this monitor (a call of several
   * events is decided on a scratch monitor): the stronger of the two states is kept.
   */
  enterContainment(containment: Containment): void {
    this.contained = strongerContainment(this.contained, containment);
  }

  private checkMemoryBudget(): void {
    for (const entry of this.statements) {
      if (entry.machine.openObligations() > this.openObligationLimit) {
        this.exhausted = `the rule ${ruleId(entry.statement)} holds more than ${this.openObligationLimit} open obligations (its memory budget): it can no longer be judged, so every call is blocked`;
        return;
      }
    }
  }

  /** Drops a decided call that did not run (a person refused it, say). */
  cancel(id: string): boolean {
    const index = this.pendingIndex(id);
    if (index === undefined) return false;
    this.pending.splice(index, 1);
    return true;
  }

  /** How each statement stands on the trace so far. */
  standing(): StatementStanding[] {
    return this.statements.map((entry) => ({
      policy: entry.statement.policy,
      name: entry.statement.name,
      verdict: entry.witnesses.length > 0 ? "violated" : "open",
      witnesses: sortedUnique([...entry.witnesses]),
      openObligations: entry.machine.openObligations(),
    }));
  }

  /**
   * The run has ended: the verdict of every statement, with the witnesses the end makes final
   * (obligations still open). A decided call that was allowed but never recorded is judged as a
   * call without a result (it may have run: fail closed); one that was blocked or asked about is
   * not (it is not known to have run). Changes nothing: the monitor can go on.
   */
  finish(): FinalVerdict[] {
    const machines = this.statements.map((entry) => entry.machine);
    const unrecorded = this.pending.filter((entry) => entry.decision === "allow");
    let working = machines;
    const late: number[][] = this.statements.map(() => []);
    if (unrecorded.length > 0) {
      working = this.statements.map((entry) => createMachine(entry.statement, entry.machine.snapshot()));
      unrecorded.forEach((call, offset) => {
        const event = eventOf(call, this.events + offset + 1, Math.max(call.time, this.time));
        working.forEach((machine, index) => {
          for (const witness of machine.step(event)) late[index]!.push(witness);
        });
      });
    }
    return this.statements.map((entry, index) => {
      const witnesses = sortedUnique([...entry.witnesses, ...late[index]!, ...working[index]!.finish()]);
      return { policy: entry.statement.policy, name: entry.statement.name, holds: witnesses.length === 0, witnesses };
    });
  }

  /** The whole state as JSON-compatible data. */
  snapshot(): MonitorSnapshot {
    return {
      version: 1,
      statements: this.statements.map((entry) => entry.id),
      events: this.events,
      machines: this.statements.map((entry) => entry.machine.snapshot()),
      witnesses: this.statements.map((entry) => [...entry.witnesses]),
      pending: this.pending.map((entry) => ({ ...entry })),
      ...(Number.isFinite(this.time) ? { time: this.time } : {}),
      ...(this.contained !== undefined ? { containment: { ...this.contained } } : {}),
    };
  }

  /** Replaces the state with a snapshot of a monitor of the same policy; throws on any other. */
  restore(snapshot: MonitorSnapshot): void {
    if (snapshot.version !== 1) throw new Error(`the saved monitor state has version ${String(snapshot.version)}; this monitor reads version 1`);
    const ids = this.statements.map((entry) => entry.id);
    if (snapshot.statements.length !== ids.length || snapshot.statements.some((id, index) => id !== ids[index])) {
      throw new Error("the saved monitor state is of another policy (its rules differ)");
    }
    const machines = this.statements.map((entry, index) => createMachine(entry.statement, snapshot.machines[index]));
    this.statements.forEach((entry, index) => {
      entry.machine = machines[index]!;
      entry.witnesses = [...snapshot.witnesses[index]!];
    });
    this.dispatch = new Dispatch(machines);
    this.events = snapshot.events;
    // A snapshot from before times were kept has none: its pending calls are timed now.
    this.pending = snapshot.pending.map((entry) => ({ ...entry, time: entry.time ?? this.now() }));
    this.time = snapshot.time ?? -Infinity;
    this.contained = snapshot.containment;
  }

  /** How many calls the trace holds. */
  get length(): number {
    return this.events;
  }

  private pendingIndex(id: string | undefined): number | undefined {
    if (this.pending.length === 0) return undefined;
    if (id === undefined) return this.pending.length - 1;
    const index = this.pending.findIndex((entry) => entry.id === id);
    return index < 0 ? undefined : index;
  }
}

function eventOf(call: { readonly action: string; readonly args: { readonly [key: string]: JsonValue }; readonly id?: string }, position: number, time: number): TraceEvent {
  if (typeof call.action !== "string" || call.action === "") throw new Error("the call has no action name");
  if (typeof call.args !== "object" || call.args === null || Array.isArray(call.args)) throw new Error("the call's arguments are not an object");
  return call.id !== undefined ? { position, action: call.action, args: call.args, time, source: { id: call.id } } : { position, action: call.action, args: call.args, time };
}

/** A statement's violation as the monitor reports it: the rule, its text, response and remediation, and its witnesses. */
export function violationOf(statement: CheckedStatement, witnesses: readonly number[]): Violation {
  return {
    policy: statement.policy,
    name: statement.name,
    form: statement.form,
    ...(statement.doc !== undefined ? { text: statement.doc } : {}),
    response: statement.response,
    ...(statement.remediation !== undefined ? { remediation: statement.remediation } : {}),
    witnesses: sortedUnique([...witnesses]),
  };
}

function decisionOf(violations: readonly Violation[]): Decision {
  if (violations.some((v) => v.response === "block" || containsRun(v.response))) return "block";
  if (violations.some((v) => v.response === "ask")) return "ask";
  return "allow";
}
