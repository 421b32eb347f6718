import type { CheckedProgram, CheckedStatement, StatementOutcome } from "@vigil/checker";
import { eventOfRow, eventRow, eventValueRows, type TraceEvent } from "@vigil/trace";
import { DuckDbBackend, type EventsSource, type SqlBackend } from "./backend.js";
import { compileSql, type CompiledSql } from "./compile.js";

/**
 * The SQL engine: runs in embedded DuckDB, in memory (or in any database a backend gives: SQLite,
 * PostgreSQL). Runs are appended event by event to the events table and its values table (`eventRow`, `eventValueRows`: the trace package's reading of
 * each event, the one every engine has), then the policy's one query (`compileSql`) judges them
 * all; its rows become each run's outcomes, in the shape every engine gives (`StatementOutcome`),
 * with the bad event of each broken `until` interval.
 */
export class SqlJudge {
  private readonly runs = new Map<string, RunInfo>();
  /** The short id of each run appended, and the run of each id. */
  private readonly ids = new Map<string, string>();
  private readonly names = new Map<string, string>();
  private closed = false;

  /** A judge over a database of the backend's engine (its tables made by the backend). */
  constructor(private readonly backend: SqlBackend) {}

  /** The SQL dialect of the judge's database. */
  get dialect(): SqlBackend["dialect"] {
    return this.backend.dialect;
  }

  /** A judge over an in-memory DuckDB database of its own. */
  static async create(): Promise<SqlJudge> {
    return new SqlJudge(await DuckDbBackend.create());
  }

  /**
   * A judge of the runs of an events table that exists (a Parquet or JSON Lines file, or a table of a
   * DuckDB database file), in embedded DuckDB. Its rows are read once, in order, for the runs and
   * their lines, and for the values table when none is given (made from the events' arguments and
   * outputs by `eventValueRows`, as everywhere).
   */
  static async over(source: EventsSource): Promise<SqlJudge> {
    const backend = await DuckDbBackend.over(source);
    const judge = new SqlJudge(backend);
    try {
      for await (const row of backend.eventRows()) {
        const event = eventOfRow(row);
        judge.note(row.run, event);
        if (backend.derivesValues) backend.appendValues(eventValueRows(row.run, event));
      }
    } catch (error) {
      judge.close();
      throw error;
    }
    return judge;
  }

  /** The runs judged, in the order first seen. */
  get runNames(): readonly string[] {
    return [...this.runs.keys()];
  }

  /** How many events a run has. */
  eventCount(run: string): number {
    return this.runs.get(run)?.lines.length ?? 0;
  }

  /** The file a run's events were read from, when they say. */
  fileOf(run: string): string | undefined {
    return this.runs.get(run)?.file;
  }

  /** Appends one event of a run (runs may interleave; a run's events come in order). */
  append(run: string, event: TraceEvent, file?: string): void {
    this.note(run, event);
    // In the judge's own database a run goes by a short id (DuckDB keeps a string of up to 12 bytes
    // inline), and an event keeps only the columns the SQL reads: its arguments and output are in
    // the values table, its file and line here.
    let id = this.ids.get(run);
    if (id === undefined) {
      id = String(this.ids.size);
      this.ids.set(run, id);
      this.names.set(id, run);
    }
    const row = eventRow(id, event, file);
    this.backend.append({ ...row, args: {}, output: null, file: null, line: null }, eventValueRows(id, event));
  }

  /** Keeps what outside the database says of an event: its line, and its run's file. */
  private note(run: string, event: TraceEvent): void {
    let info = this.runs.get(run);
    if (info === undefined) this.runs.set(run, (info = { lines: [] }));
    info.lines[event.position - 1] = event.source?.line ?? 0;
    if (info.file === undefined && event.source?.file !== undefined) info.file = event.source.file;
  }

  /** Forgets every run appended so far: the tables are emptied for the next runs. */
  async reset(): Promise<void> {
    await this.backend.reset();
    this.runs.clear();
    this.ids.clear();
    this.names.clear();
  }

  /** Makes a run known even when it has no event (it is judged like any other). */
  addRun(run: string): void {
    if (!this.runs.has(run)) this.runs.set(run, { lines: [] });
  }

  /** The line of a run's event in its recording, when it has one. */
  lineOf(run: string, position: number): number | undefined {
    const line = this.runs.get(run)?.lines[position - 1];
    return line === undefined || line === 0 ? undefined : line;
  }

