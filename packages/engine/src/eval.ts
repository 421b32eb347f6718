import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { Dispatch } from "./dispatch.js";
import { createMachine, sortedUnique, type StatementMachine } from "./machines.js";

/** The budgets of a run: past one, the statements it concerns are undecided (fail closed). */
export interface EvaluationBudget {
  /** Wall-clock milliseconds for the whole run (checked every few thousand events). */
  readonly timeMs?: number;
  /**
   * How many obligations one statement may hold open at once (events waiting for a response, a
   * resolution, the end of the run): its memory. Past it the statement is undecided.
   */
  readonly openObligations?: number;
  /** The callback's option: called for each witness as soon as it is final (see `TraceRun`). */
  readonly onWitness?: (statement: number, position: number) => void;
}

/** By default a statement may hold ten million obligations open: far beyond any real run. */
export const DEFAULT_OPEN_OBLIGATIONS = 10_000_000;

/** How often (in events) the budgets are checked: rarely enough to cost nothing. */
const BUDGET_CHECK_INTERVAL = 4096;

/**
 * The offline check: the statements' forward machines run over a trace, every event in order, then
 * `finish`. The witnesses are every event whose condition R_φ(e) is false, ascending (Figure 5,
 * Section 5.3); the SMT decider must return exactly the same. Events can be fed as they are read,
 * so a trace never has to be held whole. A run past its time budget, or a statement past its
 * memory budget, is undecided with the reason: it counts as not holding.
 */
/** How many events matched a statement's trigger, and the first of them. */
export interface TriggerCount {
  readonly count: number;
  readonly first: readonly number[];
}

/** How many of the first trigger positions a run keeps per statement. */
const TRIGGERS_KEPT = 10;

export class TraceRun {
  private readonly machines: StatementMachine[];
  /** Per statement: on how many events its trigger held, and the first of them. */
  private readonly triggered: { count: number; first: number[] }[];
  private readonly witnesses: number[][];
  /** Per statement: each witness reported before the end, and the event whose reading made it one. */
  private readonly finalAt: Map<number, number>[];
  private readonly undecided: (string | undefined)[];
  private readonly dispatch: Dispatch;
  private readonly deadline: number;
  private readonly openLimit: number;
  private stopped: string | undefined;
  private events = 0;

  constructor(
    readonly statements: readonly CheckedStatement[],
    private readonly budget: EvaluationBudget = {},
  ) {
    this.triggered = statements.map(() => ({ count: 0, first: [] as number[] }));
    this.machines = statements.map((statement, index) => {
      const seen = this.triggered[index]!;
      return createMachine(statement, undefined, {
        trigger: (position) => {
          seen.count++;
          if (seen.first.length < TRIGGERS_KEPT) seen.first.push(position);
        },
      });
    });
    this.witnesses = statements.map(() => []);
    this.finalAt = statements.map(() => new Map());
    this.undecided = statements.map(() => undefined);
    this.dispatch = new Dispatch(this.machines);
    this.deadline = budget.timeMs === undefined ? Infinity : performance.now() + budget.timeMs;
    this.openLimit = budget.openObligations ?? DEFAULT_OPEN_OBLIGATIONS;
  }

  /** Reads the next event (positions 1, 2, … in order). */
  step(event: TraceEvent): void {
    if (this.stopped !== undefined) return;
    this.events++;
    if (this.events % BUDGET_CHECK_INTERVAL === 0) this.checkBudgets();
    for (const index of this.dispatch.machinesFor(event.action)) {
      if (this.undecided[index] !== undefined) continue;
      const found = this.machines[index]!.step(event);
      if (found.length === 0) continue;
      const witnesses = this.witnesses[index]!;
      const finalAt = this.finalAt[index]!;
      for (const position of found) {
        witnesses.push(position);
        if (!finalAt.has(position)) finalAt.set(position, event.position);
        this.budget.onWitness?.(index, position);
      }
    }
  }

  private checkBudgets(): void {
    if (performance.now() > this.deadline) {
      this.stopped = `the evaluation ran past its time budget of ${this.budget.timeMs} ms after ${this.events} events`;
      return;
    }
    this.machines.forEach((machine, index) => {
      if (this.undecided[index] === undefined && machine.openObligations() > this.openLimit) {
        this.undecided[index] = `more than ${this.openLimit} obligations were open at once (the statement's memory budget) at event ${this.events}`;
      }
    });
  }

  /** Whether the run is past its time budget: reading further events changes nothing. */
  get exhausted(): boolean {
    return this.stopped !== undefined;
  }

  /** How many events were read. */
  get length(): number {
    return this.events;
  }

  /**
   * For the statement at `index`: each witness found before the run ended, and the position of the
   * event whose reading made it final. For `until` that event is the bad event that broke the
   * interval the witness (its trigger) opened; for `abs`, `prec` and a past-only `always` it is the
   * witness itself, for `bresp[ℓ]` the event that closed the window. Witnesses the end of the run
   * makes final (`resp`, `rslv`) have none.
   */
  /**
   * On how many of the events read the statement's trigger held (for some binding), and the first
   * of them (at most ten); undefined for an `always`, which has no single trigger. A statement
   * whose trigger held on no event holds vacuously.
   */
  triggers(index: number): TriggerCount | undefined {
    return this.statements[index]!.form === "always" ? undefined : this.triggered[index]!;
  }

  finalizedBy(index: number): ReadonlyMap<number, number> {
    return this.finalAt[index]!;
  }

  /** The run has ended: each statement's outcome, in the order of `statements`. */
  finish(): StatementOutcome[] {
    return this.machines.map((machine, index) => {
      const reason = this.stopped ?? this.undecided[index];
      const witnesses = [...this.witnesses[index]!];
      if (reason !== undefined) return { holds: false, witnesses: sortedUnique(witnesses), undecided: reason };
      for (const position of machine.finish()) witnesses.push(position);
      const sorted = sortedUnique(witnesses);
      return { holds: sorted.length === 0, witnesses: sorted };
    });
  }
}

/** One statement judged on a whole trace. */
export function evaluateStatement(statement: CheckedStatement, events: Iterable<TraceEvent>): StatementOutcome {
  const run = new TraceRun([statement]);
  for (const event of events) run.step(event);
  return run.finish()[0]!;
}

/**
 * For an `until` statement: each witness (the trigger of a broken interval) and the bad event that
 * broke it, the first bad event after the trigger with no resolution between. Read off the forward
 * machine, which reports a trigger when it reads that event.
 */
export function breakingEvents(statement: CheckedStatement, events: Iterable<TraceEvent>): ReadonlyMap<number, number> {
  if (statement.form !== "until") return new Map();
  const run = new TraceRun([statement]);
  for (const event of events) run.step(event);
  return run.finalizedBy(0);
}
