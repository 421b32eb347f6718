import type { TraceEvent } from "@vigil/trace";
import type { MachineState } from "../machine-state.js";

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
export interface Observed {
  attach(observer: MachineObserver): void;
}
