import type { Formula } from "@vigil/checker";

/**
 * The actions a pattern names, read off its formula: a machine's `relevantActions`, by which the
 * dispatch skips the machines an event cannot change, and the pattern match counts.
 */

/**
 * The actions an event must have for a pattern to hold on it (a superset), or undefined when the
 * pattern can hold on any action: `action in α` gives α, a conjunction the first of its operands
 * that restricts, a disjunction the union when every operand restricts.
 */
export function actionsOf(formula: Formula): ReadonlySet<string> | undefined {
  switch (formula.kind) {
    case "action":
      return new Set(formula.actions);
    case "and":
      for (const operand of formula.operands) {
        const actions = actionsOf(operand);
        if (actions !== undefined) return actions;
      }
      return undefined;
    case "or":
      return unionOfActions(formula.operands);
    default:
      return undefined;
  }
}

export function unionOfActions(formulas: readonly Formula[]): ReadonlySet<string> | undefined {
  const union = new Set<string>();
  for (const formula of formulas) {
    const actions = actionsOf(formula);
    if (actions === undefined) return undefined;
    for (const action of actions) union.add(action);
  }
  return union;
}
