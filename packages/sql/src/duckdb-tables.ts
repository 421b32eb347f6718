import type { DuckDBAppender } from "@duckdb/node-api";
import type { EventRow, ValueRow } from "@vigil/trace";

/**
 * The canonical tables: how each is created (in any backend's database), and how one row of each
 * is appended to DuckDB (the SQL engine's database and the Parquet writer's alike).
 */

export function createTableSql(name: string, columns: readonly { name: string; type: string; nullable: boolean }[], types: (type: string) => string = (type) => type): string {
  return `CREATE TABLE ${name} (${columns.map((column) => `"${column.name}" ${types(column.type)}${column.nullable ? "" : " NOT NULL"}`).join(", ")})`;
}

export function appendEventRow(appender: DuckDBAppender, row: EventRow): void {
  appender.appendVarchar(row.run);
  appender.appendInteger(row.seq);
  appender.appendVarchar(row.kind);
  appender.appendVarchar(row.action);
  orNull(appender, row.status, (value) => appender.appendVarchar(value));
  appender.appendVarchar(JSON.stringify(row.args));
  orNull(appender, row.output, (value) => appender.appendVarchar(value));
  orNull(appender, row.time, (value) => appender.appendBigInt(BigInt(value)));
  orNull(appender, row.file, (value) => appender.appendVarchar(value));
  orNull(appender, row.line, (value) => appender.appendInteger(value));
  appender.endRow();
}

export function appendValueRow(appender: DuckDBAppender, row: ValueRow): void {
  appender.appendVarchar(row.run);
  appender.appendInteger(row.seq);
  appender.appendVarchar(row.subject);
  appender.appendVarchar(row.names);
  appender.appendVarchar(row.chain);
  appender.appendVarchar(row.vkey);
  orNull(appender, row.utext, (text) => appender.appendVarchar(text));
  orNull(appender, row.amount, (amount) => appender.appendVarchar(amount));
  orNull(appender, row.nkey, (key) => appender.appendVarchar(key));
  appender.endRow();
}

function orNull<T>(appender: DuckDBAppender, value: T | null, append: (value: T) => void): void {
  if (value === null) appender.appendNull();
  else append(value);
}
