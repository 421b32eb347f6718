import type { CheckedPattern, CheckedStatement, Formula } from "@vigil/checker";
import { valueKey, valuesAtPath, type TraceEvent } from "@vigil/trace";

/**
 * The reference the engines are tested against: Figure 5 of the Vigil paper read literally, with
 * the documented list extension (docs/semantics.md). Every quantifier is a loop over the events, so
 * this is quadratic or cubic in the trace, and it shares no code with the engines beyond reading a
 * key path's values. It returns the witnesses: every event e with R_φ(e) false, ascending.
 */
export function figure5Witnesses(statement: CheckedStatement, events: readonly TraceEvent[]): number[] {
  const witnesses: number[] = [];
  for (let i = 0; i < events.length; i++) if (!requirementAt(statement, events, i)) witnesses.push(events[i]!.position);
  return witnesses;
}

/** R_φ(e_i), one rule per form. */
function requirementAt(s: CheckedStatement, events: readonly TraceEvent[], i: number): boolean {
  const e = events[i]!;
  const all = (from: number, to: number, test: (j: number) => boolean) => {
    for (let j = from; j < to; j++) if (!test(j)) return false;
    return true;
  };
  const some = (from: number, to: number, test: (j: number) => boolean) => {
    for (let j = from; j < to; j++) if (test(j)) return true;
    return false;
  };
  switch (s.form) {
    case "abs": // (Abs) ¬ψ(e)
      return !holds(s.pattern.formula, e);
    case "always": // (Fallback) Θ(e)
      return bodyAt(s.body, events, i);
    case "prec": // (Prec) ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e') ∧ e'[k'] = e[k]
      return forEachBinding(s.first, s.variables, e, (b) => some(0, i, (j) => matchesWith(s.second, s.variables, events[j]!, b)));
    case "resp": // (Resp) ψ(e) ⇒ ∨_{e' ≻ e} ψ'(e')
      return forEachBinding(s.first, s.variables, e, (b) => some(i + 1, events.length, (j) => matchesWith(s.second, s.variables, events[j]!, b)));
    case "bresp": // (BResp) ψ(e) ⇒ ∨_{e ≺ℓ e'} ψ'(e')
      return forEachBinding(s.first, s.variables, e, (b) =>
        some(i + 1, Math.min(events.length, i + 1 + s.bound), (j) => matchesWith(s.second, s.variables, events[j]!, b)),
      );
    case "rslv": // (Rslv) ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e'))
      return forEachBinding(
        s.first,
        s.variables,
        e,
        (b) =>
          matchesWith(s.second, s.variables, e, b) ||
          some(i + 1, events.length, (j) => matchesWith(s.second, s.variables, events[j]!, b) || matchesWith(s.first, s.variables, events[j]!, b)),
      );
    case "until": // (Until) ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec))
      return forEachBinding(s.trigger, s.variables, e, (b) =>
        all(i + 1, events.length, (k) => !matchesWith(s.bad, s.variables, events[k]!, b) || some(i + 1, k, (c) => matchesWith(s.resolve, s.variables, events[c]!, b))),
      );
  }
}

/** Θ(e_i): the foot's second row, quantifying over the events. */
function bodyAt(formula: Formula, events: readonly TraceEvent[], i: number): boolean {
  switch (formula.kind) {
    case "not":
      return !bodyAt(formula.operand, events, i);
    case "and":
      return formula.operands.every((operand) => bodyAt(operand, events, i));
    case "or":
      return formula.operands.some((operand) => bodyAt(operand, events, i));
    case "once": // ◇⁻Θ: some strictly earlier event
      return events.some((_, j) => j < i && bodyAt(formula.operand, events, j));
    case "eventually": // ◇⁺Θ: some strictly later event
      return events.some((_, j) => j > i && bodyAt(formula.operand, events, j));
    default:
      return holds(formula, events[i]!);
  }
}

