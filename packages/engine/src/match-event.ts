import type { Formula } from "@vigil/checker";
import { valueKey, valuesAtPath, wildcardMatches, type TraceEvent } from "@vigil/trace";

/**
 * ψ(e): whether one event satisfies a pattern, per the foot of Figure 5 and the documented list
 * extension (a condition on a key holds when it holds for some value under the key).
 * `once`/`eventually` are not per-event and are handled by the caller.
 */
export function matchesPattern(formula: Formula, event: TraceEvent): boolean {
  switch (formula.kind) {
    case "action":
      return actionSet(formula).has(event.action);
    case "keyIn": {
      const wanted = valueSet(formula);
      return valuesAtPath(event.args, formula.key).some((value) => wanted.has(valueKey(value)));
    }
    case "keyMatch":
      return valuesAtPath(event.args, formula.key).some((value) => wildcardMatches(formula.pattern, value));
    case "keyBind":
      return valuesAtPath(event.args, formula.key).length > 0;
    case "status":
      return event.status === formula.status;
    case "outputMatch":
      return event.output !== undefined && wildcardMatches(formula.pattern, event.output);
    case "and":
      return formula.operands.every((operand) => matchesPattern(operand, event));
    case "or":
      return formula.operands.some((operand) => matchesPattern(operand, event));
    case "not":
      return !matchesPattern(formula.operand, event);
    case "once":
    case "eventually":
      throw new Error(`internal error: \`${formula.kind}\` reached the per-event matcher`);
  }
}

const actionSets = new WeakMap<object, ReadonlySet<string>>();
function actionSet(formula: Extract<Formula, { kind: "action" }>): ReadonlySet<string> {
  let set = actionSets.get(formula);
  if (set === undefined) actionSets.set(formula, (set = new Set(formula.actions)));
  return set;
}

const valueSets = new WeakMap<object, ReadonlySet<string>>();
function valueSet(formula: Extract<Formula, { kind: "keyIn" }>): ReadonlySet<string> {
  let set = valueSets.get(formula);
  if (set === undefined) valueSets.set(formula, (set = new Set(formula.values.map((v) => v.key))));
  return set;
}

/** The separator of tuple keys: value keys never contain it (it cannot appear unescaped in JSON text). */
const TUPLE_SEPARATOR = "\u0001";

/**
 * The bindings an event gives a pattern: one tuple of values (in the order of `variables`) per
 * combination of the values under the bound keys, as a string key. An event that does not match
 * the pattern has none; a pattern without variables has the one empty tuple "" on a match.
 */
export function bindingsOf(
  pattern: { readonly formula: Formula; readonly bindings: ReadonlyMap<string, readonly string[]> },
  variables: readonly string[],
  event: TraceEvent,
): string[] {
  if (!matchesPattern(pattern.formula, event)) return [];
  let tuples: string[] = [""];
  let first = true;
  for (const variable of variables) {
    const key = pattern.bindings.get(variable);
    if (key === undefined) continue;
    const values = [...new Set(valuesAtPath(event.args, key).map(valueKey))];
    const next: string[] = [];
    for (const prefix of tuples) for (const value of values) next.push(first ? value : prefix + TUPLE_SEPARATOR + value);
    tuples = next;
    first = false;
  }
  return tuples;
}
