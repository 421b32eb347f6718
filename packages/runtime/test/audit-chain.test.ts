import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Monitor } from "@vigil/engine";
import type { JsonValue } from "@vigil/trace";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { stateDigest, type AuditRow } from "../src/audit-hash.js";
import { userMessageEvent } from "../src/call-events.js";
import { canonicalRecord, checkState, Enforcer, GENESIS_HASH, linkHash, loadPolicy, readAudit, SCHEMA_VERSION, Store, StoreError, verifyAudit } from "../src/index.js";

/**
 * The audit chain's commitment to each run's monitor state, the check of the `events` rows against
 * what the log recorded, the refusal of a keyed log rewritten as a plain SHA-256 chain, and the
 * migration of a version-1 database. Every change is made as someone with the database file (but
 * without the key) would make it: plain SQL on the file.
 */

const POLICY = `policy strict {
  /// Nothing is deleted.
  rule no_delete: abs(action in {rm})
  /// Deploy only after a passing check.
  rule check_first: prec(action in {deploy}, action in {check} and status = ok)
    block "Run the checks first."
}
`;
const KEY = "a key of the audit chain, 32 bytes";

let scratch = "";
let policyFile = "";
let stores: Store[] = [];
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-audit-chain-"));
  policyFile = join(scratch, "strict.vigil");
  writeFileSync(policyFile, POLICY);
  stores = [];
});
afterEach(() => {
  for (const store of stores) store.close();
  rmSync(scratch, { recursive: true, force: true });
});

function open(name: string, options: { key?: string; mustExist?: boolean } = {}): Store {
  const store = Store.open(join(scratch, name), options);
  stores.push(store);
  return store;
}

async function enforcer(store: Store): Promise<Enforcer> {
  return new Enforcer(store, await loadPolicy([policyFile], store));
}

/**
 * Three runs: a check that passed and one that failed (one event each; a deploy is blocked after
 * the failed one), and a passed check followed by a deploy to staging (two events).
 */
async function writeRuns(store: Store): Promise<void> {
  const guard = await enforcer(store);
  guard.decide("passed", { id: "1", action: "check", args: {} });
  guard.record("passed", { id: "1", status: "ok", content: "all green" });
  guard.decide("failed", { id: "1", action: "check", args: {} });
  guard.record("failed", { id: "1", status: "error", content: "2 tests failed" });
  expect(guard.decide("failed", { id: "2", action: "deploy", args: { target: "prod" } }).decision).toBe("block");
  guard.decide("deployed", { id: "1", action: "check", args: {} });
  guard.record("deployed", { id: "1", status: "ok", content: "all green" });
  expect(guard.decide("deployed", { id: "2", action: "deploy", args: { target: "staging" } }).decision).toBe("allow");
  guard.record("deployed", { id: "2", status: "ok", content: "deployed" });
}

const stateOf = (store: Store, runId: string) => (store.db.prepare("SELECT state FROM runs WHERE run_id = ?").get(runId) as { state: string }).state;
/** The latest record of a run that commits to its state. */
const lastCommitment = (store: Store, runId: string) => [...readAudit(store, runId)].filter((r) => r.stateHash !== undefined).at(-1)!;


