import type { CheckedStatement, CompiledPolicy, TraceEvent } from "@vigil/compiler";
import type { EventsSource, RunVerdicts, SqlJudge } from "@vigil/sql";
import { CorpusSignature, type CorpusOptions, type CorpusResult, type CorpusRun } from "./corpus.js";
import { outcomeOf, runError, type RunOutcome } from "../reports/outcome.js";

/**
 * `vigilc check --engine sql` over a corpus: every run is read here, as `judgeRun` reads it
 * (`readRunEvents`: any format, shell calls grounded once, messages with `--messages`), into one
 * embedded DuckDB database (the events table and its values table), and the policy's one query
 * judges them all at once. The outcomes are those of the other engines, for every report; what a
 * forward run observes beside a verdict (how often a trigger held) is not there, except the bad
 * event of each broken `until` interval, which the query gives.
 */
export async function checkCorpusSql(runs: readonly CorpusRun[], policy: CompiledPolicy, options: CorpusOptions): Promise<CorpusResult> {
  const { mergeSignatures, readRunEvents, runName, runSignatureBuilder } = await import("@vigil/compiler");
  const { SqlJudge } = await import("@vigil/sql");
  const statements = policy.program.policies.flatMap((each) => each.statements);
  const judge = await SqlJudge.create();
  // The corpus's signature, the union of its runs': the policy's names are judged once against it.
  const union = new CorpusSignature(mergeSignatures);
  try {
    const outcomes: (RunOutcome | undefined)[] = [];
    const judged: { readonly index: number; readonly id: string; readonly run: CorpusRun; readonly format?: string; readonly eventCount: number; readonly kept?: TraceEvent[] }[] = [];
    let done = 0;
    for (const [index, run] of runs.entries()) {
      const id = runName(run.file, run.run);
      const signature = runSignatureBuilder(policy);
      const kept: TraceEvent[] | undefined = options.timeline === true ? [] : undefined;
      const named = run.run !== undefined ? { run: run.run } : {};
      const read = await readRunEvents(
        { file: run.file, ...named, ...(run.text !== undefined ? { text: run.text } : {}), ...(run.origin !== undefined ? { origin: run.origin } : {}) },
        {
          // A run cut from a file of runs is a τ-bench run, whatever the file was detected as.
          traceFormat: run.run !== undefined ? "tau-bench" : options.traceFormat,
          ...(options.ground !== undefined ? { ground: options.ground } : {}),
          ...(options.messages === true ? { messages: true } : {}),
        },
        (events) => {
          for (const event of events) {
            judge.append(id, event, run.file);
            signature.add(event);
            kept?.push(event);
          }
        },
      );
      const format = read.format !== undefined ? { format: read.format } : {};
      const errors = read.traceDiagnostics.filter((d) => d.severity === "error");
      if (errors.length === 0) union.add(signature.signature());
      const warnings = options.strict !== true ? [] : read.traceDiagnostics.filter((d) => d.severity === "warning");
      if (errors.length > 0 || warnings.length > 0) {
        // Its rows stay in the tables; its verdicts are never read.
        const stopped = errors.length > 0 ? errors.map((d) => runError(d, run.file)) : warnings.map((d) => ({ ...runError(d, run.file), message: `--strict: ${d.message}` }));
        outcomes[index] = { file: run.file, ...named, ...format, events: read.eventCount, statements: [], errors: stopped };
      } else {
        judge.addRun(id);
        judged.push({ index, id, run, ...format, eventCount: read.eventCount, ...(kept !== undefined ? { kept } : {}) });
      }
      options.onProgress?.(++done, runs.length);
    }
    const verdicts = await judge.judge(statements);
    for (const { index, id, run, format, eventCount, kept } of judged) {
      outcomes[index] = await runOutcome(judge, statements, id, verdicts.get(id)!, run.file, format, kept ?? new Map(), {
        ...(run.run !== undefined ? { run: run.run } : {}),
        timeline: options.timeline === true,
        eventCount,
      });
    }
    return { outcomes: outcomes.map((outcome) => outcome!), signature: union.signature() };
  } finally {
    judge.close();
  }
}

/**
 * `vigilc check --engine sql --events FILE`: the runs of an events table that exists (a Parquet or
 * JSON Lines file of `vigilc export`, or a table of a DuckDB database file), with its values table
 * when given (else made from the events), judged in embedded DuckDB by the policy's one query. Each
 * run is reported under the trace file its events came from, and its name in the table.
 */
export async function checkEventsSql(policy: CompiledPolicy, source: EventsSource): Promise<RunOutcome[]> {
  const { SqlJudge } = await import("@vigil/sql");
  const statements = policy.program.policies.flatMap((each) => each.statements);
  const judge = await SqlJudge.over(source);
  try {
    const verdicts = await judge.judge(statements);
    return await Promise.all(judge.runNames.map((id) => {
      const verdict = verdicts.get(id)!;
      const file = judge.fileOf(id) ?? source.events;
      // A run of a file of several is named `file · name` in the table.
      const run = id === file ? undefined : id.startsWith(`${file} · `) ? id.slice(file.length + 3) : id;
      return runOutcome(judge, statements, id, verdict, file, "events table", new Map(), { ...(run !== undefined ? { run } : {}), eventCount: judge.eventCount(id) });
    }));
  } finally {
    judge.close();
  }
}

/** A run the SQL engine judged, as the outcome every report is written from: its witnesses located at their lines. */
async function runOutcome(
  judge: SqlJudge,
  statements: readonly CheckedStatement[],
  id: string,
  verdict: RunVerdicts,
  file: string,
  format: string | undefined,
  events: ReadonlyMap<number, TraceEvent> | readonly TraceEvent[],
  options: { run?: string; timeline?: boolean; eventCount: number },
): Promise<RunOutcome> {
  const { breakingObservations, reportOf } = await import("@vigil/compiler");
  const report = reportOf(statements, verdict.outcomes, "sql", breakingObservations(verdict.brokenBy));
  const witnessLines = new Map<number, number>();
  for (const statement of verdict.outcomes) for (const position of statement.witnesses) witnessLines.set(position, judge.lineOf(id, position) ?? 1);
  return outcomeOf(file, format, events, report, { ...options, witnessLines });
}
