import type { TraceEvent } from "@vigil/trace";
import type { PatternBinder } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { OpenBindings, WaitingByBinding } from "./open-obligations.js";
import { unionOfActions } from "./relevant-actions.js";
import { NONE, NONE_STRINGS, sortedUnique, testedAmong } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/**
 * until(ψ, ψ', ψb): R(e) = ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec)). Per binding, the
 * triggers whose interval is still open. At each event, a bad event breaks the open intervals of its
 * binding (of every binding when ψb binds no variable), then a resolution closes them, then the
 * event's own triggers open new ones: the resolution must come strictly between.
 */
export class UntilMachine implements StatementMachine {
  private observer: MachineObserver | undefined = undefined;
  private openBindings: OpenBindings | undefined = undefined;
  private readonly open: WaitingByBinding;
  /** Triggers already reported, for a trigger open under several bindings (list values). */
  private readonly reported: Set<number>;
  readonly relevantActions: ReadonlySet<string> | undefined;
  constructor(
    private readonly trigger: PatternBinder,
    private readonly resolve: PatternBinder,
    private readonly bad: PatternBinder,
    state?: StateOf<"until">,
  ) {
    this.relevantActions = unionOfActions([this.trigger.pattern.formula, this.resolve.pattern.formula, this.bad.pattern.formula]);
    this.open = new WaitingByBinding(state?.open ?? []);
    this.reported = new Set(state?.reported ?? []);
  }

  /** The bindings whose open intervals `event` breaks: those of ψb, or all when ψb binds nothing. */
  private broken(event: TraceEvent, mode: "exact" | "definitely"): Iterable<string> {
    if (!this.bad.binds) return this.bad.bindings(event, mode).length > 0 ? this.open.bindings() : NONE_STRINGS;
    return this.bad.generates ? this.bad.bindings(event, mode) : testedAmong(this.bad, event, this.open.bindings(), mode);
  }

  private brokenTriggers(broken: Iterable<string>): number[] {
    const witnesses: number[] = [];
    for (const binding of broken) {
      for (const position of this.open.of(binding)) if (!this.reported.has(position)) witnesses.push(position);
    }
    return sortedUnique(witnesses);
  }

  probe(event: TraceEvent): number[] {
    return this.brokenTriggers(this.broken(event, "definitely"));
  }

  attach(observer: MachineObserver): void {
    this.observer = observer;
    this.openBindings = OpenBindings.of(this.open.positions());
  }

  step(event: TraceEvent): number[] {
    const broken = [...this.broken(event, "exact")];
    const witnesses = this.brokenTriggers(broken);
    for (const binding of broken) this.open.delete(binding);
    for (const position of witnesses) {
      this.reported.add(position);
      this.openBindings?.forget(position);
    }
    if (!this.resolve.binds) {
      if (this.resolve.bindings(event).length > 0) {
        if (this.observer !== undefined) this.close(this.open.positions(), event.position);
        this.open.clear();
      }
    } else {
      for (const binding of this.resolve.generates ? this.resolve.bindings(event) : testedAmong(this.resolve, event, this.open.bindings())) {
        if (this.observer !== undefined) this.close(this.open.of(binding), event.position);
        this.open.delete(binding);
      }
    }
    const triggered = this.trigger.bindings(event);
    if (triggered.length > 0 && this.observer !== undefined) {
      this.observer.trigger(event.position);
      this.openBindings!.opened(event.position, triggered.length);
    }
    for (const binding of triggered) this.open.add(binding, event.position);
    return witnesses;
  }

  /**
   * The resolution at `by` closes these intervals (one binding of each trigger): a trigger whose
   * every interval it opened is closed so is answered, unless a bad event already broke one of them.
   */
  private close(triggers: readonly number[], by: number): void {
    for (const position of triggers) {
      if (this.reported.has(position)) continue;
      if (this.openBindings!.discharged(position)) this.observer!.answered(position, by);
    }
  }

  finish(): number[] {
    return NONE;
  }
  openObligations(): number {
    return this.open.size;
  }
  snapshot(): MachineState {
    return { form: "until", open: this.open.saved(), reported: [...this.reported] };
  }
}
