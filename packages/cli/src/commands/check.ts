import { Option, type Command } from "commander";
import { isCorpus } from "../corpus/corpus.js";
import { checkDirectory, checkEvents, checkRunFile } from "./check-corpus.js";
import type { CheckOptions } from "./check-shared.js";
import { checkOneRun } from "./check-trace.js";
import type { CommandContext } from "./context.js";
import { EXIT_INPUT_ERROR, EXIT_SAFE, InputError, loadCompiler, loadTraceReader, parsePositiveInteger, plural, traceFormatOption } from "./shared.js";

/**
 * `vigilc check POLICY`: the policy against tool schemas (`--schema`), or judging a trace
 * (`--trace`): one run (check-trace.ts), or a corpus of runs (check-corpus.ts).
 */
export function registerCheck(program: Command, context: CommandContext): void {
  program
    .command("check")
    .description("judge a trace against a policy: exit 0 when every rule holds, 1 when one is violated or undecided, 2 on bad usage or input")
    .argument("<policy>", "a .vigil file")
    .option("-t, --trace <file>", "the trace: canonical JSON Lines or JSON array, a recording (see --trace-format), a directory or glob of runs, or - for standard input")
    .option("--schema <file>", "without --trace: check the policy against tool schemas (an MCP tools/list result or OpenAI function definitions)")
    .option("--events <file>", "with --engine sql, instead of --trace: an events table of vigilc export (.parquet or .jsonl), or a DuckDB database file holding one")
    .option("--values <file>", "with --events: its values table (vigilc export --values); without it, the values are made from the events")
    .option("--table <name>", "with --events of a DuckDB database: the events table (default events)")
    .option("--values-table <name>", "with --values of a DuckDB database: the values table (default event_values)")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .option("--run <name>", "of a file holding several runs (τ-bench): check only this run (such as 'task 0 trial 0'); without it every run is checked, as a corpus")
    .addOption(
      new Option("-e, --engine <engine>", "decision procedure: the forward engine, Z3 over the Figure 5 lowering, the online monitor fed the run call by call, or the policy as SQL in embedded DuckDB")
        .choices(["eval", "smt", "monitor", "sql"])
        .default("eval"),
    )
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
    .action(async (policyFile: string, options: CheckOptions) => {
      context.exitCode = await check(context, policyFile, options);
    });
}

/** `check`: sends the policy to the mode its options choose, and returns the exit code. */
async function check(context: CommandContext, policyFile: string, options: CheckOptions): Promise<number> {
  const { io } = context;
  if (options.events !== undefined) {
    if (options.trace !== undefined || options.schema !== undefined || options.engine !== "sql") {
      io.stderr("error: --events is an events table for --engine sql, instead of --trace or --schema\n(run `vigilc --help` for usage)\n");
      throw new InputError();
    }
    for (const [flag, name] of [["--table", options.table], ["--values-table", options.valuesTable]] as const) {
      if (name !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) {
        io.stderr(`error: ${flag} \`${name}\` is not a table name: letters, digits and \`_\`\n`);
        throw new InputError();
      }
    }
    return checkEvents(context, await context.readText(policyFile, "policy"), policyFile, options);
  }
  if (options.values !== undefined || options.table !== undefined || options.valuesTable !== undefined) {
    io.stderr("error: --values, --table and --values-table go with --events\n(run `vigilc --help` for usage)\n");
    throw new InputError();
  }
  if (options.trace === undefined && options.schema === undefined) {
    io.stderr("error: `check` needs a trace (--trace FILE), tool schemas (--schema FILE) or, with --engine sql, an events table (--events FILE)\n(run `vigilc --help` for usage)\n");
    throw new InputError();
  }
  if (options.trace !== undefined && options.schema !== undefined) {
    io.stderr("error: --schema and --trace cannot be used together: --schema checks a policy against tool schemas before any run exists, --trace judges a run\n(run `vigilc --help` for usage)\n");
    throw new InputError();
  }
  const source = await context.readText(policyFile, "policy");
  if (options.trace === undefined) return checkAgainstSchemas(context, source, policyFile, options.schema!, options.strict === true);
  const traceArgument = options.trace;
  if (await isCorpus(traceArgument)) return checkDirectory(context, source, policyFile, traceArgument, options);
  // A file holding several runs is a corpus of its runs, unless --run chooses one of them.
  const runFile = await context.loadRunFile(traceArgument, options);
  if (runFile !== undefined && options.run === undefined) return checkRunFile(context, source, policyFile, context.inputName(traceArgument, "trace"), runFile, options);
  return checkOneRun(context, source, policyFile, traceArgument, runFile, options);
}

/** `check --schema`: the policy against the signature of tool schemas, before any run exists. */
async function checkAgainstSchemas(context: CommandContext, source: string, policyFile: string, schemaFile: string, strict: boolean): Promise<number> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const text = await context.readText(schemaFile, "tool schemas");
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
}