describe("each audit record commits to its run's monitor state", () => {
  it("every record the enforcer appends carries the SHA-256 of the run's stored state, and the log verifies", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    const records = [...readAudit(store)];
    // Every record of a run; the policy's own record (its compiled program) belongs to no run.
    expect(records.filter((r) => r.runId !== "").every((r) => r.stateHash !== undefined)).toBe(true);
    expect(records.filter((r) => r.runId === "").map((r) => r.kind)).toEqual(["policy"]);
    expect(lastCommitment(store, "passed").stateHash).toBe(stateDigest(stateOf(store, "passed")));
    expect(verifyAudit(store)).toMatchObject({ ok: true, records: records.length });
    expect(checkState(store)).toEqual([]);
  });

  it("(a) finds a run's state replaced by another run's with as many events: the check that failed now reads as passed", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    // A call refused before it could be judged logs no state: the run's last state is that of the record before.
    (await enforcer(store)).refuse("failed", "the payload is not JSON");
    const committed = [...readAudit(store, "failed")].at(-2)!;
    // Both runs hold one event, so the counts still agree: only the commitment tells the states apart.
    store.db.prepare("UPDATE runs SET state = (SELECT state FROM runs WHERE run_id = 'passed') WHERE run_id = 'failed'").run();
    expect(verifyAudit(store).ok).toBe(true);
    const problems = checkState(store);
    expect(problems).toEqual([
      `run "failed": its monitor state was changed after audit record ${committed.seq}: it is not the state that record committed to, and it decides the run's next calls`,
    ]);
  });

  it("(a) finds a run's state reset to a fresh run's", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    const guard = await enforcer(store);
    // Asking for a new run's standing creates its row, and logs nothing: a fresh state, not a problem.
    guard.standing("fresh");
    expect(checkState(store)).toEqual([]);
    const committed = [...readAudit(store, "failed")].at(-1)!;
    store.db.prepare("UPDATE runs SET state = (SELECT state FROM runs WHERE run_id = 'fresh') WHERE run_id = 'failed'").run();
    expect(checkState(store)).toContain(`run "failed": its monitor state was changed after audit record ${committed.seq}: it is not the state that record committed to, and it decides the run's next calls`);
  });

  it("finds a run's row written without the log, and a run's row removed", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    const now = new Date().toISOString();
    const state = stateOf(store, "passed");
    const policy = (store.db.prepare("SELECT policy_hash FROM runs WHERE run_id = 'passed'").get() as { policy_hash: string }).policy_hash;
    // A run planted with another run's state (a check passed), for a later call to start from.
    store.db.prepare("INSERT INTO runs (run_id, policy_hash, state, events, version, created, updated) VALUES ('planted', ?, ?, 0, 0, ?, ?)").run(policy, state, now, now);
    expect(checkState(store)).toContain(`run "planted": the audit log has no record of it, yet its monitor state is not a fresh run's: the state was written without the log`);
    store.db.prepare("DELETE FROM runs WHERE run_id = 'planted'").run();
    // A run removed with its events and calls: its next call would start from scratch, its history forgotten.
    const last = [...readAudit(store, "failed")].at(-1)!;
    for (const table of ["runs", "events", "calls"]) store.db.prepare(`DELETE FROM ${table} WHERE run_id = 'failed'`).run();
    expect(checkState(store)).toEqual([`run "failed": audit record ${last.seq} committed to its monitor state, but the database no longer has the run: it was removed`]);
  });

  it("(c) nulling or changing a record's state hash breaks its link (edited)", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    store.db.prepare("UPDATE audit SET state_hash = NULL WHERE seq = 2").run();
    expect(verifyAudit(store)).toMatchObject({ ok: false, seq: 2, problem: "edited" });
    store.db.prepare("UPDATE audit SET state_hash = ? WHERE seq = 2").run(stateDigest("{}"));
    expect(verifyAudit(store)).toMatchObject({ ok: false, seq: 2, problem: "edited" });
  });

  it("encodes a record with a state hash as version 2, and one without exactly as version 1", () => {
    const row = { seq: 1, time: "2026-01-01T00:00:00.000Z", run_id: "r", kind: "message", outcome: "ok", policy_hash: null, call_id: null };
    expect(canonicalRecord(row, {})).toBe('{"body":{},"call":null,"kind":"message","outcome":"ok","policy":null,"run":"r","seq":1,"time":"2026-01-01T00:00:00.000Z","v":1}');
    expect(canonicalRecord({ ...row, state_hash: null }, {})).toBe(canonicalRecord(row, {}));
    expect(canonicalRecord({ ...row, state_hash: "ab" }, {})).toBe('{"body":{},"call":null,"kind":"message","outcome":"ok","policy":null,"run":"r","seq":1,"state":"ab","time":"2026-01-01T00:00:00.000Z","v":2}');
  });
});

describe("the events table against the log", () => {
  it("(b) finds an event whose arguments were edited", async () => {
    const store = open("audit.db");
    await writeRuns(store);
    expect(checkState(store)).toEqual([]);
    // The deploy of run "deployed" is event 2: it went to staging; the table now says production.
    store.db.prepare(`UPDATE events SET args = '{"target":"prod"}' WHERE run_id = 'deployed' AND position = 2`).run();
    const result = [...readAudit(store, "deployed")].filter((r) => r.kind === "result").at(-1)!;
    expect(checkState(store)).toEqual([`run "deployed": event 2 is not the one audit record ${result.seq} logged: its arguments differ`]);
  });

  it("finds an edited status and output, and a message turned into a call; the order of an object's keys is not a change", async () => {
    const store = open("audit.db");
    const guard = await enforcer(store);
    guard.message("m", "run the checks");
    guard.decide("m", { id: "1", action: "check", args: { suite: "all", fast: true } });
    guard.record("m", { id: "1", status: "error", content: "2 tests failed" });
    expect(checkState(store)).toEqual([]);
    const swapped = JSON.stringify({ fast: true, suite: "all" });
    store.db.prepare("UPDATE events SET args = ? WHERE run_id = 'm' AND position = 2").run(swapped);
    expect(checkState(store)).toEqual([]);
    store.db.prepare("UPDATE events SET status = 'ok', output = 'all green' WHERE run_id = 'm' AND position = 2").run();
    store.db.prepare("UPDATE events SET status = 'ok' WHERE run_id = 'm' AND position = 1").run();
    const problems = checkState(store);
    expect(problems).toHaveLength(2);
    expect(problems[0]).toMatch(/^run "m": event 1 is not the one audit record \d+ logged: its status differs$/);
    expect(problems[1]).toMatch(/^run "m": event 2 is not the one audit record \d+ logged: its status, output differ$/);
  });
});

