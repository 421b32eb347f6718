import type Database from "better-sqlite3";

/**
 * Every statement the enforcer runs on its tables (runs, events, calls, and the state commitments
 * of the audit log), in one place, each with the types of its parameters and rows. The schema is
 * in store.ts; the audit log's own statements are in audit-chain.ts. Statements are prepared once
 * per database connection and reused.
 */

/** A run's row: its monitor state as stored, and the version that tells a cached copy it is stale. */
export interface RunRow {
  readonly run_id: string;
  readonly policy_hash: string;
  readonly state: string;
  readonly events: number;
  readonly version: number;
}

/** What is stored of a decided call. */
export interface CallRow {
  readonly call_id: string;
  readonly action: string;
  /** The call's events as decided (JSON). */
  readonly events: string;
  /** `allow`, `ask`, `block`, `unknown` (recorded before decisions were kept), or `rebuilt` (a call rebuilt from a transcript, by versions that did). */
  readonly decision: string;
  readonly state: "pending" | "recorded" | "cancelled";
  /** The arguments as given (JSON); null in a database of before they were kept. */
  readonly args: string | null;
}

/** An event's row; `status` is null for a message (no call). */
export interface EventRow {
  readonly position: number;
  readonly action: string;
  readonly args: string;
  readonly status: string | null;
  readonly output: string | null;
  /** When the event happened (epoch milliseconds); null for an event recorded before times were kept. */
  readonly time: number | null;
}

export class RunQueries {
  private readonly statements = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {}

