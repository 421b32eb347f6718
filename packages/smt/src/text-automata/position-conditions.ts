/**
 * What an ε-move requires of the units on either side of the position: a pattern's assertions
 * (`\A`, `\z`, `\b`, `\B`), and the two an automaton over code units adds to tell a lone surrogate
 * from one half of a pair.
 */
export const Condition = {
  None: 0,
  AtStart: 1,
  AtEnd: 2,
  WordBoundary: 3,
  NotWordBoundary: 4,
  /** The next unit is not a low surrogate (a high one just read was alone). */
  NextNotLow: 5,
  /** The previous unit is not a high surrogate (a low one about to be read is alone). */
  PreviousNotHigh: 6,
} as const;
export type Condition = (typeof Condition)[keyof typeof Condition];
