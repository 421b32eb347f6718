import type { RunSignature } from "@vigil/compiler";
import type { RecordingRun, signatureToJson } from "@vigil/trace";
import { Option, type Command } from "commander";
import { printableLine } from "../reports/render.js";
import type { CommandContext } from "./context.js";
import { InputError, loadCompiler, loadTraceReader, plural, traceFormatOption, type TraceReading } from "./shared.js";

/** `vigilc signature TRACE`: the actions, argument names and values a trace exhibits. */
export function registerSignature(program: Command, context: CommandContext): void {
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
    .action((traceFile: string, options: SignatureOptions) => printSignature(context, traceFile, options));
}

/** The options of `signature`, as commander gives them. */
type SignatureOptions = { format: "human" | "json" } & TraceReading;

/** Reads the trace's signature and prints it; stops with exit 2 when the trace has errors. */
async function printSignature(context: CommandContext, traceFile: string, options: SignatureOptions): Promise<void> {
  const { io, printDiagnostics, reportUnrendered } = context;
  // Read as a run is: piece by piece from a file (memory holds the signature), whole from stdin.
  const text = context.fromStdin(traceFile, "trace") ? await context.readText(traceFile, "trace") : undefined;
  const name = context.inputName(traceFile, "trace");
  const { readRunSignature } = await loadCompiler();
  const { signatureToJson } = await loadTraceReader();
  // One run of a file of runs, with --run; without, a file of runs gives all its runs together.
  const chosen = options.run !== undefined ? context.chooseRun(await context.loadRunFile(traceFile, options), options.run, name) : undefined;
  const source = chosen !== undefined ? { file: name, text: chosen.text, run: chosen.name, origin: chosen.origin } : { file: name, ...(text !== undefined ? { text } : {}) };
  const read = await readRunSignature(source, { ...options, ...(chosen !== undefined ? { traceFormat: "tau-bench" as const } : {}) });
  context.reportReading({ file: chosen !== undefined ? `${name} · ${chosen.name}` : name, ...read });
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
  io.stdout(describeSignature(read, signature, chosen));
}

/** The signature for people: its events, its actions, and each argument name with its first values. */
function describeSignature(read: RunSignature, signature: ReturnType<typeof signatureToJson>, chosen: RecordingRun | undefined): string {
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
    // A key that holds lists: its elements are its values, and `KEY.0`, `KEY.1`, … name them one by one.
    const list = key.longestList !== undefined ? ` (lists of up to ${plural(key.longestList, "element")})` : "";
    lines.push(`  ${printableLine(key.key)}${list}: ${shown.join(", ")}${more}`);
  }
  if (signature.keys.length === 0) lines.push("  (none)");
  lines.push(`outputs: ${signature.outputs === 1 ? "1 event carries one" : `${signature.outputs} events carry one`}`);
  return lines.join("\n") + "\n";
}
