import type { StatementOutcome } from "@vigil/checker";
import { needsTime, type CheckedStatement } from "@vigil/checker/ir";
import type { TraceEvent } from "@vigil/trace";
import { Dispatch } from "./dispatch.js";
import { createMachine } from "./machines.js";
import { sortedUnique } from "./machines/shared.js";
import type { StatementMachine } from "./machines/statement-machine.js";
import { PatternMatches, type PatternMatchCount } from "./pattern-matches.js";
import { EventTimes } from "./time.js";

/** The budgets of a run: past one, the statements it concerns are undecided (fail closed). */
export interface EvaluationBudget {
  /** Wall-clock milliseconds for the whole run (checked every few thousand events). */
  readonly timeMs?: number;
  /**
   * How many obligations one statement may hold open at once (events waiting for a response, a
   * resolution, the end of the run): its memory. Past it the statement is undecided.
   */
  readonly openObligations?: number;
}

/**
 * What a run tells as it reads, beside what it keeps (`RunObservations`): each witness as soon as it
 * is final, with the statement's index, while the event that made it final is the one being read (a
 * report can keep that event without holding the run).
 */
export interface RunObserver {
  witness(statement: number, position: number): void;
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

/** A trigger whose obligation was discharged, and the event that discharged it (`MachineObserver.answered`). */
export interface Answer {
  readonly trigger: number;
  readonly by: number;
}

/** A stretch of the run a scoped statement was judged on: the event that opened it, and the one that closed it (none: open at the end). */
export interface ScopeStretch {
  readonly open: number;
  readonly close?: number;
}

/**
 * Where a scoped statement's scope opened: how many stretches of the run it opened, the first of
 * them (at most ten) and, when there were more, the last. `before ψ` has one stretch, from the
 * first event (when the run has one) to the first event matching ψ.
 */
export interface ScopeCount {
  readonly count: number;
  readonly first: readonly ScopeStretch[];
  readonly last?: ScopeStretch;
}

/** How many of a statement's triggers were answered, and the answers of the first of them. */
export interface AnswerCount {
  readonly count: number;
  /** The answers of the answered triggers of lowest position (at most ten), by trigger position. */
  readonly first: readonly Answer[];
}

/**
 * What a run observed of each statement beside its outcome, by the statement's index: why it holds
 * or not. `TraceRun` observes it as it reads; reports of either engine are written from it.
 */
export interface RunObservations {
  /** Each witness found before the end, and the event whose reading made it final (for `until`, the breaking event). */
  finalizedBy(index: number): ReadonlyMap<number, number>;
  /** On how many events the trigger held, and the first of them (undefined for `always`). */
  triggers(index: number): TriggerCount | undefined;
  /** How the triggers were answered (undefined for `abs` and `always`). */
  answers(index: number): AnswerCount | undefined;
  /** For a statement under a scope, where the scope opened and closed (undefined without a scope). */
  scope?(index: number): ScopeCount | undefined;
  /** On how many events each of the statement's patterns matched, and the first of them. */
  patterns(index: number): readonly PatternMatchCount[];
  /**
   * The first event whose time a statement that measures time could not use (it has none, or one
   * earlier than the event before it), and why: those statements are undecided. Undefined when none.
   */
  readonly timeError: TimeError | undefined;
}

/** An event whose time cannot be used, where it was read, and why. */
export interface TimeError {
  readonly position: number;
  readonly source?: TraceEvent["source"];
  readonly reason: string;
}

/** How many of the first trigger positions (and answers) a run keeps per statement. */
const TRIGGERS_KEPT = 10;

/** Per statement, the triggers a run has seen and the answers it was told; under a scope, its stretches. */
interface Observed {
  count: number;
  first: number[];
  answers: { count: number; first: Answer[] };
  stretches?: { count: number; first: { open: number; close?: number }[]; last?: { open: number; close?: number } };
}

/** Keeps the answer among the first kept: those of the lowest trigger positions, in order. */
function keepAnswer(first: Answer[], trigger: number, by: number): void {
  const full = first.length >= TRIGGERS_KEPT;
  // Triggers are answered mostly in order: then the answer falls past the last kept and is not kept.
  if (full && trigger > first[first.length - 1]!.trigger) return;
  let index = first.length;
  while (index > 0 && first[index - 1]!.trigger > trigger) index--;
  first.splice(index, 0, { trigger, by });
  if (first.length > TRIGGERS_KEPT) first.pop();
}

export class TraceRun implements RunObservations {
  private readonly machines: StatementMachine[];
  /** Per statement: on how many events its trigger held, and the first of them; how many were answered, and how. */
  private readonly triggered: Observed[];
  private readonly witnesses: number[][];
  /** Per statement: each witness reported before the end, and the event whose reading made it one. */
  private readonly finalAt: Map<number, number>[];
  private readonly undecided: (string | undefined)[];
  private readonly dispatch: Dispatch;
  private readonly patternMatches: PatternMatches;
  private readonly deadline: number;
  private readonly openLimit: number;
  private stopped: string | undefined;
  private events = 0;
  /** The indexes of the statements under a `before` scope, whose one stretch opens with the run. */
  private readonly beforeScopes: readonly number[];
  /** The indexes of the statements that read time, and the times read so far; undefined when none does. */
  private readonly timed: { readonly statements: readonly number[]; readonly times: EventTimes } | undefined;
  /** The first event whose time could not be used, and why. */
  private timeProblem: TimeError | undefined;

