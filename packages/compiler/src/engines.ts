import { needsTime, ruleId, type CheckedStatement, type StatementOutcome } from "@vigil/checker";
import { callEventOf, decideCall, Monitor, recordCall, TraceRun, type CallDecision, type EvaluationBudget, type RunObservations, type RunObserver, type Violation } from "@vigil/engine";
import type { SmtDecider, SmtDeciderOptions } from "@vigil/smt";
import type { SqlJudge } from "@vigil/sql";
import type { TraceEvent } from "@vigil/trace";

/**
 * The decision procedures behind one interface. Every entry point (`check`, `judgeRun`, the test
 * runner, the corpus workers, the language server) names an engine and feeds it a run's events in
 * order; none decides by itself which procedure runs how.
 *
 * - `eval`: the forward machines over the trace (`TraceRun`), as the events are read.
 * - `smt`: Z3 over the Figure 5 lowering, on the whole run once read.
 * - `monitor`: the online monitor fed the run call by call, as the runtime drives it (each call,
 *   with the commands grounded from it, decided before it runs and recorded after), then finished.
 * - `sql`: the policy compiled to SQL (`@vigil/sql`) and run in embedded DuckDB over the run's
 *   events table and values table. (`vigilc check --engine sql` over a corpus loads every run into
 *   one database and runs the query once; here one run is one database.)
 *
 * Each run also has the forward run's observations (`RunObservations`: the event that made each
 * witness final, how often each trigger held and how it was answered, where each pattern matched):
 * one semantics explains the verdict whichever engine gave it. For `eval` the forward run is the
 * engine itself; the others run one beside them.
 */

export type EngineName = "eval" | "smt" | "monitor" | "sql";
export const engineNames: readonly EngineName[] = ["eval", "smt", "monitor", "sql"];

export interface EngineRunOptions {
  /** The forward run's time and memory budgets. */
  readonly budget?: EvaluationBudget;
  /** Told of each witness of the forward run as soon as it is final. */
  readonly observer?: RunObserver;
  /** Cancels the run: a solver call in progress is interrupted. `finish` then rejects with the reason. */
  readonly signal?: AbortSignal;
}

/** One run of an engine over one trace. */
export interface EngineRun {
  /** Reads the next event (positions 1, 2, … in order). */
  step(event: TraceEvent): void;
  /** Whether reading further events changes nothing (the forward run is past its time budget). */
  readonly exhausted: boolean;
  /** The run has ended: each statement's outcome, in the order of the statements. */
  finish(): Promise<readonly StatementOutcome[]>;
  /** What the forward run observed of each statement. */
  readonly observations: RunObservations;
}

export interface DecisionEngine {
  readonly name: EngineName;
  start(statements: readonly CheckedStatement[], options?: EngineRunOptions): EngineRun;
  /** Releases what the engine holds (a solver it created). */
  dispose(): Promise<void>;
}

export interface EngineOptions {
  /** For `smt`: a decider to use (one solver call at a time); without one, the engine creates one on first use and disposes it. */
  readonly decider?: SmtDecider;
  readonly smt?: SmtDeciderOptions;
  /** For `monitor`: how much work one decision may do before the call is blocked, in the monitor's units (default its `DECISION_BUDGET`). */
  readonly decisionBudget?: number;
}

/** The engine of that name. */
export function createEngine(name: "monitor", options?: EngineOptions): MonitorEngine;
export function createEngine(name: EngineName, options?: EngineOptions): DecisionEngine;
export function createEngine(name: EngineName, options: EngineOptions = {}): DecisionEngine {
  switch (name) {
    case "eval":
      return evalEngine;
    case "smt":
      return smtEngine(options);
    case "monitor":
      return monitorEngine(options.decisionBudget);
    case "sql":
      return sqlEngine;
  }
}

/**
 * A run of an engine that decides on the whole run once read (`smt`, `sql`): the events are kept,
 * the forward run beside them gives the observations, and `decide` gives the outcomes at the end.
 */
