import { stat, writeFile } from "node:fs/promises";
import type { CompiledPolicy, Diagnostic, DiagnosticCode, EngineName, Encoding, ReadRecordingResult, Trace } from "@vigil/compiler";
import { closestName, diagnosticCodes } from "@vigil/diagnostics";
import type { ReadRunFileResult, RecordingRun } from "@vigil/trace";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { checkCorpus, expandCorpus, expandRunFiles, isCorpus, progressLine, renderSummary, runsOfFile, summarize, type CorpusRun } from "./corpus.js";
import { toHtml, type RuleText } from "./html.js";
import { failsOn, outcomeOf, timelineEvents, type FailOn, type RunOutcome } from "./outcome.js";
import { toSarif } from "./sarif.js";
import { printableLine, printableText, renderClosedWorldSummary, renderDiagnostic, renderReport, splitClosedWorld } from "./render.js";

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly colors: boolean;
  readonly cwd: string;
  /**
   * True when the process ends as soon as `run` returns (the `vigilc` executable does). Z3's worker
   * threads then end with the process instead of being stopped one by one: stopping them while the
   * thread of the last solver call is still winding down makes the WebAssembly runtime print
   * `received "cleanupThread" command from terminated worker` on stderr. Leave it unset when
   * embedding `run` in a process that keeps running; the solver runtime is then released.
   */
  readonly exitsAfterRun?: boolean;
  /** True when stderr is a terminal: corpus runs then draw a progress bar there. */
  readonly progress?: boolean;
  /** Reads all of standard input, for a trace given as `-`. Without it, `-` is a file name. */
  readonly stdin?: () => Promise<string>;
}

/** How a trace read from standard input (`--trace -`) is named in diagnostics and reports. */
export const STDIN_NAME = "<stdin>";

/** Exit codes: every statement holds; a statement is violated or undecided; bad usage or input. */
export const EXIT_SAFE = 0;
export const EXIT_UNSAFE = 1;
export const EXIT_INPUT_ERROR = 2;

/** Thrown inside a command to stop with exit code 2 after the diagnostics were printed. */
class InputError extends Error {}

/**
 * At most this many diagnostics are rendered in one run; the rest are counted in one closing line.
 * A generated policy can produce thousands of identical warnings, each with a code frame.
 */
export const MAX_RENDERED_DIAGNOSTICS = 100;

/** A leading byte-order mark is an encoding artifact, not part of the text. */
function stripByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

/**
 * The stages are loaded when a command needs them: the parser generator, the schema library and
 * the solver take most of a second to load, which `explain`, `--help` and a usage error never
 * need, and `fmt` and `signature` need only one of.
 */
const loadCompiler = () => import("@vigil/compiler");
const loadTraceReader = () => import("@vigil/trace");
const loadSyntax = () => import("@vigil/syntax");

