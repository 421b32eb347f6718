import { basename, resolve } from "node:path";
import type { TraceEvent } from "@vigil/compiler";
import { expandCorpus, isCorpus } from "../corpus/corpus.js";
import type { CommandContext } from "./context.js";
import { InputError, loadCompiler } from "./shared.js";

/**
 * The files that run arguments name: a file as given (or `-`), the trace files of a directory or
 * glob. A directory or glob holding none stops the command. `base` resolves relative arguments
 * (export keeps them as given, for its names).
 */
export async function runArgumentFiles(context: CommandContext, runArguments: readonly string[], base?: string): Promise<string[]> {
  const files: string[] = [];
  for (const argument of runArguments) {
    const path = base === undefined || argument === "-" ? argument : resolve(base, argument);
    if (path === "-" || !(await isCorpus(path))) {
      files.push(path);
      continue;
    }
    const found = await expandCorpus(path);
    if (found.length === 0) {
      context.io.stderr(`error: \`${argument}\` holds no trace file (.jsonl, .json, .ndjson)\n`);
      throw new InputError();
    }
    files.push(...found);
  }
  return files;
}

/**
 * Every run the arguments name, with its events, read as `vigilc check` reads them (a file holding
 * several runs gives each, named `FILE#RUN`). A run that does not read stops the command.
 */
export async function readRuns(context: CommandContext, runArguments: readonly string[], doing: string): Promise<{ name: string; events: TraceEvent[] }[]> {
  const { io } = context;
  const { readRunEvents } = await loadCompiler();
  const runs: { name: string; events: TraceEvent[] }[] = [];
  for (const file of await runArgumentFiles(context, runArguments, io.cwd)) {
    const byRun = new Map<string, TraceEvent[]>();
    const read = await readRunEvents({ file }, {}, (events, run) => {
      const list = byRun.get(run ?? "") ?? [];
      for (const event of events) list.push(event);
      byRun.set(run ?? "", list);
    });
    const errors = read.traceDiagnostics.filter((d) => d.severity === "error");
    if (errors.length > 0) {
      context.printDiagnostics(errors);
      context.reportUnrendered();
      io.stderr(`error: \`${file}\` does not read; nothing was ${doing}\n`);
      throw new InputError();
    }
    for (const [run, events] of byRun) runs.push({ name: run === "" ? basename(file) : `${basename(file)}#${run}`, events });
  }
  return runs;
}
