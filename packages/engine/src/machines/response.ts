import type { Window } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import type { PatternBinder } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { Truth } from "../truth.js";
import { OpenBindings, WaitingByBinding } from "./open-obligations.js";
import { unionOfActions } from "./relevant-actions.js";
import { NONE, sortedUnique, testedAmong } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/**
 * resp(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e' ≻ e} ψ'(e'). Per binding, the triggers still waiting for a
 * response; a response discharges every earlier trigger of its binding at once.
 */
export class ResponseMachine implements StatementMachine {
  private observer: MachineObserver | undefined = undefined;
  private openBindings: OpenBindings | undefined = undefined;
  private readonly waiting: WaitingByBinding;
  readonly relevantActions: ReadonlySet<string> | undefined;
  constructor(
    private readonly first: PatternBinder,
    private readonly second: PatternBinder,
    state?: StateOf<"resp">,
  ) {
    this.relevantActions = unionOfActions([this.first.pattern.formula, this.second.pattern.formula]);
    this.waiting = new WaitingByBinding(state?.waiting ?? []);
  }
  attach(observer: MachineObserver): void {
    this.observer = observer;
    this.openBindings = OpenBindings.of(this.waiting.positions());
  }
  step(event: TraceEvent): number[] {
    // Responses first: a trigger is answered only by a strictly later event.
    const responded = this.second.generates ? this.second.bindings(event) : testedAmong(this.second, event, this.waiting.bindings());
    for (const binding of responded) {
      if (this.observer !== undefined) this.answer(this.waiting.of(binding), event.position);
      this.waiting.delete(binding);
    }
    const triggered = this.first.bindings(event);
    if (triggered.length > 0 && this.observer !== undefined) {
      this.observer.trigger(event.position);
      this.openBindings!.opened(event.position, triggered.length);
    }
    for (const binding of triggered) this.waiting.add(binding, event.position);
    return NONE;
  }
  /** The event at `by` responds to the triggers waiting under one binding. */
  private answer(triggers: readonly number[], by: number): void {
    for (const position of triggers) if (this.openBindings!.discharged(position)) this.observer!.answered(position, by);
  }
  probe(): number[] {
    return NONE;
  }
  finish(): number[] {
    return sortedUnique(this.waiting.positions());
  }
  openObligations(): number {
    return this.waiting.size;
  }
  snapshot(): MachineState {
    return { form: "resp", waiting: this.waiting.saved() };
  }
}

/**
 * bresp[ℓ](ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e ≺_ℓ e'} ψ'(e'). The triggers whose windows are open wait in a
 * queue; per binding, the position of the latest response. A trigger is judged when its window
 * closes (or at the end of the run, which closes every window):
 * - ℓ events (`bresp[3]`): at the ℓ-th event after it, which is in the window (it may respond);
 * - a time d (`bresp[5m]`): at the first event more than d after it, which is not in the window, so
 *   the window is judged before that event is read. The window closed by the passing of time, not
 *   by that event: the monitor does not block the event for it (`probe` does not report it), and
 *   reports the missed response when the event is recorded.
 */
export class BoundedResponseMachine implements StatementMachine {
  private observer: MachineObserver | undefined = undefined;
  /**
   * With an observer: per binding, the triggers in the queue still waiting for a response of it, in
   * order (a response takes them all; a window that closes takes its trigger off the front).
   */
  private awaiting: Map<string, WindowEntry[]> | undefined = undefined;
  private readonly queue: WindowEntry[];
  private head: number;
  private readonly latestResponse: Map<string, number>;
  /** For a window of events, its length ℓ; undefined for a window of time. */
  private readonly bound: number | undefined;
  /** For a window of time, its length in milliseconds. */
  private readonly within: number;
  /** Every event closes the window of the trigger ℓ events (or more than d) before it. */
  readonly relevantActions = undefined;
  constructor(
    private readonly first: PatternBinder,
    private readonly second: PatternBinder,
    window: Window,
    state?: StateOf<"bresp">,
  ) {
    this.bound = window.unit === "events" ? window.size : undefined;
    this.within = window.unit === "time" ? window.size : 0;
    this.queue =
      state === undefined
        ? []
        : state.queue.map(([position, bindings, time]) => ({ position, bindings, unanswered: bindings.length, time: time ?? 0 }));
    this.head = 0;
    this.latestResponse = new Map(state?.latestResponse ?? []);
  }

  attach(observer: MachineObserver): void {
    this.observer = observer;
    this.awaiting = new Map();
    // A resumed queue: each open trigger waits for the bindings no response has met yet; one they
    // all met was answered before the snapshot.
    for (let index = this.head; index < this.queue.length; index++) {
      const entry = this.queue[index]!;
      entry.unanswered = 0;
      for (const binding of entry.bindings) {
        if ((this.latestResponse.get(binding) ?? 0) > entry.position) continue;
        entry.unanswered++;
        this.await(binding, entry);
      }
    }
  }

