import type { CheckedPattern, CheckedStatement, Formula, StatementOutcome } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { bindingsOf, matchesPattern } from "./match-event.js";


/**
 * The direct evaluator: decides τ ⊨ φ by the semantics of Figure 5 without a solver, in time
 * linear in the trace (hash sets of variable bindings, running summaries for the temporal
 * operators). It is the reference the SMT lowering is tested against.
 */
export function evaluateStatement(statement: CheckedStatement, events: readonly TraceEvent[]): StatementOutcome {
  const witnesses = findWitnesses(statement, events);
  return { holds: witnesses.length === 0, witnesses };
}

function findWitnesses(statement: CheckedStatement, events: readonly TraceEvent[]): number[] {
  switch (statement.form) {
    case "abs":
      return events.filter((event) => matchesPattern(statement.pattern.formula, event)).map((e) => e.position);
    case "prec":
      return precedence(statement.first, statement.second, statement.variables, events);
    case "resp":
      return response(statement.first, statement.second, statement.variables, events, Infinity);
    case "bresp":
      return response(statement.first, statement.second, statement.variables, events, statement.bound);
    case "rslv":
      return resolution(statement.first, statement.second, statement.variables, events);
    case "until":
      return until(statement.trigger, statement.resolve, statement.bad, statement.variables, events);
    case "always":
      return alwaysBody(statement.body, events);
  }
}

/** prec(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e') [∧ e'[k'] = e[k]]. One forward pass. */
function precedence(first: CheckedPattern, second: CheckedPattern, variables: readonly string[], events: readonly TraceEvent[]): number[] {
  const witnesses: number[] = [];
  const earlier = new Set<string>();
  for (const event of events) {
    if (bindingsOf(first, variables, event).some((binding) => !earlier.has(binding))) witnesses.push(event.position);
    for (const binding of bindingsOf(second, variables, event)) earlier.add(binding);
  }
  return witnesses;
}

/**
 * resp(ψ, ψ') and bresp_ℓ(ψ, ψ'): R(e) = ψ(e) ⇒ ∨_{e ≺ e' , within ℓ} ψ'(e'). One backward pass
 * keeping, per binding, the nearest later position where ψ' held.
 */
function response(
  first: CheckedPattern,
  second: CheckedPattern,
  variables: readonly string[],
  events: readonly TraceEvent[],
  bound: number,
): number[] {
  const witnesses: number[] = [];
  const nearestLater = new Map<string, number>();
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    const broken = bindingsOf(first, variables, event).some((binding) => {
      const next = nearestLater.get(binding);
      return next === undefined || next - index > bound;
    });
    if (broken) witnesses.push(event.position);
    for (const binding of bindingsOf(second, variables, event)) nearestLater.set(binding, index);
  }
  return witnesses.reverse();
}

/**
 * rslv(ψ, ψ'): R(e) = ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e')). A later ψ on the same binding
 * supersedes e, so only the finally delivered state is judged. One backward pass.
 */
function resolution(first: CheckedPattern, second: CheckedPattern, variables: readonly string[], events: readonly TraceEvent[]): number[] {
  const witnesses: number[] = [];
  const later = new Set<string>();
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    const triggered = bindingsOf(first, variables, event);
    const resolvedHere = bindingsOf(second, variables, event);
    if (triggered.some((binding) => !later.has(binding) && !resolvedHere.includes(binding))) witnesses.push(event.position);
    for (const binding of resolvedHere) later.add(binding);
    for (const binding of triggered) later.add(binding);
  }
  return witnesses.reverse();
}

/**
 * until(ψ, ψ', ψb): R(e) = ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec)). With
 * G_j = "from position j on, no ψb comes before a ψ'", G_j = ¬ψb(e_j) ∧ (ψ'(e_j) ∨ G_{j+1}), and
 * R(e_i) = ψ(e_i) ⇒ G_{i+1}. G is kept per binding as a default plus exceptions; one backward pass.
 */
function until(
  trigger: CheckedPattern,
  resolve: CheckedPattern,
  bad: CheckedPattern,
  variables: readonly string[],
  events: readonly TraceEvent[],
): number[] {
  const witnesses: number[] = [];
  let defaultClear = true;
  const exceptions = new Map<string, boolean>();
  const clearFrom = (binding: string): boolean => exceptions.get(binding) ?? defaultClear;
  for (let index = events.length - 1; index >= 0; index--) {
    const event = events[index]!;
    if (bindingsOf(trigger, variables, event).some((binding) => !clearFrom(binding))) witnesses.push(event.position);
    const resolved = bindingsOf(resolve, variables, event);
    if (resolved.length > 0) {
      if (resolve.bindings.size === 0) {
        defaultClear = true;
        exceptions.clear();
      } else for (const binding of resolved) exceptions.set(binding, true);
    }
    const broken = bindingsOf(bad, variables, event);
    if (broken.length > 0) {
      if (bad.bindings.size === 0) {
        defaultClear = false;
        exceptions.clear();
      } else for (const binding of broken) exceptions.set(binding, false);
    }
  }
  return witnesses.reverse();
}

/** □Θ: R(e) = Θ(e). Each temporal subformula is one running summary over the trace. */
function alwaysBody(body: Formula, events: readonly TraceEvent[]): number[] {
  const truth = truthTable(body, events, new Map());
  const witnesses: number[] = [];
  truth.forEach((holds, index) => {
    if (!holds) witnesses.push(events[index]!.position);
  });
  return witnesses;
}

function truthTable(formula: Formula, events: readonly TraceEvent[], memo: Map<Formula, boolean[]>): boolean[] {
  const cached = memo.get(formula);
  if (cached !== undefined) return cached;
  let result: boolean[];
  switch (formula.kind) {
    case "and": {
      const tables = formula.operands.map((operand) => truthTable(operand, events, memo));
      result = events.map((_, i) => tables.every((table) => table[i]));
      break;
    }
    case "or": {
      const tables = formula.operands.map((operand) => truthTable(operand, events, memo));
      result = events.map((_, i) => tables.some((table) => table[i]));
      break;
    }
    case "not":
      result = truthTable(formula.operand, events, memo).map((value) => !value);
      break;
    case "once": {
      // (◇⁻Θ)(e_i) = ∨_{j < i} Θ(e_j): a running disjunction, read before it includes e_i.
      const inner = truthTable(formula.operand, events, memo);
      result = new Array<boolean>(events.length);
      let seen = false;
      for (let i = 0; i < events.length; i++) {
        result[i] = seen;
        seen ||= inner[i]!;
      }
      break;
    }
    case "eventually": {
      // (◇⁺Θ)(e_i) = ∨_{j > i} Θ(e_j).
      const inner = truthTable(formula.operand, events, memo);
      result = new Array<boolean>(events.length);
      let seen = false;
      for (let i = events.length - 1; i >= 0; i--) {
        result[i] = seen;
        seen ||= inner[i]!;
      }
      break;
    }
    default:
      result = events.map((event) => matchesPattern(formula, event));
  }
  memo.set(formula, result);
  return result;
}
