import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import type { AnswerCount, PatternMatchCount, RunObservations, ScopeCount, TriggerCount } from "@vigil/engine";
import type { Trace, TraceEvent } from "@vigil/trace";
import type { CompiledPolicy } from "./compile.js";
import { engineOf, type EngineChoice, type EngineName } from "./engines.js";

export type { EngineName } from "./engines.js";

export interface CheckTraceOptions extends EngineChoice {
  /**
   * Cancels the check (an editor's stale request): checked every few thousand events and between
   * statements, and a running solver call is interrupted. An aborted check rejects with `signal.reason`.
   */
  readonly signal?: AbortSignal;
}

/** The verdict on one statement, with what a report needs to show it. */
export interface StatementVerdict extends StatementOutcome {
  readonly policy: string;
  readonly name: string;
  readonly form: CheckedStatement["form"];
  readonly doc?: string;
  readonly statement: CheckedStatement;
  /**
   * For `until`: per witness (in the order of `witnesses`), the bad event that broke the interval
   * the witness opened. Absent for the other forms.
   */
  readonly brokenBy?: readonly number[];
  /**
   * On how many events the statement's trigger held, and the first of them (the forward engine
   * counts them as it reads; absent for `always` and for the SMT engine). A statement that holds
   * with a count of 0 holds vacuously: nothing it speaks of happened.
   */
  readonly triggers?: TriggerCount;
  /**
   * How many of those triggers were answered, and how: the answers `{trigger, by}` of the ten
   * answered triggers of lowest position, `by` being the event that discharged the obligation the
   * trigger opened (`MachineObserver.answered`). Read off the same forward run as `triggers` (both
   * engines); absent when `triggers` is, and for `abs`, whose triggers are its witnesses. A trigger
   * that is a witness is never answered. `reportToJson` writes it only when some trigger was answered.
   */
  readonly answers?: AnswerCount;
  /**
   * On how many events each of the statement's patterns matched, and the first of them, in the
   * form's order (`first`/`second`, `trigger`/`resolve`/`bad`, or `pattern` for `abs`); none for
   * `always`. A pattern that matched nothing is a condition the run never met.
   */
  readonly patterns?: readonly PatternMatchCount[];
  /**
   * For a statement under a scope: how many stretches of the run the scope opened, and where each
   * of the first (and the last) opened and closed (`close` absent: open at the end). Read off the
   * same forward run as `triggers`; absent without a scope. A scope that never opened is why a
   * scoped statement holds without judging any event; `triggers` counts only events in a stretch.
   */
  readonly scope?: ScopeCount;
}

export interface CheckReport {
  /** `safe` when every statement holds; `unsafe` when one is violated or could not be decided. */
  readonly verdict: "safe" | "unsafe";
  readonly engine: EngineName;
  readonly statements: readonly StatementVerdict[];
}

/**
 * Judges a trace against a compiled policy, statement by statement (Algorithm 1), with the engine
 * named. The policy must be `ok`; a policy with errors cannot judge anything, and this throws rather
 * than pass silently.
 */
export async function check(policy: CompiledPolicy, trace: Trace | readonly TraceEvent[], options: CheckTraceOptions = {}): Promise<CheckReport> {
  if (!policy.ok) throw new Error("the policy has errors; fix them before checking a trace (see its diagnostics)");
  const events = "events" in trace ? trace.events : trace;
  const { signal } = options;
  signal?.throwIfAborted();
  const statements = policy.program.policies.flatMap((p) => p.statements);
  const { engine, owned } = engineOf(options);
  try {
    const run = engine.start(statements, signal !== undefined ? { signal } : {});
    for (let index = 0; index < events.length; index++) {
      if (signal !== undefined && index % ABORT_CHECK_INTERVAL === 0) signal.throwIfAborted();
      run.step(events[index]!);
    }
    return reportOf(statements, await run.finish(), engine.name, run.observations);
  } finally {
    if (owned) await engine.dispose();
  }
}

/** How many events the evaluator steps between two looks at the abort signal. */
const ABORT_CHECK_INTERVAL = 4096;

/**
 * A report from each statement's outcome (in the same order), with what the forward run observed
 * of each (`observed`): the event that made each witness final (for `until`, the event that broke
 * the interval, which the report names beside the witness), how often its trigger held and how
 * those triggers were answered, and where its patterns matched.
 */
