import type { CompiledPolicy, Signature } from "@vigil/compiler";
import type { ReadRunFileResult } from "@vigil/trace";
import { checkCorpus, expandCorpus, expandRunFiles, progressLine, renderSummary, runsOfFile, summarize, type CorpusOptions, type CorpusRun } from "../corpus/corpus.js";
import { failsOn, type RunOutcome } from "../reports/outcome.js";
import { printableLine, renderClosedWorldSummary, splitClosedWorld } from "../reports/render.js";
import { noteMessagesOff, writeHtml, writeSarif, type CheckOptions } from "./check-shared.js";
import type { CommandContext } from "./context.js";
import { EXIT_INPUT_ERROR, EXIT_SAFE, EXIT_UNSAFE, InputError, loadCompiler, plural, ruleTexts } from "./shared.js";

/**
 * `check` over a corpus: a directory or glob of runs (`checkDirectory`), or a file holding several
 * runs (`checkRunFile`). Every run is judged in a worker thread; a summary, exit 2 if any run could
 * not be judged.
 */

/** `check --trace DIR|GLOB`: every trace file under it, each run of a file of runs among them. */
export async function checkDirectory(context: CommandContext, source: string, policyFile: string, traceArgument: string, options: CheckOptions): Promise<number> {
  const { io } = context;
  if (options.run !== undefined) {
    io.stderr(`error: --run chooses one run of a file holding several (a τ-bench results file), not of a directory or glob\n`);
    throw new InputError();
  }
  const runsOfCorpus = async (): Promise<CorpusRun[]> => {
    const files = await expandCorpus(traceArgument);
    if (files.length === 0) {
      io.stderr(`error: \`${traceArgument}\` holds no trace files (*.jsonl, *.json, *.ndjson); no run was checked\n`);
      throw new InputError();
    }
    // A file of several runs among them gives each of its runs.
    return expandRunFiles(files, options.traceFormat ?? "auto");
  };
  return checkRuns(context, source, policyFile, traceArgument, runsOfCorpus, options);
}

/** `check --trace FILE` of a file holding several runs, without `--run`: every run of it. */
export async function checkRunFile(context: CommandContext, source: string, policyFile: string, traceFile: string, runFile: ReadRunFileResult, options: CheckOptions): Promise<number> {
  const runsOfRunFile = async (): Promise<CorpusRun[]> => {
    if (runFile.runs.length === 0) {
      context.io.stderr(`error: \`${printableLine(traceFile)}\` holds no runs; no run was checked\n`);
      throw new InputError();
    }
    return runsOfFile(traceFile, runFile);
  };
  return checkRuns(context, source, policyFile, traceFile, runsOfRunFile, options);
}

/**
 * Every run `runsToCheck` gives checked against the policy, compiled once; the policy's names
 * against the corpus (`corpusName`) as a whole; the summary and the reports.
 */
async function checkRuns(context: CommandContext, source: string, policyFile: string, corpusName: string, runsToCheck: () => Promise<CorpusRun[]>, options: CheckOptions): Promise<number> {
  const { io } = context;
  const compiled = await compilePolicy(context, source, policyFile, options);
  await noteMessagesOff(io, compiled, options);
  const runs = await runsToCheck();
  const corpusOptions: CorpusOptions = {
    policySource: source,
    policyFile,
    traceFormat: options.traceFormat ?? "auto",
    ...(options.ground !== undefined ? { ground: options.ground } : {}),
    ...(options.messages === true ? { messages: true } : {}),
    engine: options.engine,
    timeoutMs: options.timeout,
    budgetMs: options.budget,
    ...(options.strict === true ? { strict: true } : {}),
    ...(options.html !== undefined ? { timeline: true } : {}),
    ...(io.progress === true ? { onProgress: (done: number, total: number) => io.stderr(progressLine(done, total)) } : {}),
  };
  // The SQL engine judges the whole corpus in one query, in one database; the others run by run, in worker threads.
  const { outcomes, signature } = options.engine === "sql" ? await (await import("../corpus/corpus-sql.js")).checkCorpusSql(runs, compiled, corpusOptions) : await checkCorpus(runs, corpusOptions);
  if (io.progress === true) io.stderr("\n");
  await reportClosedWorld(context, compiled, source, policyFile, corpusName, signature, options);
  return reportCorpus(context, compiled, source, policyFile, outcomes, options);
}

/**
 * The policy's warnings, and its names against the corpus's signature (the union of its runs'):
 * the closed world of a corpus. A name no run shows is reported once for the corpus, by the same
 * check as for one run (`checkAgainstSignature`), with the nearest name any run shows; a name
 * some run shows is known, though other runs lack it. Under `--strict` a warning stops the corpus
 * with exit 2, and no verdict is given.
 */
