import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { JsonValue } from "@vigil/trace";
import type { AuditRow } from "../src/audit-hash.js";
import { canonicalRecord, checkState, Enforcer, GENESIS_HASH, linkHash, loadPolicy, readAudit, replayAudit, SCHEMA_VERSION, Store, verifyAudit } from "../src/index.js";

/**
 * Event times in the call path: the enforcer stamps each event with its own time or its clock's
 * (injected here), the database keeps it (`events.time`), and judging the run again (another
 * policy) and replaying the audit log give each event its stored time.
 */

const T0 = Date.UTC(2026, 10, 27, 10);
const SECOND = 1000;

/** A clock the test moves by hand. */
function clock(start = T0): { now: () => number; at: (time: number) => void } {
  let time = start;
  return { now: () => time, at: (t) => (time = t) };
}

const OPEN = "policy open {\n  rule nothing: abs(action in {never_called})\n}\n";
/** At most two pings in any minute. */
const RATE = "policy rate {\n  rule pings: limit[2 per 1m](action in {ping})\n}\n";

let scratch = "";
let stores: Store[] = [];
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-times-"));
  stores = [];
});
afterEach(() => {
  for (const store of stores) store.close();
  rmSync(scratch, { recursive: true, force: true });
});

function openStore(name = "audit.db"): Store {
  const store = Store.open(join(scratch, name));
  stores.push(store);
  return store;
}

async function enforcerOf(text: string, store: Store, now: () => number, name = "p.vigil"): Promise<Enforcer> {
  const file = join(scratch, name);
  writeFileSync(file, text);
  return new Enforcer(store, await loadPolicy([file], store), { now, guard: false });
}

type TimeRow = { position: number; action: string; time: number | null };
const times = (store: Store, runId: string): TimeRow[] => store.db.prepare("SELECT position, action, time FROM events WHERE run_id = ? ORDER BY position").all(runId) as TimeRow[];

describe("the enforcer's times", () => {
  it("stamps a call with the clock when it is decided, and keeps that time when its result comes later", async () => {
    const store = openStore();
    const time = clock();
    const guard = await enforcerOf(OPEN, store, time.now);
    const decided = guard.decide("r", { id: "c1", action: "Bash", args: { command: "ls && rm -rf build" } });
    expect(decided.events.map((e) => [e.action, e.time])).toEqual([
      ["Bash", T0],
      ["ls", T0],
      ["rm", T0],
    ]);
    time.at(T0 + 30 * SECOND);
    guard.record("r", { id: "c1", status: "ok", content: "" });
    time.at(T0 + 45 * SECOND);
    guard.message("r", "thanks");
    expect(times(store, "r")).toEqual([
      { position: 1, action: "Bash", time: T0 },
      { position: 2, action: "ls", time: T0 },
      { position: 3, action: "rm", time: T0 },
      { position: 4, action: "user_message", time: T0 + 45 * SECOND },
    ]);
    // The log holds the same times: the decision's events, the result's, the message's.
    const bodies = [...readAudit(store, "r")].map((record) => [record.kind, (record.body["events"] as { time?: number }[]).map((e) => e.time)]);
    expect(bodies).toEqual([
      ["decision", [T0, T0, T0]],
      ["result", [T0, T0, T0]],
      ["message", [T0 + 45 * SECOND]],
    ]);
    expect(verifyAudit(store)).toMatchObject({ ok: true });
    expect(checkState(store)).toEqual([]);
  });

  it("takes a call's or a message's own time over the clock, and refuses one that is not epoch milliseconds", async () => {
    const store = openStore();
    const guard = await enforcerOf(OPEN, store, () => T0);
    guard.decide("r", { id: "a", action: "read", args: {}, time: T0 - 5 * SECOND });
    guard.record("r", { id: "a", status: "ok" });
    guard.message("r", "go on", T0 - 2 * SECOND);
    expect(times(store, "r").map((row) => row.time)).toEqual([T0 - 5 * SECOND, T0 - 2 * SECOND]);
    // A call with a time that is not one is refused (it cannot be judged), as any call the adapters refuse.
    const refused = guard.decide("r", { id: "b", action: "read", args: {}, time: 1.5 });
    expect(refused.decision).toBe("block");
    expect(refused.error).toContain("is not a whole number of epoch milliseconds");
    expect(() => guard.message("r", "later", Number.NaN)).toThrow(TypeError);
  });

  it("measures a limit per minute with the clock", async () => {
    const store = openStore();
    const time = clock();
    const guard = await enforcerOf(RATE, store, time.now);
    const ping = (id: string, at: number) => {
      time.at(at);
      const decided = guard.decide("r", { id, action: "ping", args: {} });
      if (decided.decision !== "block") guard.record("r", { id, status: "ok" });
      return decided.decision;
    };
    expect(ping("1", T0)).toBe("allow");
    expect(ping("2", T0 + 10 * SECOND)).toBe("allow");
    expect(ping("3", T0 + 50 * SECOND)).toBe("block");
    expect(ping("4", T0 + 70 * SECOND)).toBe("allow");
  });
});

