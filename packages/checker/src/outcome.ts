/**
 * The verdict of one decision procedure on one statement. Both engines produce it, and they must
 * agree on it exactly.
 */
export interface StatementOutcome {
  /** Whether τ ⊨ φ. False when the statement could not be decided: undecided fails closed. */
  readonly holds: boolean;
  /**
   * The 1-based positions of every event e whose condition R_φ(e) is false, ascending. For
   * `until` these are the triggers of the broken intervals.
   */
  readonly witnesses: readonly number[];
  /** Present when the procedure could not decide the statement: why (a solver time-out, say). */
  readonly undecided?: string;
}
