import type { MonitorSnapshot } from "@vigil/compiler";
import { Monitor } from "@vigil/engine";
import { stableStringify, type JsonValue } from "@vigil/trace";
import { stateDigest } from "./audit-hash.js";
import { decodeProgram } from "./policy.js";
import type { Store } from "./store.js";

/**
 * Whether each run's state agrees with its events and with the audit log. Every change of a run
 * is one transaction (state, events, call, audit record together), so they always agree unless
 * the database was changed by something else: a disagreement is reported as a problem.
 *
 * For every run:
 * - its monitor state is the one its latest audit record committed to (the record's state hash is
 *   the SHA-256 of the stored state). The state decides every later call, and the chain covers
 *   the commitment, so a state edited after the record is found here, even when its event counts
 *   still agree. A run with no audit record at all is a problem, unless it is a fresh run that
 *   was only looked at (its standing asked for) and never changed;
 * - the monitor state counts as many events as the run's `events` rows, numbered 1…n without a gap;
 * - the audit log's results and messages of the run hold exactly those events, in that order, and
 *   each `events` row is what the log recorded at its position (action, arguments, status, call,
 *   and the output and the time where the log holds them);
 * - every call marked recorded has its result in the audit log.
 * And every run the log committed a state of still has its row.
 */
export function checkState(store: Store): string[] {
  const db = store.db;
  const problems: string[] = [];
  const freshStates = new Map<string, string | undefined>();
  const runs = db.prepare("SELECT run_id, policy_hash, state, events, version FROM runs ORDER BY run_id").all() as RunRow[];
  const latestCommitment = db.prepare("SELECT seq, state_hash FROM audit WHERE run_id = ? AND state_hash IS NOT NULL ORDER BY seq DESC LIMIT 1");
  const anyRecord = db.prepare("SELECT 1 FROM audit WHERE run_id = ? LIMIT 1");
  const anyCall = db.prepare("SELECT 1 FROM calls WHERE run_id = ? LIMIT 1");
  const eventRow = db.prepare("SELECT action, args, status, output, call_id, time FROM events WHERE run_id = ? AND position = ?");
  for (const run of runs) {
    const name = `run ${JSON.stringify(run.run_id)}`;
    const rows = db.prepare("SELECT COUNT(*) AS n, COALESCE(MAX(position), 0) AS last FROM events WHERE run_id = ?").get(run.run_id) as { n: number; last: number };
    if (rows.n !== run.events || rows.last !== run.events) problems.push(`${name}: its state counts ${run.events} events, its event table holds ${rows.n} (the last at position ${rows.last})`);
    let snapshot: MonitorSnapshot | undefined;
    try {
      snapshot = JSON.parse(run.state) as MonitorSnapshot;
    } catch {
      problems.push(`${name}: its monitor state is not JSON`);
    }
    if (snapshot !== undefined && snapshot.events !== run.events) problems.push(`${name}: its monitor state holds ${snapshot.events} events, the run ${run.events}`);

    // The state against the one the log last committed to. Records written before schema version 2
    // commit to none: a run logged only by those is checked by its events alone.
    const committed = latestCommitment.get(run.run_id) as { seq: number; state_hash: string } | undefined;
    if (committed !== undefined) {
      if (committed.state_hash !== stateDigest(run.state)) {
        problems.push(`${name}: its monitor state was changed after audit record ${committed.seq}: it is not the state that record committed to, and it decides the run's next calls`);
      }
    } else if (anyRecord.get(run.run_id) === undefined && !(rows.n === 0 && anyCall.get(run.run_id) === undefined && isFreshRun(store, run, freshStates))) {
      problems.push(`${name}: the audit log has no record of it, yet its monitor state is not a fresh run's: the state was written without the log`);
    }

    // The events the audit log says were recorded, in order, against the event table.
    let logged = 0;
    let differing = 0;
    const bodies = db
      .prepare("SELECT seq, kind, call_id, body FROM audit WHERE run_id = ? AND kind IN ('result', 'message') AND outcome IN ('ok', 'error') ORDER BY seq")
      .iterate(run.run_id) as IterableIterator<{ seq: number; kind: string; call_id: string | null; body: string }>;
    for (const record of bodies) {
      let events: LoggedEvent[];
      try {
        events = (JSON.parse(record.body) as { events?: LoggedEvent[] }).events ?? [];
      } catch {
        problems.push(`${name}: audit record ${record.seq} has a body that is not JSON, so its events cannot be compared`);
        continue;
      }
      for (const event of events) {
        logged++;
        if (event.position !== logged) problems.push(`${name}: audit record ${record.seq} logs an event at position ${event.position}, where ${logged} was expected`);
        const row = eventRow.get(run.run_id, event.position) as EventRow | undefined;
        // A missing row is reported by the counts above.
        if (row === undefined) continue;
        const differs = differingFields(row, event, record);
        if (differs.length === 0) continue;
        differing++;
        if (differing <= SHOWN_PER_RUN) {
          problems.push(`${name}: event ${event.position} is not the one audit record ${record.seq} logged: its ${differs.join(", ")} ${differs.length === 1 && differs[0] !== "arguments" ? "differs" : "differ"}`);
        }
      }
    }
    if (differing > SHOWN_PER_RUN) problems.push(`${name}: and ${differing - SHOWN_PER_RUN} more events differ from what the audit log recorded`);
    if (logged !== run.events) problems.push(`${name}: the audit log records ${logged} events, the run holds ${run.events}`);
    const unlogged = db
      .prepare("SELECT call_id FROM calls c WHERE run_id = ? AND state = 'recorded' AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.run_id = c.run_id AND a.call_id = c.call_id AND a.kind = 'result') LIMIT 5")
      .all(run.run_id) as { call_id: string }[];
    for (const call of unlogged) problems.push(`${name}: the call ${JSON.stringify(call.call_id)} is recorded, but the audit log has no result of it`);
  }

  // A run the log committed a state of had a row when the record was written: without it, the run's
  // next call would start again from a fresh state, its history forgotten.
  const removed = db
    .prepare("SELECT run_id, MAX(seq) AS seq FROM audit a WHERE state_hash IS NOT NULL AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.run_id = a.run_id) GROUP BY run_id ORDER BY run_id LIMIT ?")
    .all(SHOWN_PER_RUN) as { run_id: string; seq: number }[];
  for (const run of removed) problems.push(`run ${JSON.stringify(run.run_id)}: audit record ${run.seq} committed to its monitor state, but the database no longer has the run: it was removed`);
  return problems;
}

