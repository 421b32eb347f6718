/**
 * Truth on a call that has not run. Its action and arguments are known; it is judged as if it will
 * succeed (`status = ok` holds, `status = error` does not: a rule about a successful call blocks it
 * before it runs, and one about a failure can only be judged once it failed); its output is not
 * known. `unknown` is Kleene's third value: a formula is `true` only if it holds whatever the
 * output, `false` only if it fails whatever the output.
 *
 * This module is the one definition of Kleene's connectives; every three-valued evaluation (a
 * pattern on a pending call, a relation with a variable left open, a temporal body) uses them.
 */
export const Truth = { False: 0, True: 1, Unknown: 2 } as const;
export type Truth = (typeof Truth)[keyof typeof Truth];

/** A two-valued answer as a truth value. */
export function truthOf(holds: boolean): Truth {
  return holds ? Truth.True : Truth.False;
}

/** Kleene's ¬: unknown stays unknown. */
export function notTruth(value: Truth): Truth {
  return value === Truth.Unknown ? Truth.Unknown : value === Truth.True ? Truth.False : Truth.True;
}

/**
 * Kleene's ∧ (`and`) or ∨ (`or`) of operands read in order, stopping at the first that decides it
 * (false for ∧, true for ∨); otherwise unknown if any operand is unknown. `valueOf(operand,
 * context)` reads one operand: the context is passed rather than captured so that a caller on the
 * per-event path need not allocate a closure per event.
 */
export function junctionTruth<Operand, Context>(
  kind: "and" | "or",
  operands: readonly Operand[],
  valueOf: (operand: Operand, context: Context) => Truth,
  context: Context,
): Truth {
  const absorbing = kind === "and" ? Truth.False : Truth.True;
  let result: Truth = kind === "and" ? Truth.True : Truth.False;
  for (const operand of operands) {
    const value = valueOf(operand, context);
    if (value === absorbing) return absorbing;
    if (value === Truth.Unknown) result = Truth.Unknown;
  }
  return result;
}
