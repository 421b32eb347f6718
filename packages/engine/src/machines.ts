import type { CheckedScope, CheckedStatement, Formula, LimitMeasure, TemporalFormula, Window } from "@vigil/checker";
import { hasTimeWindow, isTemporal, ruleId, usesEventually } from "@vigil/checker/ir";
import { ScopedMachine } from "./scoped.js";
import type { MachineState, StateOf } from "./machine-state.js";
import { compilePattern, compilePendingPattern, eventAmount, PatternBinder, type BindingPattern, type EventPredicate, type PendingPredicate } from "./atoms.js";
import { junctionTruth, notTruth, Truth, truthOf } from "./truth.js";
import { addDecimal, compareDecimal, decimalOf, formatDecimal, subtractDecimal, ZERO, type Decimal, type TraceEvent } from "@vigil/trace";

/**
 * The forward engine: every statement compiles to a state machine that reads the trace one event
 * at a time. It is the one copy of the semantics of Figure 5 that both the offline check
 * (`evaluateStatement`, the machine run over a whole trace) and the online monitor use.
 *
 * A witness is an event e whose condition R_φ(e) is false (Section 5.3). Each machine reports a
 * witness as soon as it is final, that is, as soon as no continuation of the trace can make R_φ(e)
 * true again:
 * - `abs`, `prec` and an `always` body without `eventually`: at the event itself;
 * - `until`: at the bad event that breaks the interval (the witness is the interval's trigger);
 * - `bresp[ℓ]`: at the ℓ-th event after the trigger, when its window closes without a response;
 * - `resp`, `rslv` and an `always` body with `eventually`: at `finish`, when the run has ended.
 *
 * Cost: amortized O(1) per event for a fixed statement (times the bindings an event makes).
 * Memory: the distinct values bound to variables and the open obligations (events still waiting
 * for a response, a resolution or a later event), never the trace's length — except for an
 * `always` body that uses `eventually`, which keeps one bit per event and one-event subformula
 * until the run ends (see `FutureBodyMachine`).
 */
export interface StatementMachine {
  /**
   * The actions of the events that can change this machine or make a witness; undefined when any
   * event can. An event of another action leaves the machine as it is and may be skipped.
   */
  readonly relevantActions: ReadonlySet<string> | undefined;
  /** Reads the next event (positions 1, 2, … in order); returns the witnesses that became final. */
  step(event: TraceEvent): number[];
  /**
   * For a call that has not run (judged as succeeding, its output unknown): the witnesses that
   * stepping it would make final whatever its output. Changes nothing.
   */
  probe(event: TraceEvent): number[];
  /** The witnesses that the end of the run makes final (obligations still open). Changes nothing. */
  finish(): number[];
  /**
   * For a witness `step` returns now that was found on an earlier event and held back (a scoped
   * machine holds a `between` stretch's witnesses until the stretch closes): the event whose reading
   * made it one (for `until`, the breaking event). Undefined for one found on the event just read.
   */
  foundAt?(witness: number): number | undefined;
  /** How many obligations are open: events whose condition is not decided yet. */
  openObligations(): number;
  /** The machine's state as JSON-compatible data, for `restoreMachine`. */
  snapshot(): MachineState;
}

/**
 * Told what a machine sees as it steps (not when it probes, nor at `finish`): each event on which the
 * statement's trigger holds for some binding — the pattern of an `abs`, the first pattern of `prec`,
 * `resp`, `bresp` and `rslv`, the trigger of `until` — and, later, the event that discharged the
 * obligation such a trigger opened. An `always` has no single trigger and tells nothing. A rule
 * whose trigger never holds on a run holds on it vacuously; one whose every trigger was answered
 * holds because of the events that answered them; reports say which.
 *
 * The observer is not state: it changes no verdict, a snapshot does not hold it, and a machine
 * resumed from a snapshot with an observer tells it only what happens from then on (answers seen
 * before the snapshot are not told again). A machine without an observer does none of the
 * bookkeeping below.
 */