  constructor(
    readonly statements: readonly CheckedStatement[],
    private readonly budget: EvaluationBudget = {},
    private readonly observer?: RunObserver,
  ) {
    this.triggered = statements.map((statement) => ({
      count: 0,
      first: [] as number[],
      answers: { count: 0, first: [] as Answer[] },
      ...(statement.scope !== undefined ? { stretches: { count: 0, first: [] } } : {}),
    }));
    this.machines = statements.map((statement, index) => {
      const seen = this.triggered[index]!;
      const answers = seen.answers;
      const stretches = seen.stretches;
      const open = (position: number): void => {
        const stretch = { open: position };
        stretches!.count++;
        if (stretches!.first.length < TRIGGERS_KEPT) stretches!.first.push(stretch);
        stretches!.last = stretch;
      };
      return createMachine(statement, undefined, {
        trigger: (position) => {
          seen.count++;
          if (seen.first.length < TRIGGERS_KEPT) seen.first.push(position);
        },
        answered: (trigger, by) => {
          answers.count++;
          keepAnswer(answers.first, trigger, by);
        },
        ...(stretches !== undefined
          ? {
              opened: open,
              closed: (position: number) => {
                // `before`'s stretch is open from the start; it was opened at the first event.
                if (stretches.last !== undefined && stretches.last.close === undefined) stretches.last.close = position;
              },
            }
          : {}),
      });
    });
    this.beforeScopes = statements.flatMap((statement, index) => (statement.scope?.kind === "before" ? [index] : []));
    this.witnesses = statements.map(() => []);
    this.finalAt = statements.map(() => new Map());
    this.undecided = statements.map(() => undefined);
    this.dispatch = new Dispatch(this.machines);
    this.patternMatches = new PatternMatches(statements);
    this.deadline = budget.timeMs === undefined ? Infinity : performance.now() + budget.timeMs;
    this.openLimit = budget.openObligations ?? DEFAULT_OPEN_OBLIGATIONS;
    const timed = statements.flatMap((statement, index) => (needsTime(statement) ? [index] : []));
    this.timed = timed.length === 0 ? undefined : { statements: timed, times: new EventTimes() };
  }

