import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import Database from "better-sqlite3";
import { chainKeyCheck, type ChainAlgorithm } from "./audit-hash.js";

/**
 * The embedded database of enforcement: each run's monitor state, the events it recorded, the
 * calls it decided, the compiled policies (by hash), and the hash-chained audit log. One file,
 * shared by every process that enforces (the Claude Code hook runs one process per event), made
 * safe for that by SQLite's write-ahead log, a busy timeout, and transactions that take the write
 * lock when they begin (`BEGIN IMMEDIATE`), so a read-modify-write of a run never interleaves with
 * another.
 *
 * The schema is documented in docs/enforcement.md; keep the two in step.
 */

/**
 * The version of the schema below. A database of version 1, 2 or 3 is migrated in place when opened
 * (see `MIGRATIONS`); one of any other version is refused, not migrated blindly.
 */
export const SCHEMA_VERSION = "4";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS programs (
  hash       TEXT PRIMARY KEY,
  program    TEXT NOT NULL,
  created    TEXT NOT NULL,
  audit_seq  INTEGER
) STRICT;

CREATE TABLE IF NOT EXISTS runs (
  run_id       TEXT PRIMARY KEY,
  policy_hash  TEXT NOT NULL,
  state        TEXT NOT NULL,
  events       INTEGER NOT NULL,
  version      INTEGER NOT NULL,
  created      TEXT NOT NULL,
  updated      TEXT NOT NULL
) STRICT;

