export type { CompiledRule, CompiledSql, CompileSqlOptions, SqlTables } from "./compile.js";
export { compileSql, defaultTables, isTableName } from "./compile.js";
export type { Dialect, DialectName } from "./dialect.js";
export { dialectNames, dialects } from "./dialect.js";
export type { ClickHouseSession, EventsSource, PostgresClient, SqlBackend, SqliteDatabase } from "./backend.js";
export { ClickHouseBackend, DuckDbBackend, PostgresBackend, registerSqliteFunctions, SqliteBackend } from "./backend.js";
export type { RunVerdicts } from "./judge.js";
export { SqlJudge } from "./judge.js";
export { ParquetEventsWriter, sqlString } from "./parquet.js";