  /**
   * Judges every run appended so far against the program's statements: per run, the outcome of each
   * statement (in program order) and, for `until`, the bad event that broke each witness's interval.
   */
  async judge(program: CheckedProgram | readonly CheckedStatement[] | CompiledSql): Promise<Map<string, RunVerdicts>> {
    const compiled = "rules" in program ? program : compileSql(program, { dialect: this.backend.dialect });
    const statements = compiled.rules.map((rule) => rule.statement);
    const found = new Map<string, Found[]>();
    for (const run of this.runs.keys()) found.set(run, statements.map(() => ({ witnesses: [], brokenBy: new Map() })));
    const failures = new Map<number, string>();
    if (compiled.sql !== undefined && compiled.rules.every((rule) => rule.sql !== undefined)) {
      try {
        this.read(await this.backend.query(compiled.sql), found);
      } catch {
        // The query failed (its rows are read only once it has them all): judge rule by rule, so that
        // only the rules whose query fails are undecided.
        await this.byRule(compiled, found, failures);
      }
    } else await this.byRule(compiled, found, failures);
    const verdicts = new Map<string, RunVerdicts>();
    for (const [run, perRule] of found) {
      const info = this.runs.get(run)!;
      verdicts.set(run, {
        outcomes: perRule.map((each, index) => outcomeOf(each, statements[index]!, info, failures.get(index))),
        brokenBy: perRule.map((each) => each.brokenBy),
      });
    }
    return verdicts;
  }

  private async byRule(compiled: CompiledSql, found: Map<string, Found[]>, failures: Map<number, string>): Promise<void> {
    for (const rule of compiled.rules) {
      if (rule.sql === undefined) {
        failures.set(rule.index, `the rule cannot be compiled exactly to ${compiled.dialect} SQL (S0001)`);
        continue;
      }
      try {
        this.read(await this.backend.query(rule.sql), found);
      } catch (error) {
        failures.set(rule.index, `the SQL engine could not run the rule's query: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  private read(rows: readonly Record<string, unknown>[], found: Map<string, Found[]>): void {
    for (const row of rows) {
      const run = String(row["run"]);
      const perRule = found.get(this.names.get(run) ?? run);
      if (perRule === undefined) continue;
      const each = perRule[Number(row["rule"])]!;
      const seq = Number(row["seq"]);
      const problem = row["problem"];
      if (problem !== null && problem !== undefined) {
        each.problem = {
          kind: String(problem) as Problem["kind"],
          seq,
          ...(row["time"] !== null ? { time: Number(row["time"]) } : {}),
          ...(row["prev_time"] !== null ? { previous: Number(row["prev_time"]) } : {}),
        };
        continue;
      }
      each.witnesses.push(seq);
      if (row["broken_by"] !== null && row["broken_by"] !== undefined) each.brokenBy.set(seq, Number(row["broken_by"]));
    }
  }

  /** Releases the database. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.backend.close();
  }
}

/** What the SQL engine decided of one run: each statement's outcome, and each broken `until` interval's bad event. */
export interface RunVerdicts {
  readonly outcomes: readonly StatementOutcome[];
  /** Per statement, for `until`: witness → the bad event that broke its interval. */
  readonly brokenBy: readonly ReadonlyMap<number, number>[];
}

/** What is kept of a run's events outside the database: the line of each (0 for none), and the file they were read from. */
interface RunInfo {
  readonly lines: number[];
  file?: string;
}

interface Problem {
  readonly kind: "no_time" | "time_backwards" | "amount";
  readonly seq: number;
  readonly time?: number;
  readonly previous?: number;
}

interface Found {
  witnesses: number[];
  brokenBy: Map<number, number>;
  problem?: Problem;
}

function outcomeOf(found: Found, statement: CheckedStatement, run: RunInfo, failure: string | undefined): StatementOutcome {
  if (failure !== undefined) return { holds: false, witnesses: [], undecided: failure };
  const witnesses = [...new Set(found.witnesses)].sort((a, b) => a - b);
  const problem = found.problem;
  if (problem !== undefined) return { holds: false, witnesses: [], undecided: problemReason(problem, run, statement) };
  return { holds: witnesses.length === 0, witnesses };
}

/** Why a rule is undecided on a run, in the words the forward engine uses. */
function problemReason(problem: Problem, run: RunInfo, statement: CheckedStatement): string {
  const line = run.lines[problem.seq - 1];
  const described = line === undefined || line === 0 ? `event ${problem.seq}` : `event ${problem.seq} (line ${line}${run.file !== undefined ? ` of ${run.file}` : ""})`;
  switch (problem.kind) {
    case "no_time":
      return `${described} has no time, and the rule measures time`;
    case "time_backwards":
      return `${described} has a time (${new Date(problem.time!).toISOString()}) earlier than the event before it (${new Date(problem.previous!).toISOString()}), and the rule measures time`;
    case "amount": {
      const key = statement.form === "limit" && statement.measure.kind === "sum" ? statement.measure.key.join(".") : "the key";
      return `${described} has an amount at \`${key}\` with more digits than the SQL engine's exact decimals hold (20 before the point, 18 after)`;
    }
  }
}
