import { dirname, resolve } from "node:path";
import { closestName, diagnostic, type Diagnostic, type RelatedInformation, type Span } from "@vigil/diagnostics";
import type { TestCase } from "@vigil/syntax";
import { splitRunFile, type RunFile } from "@vigil/trace";
import { judgeRun, type RunJudgement, type RunSource } from "./judge-run.js";
import type { TestContext } from "./test-context.js";

/**
 * A test's run, read through the one pipeline (`judgeRun`): a trace file (one run of it, for a file
 * of several), or events written by hand, read as a canonical trace whose lines map back to the
 * events' lines in the test file. A run that cannot be read is V2104, located in the test file.
 */

/** A test's run read through the one pipeline, and where its hand-written events are in the test file. */
export interface ReadRun {
  readonly judgement?: RunJudgement;
  readonly diagnostics: readonly Diagnostic[];
  readonly eventSpans: ReadonlyMap<number, Span>;
}

export async function readRun(test: TestCase, context: TestContext): Promise<ReadRun> {
  const input = test.input!;
  const options = { keepEvents: true, ...(context.signal !== undefined ? { signal: context.signal } : {}) } as const;
  if (input.kind === "trace") {
    const traceFile = resolve(dirname(context.file), input.path);
    // Read for every test (an editor's reader lets a newer edit abort the run here); cut into its runs once per text.
    const text = await context.readText(traceFile, "trace");
    const seen = context.traces.get(traceFile);
    let runFile: RunFile | undefined;
    if (typeof text === "string") {
      if (seen !== undefined && seen.text === text) runFile = seen.runFile;
      else {
        runFile = splitRunFile(text);
        context.traces.set(traceFile, { text, ...(runFile !== undefined ? { runFile } : {}) });
      }
    }
    const noRun = (d: Diagnostic): ReadRun => ({ diagnostics: [d], eventSpans: new Map() });
    if (typeof text !== "string") return noRun(diagnostic("V2104", `the trace \`${input.path}\` cannot be read: ${text.message}`, { span: input.pathSpan }));
    const names = runFile?.runs.map((run) => run.name) ?? [];
    if (input.run === undefined && runFile !== undefined) {
      return noRun(
        diagnostic("V2104", `the trace \`${input.path}\` holds ${names.length} run${names.length === 1 ? "" : "s"} (τ-bench); a test reads one`, {
          span: input.pathSpan,
          help: `name it: \`trace ${JSON.stringify(input.path)} run ${JSON.stringify(names[0] ?? "task 0 trial 0")}\` (runs are named by task and trial, as \`vigilc check --run\` names them)`,
        }),
      );
    }
    let source: RunSource = { file: traceFile, text };
    if (input.run !== undefined) {
      const span = input.runSpan ?? input.span;
      if (runFile === undefined) {
        return noRun(diagnostic("V2104", `\`run\` chooses one run of a file holding several (a τ-bench results file); the trace \`${input.path}\` is one run`, { span, help: "drop `run \"…\"`" }));
      }
      const chosen = runFile.runs.find((run) => run.name === input.run);
      if (chosen === undefined) {
        const near = closestName(input.run, names);
        return noRun(
          diagnostic("V2104", `the trace \`${input.path}\` has no run named \`${input.run}\``, {
            span,
            help: near !== undefined ? `did you mean \`${near}\`?` : names.length > 0 ? `its runs are named by task and trial, from \`${names[0]}\` to \`${names.at(-1)}\`` : "it holds no run",
            ...(near !== undefined ? { fix: { title: `replace with \`${near}\``, edits: [{ span, newText: JSON.stringify(near) }] } } : {}),
          }),
        );
      }
      source = { file: traceFile, text: chosen.text, run: chosen.name, origin: chosen.origin };
    }
    const judgement = await judgeRun(context.policy, source, { ...options, ...(input.run !== undefined ? { traceFormat: "tau-bench" as const } : {}), ...(input.messages ? { messages: true } : {}) });
    const problems = judgement.traceDiagnostics.filter((d) => d.severity === "error");
    const where = input.run !== undefined ? `the run \`${input.run}\` of the trace \`${input.path}\`` : `the trace \`${input.path}\``;
    const diagnostics = problems.length > 0 ? [diagnostic("V2104", `${where} has ${problems.length} error${problems.length === 1 ? "" : "s"}`, { span: input.pathSpan, related: problems.slice(0, 5).flatMap(relatedOf) })] : [];
    return { ...(problems.length === 0 ? { judgement } : {}), diagnostics, eventSpans: new Map() };
  }
  // Events written by hand are a canonical trace, one line per event: line k is the k-th event.
  // The arguments go in as the JSON text written, so numbers keep their digits (an integer beyond
  // 2^53 is the reader's error, not a rounding). An event's `at` is its `time`, in epoch
  // milliseconds (an offset from the run's start is one from epoch 0).
  const text = input.events
    .map((event) => {
      const time = event.time !== undefined ? `,"time":${event.time}` : "";
      if (event.kind === "message") return `{"kind":"message","action":${JSON.stringify(event.action)},"args":${event.argsJson}${time}}`;
      const status = event.pending ? `,"status":null` : event.status !== undefined ? `,"status":${JSON.stringify(event.status)}` : "";
      const output = event.output !== undefined ? `,"output":${JSON.stringify(event.output)}` : "";
      return `{"action":${JSON.stringify(event.action)},"args":${event.argsJson}${status}${output}${time}}`;
    })
    .join("\n");
  const judgement = await judgeRun(context.policy, { file: context.file, text }, { ...options, traceFormat: "jsonl", ground: input.ground });
  const spanOfLine = (line: number | undefined): Span | undefined => (line === undefined ? undefined : input.events[line - 1]?.span);
  const eventSpans = new Map<number, Span>();
  for (const event of judgement.events ?? []) {
    const span = spanOfLine(event.source?.line);
    if (span !== undefined) eventSpans.set(event.position, span);
  }
  // The reader's problems are located at the event written by hand that caused them.
  const moved = judgement.traceDiagnostics.map((d) => {
    const span = spanOfLine(d.span?.line);
    const { file: _file, ...rest } = d;
    return span !== undefined ? { ...rest, span } : { ...rest, span: input.span };
  });
  const errors = moved.filter((d) => d.severity === "error");
  const diagnostics = errors.length > 0 ? moved.map((d) => (d.severity === "error" ? { ...d, code: "V2104" as const, message: `this event cannot be read: ${d.message}` } : d)) : moved.filter((d) => d.severity !== "info");
  return { ...(errors.length === 0 ? { judgement } : {}), diagnostics, eventSpans };
}

function relatedOf(d: Diagnostic): RelatedInformation[] {
  return d.span === undefined ? [] : [{ message: `${d.code} ${d.message}`, span: d.span, ...(d.file !== undefined ? { file: d.file } : {}) }];
}
