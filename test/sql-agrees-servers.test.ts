import { ClickHouseBackend, PostgresBackend, SqlJudge } from "@vigil/sql";
import fc from "fast-check";
import { afterAll, beforeAll, describe, it } from "vitest";
import { startPostgres, type PostgresServer } from "./postgres-server.js";
import { openChdb } from "./support/chdb.js";
import { agreesWithFigure5 } from "./support/sql-figure5.js";
import { cases } from "./support/tier.js";

/**
 * The SQL engine agrees with Figure 5 read literally (test/support/sql-figure5.ts) in the databases
 * that are installed rather than embedded: a real PostgreSQL server and ClickHouse (chdb). Heavy tier
 * (vitest.config.ts); test/sql-agrees.test.ts does the same in DuckDB and SQLite. 500 cases in
 * PostgreSQL, a quarter of them in ClickHouse.
 */
const runs = cases(50, 500);
// ClickHouse plans each query for some 50 to 300 ms, whatever the data: a quarter of the cases.
const clickhouseRuns = cases(13, 125);

describe("the SQL engine agrees with Figure 5 read literally, in database servers", () => {
  let server: PostgresServer;
  let postgres: SqlJudge;
  let clickhouse: SqlJudge;
  beforeAll(async () => {
    // A real PostgreSQL server (installed from Debian's packages if missing), on loopback.
    server = await startPostgres();
    const client = await server.connect();
    postgres = new SqlJudge(await PostgresBackend.create(client, () => void client.end(), { statementTimeoutMs: 10_000 }));
    // Embedded ClickHouse (chdb), its data in a temporary directory removed on close.
    const session = openChdb();
    // Tables of a few rows: one thread plans and runs each query sooner than several.
    session.query("SET max_threads = 1");
    clickhouse = new SqlJudge(await ClickHouseBackend.create(session, () => session.cleanup(), { timeoutMs: 10_000 }));
  }, 900_000);
  afterAll(async () => {
    postgres?.close();
    clickhouse?.close();
    await server?.stop();
  });

  it(`in PostgreSQL, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => postgres), { numRuns: runs });
  }, 900_000);

  it(`in ClickHouse (chdb), on ${clickhouseRuns} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => clickhouse), { numRuns: clickhouseRuns });
  }, 900_000);
});