/** How many events that differ, or removed runs, are named one by one. */
const SHOWN_PER_RUN = 5;

interface RunRow {
  run_id: string;
  policy_hash: string;
  state: string;
  events: number;
  version: number;
}

interface EventRow {
  action: string;
  args: string;
  status: string | null;
  output: string | null;
  call_id: string | null;
  time: number | null;
}

/** An event as a result's or a message's body logs it (see `Enforcer.record` and `Enforcer.message`). */
interface LoggedEvent {
  readonly position: number;
  readonly action?: string;
  readonly args?: JsonValue;
  readonly status?: string;
  readonly output?: string;
  readonly time?: number;
}

/** What of an `events` row differs from the event the log recorded at its position. */
function differingFields(row: EventRow, event: LoggedEvent, record: { kind: string; call_id: string | null }): string[] {
  const differs: string[] = [];
  if (row.action !== event.action) differs.push("action");
  let args: string | undefined;
  try {
    args = stableStringify(JSON.parse(row.args) as JsonValue);
  } catch {
    // Arguments that are not JSON differ from any the log holds.
  }
  if (args === undefined || event.args === undefined || args !== stableStringify(event.args)) differs.push("arguments");
  // A result's events carry their status; a message has none (logs written before messages lost
  // theirs say `ok`, as their rows do).
  const status = event.status ?? (record.kind === "result" ? "ok" : null);
  if (row.status !== status) differs.push("status");
  // An output the body does not hold (none, or one it leaves out) is not compared.
  if (event.output !== undefined && row.output !== event.output) differs.push("output");
  // A time the body does not hold (a record written before times were kept) is not compared.
  if (event.time !== undefined && row.time !== event.time) differs.push("time");
  if (row.call_id !== (record.kind === "result" ? record.call_id : null)) differs.push("call");
  return differs;
}

/**
 * Whether a run's stored state is that of a fresh run of its policy, as a run is created when it
 * is first used: asking for a new run's standing creates it and logs nothing. The policy is read
 * from the database; a run whose policy is not stored there cannot be shown to be fresh.
 */
function isFreshRun(store: Store, run: RunRow, cache: Map<string, string | undefined>): boolean {
  if (run.version !== 0 || run.events !== 0) return false;
  if (!cache.has(run.policy_hash)) {
    let fresh: string | undefined;
    try {
      const stored = store.db.prepare("SELECT program FROM programs WHERE hash = ?").get(run.policy_hash) as { program: string } | undefined;
      if (stored !== undefined) fresh = JSON.stringify(new Monitor(decodeProgram(stored.program)).snapshot());
    } catch {
      // A stored program that cannot be read gives no fresh state to compare with.
    }
    cache.set(run.policy_hash, fresh);
  }
  return cache.get(run.policy_hash) === run.state;
}
