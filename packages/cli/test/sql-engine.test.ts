import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { examples, root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";
import { openChdb } from "../../../test/support/chdb.js";

/**
 * `vigilc check --engine sql`: the policy compiled to SQL and run in embedded DuckDB (over a corpus,
 * every run in one database and one query) must give the reports `--engine eval` gives, run by
 * run: verdicts, witnesses, their lines, the bad events of `until`, undecided rules. Measured on
 * the recorded AgentDojo and τ-bench runs. And `vigilc sql`, which prints that SQL per dialect.
 */

type Report = { runs: { file: string; run?: string; verdict?: string; errors: unknown[]; statements: Record<string, unknown>[] }[] };

/** What both engines must agree on, run by run (the forward engine's trigger counts are its own). */
function verdicts(report: Report): unknown[] {
  return report.runs.map((run) => ({
    run: `${run.file} · ${run.run ?? ""}`,
    verdict: run.verdict,
    errors: run.errors,
    statements: run.statements.map(({ policy, name, holds, witnesses, witnessLines, brokenBy, undecided }) => ({ policy, name, holds, witnesses, witnessLines, brokenBy, undecided })),
  }));
}

async function agree(args: readonly string[]): Promise<{ runs: number; unsafe: number; witnesses: number }> {
  const [forward, sql] = await Promise.all(
    ["eval", "sql"].map(async (engine) => {
      // The forward engine judges a corpus run by run in worker threads, which the built CLI has; the
      // SQL engine judges it in one query, in this thread.
      const result = await runCli(["check", ...args, "--format", "json", "--exit-zero", "--engine", engine], { cwd: root, built: engine === "eval" });
      expect(result.code, result.stderr).toBe(0);
      return JSON.parse(result.stdout) as Report;
    }),
  );
  expect(verdicts(sql!)).toEqual(verdicts(forward!));
  const runs = forward!.runs;
  return { runs: runs.length, unsafe: runs.filter((run) => run.verdict === "unsafe").length, witnesses: runs.flatMap((run) => run.statements).reduce((n, s) => n + (s["witnesses"] as number[]).length, 0) };
}

const agentdojo = "../shared/data/agentdojo/gpt-4o-2024-05-13";

describe("vigilc check --engine sql gives the reports of --engine eval", () => {
  it("on all 1,382 recorded AgentDojo runs, each suite with its policy", async () => {
    const suites = [
      ["banking", 313],
      ["slack", 236],
      ["travel", 307],
      ["workspace", 526],
    ] as const;
    let total = 0;
    for (const [suite, runs] of suites) {
      const counts = await agree([`examples/agentdojo/${suite}.vigil`, "--trace", `${agentdojo}/${suite}`]);
      expect(counts.runs).toBe(runs);
      expect(counts.unsafe).toBeGreaterThan(0);
      total += counts.runs;
    }
    expect(total).toBe(1382);
  }, 600_000);

  it("on the 200 τ-bench airline runs with their messages", async () => {
    const counts = await agree(["examples/tau-airline/airline.vigil", "--trace", "../shared/data/tau-bench/gpt-4o-airline.json", "--messages"]);
    expect(counts).toMatchObject({ runs: 200 });
    expect(counts.witnesses).toBeGreaterThan(100);
  }, 300_000);

  it("on one run: the human report, with the bad event of an until and an undecided rule that measures time", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-sql-"));
    try {
      writeFileSync(
        join(scratch, "p.vigil"),
        `policy p {\n  rule secret: until(action in {read} and path = $p, action in {scrub} and target contains $p, action in {post})\n  rule windowed: bresp[1m](action in {page}, action in {ack})\n}\n`,
      );
      writeFileSync(
        join(scratch, "run.jsonl"),
        [
          { action: "read", args: { path: "/a/.env" }, status: "ok" },
          { action: "scrub", args: { target: "other" }, status: "ok" },
          { action: "post", args: {}, status: "ok" },
        ]
          .map((event) => JSON.stringify(event))
          .join("\n") + "\n",
      );
      const [forward, sql] = await Promise.all(["eval", "sql"].map((engine) => runCli(["check", "p.vigil", "--trace", "run.jsonl", "--engine", engine], { cwd: scratch })));
      expect(sql!.code).toBe(1);
      expect(sql!.stdout).toBe(forward!.stdout.replace(/eval/g, "sql"));
      expect(sql!.stdout).toContain("broken by event 3");
      expect(sql!.stdout).toContain("event 1 (line 1 of run.jsonl) has no time");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("vigilc sql", () => {
  let scratch = "";
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "vigilc-sql-"));
    writeFileSync(join(scratch, "p.vigil"), `policy p {\n  rule keys: abs(action in {Bash} and command matches /a{300}/)\n  rule deploy: prec(action in {deploy}, action in {check})\n}\n`);
  });
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  it("prints one query for the policy, over the tables named", async () => {
    const result = await runCli(["sql", join(examples, "agentdojo/banking.vigil"), "--table", "lake.events", "--values-table", "lake.event_values"]);
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toMatch(/^-- .*banking\.vigil as duckdb SQL over lake\.events and lake\.event_values/);
    expect(result.stdout).toContain("FROM lake.events e");
    expect(result.stdout).toContain("ORDER BY run, rule, seq");
  });

  it("prints every dialect", async () => {
    for (const dialect of ["duckdb", "postgres", "sqlite", "clickhouse", "trino", "spark", "bigquery", "snowflake"]) {
      const result = await runCli(["sql", join(scratch, "p.vigil"), "--dialect", dialect, "--rule", "deploy"]);
      expect(result.code, `${dialect}: ${result.stderr}`).toBe(0);
      expect(result.stdout).toContain("r1_witness AS (");
    }
  });

  it("refuses, located, a rule the dialect cannot express exactly, and exits 2", async () => {
    const result = await runCli(["sql", join(scratch, "p.vigil"), "--dialect", "postgres"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error[S0001]: rule `p.keys` cannot be compiled exactly to postgres: PostgreSQL's regular expressions count at most 255 repetitions");
    expect(result.stderr).toContain(":2:");
    expect(result.stderr).toContain("1 rule cannot be written exactly in postgres SQL and is left out");
    // The rest is printed.
    expect(result.stdout).toContain("r1_witness AS (");
    expect(result.stdout).not.toContain("r0_witness");
  });

  it("says what is wrong with a rule or table name", async () => {
    const rule = await runCli(["sql", join(scratch, "p.vigil"), "--rule", "deplyo"]);
    expect(rule.code).toBe(2);
    expect(rule.stderr).toContain("no rule named `deplyo`");
    expect(rule.stderr).toContain("did you mean `deploy`?");
    const table = await runCli(["sql", join(scratch, "p.vigil"), "--table", "events; drop table x"]);
    expect(table.code).toBe(2);
    expect(table.stderr).toContain("is not a table name");
  });
});

describe("the warehouse path: vigilc export --values, then the SQL of vigilc sql where the data is", () => {
  it("finds, over the Parquet files, every witness vigilc check finds (τ-bench, with messages)", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigilc-sql-"));
    try {
      const tau = join(root, "../shared/data/tau-bench/gpt-4o-airline.json");
      const policy = join(examples, "tau-airline/airline.vigil");
      const exported = await runCli(["export", tau, "--messages", "-o", "events.parquet", "--values", "values.parquet"], { cwd: scratch });
      expect(exported.code, exported.stderr).toBe(0);
      expect(exported.stderr).toContain("wrote 4034 events of 200 runs to events.parquet and their values to values.parquet");
      const sql = await runCli(["sql", policy, "--table", "events", "--values-table", "event_values"], { cwd: scratch });
      expect(sql.code, sql.stderr).toBe(0);
      const checked = await runCli(["check", policy, "--trace", tau, "--messages", "--format", "json", "--exit-zero"], { cwd: scratch, built: true });
      const report = JSON.parse(checked.stdout) as Report;
      const expected = report.runs
        .flatMap((run) => run.statements.flatMap((statement, rule) => (statement["witnesses"] as number[]).map((seq) => `${tau} · ${run.run} ${rule} ${seq}`)))
        .sort();
      const instance = await DuckDBInstance.create(":memory:");
      const connection = await instance.connect();
      try {
        await connection.run(`CREATE VIEW events AS SELECT * FROM read_parquet('${join(scratch, "events.parquet")}')`);
        await connection.run(`CREATE VIEW event_values AS SELECT * FROM read_parquet('${join(scratch, "values.parquet")}')`);
        const rows = (await connection.runAndReadAll(sql.stdout)).getRowObjectsJS();
        expect(rows.every((row) => row["problem"] === null)).toBe(true);
        const found = rows.map((row) => `${String(row["run"])} ${String(row["rule"])} ${String(row["seq"])}`).sort();
        expect(found).toEqual(expected);
        expect(found.length).toBeGreaterThan(100);
        // A DuckDB database holding the tables, for --events with --table.
        await connection.run(`ATTACH '${join(scratch, "fleet.duckdb")}' AS fleet`);
        await connection.run("CREATE TABLE fleet.runs AS SELECT * FROM events");
        await connection.run("CREATE TABLE fleet.vals AS SELECT * FROM event_values");
        await connection.run("DETACH fleet");
      } finally {
        connection.closeSync();
        instance.closeSync();
      }
      // The runbook's ClickHouse steps, in embedded ClickHouse: the tables loaded from the Parquet
      // files, then the SQL of `vigilc sql --dialect clickhouse`.
      const clickhouseSql = await runCli(["sql", policy, "--dialect", "clickhouse"], { cwd: scratch });
      expect(clickhouseSql.code, clickhouseSql.stderr).toBe(0);
      const session = openChdb();
      try {
        session.query(
          "CREATE TABLE events (run String, seq Int32, kind String, action String, status Nullable(String), args String, output Nullable(String), time Nullable(Int64), file Nullable(String), line Nullable(Int32)) ENGINE = MergeTree ORDER BY (run, seq)",
        );
        session.query(`INSERT INTO events SELECT * FROM file('${join(scratch, "events.parquet")}')`);
        session.query(
          "CREATE TABLE event_values (run String, seq Int32, subject String, names String, chain String, vkey String, utext Nullable(String), amount Nullable(String), nkey Nullable(String)) ENGINE = MergeTree ORDER BY (run, seq)",
        );
        session.query(`INSERT INTO event_values SELECT * FROM file('${join(scratch, "values.parquet")}')`);
        const rows = session
          .query(clickhouseSql.stdout, "JSONEachRow")
          .split("\n")
          .filter((line) => line !== "")
          .map((line) => JSON.parse(line) as Record<string, unknown>);
        expect(rows.every((row) => row["problem"] === null)).toBe(true);
        expect(rows.map((row) => `${String(row["run"])} ${String(row["rule"])} ${String(row["seq"])}`).sort()).toEqual(expected);
      } finally {
        session.cleanup();
      }
      // vigilc check --engine sql over the exported tables: the report of the check over the recording.
      const summary = (stdout: string) => {
        const report = JSON.parse(stdout) as Report & { summary: unknown };
        // The table gives its runs in the order of their names; the recording, in its own.
        return { summary: report.summary, runs: verdicts(report).sort((a, b) => ((a as { run: string }).run < (b as { run: string }).run ? -1 : 1)) };
      };
      const overRecording = summary(checked.stdout);
      for (const args of [
        ["--events", "events.parquet", "--values", "values.parquet"],
        // Without the values table, it is made from the events.
        ["--events", "events.parquet"],
        ["--events", "fleet.duckdb", "--table", "runs", "--values", "fleet.duckdb", "--values-table", "vals"],
      ]) {
        const overTable = await runCli(["check", policy, "--engine", "sql", ...args, "--format", "json", "--exit-zero"], { cwd: scratch });
        expect(overTable.code, overTable.stderr).toBe(0);
        expect(summary(overTable.stdout), args.join(" ")).toEqual(overRecording);
      }
      const wrong = await runCli(["check", policy, "--events", "events.parquet"], { cwd: scratch });
      expect(wrong.code).toBe(2);
      expect(wrong.stderr).toContain("--events is an events table for --engine sql");
      const missing = await runCli(["check", policy, "--engine", "sql", "--events", "none.parquet"], { cwd: scratch });
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain("error: the events table `none.parquet` cannot be read");
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