/** Runs `vigilc` with the given arguments and returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  // A hook parses its own arguments and loads only what a decision needs (see hook.ts).
  if (argv[0] === "hook") return (await import("./hook.js")).run(argv, io);
  let exitCode = EXIT_SAFE;
  const colors = { enabled: io.colors };
  const sources = new Map<string, string>();

  let rendered = 0;
  const unrendered = { error: 0, warning: 0, info: 0 };
  const printDiagnostics = (diagnostics: readonly Diagnostic[]): void => {
    for (const d of diagnostics) {
      if (rendered >= MAX_RENDERED_DIAGNOSTICS) {
        unrendered[d.severity]++;
        continue;
      }
      rendered++;
      io.stderr(renderDiagnostic(d, sources, colors) + "\n\n");
    }
  };
  /** Says how many diagnostics were left out, if any; called before a command's closing line. */
  const reportUnrendered = (): void => {
    const parts = (["error", "warning", "info"] as const).filter((s) => unrendered[s] > 0).map((s) => plural(unrendered[s], s === "info" ? "more note" : `more ${s}`));
    if (parts.length === 0) return;
    io.stderr(`… and ${parts.join(", ")}, not shown (at most ${MAX_RENDERED_DIAGNOSTICS} diagnostics are printed)\n`);
    unrendered.error = unrendered.warning = unrendered.info = 0;
  };

  /** A trace given as `-` is read from standard input (when the caller provides it). */
  const fromStdin = (file: string, what: string): boolean => file === "-" && io.stdin !== undefined && what === "trace";
  /** How an input is named in diagnostics and reports. */
  const inputName = (file: string, what: string): string => (fromStdin(file, what) ? STDIN_NAME : file);

  /** Standard input, once read: a command may look at the trace twice (is it a file of runs? then the run). */
  let stdinText: string | undefined;
  const readText = async (file: string, what: string): Promise<string> => {
    if (fromStdin(file, what) && io.stdin !== undefined) {
      if (stdinText === undefined) {
        stdinText = stripByteOrderMark(await io.stdin());
        sources.set(STDIN_NAME, stdinText);
      }
      return stdinText;
    }
    const { readRegularFile } = await loadTraceReader();
    const read = await readRegularFile(file, what);
    if (typeof read !== "string") {
      // Only regular files are read: a FIFO or a device would block or never end.
      io.stderr(`error: ${printableText(read.message)}\n`);
      throw new InputError();
    }
    sources.set(file, read);
    return read;
  };

  /**
   * The trace as a file holding several runs (a τ-bench results file), read whole and cut into its
   * runs; undefined when it is one run. A file that cannot be read stops with exit 2 when `--run`
   * was given (a run of it is wanted), and is otherwise left to the reading of one run.
   */
  const loadRunFile = async (path: string, reading: TraceReading): Promise<ReadRunFileResult | undefined> => {
    const format = reading.traceFormat ?? "auto";
    if (format !== "auto" && format !== "tau-bench") return undefined;
    const { readRunFile, splitRunFile } = await loadTraceReader();
    if (fromStdin(path, "trace")) {
      const text = await readText(path, "trace");
      const runs = splitRunFile(text, { format });
      return runs === undefined ? undefined : { ...runs, text };
    }
    const read = await readRunFile(path, { format });
    if (read !== undefined && "code" in read) {
      // Without --run the trace is read as one run next, which says why it cannot be, in its turn.
      if (reading.run === undefined) return undefined;
      io.stderr(`error: ${printableText(read.message)}\n`);
      throw new InputError();
    }
    if (read !== undefined) sources.set(path, read.text);
    return read;
  };

  /**
   * The run `--run` names in a file of runs; stops with exit 2 when it names none of them, or when
   * the trace is not such a file.
   */
  const chooseRun = (runFile: ReadRunFileResult | undefined, name: string, file: string): RecordingRun => {
    if (runFile === undefined) {
      io.stderr(`error: --run chooses one run of a file holding several (a τ-bench results file); \`${printableLine(file)}\` is one run\n`);
      throw new InputError();
    }
    const run = runFile.runs.find((candidate) => candidate.name === name);
    if (run !== undefined) return run;
    const names = runFile.runs.map((candidate) => candidate.name);
    const near = closestName(name, names);
    io.stderr(`error: \`${printableLine(file)}\` has no run named \`${printableLine(name)}\`${near !== undefined ? `; did you mean \`${printableLine(near)}\`?` : ""}\n`);
    if (names.length > 0) io.stderr(`  help: its ${plural(names.length, "run")} are named by task and trial, from \`${printableLine(names[0]!)}\` to \`${printableLine(names.at(-1)!)}\`\n`);
    throw new InputError();
  };

  /**
   * The one run a command reads from a file of runs: the run `--run` names, or exit 2 saying how to
   * name one. Undefined for a trace of one run (where `--run` is an error).
   */
  const oneRunOf = (runFile: ReadRunFileResult | undefined, reading: TraceReading, file: string, command: string): RecordingRun | undefined => {
    if (reading.run !== undefined) return chooseRun(runFile, reading.run, file);
    if (runFile === undefined) return undefined;
    const first = runFile.runs[0]?.name ?? "task 0 trial 0";
    io.stderr(
      `error: the trace \`${printableLine(file)}\` holds ${plural(runFile.runs.length, "run")} (τ-bench); \`${command}\` reads one\n` +
        `  help: choose it with --run NAME, such as --run '${printableLine(first)}' (runs are named by task and trial)\n`,
    );
    throw new InputError();
  };

  /**
   * Reads a trace; stops with exit 2 on any error. Returns the trace, how many warnings it got, and
   * the name it goes by in diagnostics and reports. A file of several runs gives the run `--run` names.
   */
  const loadTrace = async (
    path: string,
    consequence = "no rule was checked",
    reading: TraceReading = {},
    command = "lower",
  ): Promise<{ trace: Trace; warnings: number; name: string }> => {
    const text = await readText(path, "trace");
    const file = inputName(path, "trace");
    const { readRecording, splitRunFile } = await loadTraceReader();
    const format = reading.traceFormat ?? "auto";
    const runFile = splitRunFile(text, { format });
    const run = oneRunOf(runFile === undefined ? undefined : { ...runFile, text }, reading, file, command);
    let read: ReadRecordingResult;
    try {
      // Recordings of real agents are grounded by default; canonical events are taken as given.
      read = readRecording(run?.text ?? text, {
        file,
        format: run !== undefined ? "tau-bench" : format,
        ...(reading.ground !== undefined ? { ground: reading.ground } : {}),
        ...(reading.messages === true ? { messages: true } : {}),
        ...(run !== undefined ? { origin: run.origin } : {}),
      });
      reportReading({ file: run !== undefined ? `${file} · ${run.name}` : file, ...read, traceDiagnostics: read.diagnostics });
    } catch (error) {
      if (!isStackOverflow(error)) throw error;
      io.stderr(`error: cannot read the trace \`${file}\`: a value in it is nested too deeply to read; ${consequence}\n`);
      throw new InputError();
    }
    const { trace, diagnostics } = read;
    const errors = diagnostics.filter((d) => d.severity === "error");
    printDiagnostics(errors.length > 0 ? errors : diagnostics);
    if (errors.length > 0) {
      reportUnrendered();
      io.stderr(`error: the trace \`${file}\` has ${plural(errors.length, "error")}; ${consequence}\n`);
      throw new InputError();
    }
    return { trace, warnings: diagnostics.filter((d) => d.severity === "warning").length, name: file };
  };

  /** Says which format a recording was read as, and how many calls and grounded events it gave. */
  const reportReading = (read: {
    readonly file: string;
    readonly format?: string;
    readonly detected: boolean;
    readonly calls: number;
    readonly messageEvents: number;
    readonly groundedEvents: number;
    readonly traceDiagnostics: readonly Diagnostic[];
  }): void => {
    if (read.format === undefined || read.format === "jsonl") return;
    // Counts only for a recording that read: with errors, the format is what explains them.
    const counts = read.traceDiagnostics.some((d) => d.severity === "error")
      ? ""
      : `: ${plural(read.calls, "tool call")}` +
        (read.messageEvents > 0 ? ` and ${plural(read.messageEvents, "message")}` : "") +
        (read.groundedEvents > 0 ? `, and ${plural(read.groundedEvents, "event")} grounded from shell commands` : "");
    io.stderr(`note: read \`${printableLine(read.file)}\` as ${read.format}${read.detected ? " (detected)" : ""}${counts}\n`);
  };

  const writeSarif = async (file: string, outcomes: readonly RunOutcome[], policyFile: string): Promise<void> => {
    try {
      await writeFile(file, JSON.stringify(toSarif(outcomes, { policyFile, cwd: io.cwd, version: "0.1.0" }), null, 2) + "\n");
    } catch (error) {
      io.stderr(`error: cannot write the SARIF report \`${file}\`: ${(error as Error).message}\n`);
      throw new InputError();
    }
  };

  const writeHtml = async (file: string, outcomes: readonly RunOutcome[], policyFile: string, rules: readonly RuleText[]): Promise<void> => {
    try {
      await writeFile(file, toHtml(outcomes, { policyFile, rules, version: "0.1.0", generatedAt: new Date().toISOString() }));
    } catch (error) {
      io.stderr(`error: cannot write the HTML report \`${file}\`: ${(error as Error).message}\n`);
      throw new InputError();
    }
  };

  /** `check --schema`: the policy against the signature of tool schemas, before any run exists. */
  const checkAgainstSchemas = async (source: string, policyFile: string, schemaFile: string, strict: boolean): Promise<number> => {
    const text = await readText(schemaFile, "tool schemas");
    const { signatureFromToolSchemas } = await loadTraceReader();
    const { signature, diagnostics: schemaProblems } = signatureFromToolSchemas(text, { file: schemaFile });
    if (schemaProblems.length > 0) {
      printDiagnostics(schemaProblems);
      reportUnrendered();
      io.stderr(`error: the tool schemas \`${schemaFile}\` cannot be read; nothing was checked\n`);
      throw new InputError();
    }
    const { compile } = await loadCompiler();
    const compiled = compile(source, { signature, file: policyFile });
    printDiagnostics(compiled.diagnostics);
    reportUnrendered();
    const errors = compiled.diagnostics.filter((d) => d.severity === "error").length;
    const warnings = compiled.diagnostics.filter((d) => d.severity === "warning").length;
    io.stdout(
      `checked ${policyFile} against ${plural(signature.actions.size, "tool")} of ${schemaFile}: ` +
        `${plural(errors, "error")}, ${plural(warnings, "warning")}\n`,
    );
    return errors > 0 || (strict && warnings > 0) ? EXIT_INPUT_ERROR : EXIT_SAFE;
  };

  /**
   * Says, once, that the policy names message actions that make no event without `--messages`:
   * the conditions on them would match nothing, silently but for a closed-world warning.
   */
  const noteMessagesOff = async (compiled: CompiledPolicy, reading: TraceReading): Promise<void> => {
    if (reading.messages === true || !compiled.ok) return;
    const { checkAgainstSignature } = await loadCompiler();
    const { emptySignature } = await loadTraceReader();
    const named = new Set<string>();
    for (const d of checkAgainstSignature(compiled, emptySignature())) {
      const action = d.code === "V1101" ? /^the action `(user_message|agent_message)`/.exec(d.message)?.[1] : undefined;
      if (action !== undefined) named.add(action);
    }
    if (named.size === 0) return;
    const names = [...named].map((name) => `\`${name}\``).join(" and ");
    io.stderr(`note: the policy names ${names}: messages are events only with --messages, so without it the conditions on them match nothing\n\n`);
  };

  /** `check` over a directory or glob of runs, or a file of runs: every run checked, a summary, exit 2 if any run could not be. */
  const checkCorpusCommand = async (
    source: string,
    policyFile: string,
    runsToCheck: () => Promise<CorpusRun[]>,
    options: {
      format: "human" | "json";
      exitZero?: boolean;
      failOn: FailOn;
      sarif?: string;
      html?: string;
      engine: EngineName;
      timeout: number;
      budget: number;
      strict?: boolean;
    } & TraceReading,
  ): Promise<number> => {
    const { compile } = await loadCompiler();
    // The policy's own errors are reported once, before any run (signature warnings are per run, and not printed).
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
    await noteMessagesOff(compiled, options);
    const runs = await runsToCheck();
    const outcomes = await checkCorpus(runs, {
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
    });
    if (io.progress === true) io.stderr("\n");
    const summary = summarize(outcomes);
    if (options.sarif !== undefined) await writeSarif(options.sarif, outcomes, policyFile);
    if (options.html !== undefined) await writeHtml(options.html, outcomes, policyFile, ruleTexts(compiled, source));
    if (options.format === "json") {
      const verdict = summary.unsafe > 0 || summary.failed > 0 ? "unsafe" : "safe";
      const runs = outcomes.map(({ timeline: _timeline, ...outcome }) => outcome);
      io.stdout(JSON.stringify({ verdict, summary, runs }, null, 2) + "\n");
    } else io.stdout(renderSummary(summary, outcomes));
    if (summary.failed > 0) return EXIT_INPUT_ERROR;
    const failing = outcomes.some((outcome) => failsOn(options.failOn, outcome.statements));
    return failing && options.exitZero !== true ? EXIT_UNSAFE : EXIT_SAFE;
  };

  const program = new Command("vigilc")
    .description("Vigil: check agent tool-call traces against behavioral policies")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run `vigilc --help` for usage)");

  program
    .command("check")
    .description("judge a trace against a policy: exit 0 when every rule holds, 1 when one is violated or undecided, 2 on bad usage or input")
    .argument("<policy>", "a .vigil file")
    .option("-t, --trace <file>", "the trace: canonical JSON Lines or JSON array, a recording (see --trace-format), a directory or glob of runs, or - for standard input")
    .option("--schema <file>", "without --trace: check the policy against tool schemas (an MCP tools/list result or OpenAI function definitions)")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .option("--run <name>", "of a file holding several runs (τ-bench): check only this run (such as 'task 0 trial 0'); without it every run is checked, as a corpus")
    .addOption(new Option("-e, --engine <engine>", "decision procedure").choices(["eval", "smt"]).default("eval"))
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .option("--strict", "treat warnings (about the policy or the trace) as errors: exit 2 without checking")
    .option("--exit-zero", "exit 0 even when a rule is violated or undecided (bad input still exits 2)")
    .addOption(
      new Option("--fail-on <response>", "exit 1 only for a rule whose response is at least this strong (block > ask > warn); weaker ones are reported and do not fail")
        .choices(["block", "ask", "warn"])
        .default("warn"),
    )
    .option("--sarif <file>", "also write the results as SARIF 2.1.0 (for code-scanning interfaces)")
    .option("--html <file>", "also write a self-contained HTML report: a timeline per run, witnesses beside the rules they violate")
    .option("--why", "in the human report of one run, say for every rule why it holds or not (how many events matched its trigger; the JSON always says)")
    .option("--timeout <ms>", "for --engine smt: time limit per solver call, in milliseconds", parsePositiveInteger, 30_000)
    .option("--budget <ms>", "for --engine eval: time budget for judging one run, in milliseconds; past it every rule is undecided (fail closed)", parsePositiveInteger, 600_000)
    .action(
      async (
        policyFile: string,
        options: {
          trace?: string;
          schema?: string;
          sarif?: string;
          html?: string;
          engine: EngineName;
          format: "human" | "json";
          strict?: boolean;
          exitZero?: boolean;
          failOn: FailOn;
          why?: boolean;
          timeout: number;
          budget: number;
        } & TraceReading,
      ) => {
        if (options.trace === undefined && options.schema === undefined) {
          io.stderr("error: `check` needs a trace (--trace FILE) or tool schemas (--schema FILE)\n(run `vigilc --help` for usage)\n");
          throw new InputError();
        }
        if (options.trace !== undefined && options.schema !== undefined) {
          io.stderr("error: --schema and --trace cannot be used together: --schema checks a policy against tool schemas before any run exists, --trace judges a run\n(run `vigilc --help` for usage)\n");
          throw new InputError();
        }
        const source = await readText(policyFile, "policy");
        if (options.trace === undefined) {
          exitCode = await checkAgainstSchemas(source, policyFile, options.schema!, options.strict === true);
          return;
        }
        const traceArgument = options.trace;
        if (await isCorpus(traceArgument)) {
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
          exitCode = await checkCorpusCommand(source, policyFile, runsOfCorpus, options);
          return;
        }
        const traceFile = inputName(traceArgument, "trace");
        // A file holding several runs is a corpus of its runs, unless --run chooses one of them.
        const runFile = await loadRunFile(traceArgument, options);
        if (runFile !== undefined && options.run === undefined) {
          const runsOfRunFile = async (): Promise<CorpusRun[]> => {
            if (runFile.runs.length === 0) {
              io.stderr(`error: \`${printableLine(traceFile)}\` holds no runs; no run was checked\n`);
              throw new InputError();
            }
            return runsOfFile(traceFile, runFile);
          };
          exitCode = await checkCorpusCommand(source, policyFile, runsOfRunFile, options);
          return;
        }
        const chosen = options.run !== undefined ? chooseRun(runFile, options.run, traceFile) : undefined;
        const { compile, judgeRun, reportToJson, SmtDecider } = await loadCompiler();
        // The policy is compiled once; the run's signature is checked against it in the pipeline.
        const compiled = compile(source, { file: policyFile });
        if (!compiled.ok) {
          const errors = compiled.diagnostics.filter((d) => d.severity === "error");
          printDiagnostics(errors);
          reportUnrendered();
          io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; no rule was checked\n`);
          throw new InputError();
        }
        await noteMessagesOff(compiled, options);
        // How the run goes by in reports: its file, and its name in a file of runs.
        const runName = chosen !== undefined ? `${traceFile} · ${chosen.name}` : traceFile;
        // A trace of moderate size is read whole, so that its diagnostics show code frames and a
        // report can show its events; a larger one is streamed through the pipeline, which keeps
        // only the events at the witnesses. Standard input is read whole, and so is a run of a
        // file of runs (its text was cut from the file, read whole).
        const whole = chosen !== undefined || fromStdin(traceArgument, "trace") || options.engine === "smt" || (await fileSize(traceArgument)) <= WHOLE_TRACE_BYTES;
        const text = chosen !== undefined ? chosen.text : whole ? await readText(traceArgument, "trace") : undefined;
        // The decider is made here rather than inside the pipeline so that its release can be left to
        // the end of the process (see `CliIo.exitsAfterRun`).
        const decider = options.engine === "smt" ? await SmtDecider.create({ timeoutMs: options.timeout }) : undefined;
        let judged;
        try {
          const run = chosen !== undefined ? { run: chosen.name, origin: chosen.origin } : {};
          judged = await judgeRun(compiled, { file: traceFile, ...(text !== undefined ? { text } : {}), ...run }, {
            engine: options.engine,
            ...(decider !== undefined ? { decider } : {}),
            smt: { timeoutMs: options.timeout },
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
          io.stderr(`error: cannot read the trace \`${runName}\`: a value in it is nested too deeply to read; no rule was checked\n`);
          throw new InputError();
        } finally {
          if (decider !== undefined && io.exitsAfterRun !== true) await decider.dispose();
        }
        reportReading({ ...judged, file: runName });
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
        if (summed.length > 0) io.stderr(renderClosedWorldSummary(summed, source, traceFile, colors) + "\n\n");
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
        const report = judged.report!;
        // A streamed run's timeline reads again only the events it shows.
        const events = judged.events ?? (options.html !== undefined ? await timelineEvents(judged, options) : judged.witnessEvents!);
        if (options.sarif !== undefined || options.html !== undefined) {
          const outcome = outcomeOf(traceFile, judged.format, events, report, {
            ...(chosen !== undefined ? { run: chosen.name } : {}),
            timeline: options.html !== undefined,
            eventCount: judged.eventCount,
            ...(judged.witnessLines !== undefined ? { witnessLines: judged.witnessLines } : {}),
          });
          if (options.sarif !== undefined) await writeSarif(options.sarif, [outcome], policyFile);
          if (options.html !== undefined) await writeHtml(options.html, [outcome], policyFile, ruleTexts(compiled, source));
        }
        if (options.format === "json") io.stdout(JSON.stringify(reportToJson(report), null, 2) + "\n");
        else {
          // A streamed run kept only the events at the witnesses the report shows.
          const kept = judged.events;
          const eventAt = kept !== undefined ? (position: number) => kept[position - 1] : (position: number) => judged.witnessEvents!.get(position);
          io.stdout(renderReport({ report, policySource: source, policyFile, traceFile: runName, eventCount: judged.eventCount, eventAt, ...(options.why === true ? { why: true } : {}) }, colors));
        }
        exitCode = failsOn(options.failOn, report.statements.map((s) => ({ holds: s.holds, response: s.statement.response }))) && options.exitZero !== true ? EXIT_UNSAFE : EXIT_SAFE;
      },
    );

  program
    .command("lower")
    .description("print the SMT-LIB query of each rule (Figure 5 lowering) for re-checking with any solver")
    .argument("<policy>", "a .vigil file")
    .requiredOption("-t, --trace <file>", "the trace whose facts the query asserts (- for standard input)")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .option("--run <name>", "of a file holding several runs (τ-bench), the run to lower (such as 'task 0 trial 0'); required for such a file")
    .option("-r, --rule <name>", "only this rule (NAME or POLICY.NAME)")
    .addOption(new Option("--encoding <encoding>", "literal: the disjunctions of Figure 5 spelled out; shared: the same, with running disjunctions named once").choices(["shared", "literal"]).default("shared"))
    .action(async (policyFile: string, options: { trace: string; rule?: string; encoding: Encoding } & TraceReading) => {
      const source = await readText(policyFile, "policy");
      const { trace } = await loadTrace(options.trace, "nothing was lowered", options);
      const { compile, renderSmtLib, signatureOf } = await loadCompiler();
      const compiled = compile(source, { signature: signatureOf(trace.events), file: policyFile });
      const errors = compiled.diagnostics.filter((d) => d.severity === "error");
      printDiagnostics(errors);
      reportUnrendered();
      if (!compiled.ok) {
        io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; nothing was lowered\n`);
        throw new InputError();
      }
      const statements = compiled.program.policies
        .flatMap((p) => p.statements)
        .filter((s) => options.rule === undefined || s.name === options.rule || `${s.policy}.${s.name}` === options.rule);
      if (statements.length === 0) {
        if (options.rule === undefined) io.stderr(`error: the policy \`${policyFile}\` declares no rule; nothing to lower\n`);
        else {
          const near = closestName(
            options.rule,
            compiled.program.policies.flatMap((p) => p.statements.flatMap((s) => [s.name, `${s.policy}.${s.name}`])),
          );
          io.stderr(`error: no rule named \`${options.rule}\` in \`${policyFile}\`${near !== undefined ? `; did you mean \`${near}\`?` : ""}\n`);
        }
        throw new InputError();
      }
      // One script per rule. Each declares the same sorts and functions, so `(reset)` separates them
      // and the whole output is one SMT-LIB script that a solver reads from start to end.
      io.stdout(statements.map((s) => renderSmtLib(s, trace.events, { encoding: options.encoding })).join("\n(reset)\n\n"));
    });

  program
    .command("fmt")
    .description("format .vigil files canonically (comments preserved; idempotent)")
    .argument("<files...>", ".vigil files")
    .option("-w, --write", "rewrite the files in place")
    .option("--check", "write nothing; name each file that is not formatted and exit 1 if there is one")
    .action(async (files: string[], options: { write?: boolean; check?: boolean }) => {
      let unformatted = 0;
      let failed = false;
      const { format } = await loadSyntax();
      for (const file of files) {
        let source: string;
        try {
          source = await readText(file, "policy");
        } catch (error) {
          if (!(error instanceof InputError)) throw error;
          failed = true;
          continue;
        }
        const result = format(source);
        if (result.text === undefined) {
          printDiagnostics(result.diagnostics.map((d) => ({ ...d, file })));
          failed = true;
          continue;
        }
        if (options.check === true) {
          if (result.text !== source) {
            unformatted++;
            io.stdout(`${file}: not formatted\n`);
          }
        } else if (options.write === true) {
          if (result.text !== source) {
            try {
              await writeFile(file, result.text);
            } catch (error) {
              io.stderr(`error: cannot write \`${file}\`: ${(error as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : (error as Error).message}\n`);
              failed = true;
            }
          }
        } else io.stdout(result.text);
      }
      reportUnrendered();
      if (failed) throw new InputError();
      if (unformatted > 0) exitCode = EXIT_UNSAFE;
    });

  program
    .command("signature")
    .description("print the signature Σ = (A, K, V) of a trace: its actions, argument names and values")
    .argument("<trace>", "the trace (- for standard input)")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .option("--run <name>", "of a file holding several runs (τ-bench), only this run (such as 'task 0 trial 0'); without it, the signature of all its runs together")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (traceFile: string, options: { format: "human" | "json" } & TraceReading) => {
      // Read as a run is: piece by piece from a file (memory holds the signature), whole from stdin.
      const text = fromStdin(traceFile, "trace") ? await readText(traceFile, "trace") : undefined;
      const name = inputName(traceFile, "trace");
      const { readRunSignature } = await loadCompiler();
      const { signatureToJson } = await loadTraceReader();
      // One run of a file of runs, with --run; without, a file of runs gives all its runs together.
      const chosen = options.run !== undefined ? chooseRun(await loadRunFile(traceFile, options), options.run, name) : undefined;
      const source = chosen !== undefined ? { file: name, text: chosen.text, run: chosen.name, origin: chosen.origin } : { file: name, ...(text !== undefined ? { text } : {}) };
      const read = await readRunSignature(source, { ...options, ...(chosen !== undefined ? { traceFormat: "tau-bench" as const } : {}) });
      reportReading({ file: chosen !== undefined ? `${name} · ${chosen.name}` : name, ...read });
      const errors = read.traceDiagnostics.filter((d) => d.severity === "error");
      printDiagnostics(errors.length > 0 ? errors : read.traceDiagnostics);
      if (errors.length > 0) {
        reportUnrendered();
        io.stderr(`error: the trace \`${printableLine(name)}\` has ${plural(errors.length, "error")}; no signature was read\n`);
        throw new InputError();
      }
      const signature = signatureToJson(read.signature);
      const runs = read.runs !== undefined ? { runs: read.runs } : chosen !== undefined ? { run: chosen.name } : {};
      if (options.format === "json") {
        io.stdout(JSON.stringify({ events: read.eventCount, ...runs, ...signature }, null, 2) + "\n");
        return;
      }
      const whose =
        read.runs !== undefined
          ? ` in ${plural(read.runs, "run")}: the signature of all the runs of the file together (--run NAME gives one run's)`
          : chosen !== undefined
            ? ` of the run \`${printableLine(chosen.name)}\``
            : "";
      // Names and values come from the trace: escaped, so that no byte of it reaches the terminal raw.
      const lines = [plural(read.eventCount, "event") + whose, `actions (A): ${signature.actions.map(printableLine).join(", ") || "(none)"}`, "argument names (K) and values (V):"];
      for (const key of signature.keys) {
        const more = key.distinctValues > key.values.length ? `, … (${key.distinctValues} distinct)` : "";
        const shown = key.values.map((value) => printableLine(value.length > 60 ? `${value.slice(0, 57)}…` : value));
        lines.push(`  ${printableLine(key.key)}: ${shown.join(", ")}${more}`);
      }
      if (signature.keys.length === 0) lines.push("  (none)");
      lines.push(`outputs: ${signature.outputs === 1 ? "1 event carries one" : `${signature.outputs} events carry one`}`);
      io.stdout(lines.join("\n") + "\n");
    });

  program
    .command("hook")
    .description("run as an agent's hook: `vigilc hook claude-code --policy FILE…` decides each tool call before it runs and records its result (see `vigilc hook --help`)")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments();

  const audit = program.command("audit").description("the audit log of an enforcement database (see docs/enforcement.md)");
  audit
    .command("verify")
    .description("check every link of the audit log's hash chain and the runs' state against it: exit 0 when it verifies, 1 at the first broken link")
    .argument("<db>", "the enforcement database (.vigil/audit.db)")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (database: string, options: { format: "human" | "json" }) => {
      const { auditVerifyCommand } = await import("./audit.js");
      exitCode = await auditVerifyCommand(database, options, io);
    });

  program
    .command("replay")
    .description("what-if: decide every run of an audit log again under another policy; exit 0 when no decision changes, 1 when some do")
    .requiredOption("--audit <db>", "the enforcement database whose audit log is replayed")
    .requiredOption("--policy <files...>", "the other policy (.vigil files)")
    .option("--run <id>", "only this run (a session id)")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (options: { audit: string; policy: string[]; run?: string; format: "human" | "json" }) => {
      const { replayCommand } = await import("./audit.js");
      exitCode = await replayCommand(options, io);
    });

  /** The guard's options, as commander gives them (`--no-guard` makes `guard` false). */
  type GuardFlags = { guard: boolean; protect?: string[]; unknownCommands: "block" | "ask" };

  program
    .command("serve")
    .description("the sidecar: decide, record and finish over HTTP on 127.0.0.1 or a Unix socket, one monitor per run id, every decision in the audit log (until SIGTERM or SIGINT); every request but /v1/health needs `Authorization: Bearer <token>`")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .addOption(new Option("--port <n>", "the TCP port on 127.0.0.1 (0: any free port; the URL is printed) (default: 8787)").argParser(parsePort).conflicts("socket"))
    .option("--socket <path>", "listen on this Unix socket instead of a TCP port (created with mode 0600; a stale one is replaced)")
    .option("--db <path>", "the enforcement database (default: .vigil/audit.db)")
    .option("--token-file <file>", "the admin token, allowed every request: read from this file (mode 0600, owned by you), or created there with a random 256-bit token (default: sidecar.token next to the database)")
    .option("--hook-token-file <file>", "a second token, allowed only to relay Claude Code hook events (POST /v1/hooks/claude-code): read from this file, or created there")
    .addOption(new Option("--socket-mode <mode>", "who may connect to the socket: 600 (the sidecar's user) or 660 (its group too: a hook run as another user in that group)").choices(["600", "660"]).default("600"))
    .option("--protect <paths...>", "guard: protect more paths (a directory with everything in it)")
    .addOption(new Option("--unknown-commands <response>", "guard: what a call whose commands cannot be known gets").choices(["block", "ask"]).default("block"))
    .option("--no-guard", "turn the guard of Vigil's own state off (every decision's audit record says so)")
    .action(async (options: { policy: string[]; port?: number; socket?: string; db?: string; tokenFile?: string; hookTokenFile?: string; socketMode: "600" | "660" } & GuardFlags) => {
      const { serveCommand } = await import("./serve.js");
      exitCode = await serveCommand(options, io);
    });

  program
    .command("mcp-gateway")
    .description("an MCP server (stdio) in front of a real one: every tools/call is decided before it is forwarded, every decision logged; vigilc mcp-gateway --policy FILE -- node server.js …")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .option("--db <path>", "the enforcement database (default: .vigil/audit.db)")
    .option("--run <id>", "the run id of the session (default: one per gateway process)")
    .option("--protect <paths...>", "guard: protect more paths (a directory with everything in it)")
    .addOption(new Option("--unknown-commands <response>", "guard: what a call whose commands cannot be known gets (the gateway cannot ask: ask refuses too, saying so)").choices(["block", "ask"]).default("block"))
    .option("--no-guard", "turn the guard of Vigil's own state off (every decision's audit record says so)")
    .argument("<command...>", "the MCP server to run, after --")
    .action(async (command: string[], options: { policy: string[]; db?: string; run?: string } & GuardFlags) => {
      const { mcpGatewayCommand } = await import("./mcp-gateway.js");
      exitCode = await mcpGatewayCommand(command, options, io);
    });

  program
    .command("explain")
    .description("say what a diagnostic code means")
    .argument("<code>", "a code such as V1006")
    .action((code: string) => {
      const codes = diagnosticCodes as Record<string, { severity: string; summary: string }>;
      const key = code.trim().toUpperCase();
      if (!Object.hasOwn(codes, key)) {
        const near = closestName(key, Object.keys(codes));
        io.stderr(`error: \`${code}\` is not a Vigil diagnostic code${near !== undefined ? `; did you mean \`${near}\`?` : ""}\n`);
        io.stderr("  help: codes are V0xxx (policy syntax), V1xxx (policy checking), T0xxx (traces), E0xxx (decision procedures)\n");
        throw new InputError();
      }
      const entry = codes[key]!;
      io.stdout(`${key as DiagnosticCode} (${entry.severity}): ${entry.summary}\n`);
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof InputError) return EXIT_INPUT_ERROR;
    if (error instanceof CommanderError) {
      // `--help`, `help` and `--version` exit 0; no command at all (the help goes to stderr) and
      // every other usage mistake exit 2.
      return error.exitCode === 0 ? EXIT_SAFE : EXIT_INPUT_ERROR;
    }
    // A bug, not a verdict: say so in one line (the stack only on request) and fail closed.
    const debug = process.env["VIGIL_DEBUG"] !== undefined && process.env["VIGIL_DEBUG"] !== "" && process.env["VIGIL_DEBUG"] !== "0";
    if (isStackOverflow(error)) io.stderr("error: the input is nested too deeply for vigilc to process; nothing was judged\n");
    else io.stderr(`internal error: ${error instanceof Error ? error.message : String(error)}; nothing was judged\n`);
    io.stderr(debug ? `${(error as Error).stack ?? ""}\n` : "  help: this is a bug in vigilc; set VIGIL_DEBUG=1 to print the stack trace, and report it with the input\n");
    return EXIT_INPUT_ERROR;
  }
}

/** Each rule of a compiled policy with its documentation and its declaration as written. */
function ruleTexts(compiled: CompiledPolicy, source: string): RuleText[] {
  if (!compiled.ok) return [];
  return compiled.program.policies.flatMap((policy) =>
    policy.statements.map((statement) => ({
      id: `${statement.policy}.${statement.name}`,
      ...(statement.doc !== undefined ? { doc: statement.doc } : {}),
      source: source.slice(statement.span.start, statement.span.end),
    })),
  );
}

/** How many witnesses of a rule the human report shows (render.ts shows at most this many). */
const WITNESSES_SHOWN = 20;

/** Traces up to this size are read whole (code frames in diagnostics); larger ones are streamed. */
const WHOLE_TRACE_BYTES = 8 * 2 ** 20;

/** A file's size, or 0 when it cannot be read (reading it then reports why). */
async function fileSize(file: string): Promise<number> {
  try {
    return (await stat(file)).size;
  } catch {
    return 0;
  }
}

/** A JavaScript stack overflow: some stage recursed on deeply nested input. */
function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

function parsePositiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError("must be a positive integer");
  return value;
}

function parsePort(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 0 || value > 65_535) throw new InvalidArgumentError("must be a port number (0 to 65535)");
  return value;
}

/**
 * How a trace file is read: its format (or detection), whether shell calls are grounded, whether
 * messages are events, and which run of a file holding several.
 */
interface TraceReading {
  readonly traceFormat?: "auto" | "jsonl" | "claude-code" | "agentdojo" | "openai" | "mcp" | "tau-bench";
  readonly ground?: boolean;
  readonly messages?: boolean;
  readonly run?: string;
}

function traceFormatOption(): Option {
  return new Option("--trace-format <format>", "the trace's format; auto detects it from the content")
    .choices(["auto", "jsonl", "claude-code", "agentdojo", "openai", "mcp", "tau-bench"])
    .default("auto");
}
