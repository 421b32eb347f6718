import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from "@duckdb/node-api";
import { compileRe2, eventColumns, valueColumns, type EventRow, type ValueRow } from "@vigil/trace";
import { appendEventRow, appendValueRow, createTableSql } from "./duckdb-tables.js";
import type { DialectName } from "./dialect.js";

/**
 * A database the SQL engine judges runs in: it holds the events table and the values table
 * (created empty by the backend), takes rows, and runs the compiled queries of its dialect. DuckDB
 * is embedded; SQLite and PostgreSQL are databases the caller opens (a `better-sqlite3` database,
 * a `pg` client), given to their backends by the shape of their API, so this package imports
 * neither.
 */
export interface SqlBackend {
  readonly dialect: DialectName;
  append(event: EventRow, values: readonly ValueRow[]): void;
  /** The rows of a query, as objects keyed by column; appended rows are in the tables first. */
  query(sql: string): Promise<readonly Record<string, unknown>[]>;
  /** Empties both tables. */
  reset(): Promise<void>;
  close(): void;
}


/** Embedded DuckDB, in memory: rows go through its appenders, in its columnar memory. */
export class DuckDbBackend implements SqlBackend {
  readonly dialect = "duckdb";

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly events: DuckDBAppender | undefined,
    private readonly values: DuckDBAppender | undefined,
  ) {}

  static async create(): Promise<DuckDbBackend> {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    const types = (type: string) => (type === "JSON" ? "VARCHAR" : type);
    await connection.run(createTableSql("events", eventColumns, types));
    await connection.run(createTableSql("event_values", valueColumns, types));
    return new DuckDbBackend(instance, connection, await connection.createAppender("events"), await connection.createAppender("event_values"));
  }

  /**
   * Over an events table that exists: a Parquet file, a JSON Lines file (as `vigilc export` writes
   * them), or a table of a DuckDB database file (attached read-only). The values table is read the
   * same way when given; otherwise it is made here, in memory, from the events' arguments and
   * outputs (`deriveValues`). Nothing is appended to such a backend.
   */
  static async over(source: EventsSource): Promise<DuckDbBackend> {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    try {
      const from = async (file: string, table: string, columns: typeof eventColumns | typeof valueColumns): Promise<string> => {
        if (/\.parquet$/i.test(file)) return `read_parquet(${quote(file)})`;
        if (/\.(jsonl|ndjson)$/i.test(file)) {
          const types = columns.map((column) => `${quote(column.name)}: ${quote(column.type === "JSON" ? "VARCHAR" : column.type)}`).join(", ");
          return `read_json(${quote(file)}, format = 'newline_delimited', columns = {${types}})`;
        }
        const alias = `source_${table}`;
        await connection.run(`ATTACH ${quote(file)} AS ${alias} (READ_ONLY)`);
        return `${alias}.${table}`;
      };
      const list = (columns: typeof eventColumns | typeof valueColumns) => columns.map((column) => `"${column.name}"`).join(", ");
      await connection.run(`CREATE VIEW events AS SELECT ${list(eventColumns)} FROM ${await from(source.events, source.table ?? "events", eventColumns)}`);
      let values: DuckDBAppender | undefined;
      if (source.values !== undefined) {
        await connection.run(`CREATE VIEW event_values AS SELECT ${list(valueColumns)} FROM ${await from(source.values, source.valuesTable ?? "event_values", valueColumns)}`);
        // A JSON Lines file without a column reads it as NULL: a number without its order key
        // would satisfy no comparison, silently. Such a table is refused instead.
        const stale = await connection.runAndReadAll(`SELECT 1 FROM event_values WHERE nkey IS NULL AND substr(vkey, 1, 2) = 'n:' LIMIT 1`);
        if (stale.currentRowCount > 0) {
          throw new Error(`the values table ${source.values} has numbers without their order key (\`nkey\`): it was exported before that column was; export it again (\`vigilc export --values\`)`);
        }
      } else {
        await connection.run(createTableSql("event_values", valueColumns, (type) => (type === "JSON" ? "VARCHAR" : type)));
        values = await connection.createAppender("event_values");
      }
      return new DuckDbBackend(instance, connection, undefined, values);
    } catch (error) {
      connection.closeSync();
      instance.closeSync();
      throw error;
    }
  }

  /** The rows of the events table, in order of run and position. */
  async *eventRows(): AsyncIterable<EventRow> {
    const result = await this.connection.stream(`SELECT ${eventColumns.map((column) => `"${column.name}"`).join(", ")} FROM events ORDER BY run, seq`);
    for await (const rows of result.yieldRowObjectJs()) {
      for (const row of rows) {
        yield {
          run: String(row["run"]),
          seq: Number(row["seq"]),
          kind: row["kind"] === "message" ? "message" : "call",
          action: String(row["action"]),
          status: row["status"] === "ok" || row["status"] === "error" ? row["status"] : null,
          args: JSON.parse(String(row["args"])) as EventRow["args"],
          output: row["output"] === null ? null : String(row["output"]),
          time: row["time"] === null ? null : Number(row["time"]),
          file: row["file"] === null ? null : String(row["file"]),
          line: row["line"] === null ? null : Number(row["line"]),
        };
      }
    }
  }

  /** Whether the values table is made here, from the events (`over` without one). */
  get derivesValues(): boolean {
    return this.events === undefined && this.values !== undefined;
  }

  /** Appends values table rows (to a backend that derives them). */
  appendValues(values: readonly ValueRow[]): void {
    const v = this.values;
    if (v === undefined) throw new Error("internal error: this backend takes no values rows");
    for (const value of values) appendValueRow(v, value);
  }


  append(row: EventRow, values: readonly ValueRow[]): void {
    const e = this.events;
    if (e === undefined) throw new Error("internal error: rows cannot be appended to tables read from files");
    appendEventRow(e, row);
    this.appendValues(values);
  }


  async query(sql: string): Promise<readonly Record<string, unknown>[]> {
    this.events?.flushSync();
    this.values?.flushSync();
    return (await this.connection.runAndReadAll(sql)).getRowObjectsJS();
  }

  async reset(): Promise<void> {
    if (this.events === undefined) throw new Error("internal error: tables read from files are not emptied");
    this.events.flushSync();
    this.values?.flushSync();
    await this.connection.run("DELETE FROM events");
    await this.connection.run("DELETE FROM event_values");
  }

  close(): void {
    try {
      this.events?.closeSync();
      this.values?.closeSync();
    } finally {
      this.connection.closeSync();
      this.instance.closeSync();
    }
  }
}

