import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { canonicalRecord, Enforcer, GENESIS_HASH, linkHash, loadPolicy, Store, type AuditRow } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc audit verify` on a real enforcement database, tampered with in every way a record can
 * be: edited (with and without its hash recomputed), removed, inserted, reordered, cut from the
 * end, appended. Each must be found, and the first broken link named; and `vigilc replay` decides
 * the logged runs again under another policy.
 */

const STRICT = `policy strict {
  /// Nothing is deleted.
  rule no_delete: abs(action in {rm})
  /// Deploy only after a passing check.
  rule check_first: prec(action in {deploy}, action in {check} and status = ok)
    block "Run the checks first."
}
`;
const LENIENT = `policy lenient {
  /// Deleting is fine, but warn.
  rule no_delete: abs(action in {rm}) warn "Deleting."
}
`;

let scratch = "";
let strict = "";
let lenient = "";
/** A database written by the enforcer under the strict policy: two runs, 14 records. */
let pristine = "";
const KEY = "a key of the audit chain, 32 bytes";
let pristineKeyed = "";

async function writeRuns(database: string, key?: string): Promise<void> {
  const store = Store.open(database, key !== undefined ? { key } : {});
  try {
    // Record 1 is the policy's own: its compiled program, stored in the database.
    const guard = new Enforcer(store, await loadPolicy([strict], store));
    for (const run of ["run-a", "run-b"]) {
      guard.message(run, "clean up and deploy");
      guard.decide(run, { id: "1", action: "Bash", args: { command: "rm -rf dist" } });
      guard.decide(run, { id: "2", action: "deploy", args: { target: "prod" } });
      guard.decide(run, { id: "3", action: "check", args: {} });
      guard.record(run, { id: "3", status: "ok", content: "all green" });
      guard.decide(run, { id: "4", action: "deploy", args: { target: "prod" } });
      guard.record(run, { id: "4", status: "ok" });
    }
  } finally {
    store.close();
  }
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-audit-"));
  strict = join(scratch, "strict.vigil");
  lenient = join(scratch, "lenient.vigil");
  writeFileSync(strict, STRICT);
  writeFileSync(lenient, LENIENT);
  pristine = join(scratch, "pristine.db");
  await writeRuns(pristine);
  pristineKeyed = join(scratch, "pristine-keyed.db");
  await writeRuns(pristineKeyed, KEY);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let copies = 0;
/** A copy of the pristine database, changed by `tamper` with SQL. */
function tampered(tamper: (store: Store) => void, keyed = false): string {
  const copy = join(scratch, `copy-${++copies}.db`);
  copyFileSync(keyed ? pristineKeyed : pristine, copy);
  const store = Store.open(copy, keyed ? { key: KEY, mustExist: true } : { mustExist: true });
  try {
    // Everything a writer with the database file can do, the chain's code aside.
    store.db.pragma("wal_checkpoint(TRUNCATE)");
    tamper(store);
  } finally {
    store.close();
  }
  return copy;
}

const row = (store: Store, seq: number) => store.db.prepare("SELECT * FROM audit WHERE seq = ?").get(seq) as AuditRow;

/** Recomputes a record's SHA-256 link as a forger without the key would. */
function rehash(store: Store, seq: number): void {
  const r = row(store, seq);
  const hash = linkHash("sha256", undefined, r.prev_hash, canonicalRecord(r, JSON.parse(r.body)));
  store.db.prepare("UPDATE audit SET hash = ? WHERE seq = ?").run(hash, seq);
}

async function verify(database: string, env: Record<string, string> = {}) {
  return runCli(["audit", "verify", database], { env });
}

describe("vigilc audit verify", () => {
  it("verifies an untouched log, and its runs' state", async () => {
    const result = await verify(pristine);
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/the audit log verifies: 15 records, sha256 chain, head [0-9a-f]{64}/);
    const json = await runCli(["audit", "verify", pristine, "--format", "json"]);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: true, chain: { ok: true, records: 15 }, state: { ok: true, problems: [] } });
  });

  it.each([
    [
      "an edited decision",
      (store: Store) => store.db.prepare("UPDATE audit SET outcome = 'allow' WHERE seq = 4").run(),
      /broken at record 4 \(edited\): record 4 \(decision allow of run "run-a", call "2"/,
    ],
    [
      "an edited body (a result's output)",
      (store: Store) => store.db.prepare("UPDATE audit SET body = replace(body, 'all green', 'all red') WHERE seq = 6").run(),
      /broken at record 6 \(edited\): record 6 \(result ok of run "run-a", call "3"/,
    ],
    [
      "an edited record whose hash was recomputed",
      (store: Store) => {
        store.db.prepare("UPDATE audit SET outcome = 'allow' WHERE seq = 4").run();
        rehash(store, 4);
      },
      /broken at record 5 \(unlinked\): record 5 .* does not follow record 4/,
    ],
    ["a removed record", (store: Store) => store.db.prepare("DELETE FROM audit WHERE seq = 6").run(), /broken at record 6 \(missing\): record 6 is missing/],
    [
      "a removed record, the rest renumbered",
      (store: Store) => {
        store.db.prepare("DELETE FROM audit WHERE seq = 6").run();
        store.db.prepare("UPDATE audit SET seq = seq - 1 WHERE seq > 6").run();
      },
      /broken at record 6 \(unlinked\)/,
    ],
    [
      "an inserted record",
      (store: Store) => {
        store.db.prepare("UPDATE audit SET seq = -seq WHERE seq >= 7").run();
        store.db.prepare("UPDATE audit SET seq = -seq + 1 WHERE seq <= -7").run();
        const copy = row(store, 6);
        store.db
          .prepare("INSERT INTO audit (seq, time, run_id, kind, outcome, policy_hash, call_id, body, prev_hash, hash, state_hash) VALUES (7, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .run(copy.time, copy.run_id, copy.kind, copy.outcome, copy.policy_hash, copy.call_id, copy.body, copy.hash, copy.hash, copy.state_hash);
      },
      /broken at record 7 \(edited\)/,
    ],
    [
      "two records swapped",
      (store: Store) => {
        const [a, b] = [row(store, 4), row(store, 5)];
        const swap = store.db.prepare("UPDATE audit SET time = ?, run_id = ?, kind = ?, outcome = ?, policy_hash = ?, call_id = ?, body = ?, prev_hash = ?, hash = ? WHERE seq = ?");
        swap.run(b.time, b.run_id, b.kind, b.outcome, b.policy_hash, b.call_id, b.body, b.prev_hash, b.hash, 4);
        swap.run(a.time, a.run_id, a.kind, a.outcome, a.policy_hash, a.call_id, a.body, a.prev_hash, a.hash, 5);
      },
      /broken at record 4 \(unlinked\)/,
    ],
    ["the last record removed", (store: Store) => store.db.prepare("DELETE FROM audit WHERE seq = 15").run(), /broken at record 15 \(truncated\): the log ends at record 14, but its head says record 15/],
    [
      "a record appended with a valid link",
      (store: Store) => {
        const last = row(store, 15);
        const forged = { ...last, seq: 16, outcome: "allow", prev_hash: last.hash };
        const hash = linkHash("sha256", undefined, forged.prev_hash, canonicalRecord(forged, JSON.parse(forged.body)));
        store.db
          .prepare("INSERT INTO audit (seq, time, run_id, kind, outcome, policy_hash, call_id, body, prev_hash, hash, state_hash) VALUES (16, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)")
          .run(forged.time, forged.run_id, forged.kind, forged.outcome, forged.policy_hash, forged.call_id, forged.body, forged.prev_hash, hash, forged.state_hash);
      },
      /broken at record 16 \(extended\)/,
    ],
  ])("finds %s and names the first broken link (exit 1)", async (_name, tamper, message) => {
    const result = await verify(tampered(tamper));
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(message);
  });

  it("a keyed log (HMAC-SHA-256) cannot be re-signed without the key", async () => {
    const env = { VIGIL_AUDIT_KEY: KEY };
    expect((await verify(pristineKeyed, env)).stdout).toMatch(/15 records, hmac-sha256 chain/);
    const forged = tampered((store) => {
      store.db.prepare("UPDATE audit SET outcome = 'allow' WHERE seq = 4").run();
      rehash(store, 4);
    }, true);
    const result = await verify(forged, env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/broken at record 4 \(edited\)/);
    // Without the key, a keyed log cannot be verified at all.
    const keyless = await verify(pristineKeyed);
    expect(keyless.code).toBe(2);
    expect(keyless.stderr).toMatch(/set VIGIL_AUDIT_KEY/);
  });

  it("refuses a keyed log rewritten as a plain SHA-256 chain when given the key (exit 1, downgraded)", async () => {
    // What someone with the file and without the key can do: edit a decision, recompute every link
    // as plain SHA-256, name the chain `sha256`, write the head, drop the key check.
    const downgraded = tampered((store) => {
      store.db.prepare("UPDATE audit SET outcome = 'allow' WHERE seq = 4").run();
      let prev = GENESIS_HASH;
      const rows = store.db.prepare("SELECT * FROM audit ORDER BY seq").all() as AuditRow[];
      for (const r of rows) {
        const hash = linkHash("sha256", undefined, prev, canonicalRecord(r, JSON.parse(r.body)));
        store.db.prepare("UPDATE audit SET prev_hash = ?, hash = ? WHERE seq = ?").run(prev, hash, r.seq);
        prev = hash;
      }
      store.db.prepare("UPDATE meta SET value = 'sha256' WHERE key = 'chain'").run();
      store.db.prepare("UPDATE meta SET value = ? WHERE key = 'head'").run(`${rows.length}:${prev}`);
      store.db.prepare("DELETE FROM meta WHERE key = 'key_check'").run();
    }, true);
    // Without the key it is a plain chain whose links all hold…
    expect((await verify(downgraded)).code).toBe(0);
    // …and with it, it is refused: it proves nothing.
    const env = { VIGIL_AUDIT_KEY: KEY };
    const result = await verify(downgraded, env);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(
      /the audit log is refused \(downgraded\): the audit log is not keyed \(a plain SHA-256 chain\), although a key was given \(VIGIL_AUDIT_KEY\): anyone who can write the file could have rewritten it/,
    );
    expect(result.stdout).toContain("it holds 15 records on a sha256 chain; with a key, a log is hmac-sha256");
    const json = await runCli(["audit", "verify", downgraded, "--format", "json"], { env });
    expect(json.code).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, chain: { ok: false, problem: "downgraded", chain: "sha256", expected: "hmac-sha256", records: 15 } });
    const replay = await runCli(["replay", "--audit", downgraded, "--policy", strict], { env });
    expect(replay.code).toBe(2);
    expect(replay.stderr).toMatch(/does not verify \(the audit log is not keyed .*\); a tampered log is not replayed/);
  });

  it("reports a run's monitor state edited after its last audit record", async () => {
    // Run "run-a" made to forget its passing check (the `prec` rule's machine no longer has seen
    // it), its event counts kept: its next deploy would be judged on a history it did not have.
    const edited = tampered((store) => {
      const state = JSON.parse((store.db.prepare("SELECT state FROM runs WHERE run_id = 'run-a'").get() as { state: string }).state) as { machines: { seen?: unknown[] }[] };
      const machines = state.machines.map((machine) => (machine.seen !== undefined ? { ...machine, seen: [] } : machine));
      store.db.prepare("UPDATE runs SET state = ? WHERE run_id = 'run-a'").run(JSON.stringify({ ...state, machines }));
    });
    const result = await verify(edited);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("the audit log verifies");
    expect(result.stdout).toMatch(/run "run-a": its monitor state was changed after audit record 8/);
  });

  it("reports the runs' state when it disagrees with the log", async () => {
    const result = await verify(tampered((store) => store.db.prepare("DELETE FROM events WHERE run_id = 'run-a' AND position = 3").run()));
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("the audit log verifies");
    expect(result.stdout).toMatch(/run "run-a": its state counts 3 events, its event table holds 2/);
  });

  it("exit 2 for a file that is not an enforcement database", async () => {
    const result = await verify(join(scratch, "nowhere.db"));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/cannot open the enforcement database/);
  });
});

describe("vigilc replay", () => {
  it("prints, per run, the calls whose decision another policy changes (exit 1)", async () => {
    const result = await runCli(["replay", "--audit", pristine, "--policy", lenient]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('run "run-a": 2 of 4 decisions change');
    expect(result.stdout).toMatch(/call 1: Bash \{"command":"rm -rf dist"\}: block \(strict\.no_delete\) → warn \(lenient\.no_delete\)/);
    expect(result.stdout).toMatch(/call 2: deploy \{"target":"prod"\}: block \(strict\.check_first\) → allow/);
    expect(result.stdout).toContain("4 decisions would change");
    const json = JSON.parse((await runCli(["replay", "--audit", pristine, "--policy", lenient, "--format", "json", "--run", "run-b"])).stdout) as {
      runs: { runId: string; decisions: number; changed: { callId: string; was: string; now: string }[] }[];
      changed: number;
    };
    expect(json.runs.map((r) => r.runId)).toEqual(["run-b"]);
    expect(json.runs[0]!.changed.map((c) => [c.callId, c.was, c.now])).toEqual([
      ["1", "block", "warn"],
      ["2", "block", "allow"],
    ]);
  });

  it("under the same policy, nothing changes (exit 0)", async () => {
    const result = await runCli(["replay", "--audit", pristine, "--policy", strict]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("no decision would change");
  });

  it("does not replay what the guard decided: another policy changes nothing of it", async () => {
    const database = join(scratch, "guarded", ".vigil", "audit.db");
    const store = Store.open(database);
    try {
      const guard = new Enforcer(store, await loadPolicy([strict], store), { cwd: join(scratch, "guarded") });
      expect(guard.decide("run-g", { id: "1", action: "Bash", args: { command: "rm .vigil/audit.db" } }).guard).not.toEqual([]);
    } finally {
      store.close();
    }
    const result = await runCli(["replay", "--audit", database, "--policy", lenient]);
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("1 call decided by the guard whatever the policy, not replayed");
    const json = JSON.parse((await runCli(["replay", "--audit", database, "--policy", lenient, "--format", "json"])).stdout) as { runs: { guarded: number; changed: unknown[] }[] };
    expect(json.runs[0]).toMatchObject({ guarded: 1, changed: [] });
  });

  it("refuses a log that does not verify", async () => {
    const result = await runCli(["replay", "--audit", tampered((store) => store.db.prepare("DELETE FROM audit WHERE seq = 2").run()), "--policy", strict]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/does not verify .*a tampered log is not replayed/);
  });
});
