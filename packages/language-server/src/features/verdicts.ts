import { basename } from "node:path";
import { createEngine, judgeRun, reportOf, ruleId, type CheckReport, type CompiledPolicy, type StatementOutcome, type TraceEvent } from "@vigil/compiler";
import type { SampleSet, SampleTrace } from "../workspace/samples.js";

/**
 * Every rule's verdict on every sample trace, by the forward evaluator (never the solver, so a
 * lens never waits on it). Computed once per document version and sample set, off the request path.
 */

export interface TraceVerdict {
  /** The trace file. */
  readonly trace: string;
  readonly holds: boolean;
  /** Why the evaluator could not decide (its budget ran out): counts as not holding. */
  readonly undecided?: string;
  readonly witnessCount: number;
  /** The first witness: its event position (1-based) and the line of the trace file it starts on (1-based). */
  readonly firstWitness?: { readonly event: number; readonly line?: number };
}

/** Verdicts by rule (its `ruleId`), each with one entry per judged trace, in the sample set's order. */
export type VerdictTable = ReadonlyMap<string, readonly TraceVerdict[]>;

/** How many statements are judged between two looks at the server's other work. */
const STATEMENTS_PER_SLICE = 200;

/** How long the evaluator may take on one sample trace before its rules are undecided. */
const SAMPLE_BUDGET_MS = 30_000;

export async function judgeSamples(policy: CompiledPolicy, samples: SampleSet, signal: AbortSignal): Promise<VerdictTable> {
  const table = new Map<string, TraceVerdict[]>();
  for (const trace of samples.traces) {
    if (!trace.usable) continue;
    // Yield between traces, so that a newer edit (which aborts this) is read in between.
    await yieldToRequests();
    signal.throwIfAborted();
    const judged = await judgeSample(policy, trace, signal);
    if (judged === undefined) continue;
    for (const statement of judged.report.statements) {
      const key = ruleId(statement);
      let verdicts = table.get(key);
      if (verdicts === undefined) {
        verdicts = [];
        table.set(key, verdicts);
      }
      const first = statement.witnesses[0];
      const line = first !== undefined ? judged.lineOf(first) : undefined;
      verdicts.push({
        trace: trace.file,
        holds: statement.holds,
        ...(statement.undecided !== undefined ? { undecided: statement.undecided } : {}),
        witnessCount: statement.witnesses.length,
        ...(first !== undefined ? { firstWitness: { event: first, ...(line !== undefined ? { line } : {}) } } : {}),
      });
    }
  }
  return table;
}

async function judgeSample(policy: CompiledPolicy, trace: SampleTrace, signal: AbortSignal): Promise<{ report: CheckReport; lineOf: (position: number) => number | undefined } | undefined> {
  const events = trace.events;
  if (events !== undefined) {
    // What `check` does with the forward engine (each statement's machine over the events), a few
    // hundred statements at a time: a large policy then never holds the server for long, and a
    // completion or a newer edit is answered in between. Each statement's machine runs on its own,
    // so the outcomes are the same as in one run.
    const statements = policy.program.policies.flatMap((p) => p.statements);
    const forward = createEngine("eval");
    const outcomes: StatementOutcome[] = [];
    for (let start = 0; start < statements.length; start += STATEMENTS_PER_SLICE) {
      const run = forward.start(statements.slice(start, start + STATEMENTS_PER_SLICE));
      for (const event of events) run.step(event);
      for (const outcome of await run.finish()) outcomes.push(outcome);
      await yieldToRequests();
      signal.throwIfAborted();
    }
    return { report: reportOf(statements, outcomes, "eval"), lineOf: (position) => lineOf(events[position - 1]) };
  }
  // A run too long to keep is read again, piece by piece, as `vigilc check` reads it (and a newer
  // version of the document stops the reading).
  const run = await judgeRun(policy, { file: trace.file }, { engine: "eval", locateWitnesses: 1, budgetMs: SAMPLE_BUDGET_MS, signal, ...(trace.messages === true ? { messages: true } : {}) });
  if (run.report === undefined) return undefined;
  const located = run.witnessEvents;
  return { report: run.report, lineOf: (position) => lineOf(located?.get(position)) };
}

function yieldToRequests(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function lineOf(event: TraceEvent | undefined): number | undefined {
  return event?.source?.line;
}

/** A rule's lens title: "holds on 3 traces", "violated at event 5 of violating.jsonl", …. */
export function verdictTitle(verdicts: readonly TraceVerdict[]): string {
  const broken = verdicts.filter((v) => !v.holds);
  if (broken.length === 0) return `holds on ${verdicts.length} ${verdicts.length === 1 ? "trace" : "traces"}`;
  const first = broken[0]!;
  const more = broken.length > 1 ? ` (and ${broken.length - 1} more ${broken.length === 2 ? "trace" : "traces"})` : "";
  if (first.undecided !== undefined) return `undecided on ${basename(first.trace)}: ${first.undecided}${more}`;
  return `violated at event ${first.firstWitness?.event ?? "?"} of ${basename(first.trace)}${more}`;
}
