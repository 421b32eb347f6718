import { DuckDBInstance, type DuckDBAppender, type DuckDBConnection } from "@duckdb/node-api";
import { eventColumns, valueColumns, type EventRow, type ValueRow } from "@vigil/trace";
import { appendEventRow, appendValueRow, createTableSql } from "./duckdb-tables.js";

/**
 * The canonical events table written as a Parquet file, through embedded DuckDB: rows are appended
 * as they are read (the appender buffers them in DuckDB's columnar memory, not as JavaScript
 * objects), then the table is copied to the file in one statement. The file's columns are the
 * table's (`eventColumns`), `args` a JSON column. With `values`, the values table too
 * (`valueColumns`), to a second file.
 */
export class ParquetEventsWriter {
  private rows = 0;
  private closed = false;
  private released = false;

  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
    private readonly appender: DuckDBAppender,
    private readonly valuesAppender: DuckDBAppender | undefined,
  ) {}

  /** A writer with an empty table (and values table, with `values`), in an in-memory database of its own. */
  static async create(options: { readonly values?: boolean } = {}): Promise<ParquetEventsWriter> {
    const instance = await DuckDBInstance.create(":memory:");
    const connection = await instance.connect();
    await connection.run(createTableSql("events", eventColumns));
    if (options.values === true) await connection.run(createTableSql("event_values", valueColumns));
    return new ParquetEventsWriter(instance, connection, await connection.createAppender("events"), options.values === true ? await connection.createAppender("event_values") : undefined);
  }

  /** Appends the rows of an event's values (a writer made with `values`). */
  appendValues(rows: readonly ValueRow[]): void {
    const v = this.valuesAppender;
    if (v === undefined) throw new Error("internal error: this writer has no values table");
    for (const row of rows) appendValueRow(v, row);
  }

  /** Appends one row. */
  append(row: EventRow): void {
    appendEventRow(this.appender, row);
    this.rows++;
  }

  /** How many rows were appended. */
  get length(): number {
    return this.rows;
  }

  /** Writes the table to `file` (Parquet, zstd-compressed), the values table to `valuesFile`, and releases the database. */
  async write(file: string, valuesFile?: string): Promise<void> {
    this.appender.flushSync();
    this.appender.closeSync();
    this.valuesAppender?.flushSync();
    this.valuesAppender?.closeSync();
    this.closed = true;
    try {
      await this.connection.run(`COPY events TO ${sqlString(file)} (FORMAT parquet, COMPRESSION zstd)`);
      if (valuesFile !== undefined) await this.connection.run(`COPY event_values TO ${sqlString(valuesFile)} (FORMAT parquet, COMPRESSION zstd)`);
    } finally {
      this.release();
    }
  }

  /** Releases the database without writing (an export that failed). */
  discard(): void {
    if (!this.closed) {
      try {
        this.appender.closeSync();
        this.valuesAppender?.closeSync();
      } catch {
        // Nothing to flush into: the table is thrown away.
      }
      this.closed = true;
    }
    this.release();
  }

  private release(): void {
    if (this.released) return;
    this.released = true;
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** A string as an SQL literal: quoted, its quotes doubled. */
export function sqlString(text: string): string {
  return `'${text.replace(/'/g, "''")}'`;
}