describe("stored times, read back", () => {
  /** Pings at the given offsets (seconds after T0), under a policy that lets them all through. */
  async function pings(store: Store, offsets: readonly number[]): Promise<void> {
    const time = clock();
    const guard = await enforcerOf(OPEN, store, time.now, "open.vigil");
    offsets.forEach((offset, index) => {
      time.at(T0 + offset * SECOND);
      expect(guard.decide("r", { id: `p${index}`, action: "ping", args: {} }).decision).toBe("allow");
      time.at(T0 + offset * SECOND + 500);
      guard.record("r", { id: `p${index}`, status: "ok" });
    });
  }

  it("a run judged again under another policy gives each recorded event its stored time", async () => {
    const store = openStore();
    await pings(store, [0, 10]);
    // Much later: the two stored pings are long past, so a third is within the limit.
    const later = clock(T0 + 100 * SECOND);
    const rate = await enforcerOf(RATE, store, later.now, "rate.vigil");
    expect(rate.decide("r", { id: "p2", action: "ping", args: {} }).decision).toBe("allow");
    expect([...readAudit(store)].map((r) => r.kind)).toContain("policy");

    // Had the stored events been timed by the clock, they would all be recent and this third ping blocked.
    const other = openStore("other.db");
    await pings(other, [0, 10]);
    const soon = clock(T0 + 50 * SECOND);
    const rateSoon = await enforcerOf(RATE, other, soon.now, "rate-soon.vigil");
    expect(rateSoon.decide("r", { id: "p2", action: "ping", args: {} }).decision).toBe("block");
  });

  it("replay decides each logged call again at its logged time", async () => {
    const store = openStore();
    await pings(store, [0, 10, 50, 200]);
    const rateFile = join(scratch, "replay-rate.vigil");
    writeFileSync(rateFile, RATE);
    const report = replayAudit(store, await loadPolicy([rateFile], store));
    expect(report.decisions).toBe(4);
    // Only the ping at 50 s is a third within a minute; the one at 200 s is not (it would be, timed by the replay's clock).
    expect(report.changed).toBe(1);
    expect(report.runs.flatMap((run) => run.changed.map((change) => [change.callId, change.was, change.now]))).toEqual([["p2", "allow", "block"]]);
  });

  it("the time of an event changed in the database is found against the log", async () => {
    const store = openStore();
    await pings(store, [0, 10]);
    expect(checkState(store)).toEqual([]);
    store.db.prepare("UPDATE events SET time = time + 3600000 WHERE position = 2").run();
    expect(checkState(store)).toEqual([expect.stringMatching(/event 2 is not the one audit record \d+ logged: its time differs/)]);
  });
});

