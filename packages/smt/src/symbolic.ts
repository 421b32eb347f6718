import type { Subject } from "@vigil/checker";
import type { JsonValue, PathSegment } from "@vigil/trace";

/**
 * Symbolic runs: the events of a run of K events are unknowns, and a statement's meaning over them
 * is a formula for Z3 (Figure 5 read over positions, as `test/figure5.ts` reads it over a trace).
 * What an atom means on a value is never restated here: every atom is decided by the forward
 * engine's own predicates (`compileAtom`, `PatternBinder`, `boundValueKeys`, `eventAmount`) on
 * each candidate value, ahead of time, and the formula only chooses among candidates.
 *
 * An event is a choice of: its action (one of the policies' actions, or one they do not name), its
 * status (none, ok, error), for each root the policies read (a top-level argument, or the output)
 * one candidate value or none, and, when a statement measures time, its time (an integer of
 * milliseconds, never going back).
 *
 * **The candidates are every class of values the atoms tell apart** (`universeOf`). The keys whose
 * values a variable ties together (`k = $x` and `m = $x` in one statement) form a group; a group's
 * values are found from all its atoms together: the rules' constants, and for the texts, every
 * class of the wildcards, regular expressions and text constants on its keys (`textClasses`: the
 * texts that match several of them at once, or some and not others), for the numbers, every class
 * its comparisons' thresholds tell apart (`number-classes.ts`: each threshold, between, below,
 * above), and values with no text (`null`, objects) when no text stands for them. A key with a
 * comparison, a count or an `every(…)` also holds lists: each combination of its atoms a list
 * meets, at each length its counts tell apart (`list-candidates.ts`). Two values of one class are
 * alike to every atom, so a run over any values becomes a run over candidates, event by event, by a
 * one-to-one renaming within each class; a group whose keys bind variables has as many distinct
 * values of each class as a run of `runLength` events can hold, so the renaming never has to merge
 * two values. What this does not reach is said, per key (`Universe.gaps`): `contains` (texts
 * related to each other, not only to patterns), objects read at several paths, amounts of sums,
 * several values at once under a key whose lists are not searched (one with none of the atoms
 * above) when they meet its patterns together, numbers whose texts its patterns tell apart, lists
 * past their bound, a class search that stopped short. Under a signature, a key whose values it
 * knows all of holds exactly those.
 */
export interface Universe {
  /**
   * The actions an event can have: the policies' and one they do not name; under a signature, the
   * signature's only (the closed world).
   */
  readonly actions: readonly string[];
  /** The actions of `actions` the policies name. */
  readonly named: readonly string[];
  readonly roots: readonly Root[];
  readonly places: readonly Place[];
  /** Every value a place can hold under some candidate, by index (from 1): what variables bind to. */
  readonly bound: readonly JsonValue[];
  /** Whether events carry times. */
  readonly timed: boolean;
  /** The longest run the candidates have enough distinct values for. */
  readonly runLength: number;
  /** What the candidates leave out: none when every value a run of up to `runLength` events can hold is matched by a candidate of its class. */
  readonly gaps: readonly Gap[];
}

/** Values a root's candidates do not stand for, in words (`text` names the key). */
export interface Gap {
  /** The index of the root in `Universe.roots`. */
  readonly root: number;
  readonly text: string;
  /**
   * Whether the gap can change which single events a pattern matches; false for several values
   * at once under a key whose patterns a single value of the same classes meets as well (the
   * values then matter only for what variables bind).
   */
  readonly oneEvent: boolean;
}

/** A top-level argument (`name`), or the output (`name` undefined), with its candidate values. */
export interface Root {
  readonly subject: Subject;
  readonly name?: string;
  /** Candidate 0 is "no value" and is not listed: index c here is candidate c + 1. */
  readonly candidates: readonly JsonValue[];
}

/** Where atoms read: the arguments or the output at a key path, inside one root. */
export interface Place {
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly id: string;
  readonly root: number;
  /** Per root candidate (0 for none), the indexes in `bound` of the values the place reaches, distinct. */
  readonly reaches: readonly (readonly number[])[];
}