/** ψ(e): the foot's first row. */
function holds(formula: Formula, e: TraceEvent): boolean {
  switch (formula.kind) {
    case "action": // a(e) ∈ α
      return formula.actions.includes(e.action);
    case "keyIn": // e[k] ∈ S, for some value under k
      return valuesAtPath(e.args, formula.key).some((v) => formula.values.some((w) => w.key === valueKey(v)));
    case "keyMatch": // e[k] ≈ p
      return valuesAtPath(e.args, formula.key).some((v) => globMatches(formula.pattern, v));
    case "keyBind": // k ∈ dom(e)
      return valuesAtPath(e.args, formula.key).length > 0;
    case "status": // s(e) = ⊤ / ⊥; an event without a result has neither
      return e.status === formula.status;
    case "outputMatch": // o(e) ≈ p
      return e.output !== undefined && globMatches(formula.pattern, e.output);
    case "and":
      return formula.operands.every((operand) => holds(operand, e));
    case "or":
      return formula.operands.some((operand) => holds(operand, e));
    case "not":
      return !holds(formula.operand, e);
    case "once":
    case "eventually":
      throw new Error("a temporal operator in a pattern");
  }
}

type Binding = ReadonlyMap<string, string>;

/** ψ(e) ⇒ ∧ over the bindings b of the pattern at e: body(b). Without variables, the one empty binding. */
function forEachBinding(pattern: CheckedPattern, variables: readonly string[], e: TraceEvent, body: (b: Binding) => boolean): boolean {
  if (!holds(pattern.formula, e)) return true;
  return bindingsAt(pattern, variables, e).every(body);
}

/** ψ'(e') ∧ e'[k'] = b: the event matches the pattern with a binding that agrees with b. */
function matchesWith(pattern: CheckedPattern, variables: readonly string[], e: TraceEvent, b: Binding): boolean {
  if (!holds(pattern.formula, e)) return false;
  if (pattern.bindings.size === 0) return true;
  return bindingsAt(pattern, variables, e).some((own) => [...own].every(([variable, value]) => b.get(variable) === value));
}

/** Every assignment of the pattern's variables to values the event has under the bound keys. */
function bindingsAt(pattern: CheckedPattern, variables: readonly string[], e: TraceEvent): Binding[] {
  let result: Map<string, string>[] = [new Map()];
  for (const variable of variables) {
    const key = pattern.bindings.get(variable);
    if (key === undefined) continue;
    const values = valuesAtPath(e.args, key).map(valueKey);
    result = result.flatMap((partial) => values.map((value) => new Map([...partial, [variable, value]])));
  }
  return result;
}

/**
 * `≈`, the documented wildcard matching, written as the textbook recursion on small inputs: `*` any
 * run of characters, `?` one, `[…]` a class (`!`/`^` negates, `a-z` ranges), `\` escapes; whole
 * string, by code point. Numbers and booleans match by their JSON text; other values never.
 */
function globMatches(pattern: string, value: unknown): boolean {
  const text = typeof value === "string" ? value : typeof value === "number" || typeof value === "boolean" ? JSON.stringify(value) : undefined;
  if (text === undefined) return false;
  const p = Array.from(pattern);
  const t = Array.from(text);
  const memo = new Map<string, boolean>();
  const match = (pi: number, ti: number): boolean => {
    const key = `${pi},${ti}`;
    const cached = memo.get(key);
    if (cached !== undefined) return cached;
    let result: boolean;
    if (pi === p.length) result = ti === t.length;
    else if (p[pi] === "*") result = match(pi + 1, ti) || (ti < t.length && match(pi, ti + 1));
    else if (ti === t.length) result = false;
    else if (p[pi] === "?") result = match(pi + 1, ti + 1);
    else if (p[pi] === "\\") result = p[pi + 1] === t[ti] && match(pi + 2, ti + 1);
    else if (p[pi] === "[") {
      let j = pi + 1;
      const negated = p[j] === "!" || p[j] === "^";
      if (negated) j++;
      let inClass = false;
      let first = true;
      for (; j < p.length && (p[j] !== "]" || first); j++) {
        first = false;
        if (p[j + 1] === "-" && p[j + 2] !== undefined && p[j + 2] !== "]") {
          if (t[ti]!.codePointAt(0)! >= p[j]!.codePointAt(0)! && t[ti]!.codePointAt(0)! <= p[j + 2]!.codePointAt(0)!) inClass = true;
          j += 2;
        } else if (p[j] === t[ti]) inClass = true;
      }
      result = inClass !== negated && match(j + 1, ti + 1);
    } else result = p[pi] === t[ti] && match(pi + 1, ti + 1);
    memo.set(key, result);
    return result;
  };
  return match(0, 0);
}
