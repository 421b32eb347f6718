import type { CheckedPattern, CheckedScope, CheckedStatement, Formula, Subject } from "@vigil/checker";
import { stableStringify, valueKey, valuesAtPath, type JsonValue, type PathSegment, type TraceEvent } from "@vigil/trace";

/**
 * The reference the engines are tested against: Figure 5 of the Vigil paper read literally, with
 * the documented extensions (docs/semantics.md). Every quantifier is a loop over the events, so
 * this is quadratic or cubic in the trace, and it shares no code with the engines beyond reading a
 * key path's values. Regular expressions are run by JavaScript's own `RegExp` (the inputs here are
 * small). A pattern with variables is a relation ψ(e, ν), and "the bindings of e" are the ν drawn
 * from e's values at the places the pattern binds for which ψ(e, ν) holds. It returns the
 * witnesses: every event e with R_φ(e) false, ascending.
 */
export function figure5Witnesses(statement: CheckedStatement, events: readonly TraceEvent[]): number[] {
  if (statement.scope !== undefined) {
    // Each judged stretch is a trace of its own; witnesses keep their places in the run.
    const { scope: _scope, ...unscoped } = statement;
    const judged = figure5Stretches(statement.scope, events).filter((stretch) => stretch.closed || statement.scope!.kind !== "between");
    return judged.flatMap((stretch) => figure5Witnesses(unscoped as CheckedStatement, stretch.events)).sort((a, b) => a - b);
  }
  const witnesses: number[] = [];
  for (let i = 0; i < events.length; i++) if (!requirementAt(statement, events, i)) witnesses.push(events[i]!.position);
  return witnesses;
}

/**
 * For `until`: each witness (a trigger) and the event that broke its interval, the first bad event
 * after it (for some binding of the trigger) with no resolution strictly between.
 */
export function figure5UntilBreakers(s: Extract<CheckedStatement, { form: "until" }>, events: readonly TraceEvent[]): Map<number, number> {
  if (s.scope !== undefined) {
    const { scope: _scope, ...unscoped } = s;
    const judged = figure5Stretches(s.scope, events).filter((stretch) => stretch.closed || s.scope!.kind !== "between");
    return new Map(judged.flatMap((stretch) => [...figure5UntilBreakers(unscoped as typeof s, stretch.events)]));
  }
  const breakers = new Map<number, number>();
  for (let i = 0; i < events.length; i++) {
    let first: number | undefined;
    forEachBinding(s.trigger, s.variables, events[i]!, (b) => {
      for (let k = i + 1; k < events.length; k++) {
        if (!matchesWith(s.bad, s.variables, events[k]!, b)) continue;
        let resolved = false;
        for (let c = i + 1; c < k; c++) if (matchesWith(s.resolve, s.variables, events[c]!, b)) resolved = true;
        if (!resolved) first = Math.min(first ?? Infinity, events[k]!.position);
        break;
      }
      return true;
    });
    if (first !== undefined) breakers.set(events[i]!.position, first);
  }
  return breakers;
}

/** R_φ(e_i), one rule per form. */
/**
 * Dwyer's scopes read from their definitions: the stretches of a run, and whether each closed.
 * `after Q`: from the first Q on (never closes). `before R`: up to the first R, excluded (closed when
 * an R came). `between Q and R`, `after Q until R`: from each Q read outside a stretch to the next R
 * after it, excluded; that R opens nothing. Which stretches are judged is the caller's business
 * (`between` judges only closed ones).
 */
