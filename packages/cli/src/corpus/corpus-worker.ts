import { compile, createEngine, judgeRun, type CompiledPolicy, type DecisionEngine, type EngineName, type Signature, type TraceFormat } from "@vigil/compiler";
import type { TextOrigin } from "@vigil/trace";
import { outcomeOf, runError, timelineEvents, type RunOutcome } from "../reports/outcome.js";

export type { RunOutcome } from "../reports/outcome.js";

/**
 * Checks one run of a corpus, in a worker thread, through the same pipeline as a single trace
 * (`judgeRun`), with every option of the command. Everything it returns is plain data; a problem
 * with the run (unreadable, malformed, warnings under --strict) is part of the result, never a
 * thrown error, so that the corpus report accounts for every run.
 */
export interface RunTask {
  readonly file: string;
  /**
   * For a run of a file holding several (cut from it in the main thread, which read the file once):
   * its name, its text, and where the text starts in the file.
   */
  readonly run?: string;
  readonly text?: string;
  readonly origin?: TextOrigin;
  readonly policySource: string;
  readonly policyFile: string;
  readonly traceFormat: TraceFormat | "auto";
  readonly ground?: boolean;
  /** Messages of the conversation are events too (`user_message`, `agent_message`). */
  readonly messages?: boolean;
  readonly engine?: EngineName;
  /** For `smt`: the time limit per solver call, in milliseconds. */
  readonly timeoutMs?: number;
  /** For `eval`: the time budget of the run, in milliseconds. */
  readonly budgetMs?: number;
  /**
   * Warnings about the run stop it. The policy's names are not judged against the run's own
   * signature: the corpus judges them once, against the union of its runs' signatures.
   */
  readonly strict?: boolean;
  /** Send the run's events back for a report that shows them (`--html`). */
  readonly timeline?: boolean;
}

/** The policy is compiled once per worker thread (every task of a corpus carries the same source). */
let compiled: { readonly source: string; readonly file: string; readonly policy: CompiledPolicy } | undefined;
/** One engine per worker thread, reused across runs: for `--engine smt`, one decider, whose solver calls run one at a time. */
let engine: { readonly name: EngineName; readonly timeoutMs: number; readonly engine: DecisionEngine } | undefined;

function policyOf(task: RunTask): CompiledPolicy {
  if (compiled === undefined || compiled.source !== task.policySource || compiled.file !== task.policyFile) {
    compiled = { source: task.policySource, file: task.policyFile, policy: compile(task.policySource, { file: task.policyFile }) };
  }
  return compiled.policy;
}

async function engineFor(name: EngineName, timeoutMs: number): Promise<DecisionEngine> {
  if (engine === undefined || engine.name !== name || engine.timeoutMs !== timeoutMs) {
    await engine?.engine.dispose();
    engine = { name, timeoutMs, engine: createEngine(name, { smt: { timeoutMs } }) };
  }
  return engine.engine;
}

/** A run checked: its outcome, and its signature (when it could be read) for the corpus's closed world. */
export interface RunResult {
  readonly outcome: RunOutcome;
  readonly signature?: Signature;
}

export default async function checkRun(task: RunTask): Promise<RunResult> {
  const run = task.run !== undefined ? { run: task.run } : {};
  try {
    const policy = policyOf(task);
    const judged = await judgeRun(
      policy,
      { file: task.file, ...run, ...(task.text !== undefined ? { text: task.text } : {}), ...(task.origin !== undefined ? { origin: task.origin } : {}) },
      {
        engine: await engineFor(task.engine ?? "eval", task.timeoutMs ?? 30_000),
        traceFormat: task.traceFormat,
        ...(task.ground !== undefined ? { ground: task.ground } : {}),
        ...(task.messages === true ? { messages: true } : {}),
        strict: task.strict === true,
        closedWorld: "corpus",
        ...(task.budgetMs !== undefined ? { budgetMs: task.budgetMs } : {}),
        // Reports of a corpus show no witness event, only the witnesses' lines and (for --html) a
        // timeline, whose few events are read again: a long run is never held whole.
        locateWitnesses: 0,
        witnessLines: true,
      },
    );
    const format = judged.format;
    const signature = judged.signature !== undefined ? { signature: judged.signature } : {};
    if (judged.stopped === "trace") {
      const errors = judged.traceDiagnostics.filter((d) => d.severity === "error").map((d) => runError(d, task.file));
      return { outcome: { file: task.file, ...run, ...(format ? { format } : {}), events: judged.eventCount, statements: [], errors } };
    }
    if (judged.stopped === "strict") {
      // Under --strict a warning about the run stops it like an error; its message says so.
      const warnings = [...judged.traceDiagnostics, ...judged.signatureDiagnostics]
        .filter((d) => d.severity === "warning")
        .map((d) => ({ ...runError(d, task.file), message: `--strict: ${d.message}` }));
      return { outcome: { file: task.file, ...run, ...(format ? { format } : {}), events: judged.eventCount, statements: [], errors: warnings }, ...signature };
    }
    // A run given as text was kept whole; one read from its file is read again for its timeline.
    const events = task.timeline !== true ? judged.witnessEvents! : (judged.events ?? (await timelineEvents(judged, task)));
    const outcome = outcomeOf(task.file, format, events, judged.report!, {
      ...run,
      timeline: task.timeline === true,
      eventCount: judged.eventCount,
      ...(judged.witnessLines !== undefined ? { witnessLines: judged.witnessLines } : {}),
    });
    return { outcome, ...signature };
  } catch (error) {
    return { outcome: { file: task.file, ...run, events: 0, statements: [], errors: [{ code: "E0003", severity: "error", message: `internal error: ${(error as Error).message}`, file: task.file }] } };
  }
}
