import { SqliteBackend, SqlJudge } from "@vigil/sql";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { agreesWithFigure5 } from "./support/sql-figure5.js";
import { cases } from "./support/tier.js";

/**
 * The SQL engine agrees with Figure 5 read literally (test/support/sql-figure5.ts) in the embedded
 * databases, DuckDB and SQLite; test/sql-agrees-servers.test.ts (heavy tier) does the same in a real
 * PostgreSQL server and in ClickHouse. Each case costs a query of some twenty common table
 * expressions: 500 cases per database in the heavy tier, 50 in the fast one.
 */
const runs = cases(50, 500);

describe("the SQL engine agrees with Figure 5 read literally", () => {
  let duckdb: SqlJudge;
  let sqlite: SqlJudge;
  beforeAll(async () => {
    duckdb = await SqlJudge.create();
    sqlite = new SqlJudge(new SqliteBackend(new Database(":memory:")));
  });
  afterAll(() => {
    duckdb?.close();
    sqlite?.close();
  });

  it(`in DuckDB, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => duckdb), { numRuns: runs });
  }, 900_000);

  it(`in SQLite, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => sqlite), { numRuns: runs });
  }, 900_000);
});