function wholeRun(statements: readonly CheckedStatement[], options: EngineRunOptions, decide: (events: readonly TraceEvent[]) => Promise<StatementOutcome[]>): EngineRun {
  const forward = new TraceRun(statements, options.budget ?? {}, options.observer);
  const events: TraceEvent[] = [];
  return {
    step(event) {
      forward.step(event);
      events.push(event);
    },
    get exhausted() {
      return false;
    },
    finish: () => decide(events),
    observations: forward,
  };
}

const sqlEngine: DecisionEngine = {
  name: "sql",
  start(statements, options = {}) {
    return wholeRun(statements, options, async (events) => {
      options.signal?.throwIfAborted();
      const { SqlJudge } = await import("@vigil/sql");
      const judge = await SqlJudge.create();
      try {
        judge.addRun("run");
        for (const event of events) judge.append("run", event);
        return [...(await judge.judge(statements)).get("run")!.outcomes];
      } finally {
        judge.close();
      }
    });
  },
  dispose: async () => {},
};

const evalEngine: DecisionEngine = {
  name: "eval",
  start(statements, options = {}) {
    const run = new TraceRun(statements, options.budget ?? {}, options.observer);
    return {
      step: (event) => run.step(event),
      get exhausted() {
        return run.exhausted;
      },
      finish: async () => run.finish(),
      observations: run,
    };
  },
  dispose: async () => {},
};

function smtEngine(options: EngineOptions): DecisionEngine {
  let owned: SmtDecider | undefined;
  const deciderOf = async (): Promise<SmtDecider> => {
    if (options.decider !== undefined) return options.decider;
    owned ??= await (await import("@vigil/smt")).SmtDecider.create(options.smt ?? {});
    return owned;
  };
  return {
    name: "smt",
    start(statements, runOptions = {}) {
      const { signal } = runOptions;
      return wholeRun(statements, runOptions, async (events) => {
        const decider = await deciderOf();
        const interrupt = () => decider.interrupt();
        signal?.addEventListener("abort", interrupt);
        const outcomes: StatementOutcome[] = [];
        try {
          for (const statement of statements) {
            signal?.throwIfAborted();
            outcomes.push(await decider.decide(statement, events));
          }
          // A decision the abort interrupted reads as undecided; the run as a whole was cancelled.
          signal?.throwIfAborted();
        } finally {
          signal?.removeEventListener("abort", interrupt);
        }
        return outcomes;
      });
    },
    async dispose() {
      await owned?.dispose();
      owned = undefined;
    },
  };
}

/** What the monitor engine also knows: its decision on each call, and whether its online reports agree with the end. */
export interface MonitorEngineRun extends EngineRun {
  /** The decision on each call, by the position of the call's first event (a message is not decided). */
  readonly decisions: ReadonlyMap<number, CallDecision>;
  /**
   * Witnesses the monitor reported that the finished run does not have: a disagreement between the
   * online and the offline reading (a bug). Those `record` reported are final by the monitor's
   * contract, and those `decide` reported are too when the call then succeeded. Filled by `finish`.
   */
  readonly disagreements: readonly string[];
}

/** The monitor engine: its runs say how it decided each call. */
export interface MonitorEngine extends DecisionEngine {
  start(statements: readonly CheckedStatement[], options?: EngineRunOptions): MonitorEngineRun;
}

