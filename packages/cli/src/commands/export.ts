import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import type { EventRow, TraceEvent } from "@vigil/compiler";
import type { Command } from "commander";
import type { CommandContext } from "./context.js";
import { runArgumentFiles } from "./runs.js";
import { InputError, loadCompiler, plural, traceFormatOption, type TraceReading } from "./shared.js";

/**
 * `vigilc export TRACE… -o FILE`: the canonical events table of one run or many (files,
 * directories, globs, files of runs), one row per event, shell calls grounded once, written as it
 * is read. A trace with errors stops the export and no file is written: a table missing a run
 * without saying so would mislead every query over it.
 */
export function registerExport(program: Command, context: CommandContext): void {
  program
    .command("export")
    .description("write the canonical events table of traces (files, directories, globs, files of runs): JSON Lines, one event per line, or a Parquet file")
    .argument("<trace...>", "the traces: files, directories or globs of runs, or - for standard input")
    .requiredOption("-o, --output <file>", "where to write the table: a .jsonl or .parquet file, or - for JSON Lines on standard output")
    .option("--values <file>", "also write the values table (every value a key path reaches, one row each: what the SQL of `vigilc sql` reads), in the same format as the output")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .action(async (traces: string[], options: ExportOptions) => {
      context.exitCode = await exportTraces(context, traces, options);
    });
}

type ExportOptions = { output: string; values?: string } & TraceReading;

const FLUSH_BYTES = 1 << 20;

async function exportTraces(context: CommandContext, traces: readonly string[], options: ExportOptions): Promise<number> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const output = options.output;
  const parquet = output.endsWith(".parquet");
  if (output !== "-" && !output.endsWith(".jsonl") && !parquet) {
    io.stderr(`error: \`${output}\` is not a file \`export\` writes: give a .jsonl file (JSON Lines, one event per line), a .parquet file, or - for standard output\n`);
    throw new InputError();
  }
  const valuesOutput = options.values;
  if (valuesOutput !== undefined && (output === "-" || !valuesOutput.endsWith(parquet ? ".parquet" : ".jsonl") || valuesOutput === output)) {
    io.stderr(`error: --values \`${valuesOutput}\` must be a second ${parquet ? ".parquet" : ".jsonl"} file, the format of the events table, and not standard output\n`);
    throw new InputError();
  }
  const files = await runArgumentFiles(context, traces);
  const { readRunEvents, eventRow, eventValueRows, runName } = await loadCompiler();
  // Written to a file beside the output and moved into place at the end: an export that fails
  // leaves no partial table where a complete one is expected.
  const partial = output === "-" ? undefined : `${output}.partial-${process.pid}`;
  // Parquet goes through embedded DuckDB (loaded only for it); JSON Lines are written as they come.
  const table = parquet ? await (await import("@vigil/sql")).ParquetEventsWriter.create({ values: valuesOutput !== undefined }) : undefined;
  const descriptor = partial === undefined || table !== undefined ? undefined : openSync(partial, "w");
  const valuesPartial = valuesOutput === undefined ? undefined : `${valuesOutput}.partial-${process.pid}`;
  const valuesDescriptor = valuesPartial === undefined || table !== undefined ? undefined : openSync(valuesPartial, "w");
  let valuesBuffered: string[] = [];
  let buffered: string[] = [];
  let bufferedBytes = 0;
  const flush = (): void => {
    if (valuesDescriptor !== undefined && valuesBuffered.length > 0) {
      writeSync(valuesDescriptor, valuesBuffered.join(""));
      valuesBuffered = [];
    }
    if (buffered.length === 0) return;
    const text = buffered.join("");
    if (descriptor === undefined) io.stdout(text);
    else writeSync(descriptor, text);
    buffered = [];
    bufferedBytes = 0;
  };
  let rows = 0;
  let runs = 0;
  try {
    for (const file of files) {
      const name = context.inputName(file, "trace");
      const text = context.fromStdin(file, "trace") ? await context.readText(file, "trace") : undefined;
      const seen = new Set<string>();
      const read = await readRunEvents({ file: name, ...(text !== undefined ? { text } : {}) }, options, (events: readonly TraceEvent[], run: string | undefined) => {
        const id = runName(name, run);
        seen.add(id);
        for (const event of events) {
          if (table !== undefined) {
            table.append(eventRow(id, event, name));
            if (valuesOutput !== undefined) table.appendValues(eventValueRows(id, event));
            rows++;
            continue;
          }
          if (valuesDescriptor !== undefined) for (const value of eventValueRows(id, event)) valuesBuffered.push(`${JSON.stringify(value)}\n`);
          const line = `${rowJson(eventRow(id, event, name))}\n`;
          buffered.push(line);
          bufferedBytes += line.length;
          rows++;
          if (bufferedBytes >= FLUSH_BYTES) flush();
        }
      });
      context.reportReading({ file: name, ...read });
      const errors = read.traceDiagnostics.filter((d) => d.severity === "error");
      printDiagnostics(errors.length > 0 ? errors : read.traceDiagnostics);
      if (errors.length > 0) {
        reportUnrendered();
        io.stderr(`error: the trace \`${name}\` has ${plural(errors.length, "error")}; nothing was exported\n`);
        throw new InputError();
      }
      // A run with no event still counts as a run read.
      runs += Math.max(seen.size, read.runs ?? 1);
    }
    flush();
    if (table !== undefined) await table.write(partial!, valuesPartial);
    if (descriptor !== undefined) closeSync(descriptor);
    if (valuesDescriptor !== undefined) closeSync(valuesDescriptor);
    if (partial !== undefined) {
      renameSync(partial, output);
      if (valuesPartial !== undefined) renameSync(valuesPartial, valuesOutput!);
      io.stderr(`wrote ${plural(rows, "event")} of ${plural(runs, "run")} to ${output}${valuesOutput !== undefined ? ` and their values to ${valuesOutput}` : ""}\n`);
    }
    return 0;
  } catch (error) {
    table?.discard();
    if (descriptor !== undefined) {
      try {
        closeSync(descriptor);
      } catch {
        // Already closed.
      }
    }
    if (valuesDescriptor !== undefined) {
      try {
        closeSync(valuesDescriptor);
      } catch {
        // Already closed.
      }
    }
    if (partial !== undefined) rmSync(partial, { force: true });
    if (valuesPartial !== undefined) rmSync(valuesPartial, { force: true });
    throw error;
  }
}

/** A row as one JSON object, its columns in the table's order. */
function rowJson(row: EventRow): string {
  return JSON.stringify(row);
}