/**
 * What someone with the file and without the key can do to a keyed log: edit what they like,
 * recompute every link as plain SHA-256, name the chain `sha256`, write the head and drop the
 * key check. Every link then holds.
 */
function downgrade(path: string, edit: (db: Database.Database) => void): void {
  const db = new Database(path);
  try {
    db.transaction(() => {
      edit(db);
      let prev = GENESIS_HASH;
      const rows = db.prepare("SELECT * FROM audit ORDER BY seq").all() as AuditRow[];
      const update = db.prepare("UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?");
      for (const row of rows) {
        const hash = linkHash("sha256", undefined, prev, canonicalRecord(row, JSON.parse(row.body)));
        update.run(prev, hash, row.seq);
        prev = hash;
      }
      db.prepare("UPDATE meta SET value = 'sha256' WHERE key = 'chain'").run();
      db.prepare("UPDATE meta SET value = ? WHERE key = 'head'").run(`${rows.at(-1)!.seq}:${prev}`);
      db.prepare("DELETE FROM meta WHERE key = 'key_check'").run();
    })();
  } finally {
    db.close();
  }
}

describe("a keyed log rewritten as a plain SHA-256 chain", () => {
  it("(d) verifies without the key, and is refused as downgraded with it", async () => {
    const writer = open("keyed.db", { key: KEY });
    await writeRuns(writer);
    const records = [...readAudit(writer)].length;
    writer.close();
    // The blocked deploy, made to read as allowed.
    downgrade(join(scratch, "keyed.db"), (db) => db.prepare("UPDATE audit SET outcome = 'allow' WHERE kind = 'decision' AND outcome = 'block'").run());

    const keyless = open("keyed.db", { mustExist: true });
    expect(verifyAudit(keyless)).toMatchObject({ ok: true, chain: "sha256", records });
    keyless.close();

    const keyed = open("keyed.db", { key: KEY, mustExist: true });
    const result = verifyAudit(keyed);
    expect(result).toMatchObject({ ok: false, problem: "downgraded", chain: "sha256", expected: "hmac-sha256", records });
    expect(!result.ok && result.message).toMatch(/not keyed \(a plain SHA-256 chain\), although a key was given \(VIGIL_AUDIT_KEY\): anyone who can write the file could have rewritten it/);
    // And no writer with the key appends to it.
    expect(() => Store.open(join(scratch, "keyed.db"), { key: KEY })).toThrow(StoreError);
  });
});