export function figure5Stretches(scope: CheckedScope, events: readonly TraceEvent[]): { events: TraceEvent[]; closed: boolean }[] {
  const q = (e: TraceEvent) => holds(scope.open, e);
  const r = (e: TraceEvent) => scope.close !== undefined && holds(scope.close, e);
  if (scope.kind === "after") {
    const first = events.findIndex(q);
    return first < 0 ? [] : [{ events: events.slice(first), closed: false }];
  }
  if (scope.kind === "before") {
    const first = events.findIndex(q);
    return [first < 0 ? { events: [...events], closed: false } : { events: events.slice(0, first), closed: true }];
  }
  const stretches: { events: TraceEvent[]; closed: boolean }[] = [];
  let i = 0;
  while (i < events.length) {
    if (!q(events[i]!)) {
      i++;
      continue;
    }
    let j = i + 1;
    while (j < events.length && !r(events[j]!)) j++;
    stretches.push({ events: events.slice(i, j), closed: j < events.length });
    i = j + 1;
  }
  return stretches;
}

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
    case "bresp": {
      // (BResp) ψ(e) ⇒ ∨_{e ≺ℓ e'} ψ'(e'); with a time d, over the e' ≻ e with t(e') − t(e) ≤ d
      const window = s.window;
      const inWindow = (j: number) => (window.unit === "events" ? j - i <= window.size : time(events[j]!) - time(e) <= window.size);
      return forEachBinding(s.first, s.variables, e, (b) => some(i + 1, events.length, (j) => inWindow(j) && matchesWith(s.second, s.variables, events[j]!, b)));
    }
    case "limit": {
      // (Limit) ψ(e, ν) ⇒ a(e) is defined and Σ_{e' ≼ e, ψ(e', ν), t(e) − t(e') < d} a(e') ≤ M
      const measure = s.measure;
      const amount = (event: TraceEvent): Fraction | undefined => (measure.kind === "count" ? [1n, 1n] : amountAt(event, measure.subject, measure.key));
      const maximum = fraction(measure.kind === "count" ? String(measure.maximum) : measure.maximum);
      return forEachBinding(s.pattern, s.variables, e, (b) => {
        if (amount(e) === undefined) return false;
        let total: Fraction = [0n, 1n];
        for (let j = 0; j <= i; j++) {
          if (s.per !== undefined && !(time(e) - time(events[j]!) < s.per)) continue;
          const a = events[j]!;
          if (matchesWith(s.pattern, s.variables, a, b) && amount(a) !== undefined) total = add(total, amount(a)!);
        }
        return total[0] * maximum[1] <= maximum[0] * total[1];
      });
    }
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
    case "once": {
      // ◇⁻Θ: some strictly earlier event; with a window d, at most d before in time
      const within = formula.within;
      return events.some((_, j) => j < i && (within === undefined || time(events[i]!) - time(events[j]!) <= within) && bodyAt(formula.operand, events, j));
    }
    case "eventually": {
      // ◇⁺Θ: some strictly later event; with a window d, at most d after in time
      const within = formula.within;
      return events.some((_, j) => j > i && (within === undefined || time(events[j]!) - time(events[i]!) <= within) && bodyAt(formula.operand, events, j));
    }
    default:
      return holds(formula, events[i]!);
  }
}

type Binding = ReadonlyMap<string, JsonValue>;

/** t(e): the event's time (the engines refuse a run without times before reading one). */
function time(e: TraceEvent): number {
  if (e.time === undefined) throw new Error(`event ${e.position} has no time`);
  return e.time;
}

/** An exact rational number: numerator and (positive) denominator. */
type Fraction = readonly [bigint, bigint];

/** A number's decimal text (JavaScript's shortest, or the policy's literal) as an exact fraction. */
function fraction(textOrNumber: string | number): Fraction {
  const [mantissa, power = "0"] = String(textOrNumber).toLowerCase().split("e");
  const [whole, decimals = ""] = mantissa!.split(".");
  let numerator = BigInt(`${whole}${decimals}`);
  let denominator = 10n ** BigInt(decimals.length);
  const exponent = Number(power);
  if (exponent >= 0) numerator *= 10n ** BigInt(exponent);
  else denominator *= 10n ** BigInt(-exponent);
  return [numerator, denominator];
}

function add(a: Fraction, b: Fraction): Fraction {
  return [a[0] * b[1] + b[0] * a[1], a[1] * b[1]];
}

/** a(e) for a sum: the numbers at the key added up, when there is one and all are numbers zero or more. */
function amountAt(e: TraceEvent, subject: Subject, key: readonly PathSegment[]): Fraction | undefined {
  const values = at(e, subject, key);
  if (values.length === 0 || values.some((v) => typeof v !== "number" || v < 0)) return undefined;
  return values.reduce<Fraction>((total, v) => add(total, fraction(v as number)), [0n, 1n]);
}

/** A fraction's order against another: negative, zero or positive. */
function order(a: Fraction, b: Fraction): number {
  const left = a[0] * b[1];
  const right = b[0] * a[1];
  return left < right ? -1 : left > right ? 1 : 0;
}

/** The number a value stands for in a comparison: a number, or a string that is a JSON number's text. */
function numberIn(v: JsonValue): Fraction | undefined {
  if (typeof v === "number") return fraction(v);
  if (typeof v === "string" && /^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$/.test(v)) return fraction(v);
  return undefined;
}

/** n ⋈ N, for a comparison written as the policy writes it. */
function compares(n: Fraction, op: string, bound: string): boolean {
  const o = order(n, fraction(bound));
  return op === "<" ? o < 0 : op === "<=" ? o <= 0 : op === ">" ? o > 0 : op === ">=" ? o >= 0 : op === "=" ? o === 0 : o !== 0;
}

/** Some value under k passes the test; with `every`, k has a value and every value under it does. */
function quantified(values: JsonValue[], every: boolean | undefined, test: (v: JsonValue) => boolean): boolean {
  return every === true ? values.length > 0 && values.every(test) : values.some(test);
}