/** Where an events table (and its values table) is: files, or tables of a DuckDB database file. */
export interface EventsSource {
  /** A `.parquet` or `.jsonl` (`.ndjson`) file, or a DuckDB database file. */
  readonly events: string;
  /** In a database file: the events table (default `events`). */
  readonly table?: string;
  /** The values table's file (or database), when there is one; otherwise it is made from the events. */
  readonly values?: string;
  readonly valuesTable?: string;
}

const quote = (text: string): string => `'${text.replace(/'/g, "''")}'`;

/** A values table row's cells, in the order of its columns (`valueColumns`). */
const valueCells = (row: ValueRow): unknown[] => valueColumns.map((column) => row[column.name]);


/** The part of `better-sqlite3`'s database this backend uses. */
export interface SqliteDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): { run(...values: unknown[]): unknown; all(...values: unknown[]): unknown[] };
  function(name: string, options: { deterministic: boolean }, implementation: (...values: unknown[]) => unknown): unknown;
  transaction<T extends (...args: never[]) => unknown>(fn: T): T;
  close(): unknown;
}

/**
 * Registers the functions the `sqlite` dialect's SQL calls: `vigil_regexp(pattern, text)`, 1 when
 * some substring of the text matches the RE2 pattern (the translation the trace package makes of
 * a wildcard or regular expression, or a key-path pattern), 0 otherwise, NULL for a NULL text.
 * The pattern is RE2's, run by the same linear-time engine the other decision procedures use.
 */
