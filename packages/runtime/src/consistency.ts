import type { MonitorSnapshot } from "@vigil/compiler";
import type { Store } from "./store.js";

/**
 * Whether each run's state agrees with its events and with the audit log. Every change of a run
 * is one transaction (state, events, call, audit record together), so they always agree unless
 * the database was changed by something else: a disagreement is reported as a problem.
 *
 * For every run: the monitor state counts as many events as the run's `events` rows, numbered 1…n
 * without a gap; the audit log's results and messages of the run hold exactly those events, in
 * that order; and every call marked recorded has its result in the audit log.
 */
export function checkState(store: Store): string[] {
  const db = store.db;
  const problems: string[] = [];
  const runs = db.prepare("SELECT run_id, state, events FROM runs ORDER BY run_id").all() as { run_id: string; state: string; events: number }[];
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
    // The events the audit log says were recorded, in order, against the event table.
    let logged = 0;
    const bodies = db.prepare("SELECT seq, body FROM audit WHERE run_id = ? AND kind IN ('result', 'message') AND outcome IN ('ok', 'error') ORDER BY seq").iterate(run.run_id) as IterableIterator<{
      seq: number;
      body: string;
    }>;
    for (const { seq, body } of bodies) {
      const events = (JSON.parse(body) as { events?: { position: number; action: string }[] }).events ?? [];
      for (const event of events) {
        logged++;
        if (event.position !== logged) problems.push(`${name}: audit record ${seq} logs an event at position ${event.position}, where ${logged} was expected`);
      }
    }
    if (logged !== run.events) problems.push(`${name}: the audit log records ${logged} events, the run holds ${run.events}`);
    const unlogged = db
      .prepare("SELECT call_id FROM calls c WHERE run_id = ? AND state = 'recorded' AND NOT EXISTS (SELECT 1 FROM audit a WHERE a.run_id = c.run_id AND a.call_id = c.call_id AND a.kind = 'result') LIMIT 5")
      .all(run.run_id) as { call_id: string }[];
    for (const call of unlogged) problems.push(`${name}: the call ${JSON.stringify(call.call_id)} is recorded, but the audit log has no result of it`);
  }
  return problems;
}
