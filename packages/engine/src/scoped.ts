import type { CheckedScope } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { compilePattern, compilePendingPattern, type EventPredicate, type PendingPredicate } from "./atoms.js";
import { Truth } from "./truth.js";
import type { MachineState, ScopedState } from "./machine-state.js";
import type { MachineObserver, StatementMachine } from "./machines/statement-machine.js";

/**
 * Scopes (Dwyer's): where in the run a statement is judged. The run is cut into stretches, and each
 * stretch is judged as a trace of its own by a fresh machine of the statement; witnesses keep their
 * places in the whole run.
 *
 * - `after ψ`: one stretch, from the first event matching ψ (included) to the end.
 * - `before ψ`: one stretch, from the start up to the first event matching ψ (excluded); with no
 *   such event, to the end (so that a rule scoped `before approval` is enforced while none came).
 * - `between ψ and ψ'`: each stretch from an event matching ψ (included), read while outside a
 *   stretch, to the next event matching ψ' (excluded, and opening nothing itself); a stretch that
 *   never closes is not judged.
 * - `after ψ until ψ'`: the same stretches, the one still open at the end judged too.
 *
 * `scopeStretches` is this definition over a whole run (what the SMT decider uses); `ScopedMachine`
 * is the same, read event by event (the forward engine and the monitor).
 */

/** A stretch of a run: its events in order (positions of the whole run), and whether it is judged. */
export interface Stretch {
  readonly events: readonly TraceEvent[];
  readonly judged: boolean;
}

/** The stretches of a run under a scope, in order. */
export function scopeStretches(scope: CheckedScope, events: readonly TraceEvent[]): Stretch[] {
  const opens = compilePattern(scope.open);
  const closes = scope.close === undefined ? undefined : compilePattern(scope.close);
  const stretches: Stretch[] = [];
  let current: TraceEvent[] | undefined = scope.kind === "before" ? [] : undefined;
  for (let index = 0; index < events.length; index++) {
    const event = events[index]!;
    if (current === undefined) {
      if (scope.kind === "before" || !opens(event)) continue;
      // `after ψ` opens once and never closes: the rest of the run.
      if (scope.kind === "after") return [{ events: events.slice(index), judged: true }];
      current = [event];
      continue;
    }
    const ends = scope.kind === "before" ? opens(event) : closes !== undefined && closes(event);
    if (!ends) {
      current.push(event);
      continue;
    }
    stretches.push({ events: current, judged: true });
    current = undefined;
    // `before ψ` has one stretch, up to the first ψ.
    if (scope.kind === "before") return stretches;
  }
  if (current !== undefined) stretches.push({ events: current, judged: scope.kind !== "between" });
  return stretches;
}

/** Where a scoped machine is: waiting for a stretch to open, inside one, or past the only one. */
type Phase = ScopedState["phase"];

/**
 * A statement's machine under a scope: the statement's own machine (`inner`, made by `fresh`) runs
 * over each stretch, and is finished when the stretch ends. The stretch is a trace of its own, so
 * its machine reads it numbered from 1 (machines count from the start of their run): positions are
 * shifted by the stretch's offset on the way in, and witnesses (and what an observer is told) back
 * on the way out. For `between`, whose open stretch is
 * not judged, the witnesses found inside a stretch are kept until it closes; for the other scopes
 * they are final as found. The monitor cannot block a `between` violation before the stretch
 * closes (it is not final until then); `after ψ until ψ'` judges the open stretch, so it can.
 */
export class ScopedMachine implements StatementMachine {
  readonly relevantActions: ReadonlySet<string> | undefined;
  private readonly opens: EventPredicate;
  private readonly closes: EventPredicate | undefined;
  private readonly opensPending: PendingPredicate;
  private readonly closesPending: PendingPredicate | undefined;
  private phase: Phase;
  private inner: StatementMachine | undefined;
  /** How far the open stretch's numbering is from the run's: its first event's position − 1. */
  private offset: number;
  /** For `between`: the witnesses of the open stretch, final only when it closes. */
  private held: number[];
  /** For the held witnesses: the event on which the stretch's machine found each (for `until`, the breaking event). */
  private heldAt = new Map<number, number>();
  /** For the witnesses the last `step` released on closing a stretch: where each was found. */
  private released = new Map<number, number>();

