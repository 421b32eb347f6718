import type { Formula } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { compilePattern, compilePendingPattern, type EventPredicate, type PendingPredicate } from "../atoms.js";
import type { MachineState } from "../machine-state.js";
import { Truth } from "../truth.js";
import { actionsOf } from "./relevant-actions.js";
import { DecidedAtEachEvent, NONE } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/** abs(ψ): R(e) = ¬ψ(e). Decided at each event; no state. */
export class AbsenceMachine extends DecidedAtEachEvent implements StatementMachine {
  private readonly matches: EventPredicate;
  private readonly pendingMatches: PendingPredicate;
  readonly relevantActions: ReadonlySet<string> | undefined;
  constructor(formula: Formula) {
    super();
    this.relevantActions = actionsOf(formula);
    this.matches = compilePattern(formula);
    this.pendingMatches = compilePendingPattern(formula);
  }
  private observer: MachineObserver | undefined = undefined;
  /** Its triggers are its witnesses: it tells each, and never an answer. */
  attach(observer: MachineObserver): void {
    this.observer = observer;
  }
  step(event: TraceEvent): number[] {
    if (!this.matches(event)) return NONE;
    this.observer?.trigger(event.position);
    return [event.position];
  }
  probe(event: TraceEvent): number[] {
    return this.pendingMatches(event) === Truth.True ? [event.position] : NONE;
  }
  snapshot(): MachineState {
    return { form: "abs" };
  }
}