async function reportClosedWorld(
  context: CommandContext,
  compiled: CompiledPolicy,
  source: string,
  policyFile: string,
  corpusName: string,
  signature: Signature | undefined,
  options: CheckOptions,
): Promise<void> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const { checkAgainstSignature } = await loadCompiler();
  // Without a run read, there is no signature to judge the names against.
  const closedWorld = signature === undefined ? [] : checkAgainstSignature(compiled, signature);
  const notes = [...compiled.diagnostics, ...closedWorld];
  const { alone, summed } = splitClosedWorld(notes);
  printDiagnostics(alone);
  reportUnrendered();
  if (summed.length > 0) io.stderr(renderClosedWorldSummary(summed, source, corpusName, context.colors, { corpus: true }) + "\n\n");
  const warnings = notes.filter((d) => d.severity === "warning").length;
  if (options.strict === true && warnings > 0) {
    io.stderr(
      `error: --strict: ${plural(warnings, "warning")} about \`${policyFile}\` against the runs of \`${printableLine(corpusName)}\` ${warnings === 1 ? "counts as an error" : "count as errors"}; no verdict is given\n`,
    );
    throw new InputError();
  }
}

/** `check --events FILE`: the runs of an events table (Parquet, JSON Lines, a DuckDB database's table), judged by the SQL engine. */
export async function checkEvents(context: CommandContext, source: string, policyFile: string, options: CheckOptions): Promise<number> {
  const compiled = await compilePolicy(context, source, policyFile, options);
  const events = context.inputName(options.events!, "events table");
  const { checkEventsSql } = await import("../corpus/corpus-sql.js");
  let outcomes: RunOutcome[];
  try {
    outcomes = await checkEventsSql(compiled, {
      events,
      ...(options.table !== undefined ? { table: options.table } : {}),
      ...(options.values !== undefined ? { values: options.values } : {}),
      ...(options.valuesTable !== undefined ? { valuesTable: options.valuesTable } : {}),
    });
  } catch (error) {
    context.io.stderr(`error: the events table \`${printableLine(events)}\` cannot be read: ${printableLine((error as Error).message)}\n`);
    throw new InputError();
  }
  if (outcomes.length === 0) {
    context.io.stderr(`error: the events table \`${printableLine(events)}\` holds no runs; no run was checked\n`);
    throw new InputError();
  }
  return reportCorpus(context, compiled, source, policyFile, outcomes, options);
}

/**
 * The JSON report of a corpus, `{ verdict, summary, runs }` indented by two, written run by run: the
 * text of `JSON.stringify(report, null, 2)`, which a corpus of many runs would make longer than a
 * JavaScript string can be.
 */
function writeJsonReport(write: (text: string) => void, head: { verdict: string; summary: unknown }, outcomes: readonly RunOutcome[]): void {
  const indented = (value: unknown, by: string) => JSON.stringify(value, null, 2).replace(/\n/g, `\n${by}`);
  write(`{\n  "verdict": ${JSON.stringify(head.verdict)},\n  "summary": ${indented(head.summary, "  ")},\n  "runs": [`);
  if (outcomes.length === 0) {
    write("]\n}\n");
    return;
  }
  outcomes.forEach(({ timeline: _timeline, ...outcome }, index) => write(`${index === 0 ? "" : ","}\n    ${indented(outcome, "    ")}`));
  write("\n  ]\n}\n");
}

/** The summary (or JSON) of a corpus's outcomes, the SARIF and HTML reports, and the exit code. */
async function reportCorpus(context: CommandContext, compiled: CompiledPolicy, source: string, policyFile: string, outcomes: RunOutcome[], options: CheckOptions): Promise<number> {
  const { io } = context;
  const summary = summarize(outcomes);
  if (options.sarif !== undefined) await writeSarif(io, options.sarif, outcomes, policyFile);
  if (options.html !== undefined) await writeHtml(io, options.html, outcomes, policyFile, ruleTexts(compiled, source));
  if (options.format === "json") {
    const verdict = summary.unsafe > 0 || summary.failed > 0 ? "unsafe" : "safe";
    writeJsonReport(io.stdout, { verdict, summary }, outcomes);
  } else io.stdout(renderSummary(summary, outcomes));
  if (summary.failed > 0) return EXIT_INPUT_ERROR;
  const failing = outcomes.some((outcome) => failsOn(options.failOn, outcome.statements));
  return failing && options.exitZero !== true ? EXIT_UNSAFE : EXIT_SAFE;
}

/**
 * The policy, compiled once for every run; stops with exit 2 on its errors, and on its warnings
 * with `--strict`.
 */
async function compilePolicy(context: CommandContext, source: string, policyFile: string, options: CheckOptions): Promise<CompiledPolicy> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const { compile } = await loadCompiler();
  // The policy's own errors are reported once, before any run; its warnings after the runs, with
  // its names against the corpus's signature (`reportClosedWorld`).
  const compiled = compile(source, { file: policyFile });
  const errors = compiled.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    printDiagnostics(errors);
    reportUnrendered();
    io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; no run was checked\n`);
    throw new InputError();
  }
  const policyWarnings = compiled.diagnostics.filter((d) => d.severity === "warning");
  if (options.strict === true && policyWarnings.length > 0) {
    printDiagnostics(policyWarnings);
    reportUnrendered();
    io.stderr(`error: --strict: ${plural(policyWarnings.length, "warning")} about \`${policyFile}\` ${policyWarnings.length === 1 ? "counts as an error" : "count as errors"}; no run was checked\n`);
    throw new InputError();
  }
  return compiled;
}