  constructor(
    private readonly scope: CheckedScope,
    /** A machine of the statement alone, for a stretch whose numbering is `offset` behind the run's. */
    private readonly fresh: (offset: number, state?: MachineState) => StatementMachine,
    /** The actions the statement and the scope's patterns name (undefined: any). */
    relevantActions: ReadonlySet<string> | undefined,
    state?: MachineState,
    /** Told where each stretch opened and closed (for reports that say why). */
    private readonly observer?: MachineObserver,
  ) {
    this.relevantActions = relevantActions;
    this.opens = compilePattern(scope.open);
    this.opensPending = compilePendingPattern(scope.open);
    this.closes = scope.close === undefined ? undefined : compilePattern(scope.close);
    this.closesPending = scope.close === undefined ? undefined : compilePendingPattern(scope.close);
    if (state !== undefined) {
      // `createMachine` resumes a scoped machine only from a state of its own form.
      const saved = state as ScopedState;
      this.phase = saved.phase;
      this.offset = saved.offset;
      this.inner = saved.inner === null ? undefined : fresh(saved.offset, saved.inner);
      this.held = [...saved.held];
      this.heldAt = new Map(saved.heldAt.map(([witness, at]) => [witness, at]));
    } else {
      // `before ψ` is inside its stretch from the start.
      this.phase = scope.kind === "before" ? "inside" : "outside";
      this.offset = 0;
      this.inner = scope.kind === "before" ? fresh(0) : undefined;
      this.held = [];
    }
  }

  /** Whether an event ends the stretch it would otherwise be in (`before`: its pattern; `between`, `after … until`: the closing one). */
  private ends(event: TraceEvent): boolean {
    if (this.scope.kind === "before") return this.opens(event);
    return this.closes !== undefined && this.closes(event);
  }

  step(event: TraceEvent): number[] {
    if (this.released.size > 0) this.released = new Map();
    if (this.phase === "done") return NONE;
    if (this.phase === "inside") {
      if (this.ends(event)) {
        this.observer?.closed?.(event.position);
        return this.close();
      }
      return this.report(this.inner!.step(this.shifted(event)), event.position);
    }
    if (this.scope.kind === "before" || !this.opens(event)) return NONE;
    this.observer?.opened?.(event.position);
    this.phase = "inside";
    this.offset = event.position - 1;
    this.inner = this.fresh(this.offset);
    return this.report(this.inner.step(this.shifted(event)), event.position);
  }

  /** The event as the stretch's machine numbers it. */
  private shifted(event: TraceEvent): TraceEvent {
    return this.offset === 0 ? event : { ...event, position: event.position - this.offset };
  }

  /** Witnesses of the stretch's machine, at their places in the run. */
  private placed(witnesses: number[]): number[] {
    return this.offset === 0 || witnesses.length === 0 ? witnesses : witnesses.map((witness) => witness + this.offset);
  }

  /** The witnesses the stretch's machine found: final now, or held until the stretch closes (`between`). */
  private report(found: number[], at: number): number[] {
    const witnesses = this.placed(found);
    if (this.scope.kind !== "between" || witnesses.length === 0) return witnesses;
    for (const witness of witnesses) {
      this.held.push(witness);
      if (!this.heldAt.has(witness)) this.heldAt.set(witness, at);
    }
    return NONE;
  }

  foundAt(witness: number): number | undefined {
    return this.released.get(witness);
  }

  /** The stretch ends: it is judged as a run of its own. */
  private close(): number[] {
    const witnesses = [...this.held, ...this.placed(this.inner!.finish())];
    this.released = this.heldAt;
    this.heldAt = new Map();
    this.held = [];
    this.inner = undefined;
    this.phase = this.scope.kind === "before" ? "done" : "outside";
    return witnesses;
  }

  probe(event: TraceEvent): number[] {
    // A `between` stretch is judged only once it closes: nothing in it is final before.
    if (this.phase === "done" || this.scope.kind === "between") return NONE;
    if (this.phase === "inside") {
      const ends = this.scope.kind === "before" ? this.opensPending(event) : this.closesPending !== undefined ? this.closesPending(event) : Truth.False;
      // An event that may end the stretch is not surely in it: no violation is certain.
      if (ends !== Truth.False) return NONE;
      return this.placed(this.inner!.probe(this.shifted(event)));
    }
    if (this.scope.kind === "before" || this.opensPending(event) !== Truth.True) return NONE;
    // The call would open a stretch of its own: judged by a fresh machine, numbered from it.
    const offset = event.position - 1;
    return this.fresh(offset).probe({ ...event, position: 1 }).map((witness) => witness + offset);
  }

  finish(): number[] {
    if (this.phase !== "inside" || this.scope.kind === "between") return NONE;
    return this.placed(this.inner!.finish());
  }

  openObligations(): number {
    return (this.inner?.openObligations() ?? 0) + this.held.length;
  }

  snapshot(): MachineState {
    const state: ScopedState = {
      form: `scoped-${this.scope.kind}` as const,
      phase: this.phase,
      offset: this.offset,
      inner: this.inner?.snapshot() ?? null,
      held: [...this.held],
      heldAt: [...this.heldAt],
    };
    return state;
  }
}


const NONE: number[] = [];
