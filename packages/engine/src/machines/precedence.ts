import type { TraceEvent } from "@vigil/trace";
import type { PatternBinder } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { Truth } from "../truth.js";
import { unionOfActions } from "./relevant-actions.js";
import { DecidedAtEachEvent, NONE } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/**
 * prec(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e') [∧ e'[k'] = e[k]]. Keeps the bindings ψ' has had.
 * When ψ' tests a variable with `contains`, its bindings cannot be listed: the machine keeps the
 * earlier events ψ' may hold on, and asks each binding of ψ of them once (a binding found stays
 * found; one not found remembers how far it looked).
 */
export class PrecedenceMachine extends DecidedAtEachEvent implements StatementMachine {
  private readonly seen: Set<string>;
  /** For a testing ψ': the earlier events it may hold on, and per binding how many were searched. */
  private readonly candidates: TraceEvent[];
  private readonly searched: Map<string, number>;
  readonly relevantActions: ReadonlySet<string> | undefined;
  constructor(
    private readonly first: PatternBinder,
    private readonly second: PatternBinder,
    state?: StateOf<"prec">,
  ) {
    super();
    this.relevantActions = unionOfActions([this.first.pattern.formula, this.second.pattern.formula]);
    this.seen = new Set(state?.seen ?? []);
    this.candidates = [...(state?.candidates ?? [])];
    this.searched = new Map(state?.searched ?? []);
  }
  private hadEarlier(binding: string): boolean {
    if (this.seen.has(binding)) return true;
    if (this.second.generates) return false;
    const from = this.searched.get(binding) ?? 0;
    for (let index = from; index < this.candidates.length; index++) {
      if (this.second.holds(this.candidates[index]!, binding) === Truth.True) {
        this.searched.delete(binding);
        this.seen.add(binding);
        // The candidates before it were searched for this binding and did not hold: it is the first.
        this.firstAt?.set(binding, this.candidates[index]!.position);
        return true;
      }
    }
    this.searched.set(binding, this.candidates.length);
    return false;
  }
  private observer: MachineObserver | undefined = undefined;
  /** With an observer: per binding of `seen`, the first event ψ' held on for it (since the observer came). */
  private firstAt: Map<string, number> | undefined = undefined;
  attach(observer: MachineObserver): void {
    this.observer = observer;
    this.firstAt = new Map();
  }
  private unseen(triggered: readonly string[], position: number): number[] {
    for (const binding of triggered) if (!this.hadEarlier(binding)) return [position];
    return NONE;
  }
  probe(event: TraceEvent): number[] {
    return this.unseen(this.first.bindings(event, "definitely"), event.position);
  }
  step(event: TraceEvent): number[] {
    const triggered = this.first.bindings(event, "exact");
    const witnesses = this.unseen(triggered, event.position);
    if (this.observer !== undefined && triggered.length > 0) this.tell(event.position, triggered, witnesses);
    if (this.second.generates) {
      const firstAt = this.firstAt;
      for (const binding of this.second.bindings(event)) {
        if (firstAt !== undefined && !this.seen.has(binding)) firstAt.set(binding, event.position);
        this.seen.add(binding);
      }
    } else if (this.second.mayHoldForSome(event)) this.candidates.push(plainEvent(event));
    return witnesses;
  }
  /** A trigger that is no witness is answered by the latest of its bindings' first ψ' (each binding was met by then). */
  private tell(position: number, triggered: readonly string[], witnesses: readonly number[]): void {
    this.observer!.trigger(position);
    if (witnesses.length > 0) return;
    let by = 0;
    for (const binding of triggered) {
      const at = this.firstAt!.get(binding);
      // Met only before a snapshot this machine resumed from: the event is not known.
      if (at === undefined) return;
      if (at > by) by = at;
    }
    this.observer!.answered(position, by);
  }
  snapshot(): MachineState {
    return this.second.generates
      ? { form: "prec", seen: [...this.seen] }
      : { form: "prec", seen: [...this.seen], candidates: this.candidates, searched: [...this.searched] };
  }
}

/** An event without its source: what a machine keeps of an event it may need again. */
function plainEvent(event: TraceEvent): TraceEvent {
  return {
    position: event.position,
    action: event.action,
    args: event.args,
    ...(event.status !== undefined ? { status: event.status } : {}),
    ...(event.output !== undefined ? { output: event.output } : {}),
    ...(event.outputTruncated === true ? { outputTruncated: true } : {}),
    ...(event.time !== undefined ? { time: event.time } : {}),
  };
}