  private statement(sql: string): Database.Statement {
    let prepared = this.statements.get(sql);
    if (prepared === undefined) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  // Runs.

  run(runId: string): RunRow | undefined {
    return this.statement("SELECT run_id, policy_hash, state, events, version FROM runs WHERE run_id = ?").get(runId) as RunRow | undefined;
  }

  hasRun(runId: string): boolean {
    return this.statement("SELECT 1 FROM runs WHERE run_id = ?").get(runId) !== undefined;
  }

  insertRun(runId: string, policyHash: string, state: string, now: string): void {
    this.statement("INSERT INTO runs (run_id, policy_hash, state, events, version, created, updated) VALUES (?, ?, ?, 0, 0, ?, ?)").run(runId, policyHash, state, now, now);
  }

  updateRun(runId: string, policyHash: string, state: string, events: number, version: number, now: string): void {
    this.statement("UPDATE runs SET policy_hash = ?, state = ?, events = ?, version = ?, updated = ? WHERE run_id = ?").run(policyHash, state, events, version, now, runId);
  }

  /** The state hash the run's latest audit record committed to, if any record did. */
  committedState(runId: string): { readonly seq: number; readonly state_hash: string } | undefined {
    return this.statement("SELECT seq, state_hash FROM audit WHERE run_id = ? AND state_hash IS NOT NULL ORDER BY seq DESC LIMIT 1").get(runId) as { seq: number; state_hash: string } | undefined;
  }

  // Events.

  insertEvent(runId: string, position: number, action: string, args: string, status: string | null, output: string | null, callId: string | null, time: number | null): void {
    this.statement("INSERT INTO events (run_id, position, action, args, status, output, call_id, time) VALUES (?, ?, ?, ?, ?, ?, ?, ?)").run(runId, position, action, args, status, output, callId, time);
  }

  /** The run's events in order. */
  events(runId: string): IterableIterator<EventRow> {
    return this.statement("SELECT position, action, args, status, output, time FROM events WHERE run_id = ? ORDER BY position").iterate(runId) as IterableIterator<EventRow>;
  }

  /** The run's events before `position`, newest first, at most `limit`. */
  eventsBefore(runId: string, position: number, limit: number): IterableIterator<EventRow> {
    return this.statement("SELECT position, action, args, status, output, time FROM events WHERE run_id = ? AND position < ? ORDER BY position DESC LIMIT ?").iterate(runId, position, limit) as IterableIterator<EventRow>;
  }

  event(runId: string, position: number): Pick<EventRow, "action" | "args"> | undefined {
    return this.statement("SELECT action, args FROM events WHERE run_id = ? AND position = ?").get(runId, position) as Pick<EventRow, "action" | "args"> | undefined;
  }

  // Calls.

  call(runId: string, callId: string): CallRow | undefined {
    return this.statement("SELECT call_id, action, events, decision, state, args FROM calls WHERE run_id = ? AND call_id = ?").get(runId, callId) as CallRow | undefined;
  }

  /** The latest decided call still waiting for its result that may have run (of `action`, when given). */
  latestWaitingCall(runId: string, action: string | undefined): CallRow | undefined {
    return this.statement(
      "SELECT call_id, action, events, decision, state, args FROM calls WHERE run_id = ? AND state = 'pending' AND decision IN ('allow', 'ask') AND (? IS NULL OR action = ?) ORDER BY audit_seq DESC LIMIT 1",
    ).get(runId, action ?? null, action ?? null) as CallRow | undefined;
  }

  /** Calls let run (allowed, or put to a person) whose results have not come, in the order they were decided. */
  callsInFlight(runId: string): { readonly call_id: string; readonly events: string }[] {
    return this.statement("SELECT call_id, events FROM calls WHERE run_id = ? AND state = 'pending' AND decision IN ('allow', 'ask') ORDER BY audit_seq").all(runId) as {
      call_id: string;
      events: string;
    }[];
  }

  /** The runs with a call in flight decided at `since` (epoch milliseconds) or later. */
  runsWithCallsInFlight(since: number): string[] {
    const rows = this.statement("SELECT run_id, events FROM calls WHERE state = 'pending' AND decision IN ('allow', 'ask')").all() as { run_id: string; events: string }[];
    const runs = new Set<string>();
    for (const row of rows) {
      const time = (JSON.parse(row.events) as { time?: number }[])[0]?.time;
      if (time === undefined || time >= since) runs.add(row.run_id);
    }
    return [...runs];
  }

  /** Allowed calls never reported back, in the order they were decided. */
  unrecordedAllowedCalls(runId: string): { readonly call_id: string; readonly events: string }[] {
    return this.statement("SELECT call_id, events FROM calls WHERE run_id = ? AND state = 'pending' AND decision = 'allow' ORDER BY audit_seq").all(runId) as { call_id: string; events: string }[];
  }

  countUnrecordedAllowedCalls(runId: string): number {
    return (this.statement("SELECT COUNT(*) AS n FROM calls WHERE run_id = ? AND state = 'pending' AND decision = 'allow'").get(runId) as { n: number }).n;
  }

  countCalls(runId: string): number {
    return (this.statement("SELECT COUNT(*) AS n FROM calls WHERE run_id = ?").get(runId) as { n: number }).n;
  }

  hasCalls(runId: string): boolean {
    return this.statement("SELECT 1 FROM calls WHERE run_id = ? LIMIT 1").get(runId) !== undefined;
  }

  /** A decided call, waiting for its result; deciding a waiting call again replaces its decision. */
  upsertPendingCall(runId: string, callId: string, action: string, events: string, decision: string, args: string | null): void {
    this.statement(
      "INSERT INTO calls (run_id, call_id, action, events, decision, state, audit_seq, args) VALUES (?, ?, ?, ?, ?, 'pending', 0, ?) ON CONFLICT (run_id, call_id) DO UPDATE SET action = excluded.action, events = excluded.events, decision = excluded.decision, args = excluded.args",
    ).run(runId, callId, action, events, decision, args);
  }

  setCallAudit(runId: string, callId: string, seq: number): void {
    this.statement("UPDATE calls SET audit_seq = ? WHERE run_id = ? AND call_id = ?").run(seq, runId, callId);
  }

  markRecorded(runId: string, callId: string): void {
    this.statement("UPDATE calls SET state = 'recorded' WHERE run_id = ? AND call_id = ?").run(runId, callId);
  }

  /** Marks a waiting call as not run; false when no such call waits. */
  cancelWaiting(runId: string, callId: string): boolean {
    return this.statement("UPDATE calls SET state = 'cancelled' WHERE run_id = ? AND call_id = ? AND state = 'pending'").run(runId, callId).changes > 0;
  }
}
