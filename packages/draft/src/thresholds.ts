import type { JsonValue, TraceEvent } from "@vigil/compiler";
import { compareDecimal, numberOf, type Decimal } from "@vigil/compiler";

/** The largest number seen, exactly, with the text it is written as in a policy (a JSON number literal). */
interface ExactNumber {
  readonly text: string;
  readonly decimal: Decimal;
}

/**
 * Thresholds mined from good runs: the largest number an action was ever passed under a key
 * (`abs(action in {"refund"} and "amount" > 250)`: no refund above the largest seen), and the
 * longest list (`abs(action in {"book_reservation"} and count("passengers") > 5)`). Keys are
 * followed into nested objects and lists of objects, as a key path is (`payment_methods.amount`
 * is every payment's amount). Each bound is the largest value seen, so the rule holds on every
 * good run by construction; the forward engine judges it all the same, as every mined rule.
 */

export interface Threshold {
  readonly template: "threshold" | "count";
  readonly statement: string;
  /** The rule's name before it is made unique. */
  readonly name: string;
  /** What it says, in words. */
  readonly says: string;
  /** The events that could have broken it: the action's, with the key. */
  readonly support: (event: TraceEvent) => boolean;
}

/** A threshold needs at least this many events with its key (as the allowed values need three per value). */
export const thresholdEvidence = 3;
/** How many names deep a key path is followed (`payment_methods.amount` is two). */
const maxDepth = 3;

/** What the good runs showed under one key path of one action. */
interface Observed {
  /** Events with the path (a value, or a list, there). */
  events: number;
  /** Whether every value was a number (or a string spelling one), and the largest. */
  numeric: boolean;
  max?: ExactNumber;
  /** Whether some event had a list there, and the most values any event had under the path. */
  lists: boolean;
  longest: number;
}

/** The threshold candidates over the good runs' arguments; `act` writes an action's condition. */
export function thresholdCandidates(good: readonly (readonly TraceEvent[])[], act: (action: string) => string): Threshold[] {
  const observed = new Map<string, { action: string; path: string[]; seen: Observed }>();
  for (const run of good) {
    for (const event of run) {
      for (const { path, reached } of pathsOf(event.args)) {
        const id = JSON.stringify([event.action, ...path]);
        const entry = observed.get(id) ?? { action: event.action, path, seen: { events: 0, numeric: true, lists: false, longest: 0 } };
        observe(entry.seen, reached);
        observed.set(id, entry);
      }
    }
  }
  const runs = good.length === 1 ? "the one good run" : `the ${good.length} good runs`;
  const candidates: Threshold[] = [];
  for (const [, { action, path, seen }] of [...observed].sort(([x], [y]) => x.localeCompare(y))) {
    if (seen.events < thresholdEvidence) continue;
    const key = path.map((segment) => JSON.stringify(segment)).join(".");
    const shown = path.map((segment) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(segment) ? segment : JSON.stringify(segment))).join(".");
    const support = (e: TraceEvent) => e.action === action && reach(e.args, path).length > 0;
    if (seen.numeric && seen.max !== undefined) {
      candidates.push({
        template: "threshold",
        statement: `abs(${act(action)} and ${key} > ${seen.max.text})`,
        name: `${action}_${path.join("_")}_max`,
        says: `\`${action}\` was never called with \`${shown}\` above ${seen.max.text} in ${runs}.`,
        support,
      });
    }
    if (seen.lists) {
      candidates.push({
        template: "count",
        statement: `abs(${act(action)} and count(${key}) > ${seen.longest})`,
        name: `${action}_${path.join("_")}_count`,
        says: `\`${action}\` was never called with more than ${seen.longest} \`${shown}\` in ${runs}.`,
        support,
      });
    }
  }
  return candidates;
}

/** One event's values under a path (as reached, before a list stands for its elements), into what was seen. */
function observe(seen: Observed, reached: readonly JsonValue[]): void {
  const values = flattened(reached);
  seen.events++;
  seen.lists ||= reached.some(Array.isArray);
  seen.longest = Math.max(seen.longest, values.length);
  for (const value of values) {
    // The language's reading of a number (a number, or a string spelling one), as the engines compare them.
    const decimal = numberOf(value);
    if (decimal === undefined) seen.numeric = false;
    else if (seen.max === undefined || compareDecimal(decimal, seen.max.decimal) > 0) seen.max = { text: typeof value === "string" ? value : String(value), decimal };
  }
}

/** Every path of names into the arguments, up to `maxDepth`, with what it reaches (only paths that reach something). */
function pathsOf(args: { readonly [key: string]: JsonValue }): { path: string[]; reached: JsonValue[] }[] {
  const found: { path: string[]; reached: JsonValue[] }[] = [];
  const walk = (path: string[], reached: JsonValue[]) => {
    found.push({ path, reached });
    if (path.length === maxDepth) return;
    for (const name of memberNames(reached)) walk([...path, name], reached.flatMap((value) => membersNamed(value, name)));
  };
  for (const [name, value] of Object.entries(args)) walk([name], [value]);
  return found;
}

/** What a path of names reaches in the arguments: a name leads into an object, and into each element of a list (as a key path does). */
function reach(args: { readonly [key: string]: JsonValue }, path: readonly string[]): JsonValue[] {
  let reached: JsonValue[] = [args];
  for (const name of path) reached = reached.flatMap((value) => membersNamed(value, name));
  return reached;
}

function membersNamed(value: JsonValue, name: string): JsonValue[] {
  if (Array.isArray(value)) return value.flatMap((element) => membersNamed(element, name));
  if (isObject(value) && Object.prototype.hasOwnProperty.call(value, name)) return [value[name]!];
  return [];
}

/** The member names of the objects reached, and of the objects in the lists reached, at any depth. */
function memberNames(reached: readonly JsonValue[]): Set<string> {
  const names = new Set<string>();
  const collect = (value: JsonValue) => {
    if (Array.isArray(value)) value.forEach(collect);
    else if (isObject(value)) for (const name of Object.keys(value)) names.add(name);
  };
  reached.forEach(collect);
  return names;
}

/** The values under a path: a list stands for its elements, at any depth. */
function flattened(reached: readonly JsonValue[]): JsonValue[] {
  return reached.flatMap((value) => (Array.isArray(value) ? flattened(value) : [value]));
}

function isObject(value: JsonValue): value is { readonly [key: string]: JsonValue } {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
