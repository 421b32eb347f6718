import type { CompiledPolicy, RunJudgement } from "@vigil/compiler";
import type { ReadRunFileResult, RecordingRun } from "@vigil/trace";
import { failsOn, outcomeOf, timelineEvents } from "../reports/outcome.js";
import { renderClosedWorldSummary, renderReport, splitClosedWorld } from "../reports/render.js";
import { noteMessagesOff, writeHtml, writeSarif, type CheckOptions } from "./check-shared.js";
import type { CommandContext } from "./context.js";
import { EXIT_SAFE, EXIT_UNSAFE, fileSize, InputError, isStackOverflow, loadCompiler, plural, ruleTexts } from "./shared.js";

/** How many witnesses of a rule the human report shows (reports/render.ts shows at most this many). */
const WITNESSES_SHOWN = 20;

/** Traces up to this size are read whole (code frames in diagnostics); larger ones are streamed. */
const WHOLE_TRACE_BYTES = 8 * 2 ** 20;

/** The policy a run is judged against: its text, its file, and its compilation. */
interface Policy {
  readonly source: string;
  readonly file: string;
  readonly compiled: CompiledPolicy;
}

/** The run `check` judges, and the names it goes by. */
interface OneRun {
  /** The trace as given: a file, or `-` for standard input. */
  readonly traceArgument: string;
  /** The trace's name in diagnostics and reports. */
  readonly traceFile: string;
  /** The run `--run` chose in a file of runs. */
  readonly chosen: RecordingRun | undefined;
  /** How the run goes by in reports: its file, and its name in a file of runs. */
  readonly runName: string;
}

/**
 * `check --trace FILE` of one run: a trace, standard input, or the run `--run` names in a file of
 * runs (`runFile`, when the trace is one). Exit 0 when every rule holds, 1 when one that fails
 * the run (`--fail-on`) does not.
 */
export async function checkOneRun(
  context: CommandContext,
  source: string,
  policyFile: string,
  traceArgument: string,
  runFile: ReadRunFileResult | undefined,
  options: CheckOptions,
): Promise<number> {
  const traceFile = context.inputName(traceArgument, "trace");
  const chosen = options.run !== undefined ? context.chooseRun(runFile, options.run, traceFile) : undefined;
  const policy = { source, file: policyFile, compiled: await compilePolicy(context, source, policyFile, options) };
  const run = { traceArgument, traceFile, chosen, runName: chosen !== undefined ? `${traceFile} · ${chosen.name}` : traceFile };
  const judged = await judge(context, policy.compiled, run, options);
  reportDiagnostics(context, policy, judged, run, options);
  if (options.sarif !== undefined || options.html !== undefined) await writeReports(context, policy, judged, run, options);
  await printReport(context, policy, judged, run, options);
  return failsOn(options.failOn, judged.report!.statements.map((s) => ({ holds: s.holds, response: s.statement.response }))) && options.exitZero !== true ? EXIT_UNSAFE : EXIT_SAFE;
}

/**
 * The policy, compiled once; the run's signature is checked against it in the pipeline. Stops
 * with exit 2 on its errors.
 */
async function compilePolicy(context: CommandContext, source: string, policyFile: string, options: CheckOptions): Promise<CompiledPolicy> {
  const { compile } = await loadCompiler();
  const compiled = compile(source, { file: policyFile });
  if (!compiled.ok) {
    const errors = compiled.diagnostics.filter((d) => d.severity === "error");
    context.printDiagnostics(errors);
    context.reportUnrendered();
    context.io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; no rule was checked\n`);
    throw new InputError();
  }
  await noteMessagesOff(context.io, compiled, options);
  return compiled;
}

/** The run read and judged by the one pipeline; stops with exit 2 on a trace nested too deeply to read. */
async function judge(context: CommandContext, compiled: CompiledPolicy, run: OneRun, options: CheckOptions): Promise<RunJudgement> {
  const { io } = context;
  const { createEngine, judgeRun } = await loadCompiler();
  const { traceArgument, traceFile, chosen } = run;
  // A trace of moderate size is read whole, so that its diagnostics show code frames and a
  // report can show its events; a larger one is streamed through the pipeline, which keeps
  // only the events at the witnesses. Standard input is read whole, and so is a run of a
  // file of runs (its text was cut from the file, read whole).
  const whole = chosen !== undefined || context.fromStdin(traceArgument, "trace") || options.engine === "smt" || (await fileSize(traceArgument)) <= WHOLE_TRACE_BYTES;
  const text = chosen !== undefined ? chosen.text : whole ? await context.readText(traceArgument, "trace") : undefined;
  // The engine is made here rather than inside the pipeline so that the release of what it holds
  // (the solver's decider) can be left to the end of the process (see `CliIo.exitsAfterRun`).
  const engine = createEngine(options.engine, { smt: { timeoutMs: options.timeout } });
  try {
    const named = chosen !== undefined ? { run: chosen.name, origin: chosen.origin } : {};
    return await judgeRun(compiled, { file: traceFile, ...(text !== undefined ? { text } : {}), ...named }, {
      engine,
      traceFormat: chosen !== undefined ? "tau-bench" : (options.traceFormat ?? "auto"),
      ...(options.ground !== undefined ? { ground: options.ground } : {}),
      ...(options.messages === true ? { messages: true } : {}),
      strict: options.strict === true,
      budgetMs: options.budget,
      keepEvents: whole,
      // The human report shows the first witnesses of each rule; SARIF needs only their lines.
      locateWitnesses: WITNESSES_SHOWN,
      witnessLines: options.sarif !== undefined,
    });
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    io.stderr(`error: cannot read the trace \`${run.runName}\`: a value in it is nested too deeply to read; no rule was checked\n`);
    throw new InputError();
  } finally {
    if (io.exitsAfterRun !== true) await engine.dispose();
  }
}

