import { compile } from "@vigil/compiler";
import { ClickHouseBackend, compileSql, PostgresBackend, SqliteBackend, SqlJudge } from "@vigil/sql";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onlyStatement, policyText, trace } from "./arbitraries.js";
import { figure5UntilBreakers, figure5Witnesses } from "./figure5.js";
import { startPostgres, type PostgresServer } from "./postgres-server.js";
import { openChdb } from "./support/chdb.js";

/**
 * The SQL engine against Figure 5 read literally (test/figure5.ts), as the other engines are
 * (engines-agree.test.ts): random policies as text, random traces, the policy compiled to SQL and
 * run in embedded DuckDB over the events and values tables; the verdict, every witness and, for
 * `until`, every breaking event must be the reference's. Each case costs a query of some twenty
 * common table expressions, so a quarter of VIGIL_PROPERTY_RUNS cases are run (500 by default), and
 * a sixteenth in ClickHouse.
 */
const runs = Number(process.env["VIGIL_PROPERTY_RUNS"] ?? 2000) / 4;


/** Every case judged by `judge` must give the reference's witnesses (and breaking events). */
function agreesWithFigure5(judge: () => SqlJudge) {
  return fc.asyncProperty(policyText, trace, async (source, events) => {
        const judge_ = judge();
        const statement = onlyStatement(source);
        const expected = figure5Witnesses(statement, events);
        await judge_.reset();
        for (const event of events) judge_.append("run", event);
        judge_.addRun("run");
        const verdicts = (await judge_.judge(compile(source).program)).get("run")!;
    const sql = compileSql([statement], { dialect: judge_.dialect });
    if (sql.rules[0]!.sql === undefined) {
      // A construct the dialect cannot express exactly (SQLite has no exact decimals for sums,
      // PostgreSQL counts at most 255 repetitions) is refused with a located S0001, and the rule is
      // undecided: never an approximation.
      expect(sql.diagnostics.map((d) => [d.code, d.message])).toEqual([["S0001", expect.stringMatching(/exact decimal|at most 255 repetitions/)]]);
      expect(verdicts.outcomes[0]).toMatchObject({ holds: false, undecided: expect.stringContaining("S0001") });
      return;
    }
        expect(verdicts.outcomes[0], source).toEqual({ holds: expected.length === 0, witnesses: expected });
        if (statement.form === "until") expect(verdicts.brokenBy[0]).toEqual(figure5UntilBreakers(statement, events));
  });
}

describe("the SQL engine agrees with Figure 5 read literally", () => {
  let duckdb: SqlJudge;
  let sqlite: SqlJudge;
  let server: PostgresServer;
  let postgres: SqlJudge;
  let clickhouse: SqlJudge;
  beforeAll(async () => {
    duckdb = await SqlJudge.create();
    sqlite = new SqlJudge(new SqliteBackend(new Database(":memory:")));
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
    duckdb?.close();
    sqlite?.close();
    postgres?.close();
    clickhouse?.close();
    await server?.stop();
  });

  it(`in DuckDB, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => duckdb), { numRuns: runs });
  }, 900_000);

  it(`in SQLite, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => sqlite), { numRuns: runs });
  }, 900_000);

  it(`in PostgreSQL, on ${runs} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => postgres), { numRuns: runs });
  }, 900_000);

  // ClickHouse plans each query for some 50 to 300 ms, whatever the data: a quarter of the cases.
  it(`in ClickHouse (chdb), on ${runs / 4} random policies and traces`, async () => {
    await fc.assert(agreesWithFigure5(() => clickhouse), { numRuns: runs / 4 });
  }, 900_000);
});
