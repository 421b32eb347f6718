import type { LimitMeasure } from "@vigil/checker";
import { addDecimal, compareDecimal, decimalOf, formatDecimal, subtractDecimal, ZERO, type Decimal, type TraceEvent } from "@vigil/trace";
import { eventAmount, type PatternBinder } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { actionsOf } from "./relevant-actions.js";
import { DecidedAtEachEvent, NONE } from "./shared.js";
import type { MachineObserver, StatementMachine } from "./statement-machine.js";

/**
 * limit[N](ψ), limit[N per d](ψ), limit[X of k per d](ψ): R(e) = ψ(e, ν) ⇒ the measure of the events
 * e' ≼ e with ψ(e', ν) (and t(e) − t(e') < d, with a window) is at most the maximum, for every
 * binding ν of e. The measure is their number, or the sum of their amounts at k (`eventAmount`); an
 * event whose amount cannot be counted is a witness itself and adds nothing.
 *
 * Per binding, the running total; with a window, one queue of the counted events in the order read
 * (so in time), from which an event leaves once the window has passed it, taking its amount off its
 * binding's total: amortized constant work per event, memory the events within the window.
 * Decided at each event: a limit exceeded is exceeded for good, so the monitor blocks the call that
 * would exceed it.
 */
export class LimitMachine extends DecidedAtEachEvent implements StatementMachine {
  private readonly maximum: Decimal;
  /** Per binding: the total of the events counted (within the window). */
  private readonly totals: Map<string, { total: Decimal; events: number }>;
  /** With a window: the counted events, oldest first, from `head` on. */
  private readonly queue: { readonly time: number; readonly binding: string; readonly amount: Decimal }[];
  private head = 0;
  readonly relevantActions: ReadonlySet<string> | undefined;
  private observer: MachineObserver | undefined = undefined;
  constructor(
    private readonly pattern: PatternBinder,
    private readonly measure: LimitMeasure,
    private readonly per: number | undefined,
    state?: StateOf<"limit">,
  ) {
    super();
    this.relevantActions = actionsOf(pattern.pattern.formula);
    this.maximum = measure.kind === "count" ? { units: BigInt(measure.maximum), exponent: 0 } : decimalOf(measure.maximum)!;
    this.totals = new Map((state?.totals ?? []).map(([binding, total, events]) => [binding, { total: decimalOf(total)!, events }]));
    this.queue = (state?.queue ?? []).map(([time, binding, amount]) => ({ time, binding, amount: decimalOf(amount)! }));
  }
  /** Its triggers are the events it counts: it tells each, and never an answer. */
  attach(observer: MachineObserver): void {
    this.observer = observer;
  }
  /** What the event adds: one, or its amount; undefined when its amount cannot be counted (or, for a call not run, is not known yet). */
  private amountOf(event: TraceEvent): Decimal | undefined {
    return this.measure.kind === "count" ? ONE : eventAmount(event, this.measure.subject, this.measure.key);
  }
  /** Whether the window, at `time`, has passed a counted event at `at`. */
  private passed(at: number, time: number): boolean {
    return time - at >= this.per!;
  }
  step(event: TraceEvent): number[] {
    const bindings = this.pattern.bindings(event);
    if (this.per !== undefined) this.slide(event.time ?? 0);
    if (bindings.length === 0) return NONE;
    this.observer?.trigger(event.position);
    const amount = this.amountOf(event);
    if (amount === undefined) return [event.position];
    let exceeded = false;
    for (const binding of bindings) {
      let tally = this.totals.get(binding);
      if (tally === undefined) this.totals.set(binding, (tally = { total: ZERO, events: 0 }));
      tally.total = addDecimal(tally.total, amount);
      tally.events++;
      if (this.per !== undefined) this.queue.push({ time: event.time ?? 0, binding, amount });
      if (compareDecimal(tally.total, this.maximum) > 0) exceeded = true;
    }
    return exceeded ? [event.position] : NONE;
  }
  /** Takes off the totals the events the window has passed at `time`. */
  private slide(time: number): void {
    const queue = this.queue;
    while (this.head < queue.length && this.passed(queue[this.head]!.time, time)) {
      const { binding, amount } = queue[this.head++]!;
      const tally = this.totals.get(binding)!;
      tally.total = subtractDecimal(tally.total, amount);
      if (--tally.events === 0) this.totals.delete(binding);
    }
    if (this.head > 1024 && this.head * 2 > queue.length) {
      queue.splice(0, this.head);
      this.head = 0;
    }
  }
  probe(event: TraceEvent): number[] {
    const bindings = this.pattern.bindings(event, "definitely");
    if (bindings.length === 0) return NONE;
    // An amount in the output is not known before the call runs: it cannot be judged yet.
    if (this.measure.kind === "sum" && this.measure.subject === "output") return NONE;
    const amount = this.amountOf(event);
    if (amount === undefined) return [event.position];
    const time = event.time ?? 0;
    for (const binding of bindings) {
      let total = this.totals.get(binding)?.total ?? ZERO;
      if (this.per !== undefined) {
        for (let index = this.head; index < this.queue.length && this.passed(this.queue[index]!.time, time); index++) {
          const entry = this.queue[index]!;
          if (entry.binding === binding) total = subtractDecimal(total, entry.amount);
        }
      }
      if (compareDecimal(addDecimal(total, amount), this.maximum) > 0) return [event.position];
    }
    return NONE;
  }
  override openObligations(): number {
    return this.queue.length - this.head;
  }
  snapshot(): MachineState {
    return {
      form: "limit",
      totals: [...this.totals].map(([binding, { total, events }]) => [binding, formatDecimal(total), events]),
      queue: this.queue.slice(this.head).map(({ time, binding, amount }) => [time, binding, formatDecimal(amount)]),
    };
  }
}

const ONE: Decimal = { units: 1n, exponent: 0 };