function monitorEngine(decisionBudget?: number): MonitorEngine {
  return {
    name: "monitor",
    start(statements: readonly CheckedStatement[], options: EngineRunOptions = {}): MonitorEngineRun {
      const forward = new TraceRun(statements, options.budget ?? {}, options.observer);
      const monitor = new Monitor(statements, decisionBudget !== undefined ? { decisionBudget } : {});
      const decisions = new Map<number, CallDecision>();
      const online: { position: number; rule: string; witness: number }[] = [];
      const disagreements: string[] = [];
      const note = (position: number, violations: readonly Violation[]): void => {
        for (const v of violations) for (const w of v.witnesses) online.push({ position, rule: ruleId(v), witness: w });
      };
      // The events of the call being read: a call and the commands grounded from it are one call.
      let call: TraceEvent[] = [];
      const flush = (): void => {
        const first = call[0];
        if (first === undefined) return;
        const events = call;
        call = [];
        if (first.kind === "message") {
          note(first.position, monitor.observe({ action: first.action, args: first.args, ...timeOf(first) }).violations);
          return;
        }
        const decided = decideCall(monitor, statements, events.map((event) => ({ action: event.action, args: event.args, ...timeOf(event) })), decisionBudget);
        decisions.set(first.position, decided);
        if (first.status === undefined) {
          // No result: the call is not known to have run. It keeps its place in the run, with no status.
          for (const event of events) monitor.observe({ action: event.action, args: event.args, ...(event.output !== undefined ? { output: event.output } : {}), ...timeOf(event) });
          return;
        }
        // What the decision found assumed the call succeeds: final only if it did (a recorded call
        // the monitor would have refused may have run and failed).
        if (events.every((event) => event.status === "ok")) note(first.position, decided.violations);
        note(first.position, recordCall(monitor, events.map(callEventOf)).violations);
      };
      return {
        step(event) {
          forward.step(event);
          const from = event.source?.groundedFrom;
          if (from === undefined || call[0]?.position !== from) flush();
          call.push(event);
        },
        get exhausted() {
          return false;
        },
        async finish() {
          flush();
          const final = monitor.finish();
          const witnesses = new Map(final.map((verdict) => [ruleId(verdict), verdict.witnesses]));
          for (const { position, rule, witness } of online) {
            if (witnesses.get(rule)?.includes(witness) === true) continue;
            disagreements.push(`the monitor reported event ${witness} as a witness of \`${rule}\` at the call at event ${position}, but the finished run does not have it`);
          }
          // A rule that reads time, on a run whose events lack times: undecided, as the forward run has it
          // (the monitor would have timed them with its clock, which says nothing of a recording).
          const timeError = forward.timeError;
          return final.map(({ holds, witnesses: found }, index) =>
            timeError !== undefined && needsTime(statements[index]!) ? { holds: false, witnesses: found, undecided: timeError.reason } : { holds, witnesses: found },
          );
        },
        observations: forward,
        decisions,
        disagreements,
      };
    },
    dispose: async () => {},
  };
}

/** The event's time, as a field to spread (none when it has none). */
function timeOf(event: TraceEvent): { time?: number } {
  return event.time !== undefined ? { time: event.time } : {};
}

/** The monitor engine's run, with its decisions (the test runner's `decide` expectations read them). */
export function startMonitorRun(statements: readonly CheckedStatement[], decisionBudget?: number): MonitorEngineRun {
  return createEngine("monitor", decisionBudget !== undefined ? { decisionBudget } : {}).start(statements);
}

/** How a caller of `check` or `judgeRun` says which engine judges a run. */
export interface EngineChoice {
  /**
   * An engine's name (default `eval`): the engine is made for the run and disposed after it. Or an
   * engine the caller made (`createEngine`) and keeps across runs (a decider reused, its release
   * left to the caller).
   */
  readonly engine?: EngineName | DecisionEngine;
  /** For `smt` by name: a decider to reuse across runs (one solver call at a time). */
  readonly decider?: SmtDecider;
  readonly smt?: SmtDeciderOptions;
}

/** The engine a run is judged with, and whether the run owns it (and so disposes it at its end). */
export function engineOf(choice: EngineChoice): { readonly engine: DecisionEngine; readonly owned: boolean } {
  if (typeof choice.engine === "object") return { engine: choice.engine, owned: false };
  const options = { ...(choice.decider !== undefined ? { decider: choice.decider } : {}), ...(choice.smt !== undefined ? { smt: choice.smt } : {}) };
  return { engine: createEngine(choice.engine ?? "eval", options), owned: true };
}
