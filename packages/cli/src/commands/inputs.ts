import type { Diagnostic, ReadRecordingResult, Trace } from "@vigil/compiler";
import { closestName, stripByteOrderMark } from "@vigil/diagnostics";
import type { ReadRunFileResult, RecordingRun } from "@vigil/trace";
import type { CliIo } from "../io.js";
import { printableLine, printableText } from "../reports/render.js";
import { InputError, isStackOverflow, loadTraceReader, plural, STDIN_NAME, type TraceReading } from "./shared.js";

/** Prints diagnostics on standard error, at most `MAX_RENDERED_DIAGNOSTICS` of them in one run. */
export interface DiagnosticPrinter {
  readonly printDiagnostics: (diagnostics: readonly Diagnostic[]) => void;
  /** Says how many diagnostics were left out, if any; called before a command's closing line. */
  readonly reportUnrendered: () => void;
}

/** How a recording was read, as `reportReading` says it. */
export interface RecordingRead {
  readonly file: string;
  readonly format?: string;
  readonly detected: boolean;
  readonly calls: number;
  readonly messageEvents: number;
  readonly groundedEvents: number;
  readonly traceDiagnostics: readonly Diagnostic[];
}

/**
 * How a command reads its inputs: policies, tool schemas and traces, from files or (a trace given
 * as `-`) from standard input. Each stops with exit 2 (an `InputError`) on an input it cannot read.
 */
export interface Inputs {
  /** A trace given as `-` is read from standard input (when the caller provides it). */
  readonly fromStdin: (file: string, what: string) => boolean;
  /** How an input is named in diagnostics and reports. */
  readonly inputName: (file: string, what: string) => string;
  /** The text of an input, kept for the code frames of its diagnostics. */
  readonly readText: (file: string, what: string) => Promise<string>;
  /**
   * The trace as a file holding several runs (a τ-bench results file), read whole and cut into its
   * runs; undefined when it is one run. A file that cannot be read stops with exit 2 when `--run`
   * was given (a run of it is wanted), and is otherwise left to the reading of one run.
   */
  readonly loadRunFile: (path: string, reading: TraceReading) => Promise<ReadRunFileResult | undefined>;
  /**
   * The run `--run` names in a file of runs; stops with exit 2 when it names none of them, or when
   * the trace is not such a file.
   */
  readonly chooseRun: (runFile: ReadRunFileResult | undefined, name: string, file: string) => RecordingRun;
  /**
   * Reads a trace; stops with exit 2 on any error. Returns the trace, how many warnings it got, and
   * the name it goes by in diagnostics and reports. A file of several runs gives the run `--run` names.
   */
  readonly loadTrace: (path: string, consequence?: string, reading?: TraceReading, command?: string) => Promise<{ trace: Trace; warnings: number; name: string }>;
  /** Says which format a recording was read as, and how many calls and grounded events it gave. */
  readonly reportReading: (read: RecordingRead) => void;
}

/** The inputs of one run; every text read goes into `sources`, and diagnostics go through `printer`. */
export function createInputs(io: CliIo, sources: Map<string, string>, printer: DiagnosticPrinter): Inputs {
  const { printDiagnostics, reportUnrendered } = printer;

  const fromStdin = (file: string, what: string): boolean => file === "-" && io.stdin !== undefined && what === "trace";
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

  const reportReading = (read: RecordingRead): void => {
    if (read.format === undefined || read.format === "jsonl") return;
    // Counts only for a recording that read: with errors, the format is what explains them.
    const counts = read.traceDiagnostics.some((d) => d.severity === "error")
      ? ""
      : `: ${plural(read.calls, "tool call")}` +
        (read.messageEvents > 0 ? ` and ${plural(read.messageEvents, "message")}` : "") +
        (read.groundedEvents > 0 ? `, and ${plural(read.groundedEvents, "event")} grounded from shell commands` : "");
    io.stderr(`note: read \`${printableLine(read.file)}\` as ${read.format}${read.detected ? " (detected)" : ""}${counts}\n`);
  };

  return { fromStdin, inputName, readText, loadRunFile, chooseRun, loadTrace, reportReading };
}