export function registerSqliteFunctions(db: Pick<SqliteDatabase, "function">): void {
  const compiled = new Map<string, (text: string) => boolean>();
  db.function("vigil_regexp", { deterministic: true }, (pattern, text) => {
    if (text === null || text === undefined) return null;
    let re2 = compiled.get(String(pattern));
    if (re2 === undefined) {
      if (compiled.size > 1000) compiled.clear();
      compiled.set(String(pattern), (re2 = compileRe2(String(pattern))));
    }
    return re2(String(text)) ? 1 : 0;
  });
}

/** A SQLite database (`better-sqlite3`), the tables created in it and Vigil's functions registered. */
export class SqliteBackend implements SqlBackend {
  readonly dialect = "sqlite";
  private pending: { event: EventRow; values: readonly ValueRow[] }[] = [];
  private readonly insertEvent;
  private readonly insertValue;

  constructor(private readonly db: SqliteDatabase) {
    const types = (type: string) => (type === "VARCHAR" || type === "JSON" ? "TEXT" : "INTEGER");
    db.exec(createTableSql("events", eventColumns, types));
    db.exec(createTableSql("event_values", valueColumns, types));
    registerSqliteFunctions(db);
    this.insertEvent = db.prepare(`INSERT INTO events VALUES (${eventColumns.map(() => "?").join(", ")})`);
    this.insertValue = db.prepare(`INSERT INTO event_values VALUES (${valueColumns.map(() => "?").join(", ")})`);
  }

  append(event: EventRow, values: readonly ValueRow[]): void {
    this.pending.push({ event, values });
  }

  private flush(): void {
    const pending = this.pending;
    this.pending = [];
    this.db.transaction(() => {
      for (const { event, values } of pending) {
        this.insertEvent.run(event.run, event.seq, event.kind, event.action, event.status, JSON.stringify(event.args), event.output, event.time, event.file, event.line);
        for (const v of values) this.insertValue.run(...valueCells(v));
      }
    })();
  }

  async query(sql: string): Promise<readonly Record<string, unknown>[]> {
    this.flush();
    return this.db.prepare(sql).all() as Record<string, unknown>[];
  }

  async reset(): Promise<void> {
    this.pending = [];
    this.db.exec("DELETE FROM events; DELETE FROM event_values;");
  }

  close(): void {
    this.db.close();
  }
}

/** The part of a `pg` client this backend uses. */
export interface PostgresClient {
  query(sql: string, values?: readonly unknown[]): Promise<{ rows: Record<string, unknown>[] }>;
}

/**
 * A PostgreSQL database (a connected `pg` client): the tables are created in the client's current
 * schema by `create` (temporary tables, so that concurrent judges never see each other's rows).
 */
export class PostgresBackend implements SqlBackend {
  readonly dialect = "postgres";
  private pending: { event: EventRow; values: readonly ValueRow[] }[] = [];

  private constructor(private readonly client: PostgresClient, private readonly release: () => void) {}

  static async create(client: PostgresClient, release: () => void = () => {}, options: { readonly statementTimeoutMs?: number } = {}): Promise<PostgresBackend> {
    // A query past its time is cancelled by the server: the rules it judged are undecided.
    await client.query(`SET statement_timeout = ${Math.max(1, Math.floor(options.statementTimeoutMs ?? 60_000))}`);
    const types = (type: string) => (type === "VARCHAR" ? "TEXT" : type === "JSON" ? "JSONB" : type);
    await client.query(createTableSql("pg_temp.events", eventColumns, types));
    await client.query(createTableSql("pg_temp.event_values", valueColumns, types));
    return new PostgresBackend(client, release);
  }

  append(event: EventRow, values: readonly ValueRow[]): void {
    this.pending.push({ event, values });
  }