export function reportOf(statements: readonly CheckedStatement[], outcomes: readonly StatementOutcome[], engine: EngineName, observed?: RunObservations): CheckReport {
  const verdicts: StatementVerdict[] = statements.map((statement, index) => {
    const outcome = outcomes[index]!;
    const breakers = statement.form === "until" && outcome.witnesses.length > 0 && observed !== undefined ? observed.finalizedBy(index) : undefined;
    const triggered = observed?.triggers(index);
    const answered = observed?.answers(index);
    const patterns = observed?.patterns(index);
    const scope = statement.scope !== undefined ? observed?.scope?.(index) : undefined;
    return {
      policy: statement.policy,
      name: statement.name,
      form: statement.form,
      ...(statement.doc !== undefined ? { doc: statement.doc } : {}),
      statement,
      ...outcome,
      // A witness of an undecided run may have no breaker recorded: 0 says "not known".
      ...(breakers !== undefined ? { brokenBy: outcome.witnesses.map((witness) => breakers.get(witness) ?? 0) } : {}),
      ...(triggered !== undefined ? { triggers: { count: triggered.count, first: [...triggered.first] } } : {}),
      ...(answered !== undefined ? { answers: { count: answered.count, first: answered.first.map(({ trigger, by }) => ({ trigger, by })) } } : {}),
      ...(patterns !== undefined && patterns.length > 0 ? { patterns } : {}),
      ...(scope !== undefined ? { scope } : {}),
    };
  });
  return { verdict: verdicts.every((v) => v.holds) ? "safe" : "unsafe", engine, statements: verdicts };
}

/**
 * What a report can say of a run judged without a forward run beside it (the SQL engine over a
 * corpus, which judges every run in one query): the bad event that broke each `until` interval,
 * and nothing of triggers, answers or pattern matches.
 */
export function breakingObservations(brokenBy: readonly ReadonlyMap<number, number>[]): RunObservations {
  return {
    finalizedBy: (index) => brokenBy[index] ?? new Map(),
    triggers: () => undefined,
    answers: () => undefined,
    patterns: () => [],
    timeError: undefined,
  };
}

/** The machine-readable form of a report: exactly the documented JSON shape, plus optional fields. */
export function reportToJson(report: CheckReport): {
  verdict: "safe" | "unsafe";
  statements: {
    policy: string;
    name: string;
    holds: boolean;
    witnesses: number[];
    brokenBy?: number[];
    response: "block" | "warn" | "ask" | "halt" | "quarantine";
    remediation?: string;
    undecided?: string;
    triggers?: { count: number; first: number[] };
    answers?: { count: number; first: { trigger: number; by: number }[] };
    patterns?: { role: PatternMatchCount["role"]; count: number; first: number[] }[];
    scope?: { count: number; first: { open: number; close?: number }[]; last?: { open: number; close?: number } };
  }[];
} {
  return {
    verdict: report.verdict,
    statements: report.statements.map((v) => ({
      policy: v.policy,
      name: v.name,
      holds: v.holds,
      witnesses: [...v.witnesses],
      ...(v.brokenBy !== undefined ? { brokenBy: [...v.brokenBy] } : {}),
      response: v.statement.response,
      ...(v.statement.remediation !== undefined ? { remediation: v.statement.remediation } : {}),
      ...(v.undecided !== undefined ? { undecided: v.undecided } : {}),
      ...(v.triggers !== undefined ? { triggers: { count: v.triggers.count, first: [...v.triggers.first] } } : {}),
      // Only when some trigger was answered: `triggers` already says when none held.
      ...(v.answers !== undefined && v.answers.count > 0
        ? { answers: { count: v.answers.count, first: v.answers.first.map(({ trigger, by }) => ({ trigger, by })) } }
        : {}),
      ...(v.patterns !== undefined ? { patterns: v.patterns.map(({ role, count, first }) => ({ role, count, first: [...first] })) } : {}),
      ...(v.scope !== undefined
        ? { scope: { count: v.scope.count, first: v.scope.first.map((stretch) => ({ ...stretch })), ...(v.scope.last !== undefined ? { last: { ...v.scope.last } } : {}) } }
        : {}),
    })),
  };
}