/** ψ(e, b): the foot's first row; `b` gives the variables their values (none for a pattern without). */
function holds(formula: Formula, e: TraceEvent, b: Binding = new Map()): boolean {
  switch (formula.kind) {
    case "action": // a(e) ∈ α
      return formula.actions.includes(e.action);
    case "keyIn": // e[k] ∈ S, for some value under k
      return quantified(at(e, formula.subject, formula.key), formula.every, (v) => formula.values.some((w) => w.key === valueKey(v)));
    case "keyMatch": // e[k] ≈ p
      return quantified(at(e, formula.subject, formula.key), formula.every, (v) => globMatches(formula.pattern, v));
    case "keyRegex": // some text of e[k] contains a match of r
      return quantified(at(e, formula.subject, formula.key), formula.every, (v) => {
        const t = text(v);
        return t !== undefined && new RegExp(formula.source, formula.flags).test(t);
      });
    case "keyCompare": // some value of e[k] is a number n with n ⋈ N
      return quantified(at(e, formula.subject, formula.key), formula.every, (v) => {
        const n = numberIn(v);
        return n !== undefined && compares(n, formula.op, formula.value);
      });
    case "keyCount": // |e[k]| ⋈ N
      return compares([BigInt(at(e, formula.subject, formula.key).length), 1n], formula.op, formula.value);
    case "keyBind": // b(x) ∈ e[k]
      return at(e, formula.subject, formula.key).some((v) => b.has(formula.variable) && valueKey(v) === valueKey(b.get(formula.variable)!));
    case "keyContains": {
      // some text of e[k] contains b(x) as text: a string itself, another value its JSON text
      if (!b.has(formula.variable)) return false;
      const wanted = b.get(formula.variable)!;
      const needle = typeof wanted === "string" ? wanted : stableStringify(wanted);
      return quantified(at(e, formula.subject, formula.key), formula.every, (v) => text(v)?.includes(needle) === true);
    }
    case "status": // s(e) = ⊤ / ⊥; an event without a result has neither
      return e.status === formula.status;
    case "and":
      return formula.operands.every((operand) => holds(operand, e, b));
    case "or":
      return formula.operands.some((operand) => holds(operand, e, b));
    case "not":
      return !holds(formula.operand, e, b);
    case "once":
    case "eventually":
      throw new Error("a temporal operator in a pattern");
  }
}

/** The values of e at a key path: in its arguments, or in its output (the text; or the JSON object it holds). */
function at(e: TraceEvent, subject: Subject, key: readonly PathSegment[]): JsonValue[] {
  if (subject === "args") return valuesAtPath(e.args, key);
  if (e.output === undefined) return [];
  if (key.length === 0) return [e.output];
  let parsed: unknown;
  try {
    parsed = e.outputTruncated === true ? undefined : JSON.parse(e.output);
  } catch {
    return [];
  }
  return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? valuesAtPath(parsed as Record<string, JsonValue>, key) : [];
}

/** The text a value offers to `matches` and `contains`: a string, or a number's or boolean's JSON text. */
function text(v: JsonValue): string | undefined {
  return typeof v === "string" ? v : typeof v === "number" || typeof v === "boolean" ? JSON.stringify(v) : undefined;
}

/** ψ(e) ⇒ ∧ over the bindings b of the pattern at e: body(b). Without variables, the one empty binding. */
function forEachBinding(pattern: CheckedPattern, variables: readonly string[], e: TraceEvent, body: (b: Binding) => boolean): boolean {
  if (pattern.variables.length === 0) return !holds(pattern.formula, e) || body(new Map());
  return bindingsAt(pattern, variables, e).every(body);
}

/** ψ'(e', b): the event matches the pattern under the binding b. */
function matchesWith(pattern: CheckedPattern, _variables: readonly string[], e: TraceEvent, b: Binding): boolean {
  return holds(pattern.formula, e, pattern.variables.length === 0 ? new Map() : b);
}

/**
 * The bindings of a pattern at e: every assignment of its variables to values e has at the places
 * the pattern binds them (`k = $x`, under any branch), kept when ψ(e, ν) holds.
 */
function bindingsAt(pattern: CheckedPattern, variables: readonly string[], e: TraceEvent): Binding[] {
  let result: Map<string, JsonValue>[] = [new Map()];
  for (const variable of variables) {
    if (!pattern.variables.includes(variable)) continue;
    const values: JsonValue[] = [];
    const visit = (node: Formula): void => {
      if (node.kind === "keyBind" && node.variable === variable) values.push(...at(e, node.subject, node.key));
      if (node.kind === "and" || node.kind === "or") node.operands.forEach(visit);
      if (node.kind === "not") visit(node.operand);
    };
    visit(pattern.formula);
    result = result.flatMap((partial) => values.map((value) => new Map([...partial, [variable, value]])));
  }
  return result.filter((b) => holds(pattern.formula, e, b));
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
