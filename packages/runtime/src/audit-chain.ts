import { stableStringify, type JsonValue } from "@vigil/trace";
import type { CallVerdict } from "@vigil/engine";
import { canonicalRecord, GENESIS_HASH, headValue, linkHash, type AuditRow, type ChainAlgorithm } from "./audit-hash.js";
import type { Store } from "./store.js";

/**
 * The audit log is a hash chain: each record's hash covers a canonical encoding of the record and
 * the hash of the record before it, so editing, removing, inserting or reordering any record breaks
 * every link from there on. With a key (`VIGIL_AUDIT_KEY`) the hash is an HMAC-SHA-256, which no
 * one without the key can recompute; without one it is SHA-256, which detects any change made by
 * something that does not also rewrite the rest of the chain (and the head kept in `meta`).
 *
 * Each record of a run also commits to the run's monitor state as stored after it, so a state
 * edited in the database (which would change later decisions) is found against the log; and a key
 * given to verify a log that is not keyed is a refusal, not a pass.
 *
 * This module appends, verifies and reads the records in the store; how a record is encoded and
 * hashed is audit-hash.ts.
 */

/** What kind of thing a record logs. */
export type AuditKind = "decision" | "result" | "message" | "stop" | "finish" | "policy" | "error" | "anomaly";

/**
 * The outcome a record logs: a decision (`allow`, `warn`, `ask`, `block`), a result's status (`ok`,
 * `error`, or `cancel` for a call that did not run), a run's verdict at its end (`safe`, `unsafe`),
 * or `note` for a change of policy.
 */
export type AuditOutcome = CallVerdict | "ok" | "error" | "cancel" | "safe" | "unsafe" | "note";

export interface AuditRecordInput {
  readonly runId: string;
  readonly kind: AuditKind;
  readonly outcome: AuditOutcome;
  readonly policyHash?: string;
  readonly callId?: string;
  readonly body: { readonly [key: string]: JsonValue };
  /** The SHA-256 of the run's monitor state (the `runs.state` text) after what the record logs. */
  readonly stateHash?: string;
}

export interface AuditRecord extends AuditRecordInput {
  readonly seq: number;
  readonly time: string;
  readonly prevHash: string;
  readonly hash: string;
}

/**
 * Appends a record to the chain. Must run inside `store.write`, which holds the write lock: the
 * head read here is then the head the record is linked to.
 */