  /** Reads the next event (positions 1, 2, … in order). */
  step(event: TraceEvent): void {
    if (this.stopped !== undefined) return;
    this.events++;
    // The stretch of a `before` scope opens with the run.
    if (this.events === 1) {
      for (const index of this.beforeScopes) {
        const stretches = this.triggered[index]!.stretches!;
        const stretch = { open: event.position };
        stretches.count = 1;
        stretches.first.push(stretch);
        stretches.last = stretch;
      }
    }
    this.patternMatches.step(event);
    if (this.events % BUDGET_CHECK_INTERVAL === 0) this.checkBudgets();
    if (this.timed !== undefined && this.timeProblem === undefined) this.checkTime(event);
    for (const index of this.dispatch.machinesFor(event.action)) {
      if (this.undecided[index] !== undefined) continue;
      const machine = this.machines[index]!;
      const found = machine.step(event);
      if (found.length === 0) continue;
      const witnesses = this.witnesses[index]!;
      const finalAt = this.finalAt[index]!;
      for (const position of found) {
        witnesses.push(position);
        if (!finalAt.has(position)) finalAt.set(position, machine.foundAt?.(position) ?? event.position);
        this.observer?.witness(index, position);
      }
    }
  }

  /** A statement that reads time is undecided from the first event whose time it cannot use. */
  private checkTime(event: TraceEvent): void {
    const reason = this.timed!.times.problem(event);
    if (reason === undefined) return;
    this.timeProblem = { position: event.position, ...(event.source !== undefined ? { source: event.source } : {}), reason };
    for (const index of this.timed!.statements) this.undecided[index] ??= reason;
  }

  get timeError(): TimeError | undefined {
    return this.timeProblem;
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
   * On how many of the events read the statement's trigger held (for some binding), and the first
   * of them (at most ten); undefined for an `always`, which has no single trigger. A statement
   * whose trigger held on no event holds vacuously.
   */
  triggers(index: number): TriggerCount | undefined {
    if (this.statements[index]!.form === "always") return undefined;
    const { count, first } = this.triggered[index]!;
    return { count, first };
  }

  /** On how many of the events read each pattern of the statement matched, and the first of them (none for `always`). */
  patterns(index: number): readonly PatternMatchCount[] {
    return this.patternMatches.counts(index);
  }

  /**
   * How many of the statement's triggers were answered among the events read, and the answers of
   * the ten answered triggers of lowest position, by position (`MachineObserver.answered` says, form
   * by form, which event answers a trigger); undefined for an `abs`, whose triggers are its witnesses, and an
   * `always`, which has no trigger. A trigger that is a witness is never answered; one of `until`
   * whose interval is still open at the end is neither.
   */
  answers(index: number): AnswerCount | undefined {
    const form = this.statements[index]!.form;
    return form === "always" || form === "abs" || form === "limit" ? undefined : this.triggered[index]!.answers;
  }

  /**
   * For a statement under a scope: how many stretches of the run its scope opened, where each of the
   * first ten (and the last) opened and closed; undefined for a statement without a scope. A scope
   * that never opened is why a scoped statement holds without looking at anything.
   */
  scope(index: number): ScopeCount | undefined {
    const stretches = this.triggered[index]!.stretches;
    if (stretches === undefined) return undefined;
    const copy = (stretch: { open: number; close?: number }): ScopeStretch => ({ open: stretch.open, ...(stretch.close !== undefined ? { close: stretch.close } : {}) });
    const more = stretches.last !== undefined && stretches.count > stretches.first.length;
    return { count: stretches.count, first: stretches.first.map(copy), ...(more ? { last: copy(stretches.last!) } : {}) };
  }

  /**
   * For the statement at `index`: each witness found before the run ended, and the position of the
   * event whose reading made it final. For `until` that event is the bad event that broke the
   * interval the witness (its trigger) opened; for `abs`, `prec` and a past-only `always` it is the
   * witness itself, for `bresp[ℓ]` the event that closed the window. Witnesses the end of the run
   * makes final (`resp`, `rslv`) have none.
   */
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
