import type { TraceEvent } from "@vigil/trace";
import type { PatternBinder } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { OpenBindings } from "./open-obligations.js";
import { unionOfActions } from "./relevant-actions.js";
import { NONE, sortedUnique, testedAmong } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/**
 * rslv(ψ, ψ'): R(e) = ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e')). Per binding, the latest
 * unresolved trigger: a later trigger or resolution of the same binding supersedes it, so only the
 * finally delivered state is judged.
 */
export class ResolutionMachine implements StatementMachine {
  private observer: MachineObserver | undefined = undefined;
  private openBindings: OpenBindings | undefined = undefined;
  private readonly latest: Map<string, number>;
  readonly relevantActions: ReadonlySet<string> | undefined;
  constructor(
    private readonly first: PatternBinder,
    private readonly second: PatternBinder,
    state?: StateOf<"rslv">,
  ) {
    this.relevantActions = unionOfActions([this.first.pattern.formula, this.second.pattern.formula]);
    this.latest = new Map(state?.latest ?? []);
  }
  attach(observer: MachineObserver): void {
    this.observer = observer;
    this.openBindings = OpenBindings.of(this.latest.values());
  }
  step(event: TraceEvent): number[] {
    const observer = this.observer;
    const triggered = this.first.bindings(event);
    if (triggered.length > 0) observer?.trigger(event.position);
    const resolved = this.second.generates ? this.second.bindings(event) : testedAmong(this.second, event, [...this.latest.keys(), ...triggered]);
    for (const binding of resolved) {
      if (observer !== undefined) this.supersede(binding, event.position);
      this.latest.delete(binding);
    }
    let open = 0;
    for (const binding of triggered) {
      if (resolved.includes(binding)) continue;
      if (observer !== undefined) this.supersede(binding, event.position);
      this.latest.set(binding, event.position);
      open++;
    }
    if (observer !== undefined && triggered.length > 0) {
      // Resolved at itself for every binding it has: answered by itself.
      if (open === 0) observer.answered(event.position, event.position);
      else this.openBindings!.opened(event.position, open);
    }
    return NONE;
  }
  /**
   * The event at `by` takes `binding` off the latest trigger that waits under it (a resolution, or a
   * later trigger of the binding): that trigger is answered if it was its last binding.
   */
  private supersede(binding: string, by: number): void {
    const earlier = this.latest.get(binding);
    if (earlier !== undefined && earlier !== by && this.openBindings!.discharged(earlier)) this.observer!.answered(earlier, by);
  }
  probe(): number[] {
    return NONE;
  }
  finish(): number[] {
    return sortedUnique([...this.latest.values()]);
  }
  openObligations(): number {
    return this.latest.size;
  }
  snapshot(): MachineState {
    return { form: "rslv", latest: [...this.latest] };
  }
}