/** The schema of version 1, as vigilc wrote it before the chain committed to the state. */
const SCHEMA_V1 = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE programs (hash TEXT PRIMARY KEY, program TEXT NOT NULL, created TEXT NOT NULL) STRICT;
CREATE TABLE runs (run_id TEXT PRIMARY KEY, policy_hash TEXT NOT NULL, state TEXT NOT NULL, events INTEGER NOT NULL, version INTEGER NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL) STRICT;
CREATE TABLE events (run_id TEXT NOT NULL, position INTEGER NOT NULL, action TEXT NOT NULL, args TEXT NOT NULL, status TEXT, output TEXT, call_id TEXT, PRIMARY KEY (run_id, position)) STRICT, WITHOUT ROWID;
CREATE TABLE calls (run_id TEXT NOT NULL, call_id TEXT NOT NULL, action TEXT NOT NULL, events TEXT NOT NULL, decision TEXT NOT NULL, state TEXT NOT NULL, audit_seq INTEGER NOT NULL, PRIMARY KEY (run_id, call_id)) STRICT, WITHOUT ROWID;
CREATE TABLE audit (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, run_id TEXT NOT NULL, kind TEXT NOT NULL, outcome TEXT NOT NULL, policy_hash TEXT, call_id TEXT, body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL) STRICT;
CREATE INDEX audit_by_run ON audit (run_id, seq);
`;

const columns = (store: Store, table: string) => (store.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);

describe("a database of schema version 1", () => {
  /** A version-1 file as vigilc wrote it: a run with a user's message, and a call refused before it could be judged. */
  async function writeV1(path: string): Promise<void> {
    const policy = await loadPolicy([policyFile]);
    const monitor = new Monitor(policy.statements);
    const event = userMessageEvent("run the checks, then deploy");
    const { position } = monitor.observe(event);
    const db = new Database(path);
    try {
      db.pragma("journal_mode = WAL");
      db.exec(SCHEMA_V1);
      db.transaction(() => {
        const now = "2026-01-01T00:00:00.000Z";
        db.prepare("INSERT INTO meta (key, value) VALUES ('schema', '1'), ('chain', 'sha256')").run();
        db.prepare("INSERT INTO runs VALUES ('old', ?, ?, 1, 1, ?, ?)").run(policy.hash, JSON.stringify(monitor.snapshot()), now, now);
        db.prepare("INSERT INTO events VALUES ('old', ?, ?, ?, NULL, NULL, NULL)").run(position, event.action, JSON.stringify(event.args));
        const records: { run_id: string; kind: string; outcome: string; policy_hash: string; call_id: string | null; body: { [key: string]: JsonValue } }[] = [
          { run_id: "old", kind: "message", outcome: "ok", policy_hash: policy.hash, call_id: null, body: { events: [{ position, action: event.action, args: event.args }], violations: [] } },
          { run_id: "old", kind: "error", outcome: "block", policy_hash: policy.hash, call_id: "x", body: { error: "the payload is not JSON" } },
        ];
        let prev = GENESIS_HASH;
        records.forEach((record, index) => {
          const row = { ...record, seq: index + 1, time: now };
          const hash = linkHash("sha256", undefined, prev, canonicalRecord(row, record.body));
          db.prepare("INSERT INTO audit VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)").run(row.seq, now, row.run_id, row.kind, row.outcome, row.policy_hash, row.call_id, JSON.stringify(record.body), prev, hash);
          prev = hash;
        });
        db.prepare("INSERT INTO meta (key, value) VALUES ('head', ?)").run(`${records.length}:${prev}`);
      })();
    } finally {
      db.close();
    }
  }

  it("(e) is migrated in place when opened, keeps its records' hashes, verifies, and goes on as version 4", async () => {
    const path = join(scratch, "v1.db");
    await writeV1(path);
    const before = new Database(path, { readonly: true });
    const hashes = before.prepare("SELECT hash FROM audit ORDER BY seq").all();
    before.close();

    const store = open("v1.db", { mustExist: true });
    expect(SCHEMA_VERSION).toBe("4");
    expect((store.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value).toBe("4");
    expect(columns(store, "audit")).toContain("state_hash");
    expect(columns(store, "calls")).toContain("args");
    expect(columns(store, "events")).toContain("time");
    expect(store.db.prepare("SELECT hash FROM audit ORDER BY seq").all()).toEqual(hashes);
    expect(verifyAudit(store)).toMatchObject({ ok: true, records: 2, chain: "sha256" });
    expect(checkState(store)).toEqual([]);
    expect([...readAudit(store)].map((r) => r.stateHash)).toEqual([undefined, undefined]);

    // The run goes on: new records commit to its state, after the old ones, in one chain.
    const guard = await enforcer(store);
    guard.decide("old", { id: "1", action: "check", args: {} });
    guard.record("old", { id: "1", status: "ok", content: "all green" });
    // Two records of the run, and the record of the policy compiled for it.
    expect(verifyAudit(store)).toMatchObject({ ok: true, records: 5 });
    expect(checkState(store)).toEqual([]);
    expect(lastCommitment(store, "old").stateHash).toBe(stateDigest(stateOf(store, "old")));
    store.close();

    // Opened again, it is version 4 already: nothing more to do.
    const again = open("v1.db", { mustExist: true });
    expect(verifyAudit(again)).toMatchObject({ ok: true, records: 5 });
  });

  it("a database of an unknown version is still refused, and left as it was", () => {
    const path = join(scratch, "v9.db");
    const db = new Database(path);
    db.exec(SCHEMA_V1);
    db.prepare("INSERT INTO meta (key, value) VALUES ('schema', '9'), ('chain', 'sha256')").run();
    db.close();
    expect(() => Store.open(path, { mustExist: true })).toThrow(/has schema version 9; this vigilc reads version 4/);
    const after = new Database(path, { readonly: true });
    expect(after.prepare("SELECT name FROM pragma_table_info('audit') WHERE name = 'state_hash'").get()).toBeUndefined();
    after.close();
  });
});
