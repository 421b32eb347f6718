import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { Dispatch } from "./dispatch.js";
import { createMachine, sortedUnique, type StatementMachine } from "./machines.js";

/**
 * The offline check: the statements' forward machines run over a trace, every event in order, then
 * `finish`. The witnesses are every event whose condition R_φ(e) is false, ascending (Figure 5,
 * Section 5.3); the SMT decider must return exactly the same. Events can be fed as they are read,
 * so a trace never has to be held whole.
 */
export class TraceRun {
  private readonly machines: StatementMachine[];
  private readonly witnesses: number[][];
  private readonly dispatch: Dispatch;
  private events = 0;

  /**
   * @param onWitness called for each witness as soon as it is final, with the statement's index
   *   (witnesses that only the end of the run makes final are in `finish`'s outcomes)
   */
  constructor(
    readonly statements: readonly CheckedStatement[],
    private readonly onWitness?: (statement: number, position: number) => void,
  ) {
    this.machines = statements.map((statement) => createMachine(statement));
    this.witnesses = statements.map(() => []);
    this.dispatch = new Dispatch(this.machines);
  }

  /** Reads the next event (positions 1, 2, … in order). */
  step(event: TraceEvent): void {
    this.events++;
    for (const index of this.dispatch.machinesFor(event.action)) {
      const found = this.machines[index]!.step(event);
      if (found.length === 0) continue;
      const witnesses = this.witnesses[index]!;
      for (const position of found) {
        witnesses.push(position);
        this.onWitness?.(index, position);
      }
    }
  }

  /** How many events were read. */
  get length(): number {
    return this.events;
  }

  /** The run has ended: each statement's outcome, in the order of `statements`. */
  finish(): StatementOutcome[] {
    return this.machines.map((machine, index) => {
      const witnesses = [...this.witnesses[index]!];
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