describe("a database of schema version 2", () => {
  /** The tables of version 2: events have no time. */
  const SCHEMA_V2 = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) STRICT;
CREATE TABLE programs (hash TEXT PRIMARY KEY, program TEXT NOT NULL, created TEXT NOT NULL) STRICT;
CREATE TABLE runs (run_id TEXT PRIMARY KEY, policy_hash TEXT NOT NULL, state TEXT NOT NULL, events INTEGER NOT NULL, version INTEGER NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL) STRICT;
CREATE TABLE events (run_id TEXT NOT NULL, position INTEGER NOT NULL, action TEXT NOT NULL, args TEXT NOT NULL, status TEXT, output TEXT, call_id TEXT, PRIMARY KEY (run_id, position)) STRICT, WITHOUT ROWID;
CREATE TABLE calls (run_id TEXT NOT NULL, call_id TEXT NOT NULL, action TEXT NOT NULL, events TEXT NOT NULL, decision TEXT NOT NULL, state TEXT NOT NULL, audit_seq INTEGER NOT NULL, args TEXT, PRIMARY KEY (run_id, call_id)) STRICT, WITHOUT ROWID;
CREATE TABLE audit (seq INTEGER PRIMARY KEY, time TEXT NOT NULL, run_id TEXT NOT NULL, kind TEXT NOT NULL, outcome TEXT NOT NULL, policy_hash TEXT, call_id TEXT, body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL, state_hash TEXT) STRICT;
CREATE INDEX audit_by_run ON audit (run_id, seq);
`;

  it("is migrated in place: its events keep no time, new ones get theirs, and the log still verifies", async () => {
    // A version-3 database written, then turned into the version-2 file it would have been (no
    // time column, no time in the log's events, the chain's hashes over those bodies): what an
    // older vigilc left.
    const path = join(scratch, "v2.db");
    {
      const store = Store.open(path);
      const guard = await enforcerOf(OPEN, store, () => T0);
      guard.decide("old", { id: "a", action: "ping", args: {} });
      guard.record("old", { id: "a", status: "ok" });
      store.close();
    }
    const v3 = new Database(path);
    const rows = v3.prepare("SELECT * FROM events").all() as Record<string, unknown>[];
    const audit = v3.prepare("SELECT * FROM audit ORDER BY seq").all() as Record<string, unknown>[];
    const other = ["meta", "programs", "runs", "calls"].map((table) => [table, v3.prepare(`SELECT * FROM ${table}`).all() as Record<string, unknown>[]] as const);
    v3.close();
    rmSync(path);
    for (const suffix of ["-wal", "-shm"]) rmSync(path + suffix, { force: true });
    const v2 = new Database(path);
    v2.exec(SCHEMA_V2);
    const insert = (table: string, row: Record<string, unknown>) => {
      const keys = Object.keys(row);
      v2.prepare(`INSERT INTO ${table} (${keys.join(", ")}) VALUES (${keys.map(() => "?").join(", ")})`).run(...keys.map((k) => row[k]));
    };
    let prev = GENESIS_HASH;
    for (const row of audit) {
      const body = JSON.parse(row["body"] as string) as { [key: string]: JsonValue };
      if (Array.isArray(body["events"])) body["events"] = body["events"].map((event) => { const { time: _time, ...rest } = event as { [key: string]: JsonValue }; return rest; });
      const rewritten = { ...row, body: JSON.stringify(body), prev_hash: prev } as unknown as AuditRow;
      const hash = linkHash("sha256", undefined, prev, canonicalRecord(rewritten, body));
      insert("audit", { ...rewritten, hash });
      prev = hash;
    }
    for (const [table, list] of other) {
      for (const row of list) {
        if (table === "meta" && row["key"] === "schema") insert(table, { ...row, value: "2" });
        else if (table === "meta" && row["key"] === "head") insert(table, { ...row, value: `${audit.length}:${prev}` });
        else if (table === "calls") {
          const events = (JSON.parse(row["events"] as string) as { [key: string]: JsonValue }[]).map(({ time: _time, ...rest }) => rest);
          insert(table, { ...row, events: JSON.stringify(events) });
        } else if (table === "programs") {
          // Version 2 kept no record vouching for a program: it is compiled (and vouched for) again when next loaded.
          const { audit_seq: _seq, ...program } = row;
          insert(table, program);
        } else insert(table, row);
      }
    }
    for (const { time: _time, ...row } of rows) insert("events", row);
    v2.close();

    const store = openStore("v2.db");
    expect(SCHEMA_VERSION).toBe("4");
    expect((store.db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string }).value).toBe("4");
    expect(times(store, "old")).toEqual([{ position: 1, action: "ping", time: null }]);
    expect(verifyAudit(store)).toMatchObject({ ok: true });
    expect(checkState(store)).toEqual([]);

    const guard = await enforcerOf(OPEN, store, () => T0 + 60 * SECOND, "again.vigil");
    guard.decide("old", { id: "b", action: "ping", args: {} });
    guard.record("old", { id: "b", status: "ok" });
    expect(times(store, "old").map((row) => row.time)).toEqual([null, T0 + 60 * SECOND]);
    expect(verifyAudit(store)).toMatchObject({ ok: true });
    expect(checkState(store)).toEqual([]);
  });

  it("judges again, under a policy that measures time, an event stored without a time at the clock's now", async () => {
    const store = openStore();
    const guard = await enforcerOf(OPEN, store, () => T0, "open.vigil");
    for (const id of ["a", "b"]) {
      guard.decide("r", { id, action: "ping", args: {} });
      guard.record("r", { id, status: "ok" });
    }
    // As a database of before times were kept would hold them.
    store.db.prepare("UPDATE events SET time = NULL").run();
    const rate = await enforcerOf(RATE, store, () => T0 + 3600 * SECOND, "rate.vigil");
    // Both old pings are timed now: a third within the minute is refused (fail closed).
    expect(rate.decide("r", { id: "c", action: "ping", args: {} }).decision).toBe("block");
  });
});
