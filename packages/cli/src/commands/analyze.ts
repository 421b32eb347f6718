import { writeFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Diagnostic, Signature } from "@vigil/compiler";
import { Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { InputError, loadCompiler, parsePositiveInteger, plural } from "./shared.js";

/**
 * `vigilc analyze POLICY…`: what each policy means before it runs, as diagnostics (A0001–A0007):
 * patterns no event matches, rules that never fire or always break, actions the rules make
 * impossible, redundant rules, conflicts; found over symbolic runs of up to `--depth` events (further
 * for a count limit), each question with a bounded amount of solver work (`--rlimit`): a rule whose
 * question the solver cannot answer within it gets A0007, and every other rule is still analysed.
 * Exit: 0 nothing found, 1 a finding (a warning, or an info with --strict), 2 bad input.
 */
export function registerAnalyze(program: Command, context: CommandContext): void {
  program
    .command("analyze")
    .description("find what a policy means before it runs: patterns that never match, rules that never fire or always break, impossible actions, redundant rules, conflicts")
    .argument("<policy...>", ".vigil files")
    .option("--depth <events>", "the longest run searched", parsePositiveInteger)
    .option("--rlimit <units>", "the solver's resource limit per question (Z3 rlimit, deterministic); a question that reaches it is A0007", parsePositiveInteger)
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .option("--sarif <file>", "also write the findings as SARIF 2.1.0 (for code-scanning interfaces)")
    .option("-t, --trace <file>", "analyze under the signature of this trace (its actions, arguments and values)")
    .option("--messages", "with --trace: the conversation's messages are events of the signature too (user_message and agent_message, with their text)")
    .option("--schema <file>", "analyze under the signature of tool schemas (an MCP tools/list result or OpenAI function definitions)")
    .action(async (files: string[], options: AnalyzeOptions) => {
      context.exitCode = await analyze(context, files, options);
    });
}

type AnalyzeOptions = { depth?: number; rlimit?: number; format: "human" | "json"; sarif?: string; trace?: string; schema?: string; messages?: boolean };

async function analyze(context: CommandContext, files: readonly string[], options: AnalyzeOptions): Promise<number> {
  const { io } = context;
  const { analyzePolicy, compile, defaultAnalysisDepth } = await loadCompiler();
  const depth = options.depth ?? defaultAnalysisDepth;
  const signature = await signatureOption(context, options);
  const results: { file: string; diagnostics: Diagnostic[] }[] = [];
  for (const file of files) {
    const compiled = compile(await context.readText(file, "policy"), { file });
    const errors = compiled.diagnostics.filter((d) => d.severity === "error");
    if (!compiled.ok) {
      context.printDiagnostics(errors);
      context.reportUnrendered();
      io.stderr(`error: the policy \`${file}\` has ${plural(errors.length, "error")}; it was not analyzed\n`);
      throw new InputError();
    }
    results.push({ file, diagnostics: await analyzePolicy(compiled.program, { depth, file, ...(options.rlimit !== undefined ? { rlimit: options.rlimit } : {}), ...(signature !== undefined ? { signature } : {}) }) });
  }
  const found = results.flatMap((result) => result.diagnostics);
  if (options.sarif !== undefined) {
    const { diagnosticsToSarif } = await import("../reports/sarif.js");
    await writeFile(resolve(io.cwd, options.sarif), `${JSON.stringify(diagnosticsToSarif(results, { cwd: io.cwd, version: "0.1.0" }), null, 2)}\n`);
  }
  if (options.format === "json") {
    io.stdout(`${JSON.stringify({ depth, files: results }, null, 2)}\n`);
  } else {
    context.printDiagnostics(found);
    context.reportUnrendered();
    const warnings = found.filter((d) => d.severity !== "info").length;
    const notes = found.length - warnings;
    io.stderr(`analyzed ${plural(files.length, "policy file")} over runs of up to ${depth} events: ${found.length === 0 ? "nothing found" : [warnings > 0 ? plural(warnings, "warning") : "", notes > 0 ? plural(notes, "note") : ""].filter(Boolean).join(", ")}\n`);
  }
  return found.some((d) => d.severity !== "info") ? 1 : 0;
}

/** The signature Σ of `--trace` or `--schema`, when one is given; its reading errors stop the command. */
async function signatureOption(context: CommandContext, options: AnalyzeOptions): Promise<Signature | undefined> {
  if (options.trace !== undefined && options.schema !== undefined) {
    context.io.stderr("error: give --trace or --schema, not both\n");
    throw new InputError();
  }
  if (options.messages === true && options.trace === undefined) {
    context.io.stderr("error: --messages goes with --trace (the messages of the recorded conversation)\n");
    throw new InputError();
  }
  const { readRunSignature, signatureFromToolSchemas } = await loadCompiler();
  if (options.schema !== undefined) {
    const read = signatureFromToolSchemas(await context.readText(options.schema, "schema"), { file: options.schema });
    return stopOnErrors(context, read.diagnostics, options.schema) ?? read.signature;
  }
  if (options.trace !== undefined) {
    const read = await readRunSignature({ file: options.trace }, options.messages === true ? { messages: true } : {});
    return stopOnErrors(context, read.traceDiagnostics, options.trace) ?? read.signature;
  }
  return undefined;
}

function stopOnErrors(context: CommandContext, diagnostics: readonly Diagnostic[], file: string): undefined {
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (errors.length === 0) return undefined;
  context.printDiagnostics(errors);
  context.reportUnrendered();
  context.io.stderr(`error: \`${file}\` has ${plural(errors.length, "error")}; nothing was analyzed\n`);
  throw new InputError();
}
