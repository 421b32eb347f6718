import { compileAtom, type Atom } from "@vigil/engine";
import { valueKey, valuesAtSubject, type JsonValue, type TraceEvent } from "@vigil/trace";
import { countThresholds, lengthRanges } from "./number-classes.js";

/**
 * The lists a root's candidates must include so that every combination of its atoms a list meets is
 * tried (`universeOf`): several values under one key, where `every(k) …` asks all of them, a plain
 * condition any one of them, and `count(k) ⋈ N` how many there are.
 *
 * **Which lists.** To the atoms, a list is the set of the classes of its elements (each element's
 * candidate stands for its class) and its length. A plain condition holds on a list when it holds
 * on some element, an `every` condition when the key has a value and it holds on every element that
 * has one; so adding an element to a list changes what the atoms say only through the element's
 * class, and what they say of the list with it follows from what they say of the list without it
 * (together with which of the key paths the list has values at) and of the element alone. A
 * breadth-first search from the one-element lists, adding one element of each class at a time,
 * therefore reaches every combination a list can meet (a state: the atoms' truth, and which places
 * have values), each first with a shortest list: a list where all pass, one where some fail, one
 * of each class, as the atoms need. The key with no value (or an empty list) is the candidate
 * "none".
 *
 * **Which lengths.** `count(k) ⋈ N` tells apart the lengths below the first threshold, each whole
 * threshold, those between two neighbours, and those above the last (`lengthRanges`). Each state's
 * shortest list is made as long as the first length of each range it fits in, by repeating its
 * first element (which changes no class, so no other atom's truth).
 *
 * **The bound.** The search stops at `MAX_LIST_STATES` states and makes no list longer than
 * `MAX_LIST_LENGTH` values (and none longer than a signature shows): what it leaves out is said
 * (`reason`). Each list is a candidate the engine's predicates judge like any other, so a mistake
 * here can lose a class, never make a wrong one.
 */

/** The most states of the breadth-first search over lists (combinations of the atoms' truth and of which places have values). */
export const MAX_LIST_STATES = 512;

/** The longest list made: a `count(k) > N` with N past it is not reached, and is said to be left out. */
export const MAX_LIST_LENGTH = 1_000;

export interface ListSearch {
  /** One value of each class of elements a list may hold (more are harmless: they are grouped by class). */
  readonly elements: readonly JsonValue[];
  /** The root's value holding a list of elements (the list itself, or an object with it at the key path). */
  readonly shape: (list: JsonValue[]) => JsonValue;
  /** The event holding a root value, for the engine's predicates. */
  readonly event: (value: JsonValue) => TraceEvent;
  /** Every atom on the root (at any of its paths). */
  readonly atoms: readonly Atom[];
  /** The longest list a signature shows at the root, when it shows one (a closed world has none longer). */
  readonly longestKnown?: number;
}

export interface ListCandidates {
  readonly values: readonly JsonValue[];
  /** What the lists leave out, in words, when something is. */
  readonly reason?: string;
}

/** The lists of a root's candidates: every combination of its atoms a list meets, at each length class its counts tell apart. */
export function listCandidates(search: ListSearch): ListCandidates {
  const tested = search.atoms.filter((atom) => atom.kind !== "keyBind" && atom.kind !== "keyContains" && atom.kind !== "keyCount" && atom.kind !== "action" && atom.kind !== "status");
  const predicates = tested.map((atom) => compileAtom(atom));
  const placeKeys = new Map<string, Extract<Atom, { key: unknown }>>();
  for (const atom of search.atoms) if (atom.kind !== "action" && atom.kind !== "status") placeKeys.set(`${atom.subject}:${JSON.stringify(atom.key)}`, atom);
  const places = [...placeKeys.values()];
  /** A list's state: each tested atom's truth, and which places have a value. */
  const stateOf = (list: JsonValue[]): string => {
    const event = search.event(search.shape(list));
    return predicates.map((p) => (p(event) ? "1" : "0")).join("") + "|" + places.map((place) => (valuesAtSubject(event, place.subject, place.key).length > 0 ? "1" : "0")).join("");
  };
  // One element per class: the same state alone means the same contribution to any list.
  const representatives = new Map<string, JsonValue>();
  for (const element of search.elements) {
    if (Array.isArray(element)) continue;
    const state = stateOf([element]);
    if (!representatives.has(state)) representatives.set(state, element);
  }
  const witnesses = new Map<string, JsonValue[]>();
  const queue: JsonValue[][] = [];
  for (const [state, element] of representatives) {
    witnesses.set(state, [element]);
    queue.push([element]);
  }
  let reason: string | undefined;
  for (let head = 0; head < queue.length && reason === undefined; head++) {
    for (const element of representatives.values()) {
      const longer = [...queue[head]!, element];
      const state = stateOf(longer);
      if (witnesses.has(state)) continue;
      if (witnesses.size >= MAX_LIST_STATES) {
        reason = `more than ${MAX_LIST_STATES} combinations of its conditions`;
        break;
      }
      witnesses.set(state, longer);
      queue.push(longer);
    }
  }
  const ranges = lengthRanges(countThresholds(search.atoms));
  const longest = Math.min(MAX_LIST_LENGTH, search.longestKnown ?? Infinity);
  const values = new Map<string, JsonValue>();
  let tooLong = false;
  for (const witness of witnesses.values()) {
    for (const range of ranges) {
      const length = range.low > BigInt(witness.length) ? range.low : BigInt(witness.length);
      if (range.high !== undefined && length > range.high) continue;
      if (length > BigInt(longest)) {
        // Past what a signature shows, no list is that long; past the search's own bound, some may be.
        if (search.longestKnown === undefined || Number(length) <= search.longestKnown) tooLong = true;
        continue;
      }
      // A list of one value is the value's own candidate.
      if (length < 2n) continue;
      const list = [...witness, ...new Array<JsonValue>(Number(length) - witness.length).fill(witness[0]!)];
      const value = search.shape(list);
      values.set(valueKey(value), value);
    }
  }
  if (tooLong) reason = [reason, `lists of more than ${MAX_LIST_LENGTH.toLocaleString("en")} values`].filter((r) => r !== undefined).join(", ");
  return { values: [...values.values()], ...(reason !== undefined ? { reason } : {}) };
}
