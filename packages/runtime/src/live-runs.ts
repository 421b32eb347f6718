import type { MonitorSnapshot } from "@vigil/compiler";
import { Monitor, recordCall } from "@vigil/engine";
import type { JsonValue } from "@vigil/trace";
import { policyChangeBody } from "./audit-body.js";
import { appendAudit, type AuditOutcome, type AuditRecord } from "./audit-chain.js";
import { stateDigest } from "./audit-hash.js";
import { timeField } from "./call-events.js";
import type { EnforcedPolicy } from "./policy.js";
import type { RunQueries, RunRow } from "./run-queries.js";
import type { Store } from "./store.js";

/**
 * The runs an enforcer works on, each a monitor kept in memory between calls. The database is the
 * truth: a run's row carries a version that every write bumps, so a monitor kept here is used only
 * while no other process has changed the run, and is read again (and checked against the state the
 * audit log committed to) when one has. A long-lived enforcer (the sidecar, the gateway, the hook
 * daemon) keeps the latest runs it used; one made for a single event reads its run afresh.
 */

/** A run's monitor as the enforcer works on it, with what ties it to the run's row in the database. */
export interface LiveRun {
  readonly runId: string;
  readonly monitor: Monitor;
  /** The run's version in the database when the monitor was read or written. */
  version: number;
  /** The SHA-256 of the state as stored (`runs.state`), which every audit record of the run commits to. */
  stateHash: string;
}

/** A run's stored state is not the one the audit log committed to: nothing is decided on it. */
export class StateError extends Error {}

export interface LiveRunsOptions {
  /** The monitor's budget of work for one decision (undefined: the monitor's own). */
  readonly decisionBudget: number | undefined;
  /** How many runs' monitors are kept in memory; others are read from the database when used. */
  readonly runsKeptInMemory: number;
  /** The clock the monitors time events without a time of their own by. */
  readonly now: () => number;
}

export class LiveRuns {
  private readonly runs = new Map<string, LiveRun>();
  private readonly budget: number | undefined;
  private readonly runsKept: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Store,
    private readonly policy: EnforcedPolicy,
    private readonly queries: RunQueries,
    options: LiveRunsOptions,
  ) {
    this.budget = options.decisionBudget;
    this.runsKept = options.runsKeptInMemory;
    this.now = options.now;
  }

  /**
   * Runs `work` on a run inside one write transaction. On any failure the transaction is rolled
   * back and the run's monitor in memory, which the work may have changed, is dropped.
   */
  transaction<T>(runId: string, work: (run: LiveRun) => T): T {
    try {
      return this.store.write(() => work(this.openRun(runId)));
    } catch (error) {
      this.runs.delete(runId);
      throw error;
    }
  }

  /** Forgets the monitors kept in memory (they are read again from the database). */
  forget(runId?: string): void {
    if (runId === undefined) this.runs.clear();
    else this.runs.delete(runId);
  }

  /** Writes the run's monitor state, bumping its version, and takes the hash that the next records commit to. */
  saveState(run: LiveRun): void {
    run.version++;
    const state = JSON.stringify(run.monitor.snapshot());
    run.stateHash = stateDigest(state);
    this.queries.updateRun(run.runId, this.policy.hash, state, run.monitor.length, run.version, new Date().toISOString());
  }

  /** Appends a record about a run, committing to the run's state as it is now. */
  append(run: LiveRun, kind: AuditRecord["kind"], outcome: AuditOutcome, callId: string | undefined, body: { readonly [key: string]: JsonValue }): AuditRecord {
    return appendAudit(this.store, { runId: run.runId, kind, outcome, policyHash: this.policy.hash, ...(callId !== undefined ? { callId } : {}), body, stateHash: run.stateHash });
  }

  /** The run's monitor, as the database has it now; a run of another policy is judged again under this one. */
  private openRun(runId: string): LiveRun {
    const row = this.queries.run(runId);
    const options = { now: this.now, ...(this.budget !== undefined ? { decisionBudget: this.budget } : {}) };
    if (row === undefined) {
      const monitor = new Monitor(this.policy.statements, options);
      const now = new Date().toISOString();
      const state = JSON.stringify(monitor.snapshot());
      this.queries.insertRun(runId, this.policy.hash, state, now);
      const live = { runId, monitor, version: 0, stateHash: stateDigest(state) };
      this.keep(live);
      return live;
    }
    if (row.policy_hash !== this.policy.hash) return this.rejudge(row);
    const cached = this.runs.get(runId);
    if (cached !== undefined && cached.version === row.version) {
      // Most recently used last: the runs kept in memory are the latest ones.
      this.runs.delete(runId);
      this.runs.set(runId, cached);
      return cached;
    }
    // The state read from the database is the one the log last committed to, or it was changed by
    // something else than Vigil: deciding on it would let an edited state change decisions (and
    // the next record would commit to it, hiding the edit).
    const stateHash = stateDigest(row.state);
    const committed = this.queries.committedState(runId);
    if (committed !== undefined && committed.state_hash !== stateHash) {
      throw new StateError(`the state of run \`${runId}\` in the database is not the one audit record ${committed.seq} committed to: it was changed outside Vigil (\`vigilc audit verify\` shows it)`);
    }
    const monitor = new Monitor(this.policy.statements, { ...options, restore: JSON.parse(row.state) as MonitorSnapshot });
    const live = { runId, monitor, version: row.version, stateHash };
    this.keep(live);
    return live;
  }

  /**
   * The policy changed since the run's state was written: the run's recorded events are judged
   * again under this policy (the state is a function of the events), and the change is logged.
   */
  private rejudge(row: RunRow): LiveRun {
    const monitor = new Monitor(this.policy.statements, { now: this.now, ...(this.budget !== undefined ? { decisionBudget: this.budget } : {}) });
    for (const event of this.queries.events(row.run_id)) {
      const args = JSON.parse(event.args) as { [key: string]: JsonValue };
      // Each event at its stored time (one recorded before times were kept: the clock's now).
      const time = timeField(event.time ?? undefined);
      // A row without a status is a message, not a call.
      if (event.status === null) monitor.observe({ action: event.action, args, ...time });
      else recordCall(monitor, [{ action: event.action, args, status: event.status === "error" ? "error" : "ok", ...(event.output !== null ? { output: event.output } : {}), ...time }]);
    }
    const live = { runId: row.run_id, monitor, version: row.version, stateHash: "" };
    this.saveState(live);
    this.append(live, "policy", "note", undefined, policyChangeBody(row.policy_hash, this.policy.hash, monitor.length));
    this.keep(live);
    return live;
  }

  /** Keeps a run's monitor in memory, forgetting the least recently used past the limit. */
  private keep(run: LiveRun): void {
    this.runs.delete(run.runId);
    this.runs.set(run.runId, run);
    if (this.runs.size > this.runsKept) this.runs.delete(this.runs.keys().next().value!);
  }
}