  private await(binding: string, entry: WindowEntry): void {
    const entries = this.awaiting!.get(binding);
    if (entries === undefined) this.awaiting!.set(binding, [entry]);
    else entries.push(entry);
  }

  private answered(entry: WindowEntry, respondsNow?: (binding: string) => boolean): boolean {
    for (const binding of entry.bindings) {
      if (!((this.latestResponse.get(binding) ?? 0) > entry.position || (respondsNow !== undefined && respondsNow(binding)))) return false;
    }
    return true;
  }

  /** The bindings of the triggers whose windows are still open. */
  private *openBindings(): Iterable<string> {
    for (let index = this.head; index < this.queue.length; index++) yield* this.queue[index]!.bindings;
  }

  probe(event: TraceEvent): number[] {
    // Windows of time that closed before the call closed by time, not by the call: not its doing.
    const bound = this.bound;
    if (bound === undefined) return NONE;
    // A call that may answer (for some output) keeps its triggers open: they are not final yet.
    const mayRespond = (binding: string) => this.second.holds(event, binding, "pending") !== Truth.False;
    let witnesses = NONE;
    for (let index = this.head; index < this.queue.length; index++) {
      const entry = this.queue[index]!;
      if (entry.position + bound > event.position) break;
      if (!this.answered(entry, mayRespond)) (witnesses === NONE ? (witnesses = []) : witnesses).push(entry.position);
    }
    return witnesses;
  }

  /** Judges the windows that are closed when `event` is read: in it (ℓ events), or before it (time). */
  private close(event: TraceEvent, witnesses: number[]): number[] {
    const bound = this.bound;
    const time = event.time ?? 0;
    while (this.head < this.queue.length) {
      const entry = this.queue[this.head]!;
      if (bound !== undefined ? entry.position + bound > event.position : time - entry.time <= this.within) break;
      this.head++;
      if (!this.answered(entry)) (witnesses === NONE ? (witnesses = []) : witnesses).push(entry.position);
      if (this.observer !== undefined) this.closed(entry);
    }
    return witnesses;
  }

  step(event: TraceEvent): number[] {
    // A window of time the event is past closes before the event is read: it cannot respond in it.
    let witnesses = this.bound === undefined ? this.close(event, NONE) : NONE;
    const responded = this.second.generates ? this.second.bindings(event) : testedAmong(this.second, event, new Set(this.openBindings()));
    for (const binding of responded) this.latestResponse.set(binding, event.position);
    if (this.observer !== undefined) this.answer(responded, event.position);
    if (this.bound !== undefined) witnesses = this.close(event, witnesses);
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      // Drop the judged entries now and then, so the queue holds only the open windows.
      this.queue.splice(0, this.head);
      this.head = 0;
    }
    const triggered = this.first.bindings(event);
    if (triggered.length > 0) {
      const entry = { position: event.position, bindings: triggered, unanswered: triggered.length, time: event.time ?? 0 };
      this.queue.push(entry);
      if (this.observer !== undefined) {
        this.observer.trigger(event.position);
        for (const binding of triggered) this.await(binding, entry);
      }
    }
    return witnesses;
  }

  /**
   * The event at `by` responds for `bindings`: every trigger waiting for one of them has it now (the
   * triggers still waiting are all within their windows, since a window's close takes its trigger
   * off), and one that has them all is answered.
   */
  private answer(bindings: readonly string[], by: number): void {
    for (const binding of bindings) {
      const entries = this.awaiting!.get(binding);
      if (entries === undefined) continue;
      this.awaiting!.delete(binding);
      for (const entry of entries) if (--entry.unanswered === 0) this.observer!.answered(entry.position, by);
    }
  }

  /** A window closed: its trigger, the oldest waiting, stops waiting (it was answered, or is a witness). */
  private closed(entry: WindowEntry): void {
    if (entry.unanswered === 0) return;
    for (const binding of entry.bindings) {
      const entries = this.awaiting!.get(binding);
      if (entries === undefined || entries[0] !== entry) continue;
      if (entries.length === 1) this.awaiting!.delete(binding);
      else entries.shift();
    }
  }

  finish(): number[] {
    const witnesses: number[] = [];
    for (let index = this.head; index < this.queue.length; index++) {
      const entry = this.queue[index]!;
      if (!this.answered(entry)) witnesses.push(entry.position);
    }
    return witnesses;
  }
  openObligations(): number {
    return this.queue.length - this.head;
  }
  snapshot(): MachineState {
    return {
      form: "bresp",
      queue: this.queue.slice(this.head).map((entry) => (this.bound === undefined ? [entry.position, [...entry.bindings], entry.time] : [entry.position, [...entry.bindings]])),
      latestResponse: [...this.latestResponse],
    };
  }
}

/**
 * A trigger of `bresp` whose window is open, and (kept only with an observer) how many of its
 * bindings no response has met yet within it.
 */
interface WindowEntry {
  readonly position: number;
  readonly bindings: readonly string[];
  unanswered: number;
  /** The trigger's time, for a window of time. */
  readonly time: number;
}
