import type { TraceEvent } from "@vigil/trace";
import type { PatternBinder } from "../atoms.js";
import { Truth } from "../truth.js";

/**
 * What the machines of several forms share: the empty answers, the base of the forms decided at each
 * event, the test of a `contains` pattern against the open bindings, and the order of witnesses.
 */

/**
 * No witnesses: one array for every machine, so that an event that makes none allocates nothing. It
 * is never written to (a machine that finds a witness makes a new array, comparing against it).
 */
export const NONE: number[] = [];
/** No bindings, shared in the same way. */
export const NONE_STRINGS: readonly string[] = [];

/**
 * A statement decided at each event (`abs`, `prec`, a past-only `always`): nothing waits for later
 * events, so the end of the run adds no witness and no obligation is ever open.
 */
export abstract class DecidedAtEachEvent {
  finish(): number[] {
    return NONE;
  }
  openObligations(): number {
    return 0;
  }
}

/**
 * The open bindings for which a pattern that tests with `contains` holds on an event, each tested.
 * (A pattern that only binds gives its bindings directly, `PatternBinder.bindings`: the callers ask
 * `generates` first, so the common case costs nothing more.)
 */
export function testedAmong(pattern: PatternBinder, event: TraceEvent, open: Iterable<string>, mode: "exact" | "definitely" = "exact"): readonly string[] {
  if (!pattern.mayHoldForSome(event)) return NONE_STRINGS;
  const matched: string[] = [];
  for (const binding of open) if (pattern.holds(event, binding, mode === "exact" ? "exact" : "pending") === Truth.True) matched.push(binding);
  return matched;
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