/**
 * The diagnostics of the trace and of the policy against it; stops with exit 2 when the trace has
 * errors, and when there are warnings under `--strict`.
 */
function reportDiagnostics(context: CommandContext, policy: Policy, judged: RunJudgement, run: OneRun, options: CheckOptions): void {
  const { io, printDiagnostics, reportUnrendered } = context;
  const { source, file: policyFile, compiled } = policy;
  const { runName } = run;
  context.reportReading({ ...judged, file: runName });
  const traceErrors = judged.traceDiagnostics.filter((d) => d.severity === "error");
  printDiagnostics(traceErrors.length > 0 ? traceErrors : judged.traceDiagnostics);
  if (judged.stopped === "trace") {
    reportUnrendered();
    io.stderr(`error: the trace \`${runName}\` has ${plural(traceErrors.length, "error")}; no rule was checked\n`);
    throw new InputError();
  }
  const policyNotes = [...compiled.diagnostics, ...judged.signatureDiagnostics];
  const { alone, summed } = splitClosedWorld(policyNotes);
  printDiagnostics(alone);
  reportUnrendered();
  if (summed.length > 0) io.stderr(renderClosedWorldSummary(summed, source, run.traceFile, context.colors) + "\n\n");
  let warnings = [...policyNotes, ...judged.traceDiagnostics].filter((d) => d.severity === "warning").length;
  if (compiled.program.policies.every((p) => p.statements.length === 0)) {
    // Vacuously safe; but a policy without rules is almost always the wrong file or an unfinished one.
    io.stderr(`warning: the policy \`${policyFile}\` declares no rule, so nothing is checked and the verdict is vacuously safe\n\n`);
    warnings++;
  }
  if (options.strict === true && warnings > 0) {
    io.stderr(`error: --strict: ${plural(warnings, "warning")} (about \`${policyFile}\` or \`${runName}\`) ${warnings === 1 ? "counts as an error" : "count as errors"}; no rule was checked\n`);
    throw new InputError();
  }
}

/** The report on standard output: JSON, or for people. */
async function printReport(context: CommandContext, policy: Policy, judged: RunJudgement, run: OneRun, options: CheckOptions): Promise<void> {
  const report = judged.report!;
  if (options.format === "json") {
    const { reportToJson } = await loadCompiler();
    context.io.stdout(JSON.stringify(reportToJson(report), null, 2) + "\n");
    return;
  }
  // A streamed run kept only the events at the witnesses the report shows.
  const kept = judged.events;
  const eventAt = kept !== undefined ? (position: number) => kept[position - 1] : (position: number) => judged.witnessEvents!.get(position);
  const { uncountedAmount } = await loadCompiler();
  const input = { report, policySource: policy.source, policyFile: policy.file, traceFile: run.runName, eventCount: judged.eventCount, eventAt, uncountedAmount, ...(options.why === true ? { why: true } : {}) };
  context.io.stdout(renderReport(input, context.colors));
}

/** `--sarif FILE` and `--html FILE`: the run's outcome written as each report asked for. */
async function writeReports(context: CommandContext, policy: Policy, judged: RunJudgement, run: OneRun, options: CheckOptions): Promise<void> {
  // A streamed run's timeline reads again only the events it shows.
  const events = judged.events ?? (options.html !== undefined ? await timelineEvents(judged, options) : judged.witnessEvents!);
  const outcome = outcomeOf(run.traceFile, judged.format, events, judged.report!, {
    ...(run.chosen !== undefined ? { run: run.chosen.name } : {}),
    timeline: options.html !== undefined,
    eventCount: judged.eventCount,
    ...(judged.witnessLines !== undefined ? { witnessLines: judged.witnessLines } : {}),
  });
  if (options.sarif !== undefined) await writeSarif(context.io, options.sarif, [outcome], policy.file);
  if (options.html !== undefined) await writeHtml(context.io, options.html, [outcome], policy.file, ruleTexts(policy.compiled, policy.source));
}