export interface MachineObserver {
  trigger(position: number): void;
  /**
   * The obligation the trigger at `trigger` opened is discharged by the event at `by`, so that
   * trigger will never be a witness (a trigger that ends up a witness is never answered). Told once
   * per trigger, when the last of its bindings (a trigger whose key holds a list opens one
   * obligation per value) is discharged; `by` is the event that discharged that last one.
   * - `resp(ψ, ψ')`: the first later ψ' of the binding (`by` > `trigger`);
   * - `bresp[ℓ](ψ, ψ')`: the first ψ' of the binding among the next ℓ events;
   * - `prec(ψ, ψ')`: the first earlier ψ' of the binding (`by` < `trigger`), told when the trigger is
   *   read. After a resume, a binding whose ψ' was read only before the snapshot has no known event
   *   and its triggers are not told;
   * - `rslv(ψ, ψ')`: the trigger itself when ψ' holds on it (`by` = `trigger`), otherwise the first
   *   later event on which ψ' or ψ holds for the binding (a resolution, or a later trigger that
   *   supersedes it);
   * - `until(ψ, ψ', ψb)`: the resolution ψ' that closed its interval before any bad event; a
   *   trigger whose interval is still open at the end is neither a witness nor answered;
   * - `abs` never answers (its trigger is a witness), nor does `always` (it has no trigger).
   */
  answered(trigger: number, by: number): void;
  /**
   * For a statement under a scope (`ScopedMachine`): a stretch of the run opened at the event at
   * `position` (`after`, `between`, `after … until`; the stretch of `before` is open from the start
   * and is not told), and the stretch open closed at the event at `position` (`before`: its first
   * event matching ψ; `between` and `after … until`: the event matching ψ'), which belongs to it
   * for `before` never, and to none for the others.
   */
  opened?(position: number): void;
  closed?(position: number): void;
}

/** A machine that tells an observer: `attach` sets it and builds the bookkeeping it needs from the state. */
interface Observed {
  attach(observer: MachineObserver): void;
}

export type { MachineState } from "./machine-state.js";

/** A fresh machine for a statement, or one resumed from a snapshot of a machine of the same statement. */
export function createMachine(statement: CheckedStatement, state?: MachineState, observer?: MachineObserver): StatementMachine {
  if (statement.scope !== undefined) return scopedMachine(statement, statement.scope, state, observer);
  const machine = newMachine(statement, state);
  if (observer !== undefined && "attach" in machine) (machine as StatementMachine & Observed).attach(observer);
  return machine;
}

/** A statement under a scope: a machine of the statement alone over each stretch (see `ScopedMachine`). */
function scopedMachine(statement: CheckedStatement, scope: CheckedScope, state: MachineState | undefined, observer: MachineObserver | undefined): StatementMachine {
  const form = `scoped-${scope.kind}`;
  if (state !== undefined && state.form !== form) {
    throw new Error(`the saved state is of a \`${state.form}\` statement, not of \`${ruleId(statement)}\` (${form})`);
  }
  const { scope: _scope, ...unscoped } = statement;
  // The stretch's machine numbers its events from 1; what it tells the observer is put back in place.
  const fresh = (offset: number, innerState?: MachineState) =>
    createMachine(unscoped as CheckedStatement, innerState, observer === undefined || offset === 0 ? observer : shiftedObserver(observer, offset));
  const inner = fresh(0).relevantActions;
  const scopeActions = [scope.open, ...(scope.close !== undefined ? [scope.close] : [])].map(actionsOf);
  const relevant = inner === undefined || scopeActions.some((actions) => actions === undefined) ? undefined : new Set([...inner, ...scopeActions.flatMap((actions) => [...actions!])]);
  return new ScopedMachine(scope, fresh, relevant, state, observer);
}

function shiftedObserver(observer: MachineObserver, offset: number): MachineObserver {
  return {
    trigger: (position) => observer.trigger(position + offset),
    answered: (trigger, by) => observer.answered(trigger + offset, by + offset),
  };
}