CREATE TABLE IF NOT EXISTS events (
  run_id    TEXT NOT NULL,
  position  INTEGER NOT NULL,
  action    TEXT NOT NULL,
  args      TEXT NOT NULL,
  status    TEXT,
  output    TEXT,
  call_id   TEXT,
  time      INTEGER,
  PRIMARY KEY (run_id, position)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS calls (
  run_id    TEXT NOT NULL,
  call_id   TEXT NOT NULL,
  action    TEXT NOT NULL,
  events    TEXT NOT NULL,
  decision  TEXT NOT NULL,
  state     TEXT NOT NULL,
  audit_seq INTEGER NOT NULL,
  args      TEXT,
  PRIMARY KEY (run_id, call_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS audit (
  seq          INTEGER PRIMARY KEY,
  time         TEXT NOT NULL,
  run_id       TEXT NOT NULL,
  kind         TEXT NOT NULL,
  outcome      TEXT NOT NULL,
  policy_hash  TEXT,
  call_id      TEXT,
  body         TEXT NOT NULL,
  prev_hash    TEXT NOT NULL,
  hash         TEXT NOT NULL,
  state_hash   TEXT
) STRICT;

CREATE INDEX IF NOT EXISTS audit_by_run ON audit (run_id, seq);
`;

/**
 * What turns a database of an older version into the current one: for each version, the columns
 * it lacks. Version 2 adds each audit record's commitment to its run's monitor state
 * (`audit.state_hash`) and each decided call's arguments (`calls.args`); version 3 adds each
 * event's time (`events.time`, epoch milliseconds); version 4 the audit record that vouches for each
 * compiled program (`programs.audit_seq`). All are nullable, so the rows written before
 * stay as they were: an audit record without a state hash keeps the encoding (and the hash) it was
 * written with, an event recorded without a time has none (it is timed by the clock when its
 * run is judged again), and a program without a record is compiled again (and vouched for) when next
 * loaded.
 */
const COLUMNS_SINCE: readonly (readonly [version: string, columns: readonly { readonly table: string; readonly column: string; readonly type: string }[]])[] = [
  [
    "2",
    [
      { table: "audit", column: "state_hash", type: "TEXT" },
      { table: "calls", column: "args", type: "TEXT" },
    ],
  ],
  ["3", [{ table: "events", column: "time", type: "INTEGER" }]],
  ["4", [{ table: "programs", column: "audit_seq", type: "INTEGER" }]],
];

/** For each older version, every column it lacks: those of the versions after it. */
const MIGRATIONS: ReadonlyMap<string, readonly { readonly table: string; readonly column: string; readonly type: string }[]> = new Map(
  ["1", "2", "3"].map((version) => [version, COLUMNS_SINCE.filter(([since]) => Number(since) > Number(version)).flatMap(([, columns]) => columns)]),
);

export interface OpenStoreOptions {
  /**
   * The key of the audit chain (HMAC-SHA-256); without it the chain is plain SHA-256. A database
   * is created with one or the other and keeps it: opening it the other way is refused.
   */
  readonly key?: string;
  /** How long to wait for another process's write lock before failing (default 10 s). */
  readonly busyTimeoutMs?: number;
  /** Open an existing database only (for `audit verify` and `replay`); never create one. */
  readonly mustExist?: boolean;
  /**
   * `full` (the default) makes every committed decision durable across a power loss; `normal` only
   * across a crash of the process (a write-ahead log survives a killed process either way).
   */
  readonly synchronous?: "full" | "normal";
}

/** A problem with the database itself (unreadable, another schema, another chain, a wrong key). */
export class StoreError extends Error {}

export class Store {
  private constructor(
    readonly db: Database.Database,
    readonly path: string,
    readonly chain: ChainAlgorithm,
    readonly key: string | undefined,
  ) {}

  static open(path: string, options: OpenStoreOptions = {}): Store {
    if (options.mustExist !== true && path !== ":memory:") mkdirSync(dirname(path), { recursive: true });
    let db: Database.Database;
    try {
      db = new Database(path, { fileMustExist: options.mustExist === true });
    } catch (error) {
      throw new StoreError(`cannot open the enforcement database \`${path}\`: ${(error as Error).message}`);
    }
    try {
      // The busy timeout first: switching to WAL and creating the schema may wait for another process.
      db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
      db.pragma("journal_mode = WAL");
      db.pragma(`synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
      const chain = Store.prepare(db, path, options);
      return new Store(db, path, chain, options.key);
    } catch (error) {
      db.close();
      if (error instanceof StoreError) throw error;
      throw new StoreError(`cannot use the enforcement database \`${path}\`: ${(error as Error).message}`);
    }
  }

  /** Creates the schema if needed, checks the database's schema version and chain, and migrates an older version. */
  private static prepare(db: Database.Database, path: string, options: OpenStoreOptions): ChainAlgorithm {
    const wanted: ChainAlgorithm = options.key !== undefined ? "hmac-sha256" : "sha256";
    const meta = (key: string): string | undefined => (db.prepare("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
    const created = (): boolean => {
      const table = db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'meta'").get();
      return table !== undefined && meta("schema") !== undefined;
    };
    if (!created()) {
      if (options.mustExist === true) throw new StoreError(`\`${path}\` is not a Vigil enforcement database (it has no audit log)`);
      db.transaction(() => {
        db.exec(SCHEMA);
        const insert = db.prepare("INSERT OR IGNORE INTO meta (key, value) VALUES (?, ?)");
        insert.run("schema", SCHEMA_VERSION);
        insert.run("chain", wanted);
        if (options.key !== undefined) insert.run("key_check", chainKeyCheck(options.key));
      }).immediate();
    }
    const schema = meta("schema");
    const older = MIGRATIONS.has(schema ?? "");
    if (schema !== SCHEMA_VERSION && !older) {
      throw new StoreError(`the enforcement database \`${path}\` has schema version ${schema ?? "(none)"}; this vigilc reads version ${SCHEMA_VERSION}`);
    }
    const chain = meta("chain");
    if (chain !== "sha256" && chain !== "hmac-sha256") throw new StoreError(`the enforcement database \`${path}\` names an unknown audit chain \`${chain ?? ""}\``);
    if (chain === "hmac-sha256") {
      if (options.key === undefined) {
        throw new StoreError(`the audit log of \`${path}\` is keyed (HMAC-SHA-256): set VIGIL_AUDIT_KEY to the key it was created with`);
      }
      if (meta("key_check") !== chainKeyCheck(options.key)) throw new StoreError(`VIGIL_AUDIT_KEY is not the key the audit log of \`${path}\` was created with`);
    } else if (options.key !== undefined && options.mustExist !== true) {
      // Only a writer is refused here. Verification and replay (`mustExist`) open the log so that
      // `verifyAudit` can report it as downgraded: a key was given, and the log proves nothing without one.
      throw new StoreError(`the audit log of \`${path}\` was created without a key (plain SHA-256); unset VIGIL_AUDIT_KEY or use a new database`);
    }
    // Migrated only once the database is known to be one this process may use: a refused one is left as it was.
    if (older) Store.migrate(db);
    return chain;
  }

  /**
   * Brings a database of an older version to the current one, in one transaction that holds the
   * write lock: another process that opens the same file at the same time waits, then finds it
   * migrated. The version is read again under the lock for that reason, and a column already there
   * (from a migration whose version mark was undone) is not added twice.
   */
  private static migrate(db: Database.Database): void {
    db.transaction(() => {
      const schema = (db.prepare("SELECT value FROM meta WHERE key = 'schema'").get() as { value: string } | undefined)?.value;
      const columns = MIGRATIONS.get(schema ?? "");
      if (columns === undefined) return;
      for (const { table, column, type } of columns) {
        const present = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).some((c) => c.name === column);
        if (!present) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
      }
      db.prepare("UPDATE meta SET value = ? WHERE key = 'schema'").run(SCHEMA_VERSION);
    }).immediate();
  }

  /**
   * Runs `work` in one transaction that holds the write lock from its start, so that what it reads
   * (a run's state, the head of the chain) is still true when it writes. Everything it writes is
   * committed together or not at all.
   */
  write<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
