import type { Diagnostic } from "@vigil/diagnostics";
import type { SmtDecider, SmtDeciderOptions } from "@vigil/smt";
import { readRecording, readRegularFile, signatureOf, type TraceEvent, type TraceFormat } from "@vigil/trace";
import { check, type CheckReport, type EngineName } from "./check.js";
import { checkAgainstSignature, type CompiledPolicy } from "./compile.js";

/**
 * One pipeline for every run: read a recording (any format), ground its shell calls, check the
 * policy against the run's signature, and judge it with the chosen engine. `vigilc check` on one
 * trace, the corpus workers, and the runtime integrations all go through here, so a flag means the
 * same everywhere. Everything comes back as data; nothing is printed.
 */
export interface JudgeRunOptions {
  /** `eval` (the forward engine, the default) or `smt` (Z3 over the Figure 5 lowering). */
  readonly engine?: EngineName;
  /** For `smt`: a decider to reuse across runs (one solver call at a time). */
  readonly decider?: SmtDecider;
  readonly smt?: SmtDeciderOptions;
  /** The recording's format, or `auto` (the default) to detect it. */
  readonly traceFormat?: TraceFormat | "auto";
  /** Ground shell calls (default: for recordings, not for canonical events). */
  readonly ground?: boolean;
  /** Warnings about the trace or about the policy against this run's signature stop the run. */
  readonly strict?: boolean;
  /** Keep the run's events in the result (for reports that show them). */
  readonly keepEvents?: boolean;
}

/** Where a run comes from: a file, read here, or text already read (standard input, say). */
export interface RunSource {
  /** The name the run goes by in diagnostics and reports. */
  readonly file: string;
  /** The text; without it, `file` is read (a regular file only). */
  readonly text?: string;
}

export interface RunJudgement {
  readonly file: string;
  /** The format the run was read as (undefined when none could be recognized). */
  readonly format?: TraceFormat;
  readonly detected: boolean;
  /** How many events the recording holds, and how many grounding added. */
  readonly calls: number;
  readonly groundedEvents: number;
  /** How many events were judged (or read, when the run was stopped). */
  readonly eventCount: number;
  /** The events, when `keepEvents` was asked or the engine needed them whole. */
  readonly events?: readonly TraceEvent[];
  /** Problems reading the trace (errors, warnings, notes), in the order found. */
  readonly traceDiagnostics: readonly Diagnostic[];
  /** The policy against this run's signature: symbols the run does not exhibit. */
  readonly signatureDiagnostics: readonly Diagnostic[];
  /**
   * Why the run was not judged: `trace` (the trace has errors), `strict` (warnings under
   * `strict`). Absent when it was judged.
   */
  readonly stopped?: "trace" | "strict";
  readonly report?: CheckReport;
  /** The events at the report's witness positions (for reports that locate witnesses). */
  readonly witnessEvents?: ReadonlyMap<number, TraceEvent>;
}

/** Judges one run against a compiled policy. Never throws on bad input; the policy must be `ok`. */
export async function judgeRun(policy: CompiledPolicy, source: RunSource, options: JudgeRunOptions = {}): Promise<RunJudgement> {
  if (!policy.ok) throw new Error("the policy has errors; fix them before judging a run (see its diagnostics)");
  let text = source.text;
  if (text === undefined) {
    const read = await readRegularFile(source.file);
    if (typeof read !== "string") {
      return { file: source.file, detected: false, calls: 0, groundedEvents: 0, eventCount: 0, traceDiagnostics: [read], signatureDiagnostics: [], stopped: "trace" };
    }
    text = read;
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  const read = readRecording(text, {
    file: source.file,
    format: options.traceFormat ?? "auto",
    ...(options.ground !== undefined ? { ground: options.ground } : {}),
  });
  const events = read.trace.events;
  const about = {
    file: source.file,
    ...(read.format !== undefined ? { format: read.format } : {}),
    detected: read.detected,
    calls: read.calls,
    groundedEvents: read.groundedEvents,
    eventCount: events.length,
    ...(options.keepEvents === true || options.engine === "smt" ? { events } : {}),
    traceDiagnostics: read.diagnostics,
  };
  if (read.diagnostics.some((d) => d.severity === "error")) return { ...about, signatureDiagnostics: [], stopped: "trace" };
  const signatureDiagnostics = checkAgainstSignature(policy, signatureOf(events));
  if (options.strict === true && [...read.diagnostics, ...signatureDiagnostics].some((d) => d.severity === "warning")) {
    return { ...about, signatureDiagnostics, stopped: "strict" };
  }
  const report = await check(policy, events, {
    engine: options.engine ?? "eval",
    ...(options.decider !== undefined ? { decider: options.decider } : {}),
    ...(options.smt !== undefined ? { smt: options.smt } : {}),
  });
  const witnessEvents = new Map<number, TraceEvent>();
  for (const statement of report.statements) for (const position of statement.witnesses) witnessEvents.set(position, events[position - 1]!);
  return { ...about, signatureDiagnostics, report, witnessEvents };
}