function newMachine(statement: CheckedStatement, state?: MachineState): StatementMachine {
  if (state !== undefined && state.form !== machineForm(statement)) {
    throw new Error(`the saved state is of a \`${state.form}\` statement, not of \`${ruleId(statement)}\` (${statement.form})`);
  }
  const bind = (pattern: BindingPattern) => new PatternBinder(pattern, statement.variables);
  // The form was checked above: the state is of this machine's form.
  const saved = <F extends MachineState["form"]>() => state as StateOf<F> | undefined;
  switch (statement.form) {
    case "abs":
      return new AbsenceMachine(statement.pattern.formula);
    case "prec":
      return new PrecedenceMachine(bind(statement.first), bind(statement.second), saved<"prec">());
    case "resp":
      return new ResponseMachine(bind(statement.first), bind(statement.second), saved<"resp">());
    case "bresp":
      return new BoundedResponseMachine(bind(statement.first), bind(statement.second), statement.window, saved<"bresp">());
    case "limit":
      return new LimitMachine(bind(statement.pattern), statement.measure, statement.per, saved<"limit">());
    case "rslv":
      return new ResolutionMachine(bind(statement.first), bind(statement.second), saved<"rslv">());
    case "until":
      return new UntilMachine(bind(statement.trigger), bind(statement.resolve), bind(statement.bad), saved<"until">());
    case "always":
      return usesEventually(statement.body) ? new FutureBodyMachine(statement.body, saved<"always-future">()) : new PastBodyMachine(statement.body, saved<"always">());
  }
}

function machineForm(statement: CheckedStatement): MachineState["form"] {
  return statement.form === "always" && usesEventually(statement.body) ? "always-future" : statement.form;
}

const NONE: number[] = [];

/**
 * For an observer: per trigger still open under more than one binding, how many of its bindings are
 * still open (a trigger open under one binding is not kept: its first discharge is its last). Only
 * a machine with an observer has one.
 */
class OpenBindings {
  private readonly counts = new Map<number, number>();

  /** Counted from the positions a machine's state holds open, one per binding (a resumed machine). */
  static of(positions: Iterable<number>): OpenBindings {
    const open = new OpenBindings();
    for (const position of positions) open.counts.set(position, (open.counts.get(position) ?? 0) + 1);
    for (const [position, count] of open.counts) if (count === 1) open.counts.delete(position);
    return open;
  }

  /** A trigger opens under `bindings` bindings. */
  opened(position: number, bindings: number): void {
    if (bindings > 1) this.counts.set(position, bindings);
  }

  /** One binding of the trigger is discharged: whether it was its last. */
  discharged(position: number): boolean {
    const count = this.counts.get(position);
    if (count === undefined) return true;
    if (count === 1) {
      this.counts.delete(position);
      return true;
    }
    this.counts.set(position, count - 1);
    return false;
  }

  /** The trigger is a witness: it will never be answered. */
  forget(position: number): void {
    this.counts.delete(position);
  }
}

/**
 * A statement decided at each event (`abs`, `prec`, a past-only `always`): nothing waits for later
 * events, so the end of the run adds no witness and no obligation is ever open.
 */
abstract class DecidedAtEachEvent {
  finish(): number[] {
    return NONE;
  }
  openObligations(): number {
    return 0;
  }
}

/** abs(ψ): R(e) = ¬ψ(e). Decided at each event; no state. */
class AbsenceMachine extends DecidedAtEachEvent implements StatementMachine {
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

/**
 * prec(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e') [∧ e'[k'] = e[k]]. Keeps the bindings ψ' has had.
 * When ψ' tests a variable with `contains`, its bindings cannot be listed: the machine keeps the
 * earlier events ψ' may hold on, and asks each binding of ψ of them once (a binding found stays
 * found; one not found remembers how far it looked).
 */
class PrecedenceMachine extends DecidedAtEachEvent implements StatementMachine {
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

/**
 * The open bindings for which a pattern that tests with `contains` holds on an event, each tested.
 * (A pattern that only binds gives its bindings directly, `PatternBinder.bindings`: the callers ask
 * `generates` first, so the common case costs nothing more.)
 */
function testedAmong(pattern: PatternBinder, event: TraceEvent, open: Iterable<string>, mode: "exact" | "definitely" = "exact"): readonly string[] {
  if (!pattern.mayHoldForSome(event)) return NONE_STRINGS;
  const matched: string[] = [];
  for (const binding of open) if (pattern.holds(event, binding, mode === "exact" ? "exact" : "pending") === Truth.True) matched.push(binding);
  return matched;
}

/**
 * Positions of events waiting per binding (the triggers of `resp` still waiting for a response, the
 * triggers of `until` whose interval is open), with a running count of them all: the machine's open
 * obligations, read at every budget check.
 */
class WaitingByBinding {
  private readonly byBinding: Map<string, number[]>;
  private total = 0;