export function appendAudit(store: Store, input: AuditRecordInput, time: Date = new Date()): AuditRecord {
  const db = store.db;
  const last = db.prepare("SELECT seq, hash FROM audit ORDER BY seq DESC LIMIT 1").get() as { seq: number; hash: string } | undefined;
  const seq = (last?.seq ?? 0) + 1;
  const prevHash = last?.hash ?? GENESIS_HASH;
  const body = stableStringify(input.body);
  const row = {
    seq,
    time: time.toISOString(),
    run_id: input.runId,
    kind: input.kind,
    outcome: input.outcome,
    policy_hash: input.policyHash ?? null,
    call_id: input.callId ?? null,
    state_hash: input.stateHash ?? null,
  };
  const hash = linkHash(store.chain, store.key, prevHash, canonicalRecord(row, input.body));
  db.prepare(
    "INSERT INTO audit (seq, time, run_id, kind, outcome, policy_hash, call_id, body, prev_hash, hash, state_hash) VALUES (@seq, @time, @run_id, @kind, @outcome, @policy_hash, @call_id, @body, @prev_hash, @hash, @state_hash)",
  ).run({ ...row, body, prev_hash: prevHash, hash });
  db.prepare("INSERT INTO meta (key, value) VALUES ('head', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(headValue(store.chain, store.key, seq, hash));
  return { ...input, seq, time: row.time, prevHash, hash };
}

/**
 * The first broken link of a chain, or the chain's length and head when every link holds; or, when
 * a key was given for a log that is not keyed, the refusal of the whole log (`downgraded`).
 */
export type VerifyResult =
  | { readonly ok: true; readonly records: number; readonly head: string; readonly chain: ChainAlgorithm }
  | {
      readonly ok: false;
      readonly records: number;
      readonly chain: ChainAlgorithm;
      /** The sequence number of the first record whose link is broken (or where the log ends early). */
      readonly seq: number;
      readonly problem: "edited" | "unlinked" | "missing" | "truncated" | "extended" | "unreadable";
      readonly message: string;
    }
  | {
      readonly ok: false;
      /** How many records the log holds: none of them is proven. */
      readonly records: number;
      /** The chain the log says it has (plain SHA-256)… */
      readonly chain: ChainAlgorithm;
      /** …and the one the key given calls for. */
      readonly expected: ChainAlgorithm;
      readonly problem: "downgraded";
      readonly message: string;
    };

/**
 * Walks the whole chain in order and names the first broken link:
 * - `edited`: a record's content no longer gives its hash;
 * - `unlinked`: a record's previous hash is not the hash of the record before it (one was removed,
 *   inserted or moved before it);
 * - `missing`: sequence numbers skip (records were removed);
 * - `truncated` / `extended`: the chain ends before or after the head recorded with the last append.
 *
 * Given a key, the log must be keyed: a plain SHA-256 chain is refused as `downgraded` before any
 * link is checked. Anyone who can write the file can rewrite a keyed log as a plain chain (recompute
 * every hash, name the chain `sha256`, drop the key check), and every link of it would hold.
 */
export function verifyAudit(store: Store): VerifyResult {
  const db = store.db;
  const chain = store.chain;
  if (store.key !== undefined && chain !== "hmac-sha256") {
    const records = (db.prepare("SELECT COUNT(*) AS n FROM audit").get() as { n: number }).n;
    return {
      ok: false,
      records,
      chain,
      expected: "hmac-sha256",
      problem: "downgraded",
      message:
        "the audit log is not keyed (a plain SHA-256 chain), although a key was given (VIGIL_AUDIT_KEY): anyone who can write the file could have rewritten it and recomputed every hash, so none of its records is proven",
    };
  }
  let expectedSeq = 1;
  let prevHash = GENESIS_HASH;
  let records = 0;
  const broken = (seq: number, problem: Extract<VerifyResult, { seq: number }>["problem"], message: string): VerifyResult => ({ ok: false, records, chain, seq, problem, message });
  for (const row of db.prepare("SELECT * FROM audit ORDER BY seq").iterate() as IterableIterator<AuditRow>) {
    const where = `record ${row.seq} (${describeRow(row)})`;
    if (row.seq !== expectedSeq) {
      return broken(expectedSeq, "missing", `record ${expectedSeq}${row.seq > expectedSeq + 1 ? `–${row.seq - 1}` : ""} ${row.seq > expectedSeq + 1 ? "are" : "is"} missing: the log goes from record ${expectedSeq - 1} to record ${row.seq}`);
    }
    if (row.prev_hash !== prevHash) {
      return broken(row.seq, "unlinked", `${where} does not follow record ${row.seq - 1}: its previous hash is not that record's hash (a record was removed, inserted or reordered here)`);
    }
    let body: JsonValue;
    try {
      body = JSON.parse(row.body) as JsonValue;
    } catch {
      return broken(row.seq, "unreadable", `${where} has a body that is not JSON: it was edited`);
    }
    if (linkHash(chain, store.key, row.prev_hash, canonicalRecord(row, body)) !== row.hash) {
      return broken(row.seq, "edited", `${where} was edited: its content does not give its hash`);
    }
    prevHash = row.hash;
    expectedSeq++;
    records++;
  }
  const head = (db.prepare("SELECT value FROM meta WHERE key = 'head'").get() as { value: string } | undefined)?.value;
  if (records === 0 && head === undefined) return { ok: true, records, head: GENESIS_HASH, chain };
  const expectedHead = headValue(chain, store.key, records, prevHash);
  if (head !== expectedHead) {
    const headSeq = head === undefined ? 0 : Number(head.split(":")[0]);
    if (headSeq > records) return broken(records + 1, "truncated", `the log ends at record ${records}, but its head says record ${headSeq} was written: records were removed from the end`);
    if (headSeq < records) return broken(headSeq + 1, "extended", `the log goes on past its head (record ${headSeq}): record ${headSeq + 1} onwards were added without the log's own writer`);
    return broken(records, "edited", `the head of the log does not match its last record ${records}: the head or that record was replaced`);
  }
  return { ok: true, records, head: prevHash, chain };
}

function describeRow(row: AuditRow): string {
  return `${row.kind} ${row.outcome} of run ${JSON.stringify(row.run_id)}${row.call_id !== null ? `, call ${JSON.stringify(row.call_id)}` : ""}, ${row.time}`;
}

/** The records of the log in order, their bodies parsed (for replay and reports). */
export function* readAudit(store: Store, runId?: string): Generator<AuditRecord> {
  const statement =
    runId === undefined ? store.db.prepare("SELECT * FROM audit ORDER BY seq") : store.db.prepare("SELECT * FROM audit WHERE run_id = ? ORDER BY seq");
  const rows = (runId === undefined ? statement.iterate() : statement.iterate(runId)) as IterableIterator<AuditRow>;
  for (const row of rows) {
    yield {
      seq: row.seq,
      time: row.time,
      runId: row.run_id,
      kind: row.kind as AuditKind,
      outcome: row.outcome as AuditOutcome,
      ...(row.policy_hash !== null ? { policyHash: row.policy_hash } : {}),
      ...(row.call_id !== null ? { callId: row.call_id } : {}),
      body: JSON.parse(row.body) as { readonly [key: string]: JsonValue },
      ...(row.state_hash !== null ? { stateHash: row.state_hash } : {}),
      prevHash: row.prev_hash,
      hash: row.hash,
    };
  }
}