  private async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    const events = pending.map(({ event }) => [event.run, event.seq, event.kind, event.action, event.status, JSON.stringify(event.args), event.output, event.time, event.file, event.line]);
    const values = pending.flatMap(({ values }) => values.map(valueCells));
    await this.insert("events", eventColumns.length, events);
    await this.insert("event_values", valueColumns.length, values);
    // Temporary tables get no statistics by themselves; the planner needs them to join well.
    if (pending.length > 0) await this.client.query("ANALYZE events, event_values");
  }

  /** Rows inserted in batches of one statement each (PostgreSQL takes at most 65,535 parameters per statement). */
  private async insert(table: string, width: number, rows: readonly unknown[][]): Promise<void> {
    const perStatement = Math.floor(60_000 / width);
    for (let start = 0; start < rows.length; start += perStatement) {
      const batch = rows.slice(start, start + perStatement);
      const placeholders = batch.map((_, row) => `(${Array.from({ length: width }, (_, column) => `$${row * width + column + 1}`).join(", ")})`);
      await this.client.query(`INSERT INTO ${table} VALUES ${placeholders.join(", ")}`, batch.flat());
    }
  }

  async query(sql: string): Promise<readonly Record<string, unknown>[]> {
    await this.flush();
    return (await this.client.query(sql)).rows;
  }

  async reset(): Promise<void> {
    this.pending = [];
    await this.client.query("DELETE FROM events");
    await this.client.query("DELETE FROM event_values");
  }

  close(): void {
    this.release();
  }
}

/** The part of a `chdb` session (embedded ClickHouse) this backend uses. */
export interface ClickHouseSession {
  queryAsync(sql: string, options: { readonly format: string }): Promise<{ text(): string }>;
}

/**
 * A ClickHouse database: a `chdb` session (embedded ClickHouse) from the caller, the tables
 * created in its current database by `create` (in memory). A query runs for at most the given
 * time (`max_execution_time`); past it ClickHouse stops it and the rules it judged are undecided.
 */
export class ClickHouseBackend implements SqlBackend {
  readonly dialect = "clickhouse";
  private pending: { event: EventRow; values: readonly ValueRow[] }[] = [];

  private constructor(private readonly session: ClickHouseSession, private readonly release: () => void) {}

  static async create(session: ClickHouseSession, release: () => void = () => {}, options: { readonly timeoutMs?: number } = {}): Promise<ClickHouseBackend> {
    const backend = new ClickHouseBackend(session, release);
    await backend.run(`SET max_execution_time = ${Math.max(0.001, (options.timeoutMs ?? 60_000) / 1000)}`);
    const types = (type: string) => ({ VARCHAR: "String", JSON: "String", INTEGER: "Int32", BIGINT: "Int64" })[type] ?? type;
    for (const [name, columns] of [["events", eventColumns], ["event_values", valueColumns]] as const) {
      const list = columns.map((column) => `"${column.name}" ${column.nullable ? `Nullable(${types(column.type)})` : types(column.type)}`);
      await backend.run(`CREATE TABLE ${name} (${list.join(", ")}) ENGINE = Memory`);
    }
    return backend;
  }

  append(event: EventRow, values: readonly ValueRow[]): void {
    this.pending.push({ event, values });
  }

  private run(sql: string): Promise<{ text(): string }> {
    return this.session.queryAsync(sql, { format: "JSONEachRow" });
  }

  /** The rows appended since the last query, inserted as JSON lines (one statement per table). */
  private async flush(): Promise<void> {
    const pending = this.pending;
    this.pending = [];
    if (pending.length === 0) return;
    const events = pending.map(({ event }) => JSON.stringify({ ...event, args: JSON.stringify(event.args) }));
    const values = pending.flatMap(({ values }) => values.map((value) => JSON.stringify(value)));
    await this.run(`INSERT INTO events FORMAT JSONEachRow\n${events.join("\n")}`);
    if (values.length > 0) await this.run(`INSERT INTO event_values FORMAT JSONEachRow\n${values.join("\n")}`);
  }

  async query(sql: string): Promise<readonly Record<string, unknown>[]> {
    await this.flush();
    const text = (await this.run(sql)).text();
    return text
      .split("\n")
      .filter((line) => line !== "")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  }

  async reset(): Promise<void> {
    this.pending = [];
    await this.run("TRUNCATE TABLE events");
    await this.run("TRUNCATE TABLE event_values");
  }

  close(): void {
    this.release();
  }
}