  constructor(saved: readonly (readonly [string, readonly number[]])[] = []) {
    this.byBinding = new Map(saved.map(([binding, positions]) => [binding, [...positions]]));
    for (const positions of this.byBinding.values()) this.total += positions.length;
  }

  add(binding: string, position: number): void {
    const positions = this.byBinding.get(binding);
    if (positions === undefined) this.byBinding.set(binding, [position]);
    else positions.push(position);
    this.total++;
  }

  of(binding: string): readonly number[] {
    return this.byBinding.get(binding) ?? NONE;
  }

  bindings(): string[] {
    return [...this.byBinding.keys()];
  }

  delete(binding: string): void {
    this.total -= this.byBinding.get(binding)?.length ?? 0;
    this.byBinding.delete(binding);
  }

  clear(): void {
    this.byBinding.clear();
    this.total = 0;
  }

  /** Every waiting position (a position waiting under several bindings appears once per binding). */
  positions(): number[] {
    const all: number[] = [];
    for (const positions of this.byBinding.values()) for (const position of positions) all.push(position);
    return all;
  }

  get size(): number {
    return this.total;
  }

  saved(): [string, number[]][] {
    return [...this.byBinding].map(([binding, positions]) => [binding, [...positions]]);
  }
}

/**
 * resp(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e' ≻ e} ψ'(e'). Per binding, the triggers still waiting for a
 * response; a response discharges every earlier trigger of its binding at once.
 */
class ResponseMachine implements StatementMachine {
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
class BoundedResponseMachine implements StatementMachine {
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
class LimitMachine extends DecidedAtEachEvent implements StatementMachine {
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

/**
 * rslv(ψ, ψ'): R(e) = ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e')). Per binding, the latest
 * unresolved trigger: a later trigger or resolution of the same binding supersedes it, so only the
 * finally delivered state is judged.
 */
class ResolutionMachine implements StatementMachine {
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

/**
 * until(ψ, ψ', ψb): R(e) = ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec)). Per binding, the
 * triggers whose interval is still open. At each event, a bad event breaks the open intervals of its
 * binding (of every binding when ψb binds no variable), then a resolution closes them, then the
 * event's own triggers open new ones: the resolution must come strictly between.
 */
class UntilMachine implements StatementMachine {
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

const NONE_STRINGS: readonly string[] = [];

// ---- always Θ ------------------------------------------------------------------------------

/**
 * A temporal body as a list of nodes in evaluation order (children before parents). Leaves are its
 * largest subformulas without `once` or `eventually`: one-event predicates.
 */
type BodyNode =
  | { readonly kind: "leaf"; readonly predicate: EventPredicate; readonly pending: PendingPredicate; readonly leaf: number }
  | { readonly kind: "and" | "or"; readonly operands: readonly number[] }
  | { readonly kind: "not" | "once" | "eventually"; readonly operand: number; readonly summary: number; readonly within?: number };

interface CompiledBody {
  readonly nodes: readonly BodyNode[];
  readonly leaves: number;
  /** How many `once`/`eventually` nodes: each keeps one running summary. */
  readonly summaries: number;
}

function compileBody(body: Formula): CompiledBody {
  const nodes: BodyNode[] = [];
  let leaves = 0;
  let summaries = 0;
  const visit = (formula: Formula): number => {
    if (!isTemporal(formula)) {
      nodes.push({ kind: "leaf", predicate: compilePattern(formula), pending: compilePendingPattern(formula), leaf: leaves++ });
      return nodes.length - 1;
    }
    switch (formula.kind) {
      case "and":
      case "or": {
        const operands = formula.operands.map(visit);
        nodes.push({ kind: formula.kind, operands });
        return nodes.length - 1;
      }
      case "not": {
        const operand = visit(formula.operand);
        nodes.push({ kind: "not", operand, summary: -1 });
        return nodes.length - 1;
      }
      case "once":
      case "eventually": {
        const operand = visit(formula.operand);
        const within = (formula as TemporalFormula).within;
        nodes.push({ kind: formula.kind, operand, summary: summaries++, ...(within !== undefined ? { within } : {}) });
        return nodes.length - 1;
      }
      default:
        throw new Error("internal error: an atom is not temporal");
    }
  };
  visit(body);
  return { nodes, leaves, summaries };
}

/** The value of a body's node by its index: `junctionTruth`'s reader, shared so that no event allocates one. */
const valueAt = (node: number, values: readonly Truth[]): Truth => values[node]!;

/**
 * □Θ with a body that looks only at the present and the past: R(e) = Θ(e), decided at e. Each
 * `once Θ'` keeps whether Θ' held at some earlier event ((◇⁻Θ')(e_i) = ∨_{j < i} Θ'(e_j)), and each
 * `once[d] Θ'` the time of the latest such event: Θ' held within d before e_i when t(e_i) minus that
 * time is at most d (times never go back, so the latest is the nearest).
 */
class PastBodyMachine extends DecidedAtEachEvent implements StatementMachine {
  private readonly body: CompiledBody;
  private readonly seen: boolean[];
  /** Per summary of a `once[d]`: the time of the latest event its operand held on (-Infinity: none). */
  private readonly last: number[];
  private readonly values: boolean[];
  /** Θ is judged on every event (a body can be false on an event that matches nothing). */
  readonly relevantActions = undefined;
  constructor(formula: Formula, state?: StateOf<"always">) {
    super();
    this.body = compileBody(formula);
    this.seen = state === undefined ? new Array<boolean>(this.body.summaries).fill(false) : [...state.seen];
    const last = state?.last;
    this.last = last === undefined ? new Array<number>(this.body.summaries).fill(-Infinity) : last.map((time) => time ?? -Infinity);
    this.values = new Array<boolean>(this.body.nodes.length).fill(false);
  }
  /** The value of a `once` node at an event of time `time`. */
  private onceValue(node: { readonly summary: number; readonly within?: number }, time: number | undefined): boolean {
    if (node.within === undefined) return this.seen[node.summary]!;
    return (time ?? 0) - this.last[node.summary]! <= node.within;
  }
  /** Evaluates every node at `event` (no short cut: each `once` operand must be known to update its summary). */
  private evaluate(event: TraceEvent): boolean {
    const { nodes } = this.body;
    const values = this.values;
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      switch (node.kind) {
        case "leaf":
          values[index] = node.predicate(event);
          break;
        // Loops, not every/some: this runs per node and per event, and a closure each time is garbage.
        case "and": {
          let all = true;
          for (let k = 0; k < node.operands.length && all; k++) all = values[node.operands[k]!]!;
          values[index] = all;
          break;
        }
        case "or": {
          let any = false;
          for (let k = 0; k < node.operands.length && !any; k++) any = values[node.operands[k]!]!;
          values[index] = any;
          break;
        }
        case "not":
          values[index] = !values[node.operand];
          break;
        case "once":
          values[index] = this.onceValue(node, event.time);
          break;
        case "eventually":
          throw new Error("internal error: `eventually` in a past-only body");
      }
    }
    return values[nodes.length - 1]!;
  }
  /** Θ on a call that has not run, in Kleene's three values: false only if false whatever its output. */
  private evaluatePending(event: TraceEvent): Truth {
    const { nodes } = this.body;
    const values: Truth[] = new Array<Truth>(nodes.length);
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      switch (node.kind) {
        case "leaf":
          values[index] = node.pending(event);
          break;
        case "and":
        case "or":
          values[index] = junctionTruth(node.kind, node.operands, valueAt, values);
          break;
        case "not":
          values[index] = notTruth(values[node.operand]!);
          break;
        case "once":
          values[index] = truthOf(this.onceValue(node, event.time));
          break;
        case "eventually":
          throw new Error("internal error: `eventually` in a past-only body");
      }
    }
    return values[nodes.length - 1]!;
  }
  probe(event: TraceEvent): number[] {
    return this.evaluatePending(event) === Truth.False ? [event.position] : NONE;
  }
  step(event: TraceEvent): number[] {
    const holds = this.evaluate(event);
    const { nodes } = this.body;
    for (const node of nodes) {
      if (node.kind !== "once" || !this.values[node.operand]) continue;
      this.seen[node.summary] = true;
      this.last[node.summary] = event.time ?? 0;
    }
    return holds ? NONE : [event.position];
  }
  snapshot(): MachineState {
    return this.body.nodes.some((node) => node.kind === "once" && node.within !== undefined)
      ? { form: "always", seen: [...this.seen], last: this.last.map((time) => (Number.isFinite(time) ? time : null)) }
      : { form: "always", seen: [...this.seen] };
  }
}

/**
 * □Θ with a body that uses `eventually`: Θ(e) depends on events after e, so no event's condition
 * is final before the run ends. The machine keeps, per event, one bit per leaf (the one-event
 * subformulas, evaluated when the event is read) and at `finish` runs the summaries over them:
 * `once` forwards, `eventually` backwards ((◇⁺Θ')(e_i) = ∨_{j > i} Θ'(e_j)).
 */
class FutureBodyMachine implements StatementMachine {
  private readonly body: CompiledBody;
  /** 32-bit words per event: enough for one bit per leaf. */
  private readonly stride: number;
  /** Leaf values: bit `leaf % 32` of word `i * stride + ⌊leaf / 32⌋` is the leaf's value on event i + 1. */
  private bits: Uint32Array;
  private length: number;
  /** With a window of time in the body: each event's time; undefined otherwise. */
  private times: Float64Array | undefined;
  /** Θ is judged on every event (a body can be false on an event that matches nothing). */
  readonly relevantActions = undefined;
  constructor(formula: Formula, state?: StateOf<"always-future">) {
    this.body = compileBody(formula);
    this.stride = Math.max(1, Math.ceil(this.body.leaves / 32));
    const timed = hasTimeWindow(formula);
    if (state === undefined) {
      this.bits = new Uint32Array(1024 * this.stride);
      this.length = 0;
      if (timed) this.times = new Float64Array(1024);
    } else {
      const saved = Buffer.from(state.bits, "base64");
      this.length = state.length;
      this.bits = new Uint32Array(Math.max(1024, this.length) * this.stride);
      this.bits.set(new Uint32Array(saved.buffer.slice(saved.byteOffset, saved.byteOffset + this.length * this.stride * 4)));
      if (timed) {
        this.times = new Float64Array(Math.max(1024, this.length));
        const savedTimes = Buffer.from(state.times ?? "", "base64");
        this.times.set(new Float64Array(savedTimes.buffer.slice(savedTimes.byteOffset, savedTimes.byteOffset + Math.min(savedTimes.byteLength, this.length * 8))));
      }
    }
  }
  private leafValue(i: number, leaf: number): number {
    return (this.bits[i * this.stride + (leaf >>> 5)]! >>> (leaf & 31)) & 1;
  }
  step(event: TraceEvent): number[] {
    if ((this.length + 1) * this.stride > this.bits.length) {
      const grown = new Uint32Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    if (this.times !== undefined) {
      if (this.length >= this.times.length) {
        const grown = new Float64Array(this.times.length * 2);
        grown.set(this.times);
        this.times = grown;
      }
      this.times[this.length] = event.time ?? 0;
    }
    const base = this.length * this.stride;
    for (const node of this.body.nodes) {
      if (node.kind !== "leaf" || !node.predicate(event)) continue;
      const word = base + (node.leaf >>> 5);
      this.bits[word] = this.bits[word]! | (1 << (node.leaf & 31));
    }
    this.length++;
    return NONE;
  }
  probe(): number[] {
    return NONE;
  }
  finish(): number[] {
    const n = this.length;
    const { nodes } = this.body;
    const tables: Uint8Array[] = [];
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      const table = new Uint8Array(n);
      switch (node.kind) {
        case "leaf":
          for (let i = 0; i < n; i++) table[i] = this.leafValue(i, node.leaf);
          break;
        case "and":
          for (let i = 0; i < n; i++) table[i] = node.operands.every((operand) => tables[operand]![i] === 1) ? 1 : 0;
          break;
        case "or":
          for (let i = 0; i < n; i++) table[i] = node.operands.some((operand) => tables[operand]![i] === 1) ? 1 : 0;
          break;
        case "not": {
          const operand = tables[node.operand]!;
          for (let i = 0; i < n; i++) table[i] = operand[i] === 1 ? 0 : 1;
          break;
        }
        case "once": {
          const operand = tables[node.operand]!;
          const within = node.within;
          if (within !== undefined) {
            // The nearest earlier event the operand held on, within the window.
            const times = this.times!;
            let latest = -1;
            for (let i = 0; i < n; i++) {
              table[i] = latest >= 0 && times[i]! - times[latest]! <= within ? 1 : 0;
              if (operand[i] === 1) latest = i;
            }
            break;
          }
          let seen = 0;
          for (let i = 0; i < n; i++) {
            table[i] = seen;
            seen |= operand[i]!;
          }
          break;
        }
        case "eventually": {
          const operand = tables[node.operand]!;
          const within = node.within;
          if (within !== undefined) {
            // The nearest later event the operand holds on, within the window.
            const times = this.times!;
            let next = -1;
            for (let i = n - 1; i >= 0; i--) {
              table[i] = next >= 0 && times[next]! - times[i]! <= within ? 1 : 0;
              if (operand[i] === 1) next = i;
            }
            break;
          }
          let seen = 0;
          for (let i = n - 1; i >= 0; i--) {
            table[i] = seen;
            seen |= operand[i]!;
          }
          break;
        }
      }
      tables.push(table);
    }
    const top = tables[nodes.length - 1]!;
    const witnesses: number[] = [];
    for (let i = 0; i < n; i++) if (top[i] === 0) witnesses.push(i + 1);
    return witnesses;
  }
  openObligations(): number {
    return this.length;
  }
  snapshot(): MachineState {
    const words = this.bits.subarray(0, this.length * this.stride);
    const bits = Buffer.from(words.buffer, words.byteOffset, words.byteLength).toString("base64");
    if (this.times === undefined) return { form: "always-future", length: this.length, bits };
    const times = this.times.subarray(0, this.length);
    return { form: "always-future", length: this.length, bits, times: Buffer.from(times.buffer, times.byteOffset, times.byteLength).toString("base64") };
  }
}

/**
 * The actions an event must have for a pattern to hold on it (a superset), or undefined when the
 * pattern can hold on any action: `action in α` gives α, a conjunction the first of its operands
 * that restricts, a disjunction the union when every operand restricts.
 */
export function actionsOf(formula: Formula): ReadonlySet<string> | undefined {
  switch (formula.kind) {
    case "action":
      return new Set(formula.actions);
    case "and":
      for (const operand of formula.operands) {
        const actions = actionsOf(operand);
        if (actions !== undefined) return actions;
      }
      return undefined;
    case "or":
      return unionOfActions(formula.operands);
    default:
      return undefined;
  }
}

function unionOfActions(formulas: readonly Formula[]): ReadonlySet<string> | undefined {
  const union = new Set<string>();
  for (const formula of formulas) {
    const actions = actionsOf(formula);
    if (actions === undefined) return undefined;
    for (const action of actions) union.add(action);
  }
  return union;
}

/** Ascending, without repeats. */
export function sortedUnique(positions: number[]): number[] {
  if (positions.length < 2) return positions;
  positions.sort((a, b) => a - b);
  let kept = 1;
  for (let index = 1; index < positions.length; index++) if (positions[index] !== positions[kept - 1]) positions[kept++] = positions[index]!;
  positions.length = kept;
  return positions;
}
