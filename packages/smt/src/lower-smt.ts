import type { CheckedPattern, CheckedScope, CheckedStatement, Formula, LimitMeasure, TemporalFormula, Window } from "@vigil/checker";
import { decimalOf, eventAmount, formatDecimal, scopeStretches, type Decimal } from "@vigil/engine";
import { variableAtoms, type VariableAtom } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { buildFactBase, placeId, TUPLE_SORT, VALUE_SORT, type FactBase } from "./fact-base.js";
import { and, andAll, comment, eq, implies, ite, not, or, orAll } from "./smt-terms.js";

/**
 * How the disjunctions of Figure 5 are written.
 * - `literal`: exactly as in the figure, ∨_{e' ≺ e} … spelled out for every event. Quadratic in
 *   the trace; meant for reading and for cross-checking the shared encoding on small traces.
 * - `shared`: the same formulas, with the running disjunctions named once and reused
 *   (named constants and `define-fun`s, arrays for sets of bound values). Linear in the trace. Each
 *   definition states which disjunction it abbreviates.
 */
export type Encoding = "literal" | "shared";

/** In the shared encoding, by default, `bresp[ℓ]` windows up to this size are spelled out as in Figure 5. */
export const defaultWindowSpelledOutUpTo = 16;

/** The SMT query of one statement: ⟦τ⟧ ∧ R_φ, with one tracked condition R_φ(e) per event. */
export interface SmtQuery {
  /**
   * Declarations, facts and definitions, then per event the condition `c_i = R_φ(e_i)` and
   * `(assert (=> r_i c_i))`.
   */
  readonly body: string;
  /** Per event position: the assumption literal r_i and the constant c_i naming R_φ(e_i). */
  readonly conditions: readonly { readonly position: number; readonly literal: string; readonly condition: string }[];
}

export interface LowerOptions {
  readonly encoding?: Encoding;
  /**
   * The longest query text to write, in characters: lowering stops with `QueryTooLarge` as soon as
   * the text would be longer, before it is all built. Default: no limit.
   */
  readonly maxLength?: number;
  /** Shared encoding: the largest `bresp` bound whose window is spelled out (default 16). */
  readonly windowSpelledOutUpTo?: number;
}

/**
 * Lowers a statement to its requirement R_φ = ∧_e R_φ(e) over the fact base (Figure 5, Section
 * 5.2). Each R_φ(e) is asserted under its own assumption literal, so the solver's unsatisfiable
 * core names the events whose conditions the facts refute (Section 5.3).
 */
export function lowerStatement(statement: CheckedStatement, events: readonly TraceEvent[], options: LowerOptions = {}): SmtQuery {
  const budget = new TextBudget(options.maxLength ?? Infinity);
  // The text per event grows with the atoms, windows and bindings, and is never below the condition's four lines.
  budget.charge(events.length * 80);
  const facts = buildFactBase(statement, events);
  for (const line of facts.lines) budget.charge(line.length + 1);
  const lowering = new Lowering(statement, facts, options.encoding ?? "shared", options.windowSpelledOutUpTo ?? defaultWindowSpelledOutUpTo, budget);
  const conditions = lowering.conditions();
  const lines = [...facts.lines];
  if (lowering.definitions.length > 0) {
    lines.push(comment("abbreviations of the running disjunctions (each states what it abbreviates)"));
    for (const definition of lowering.definitions) lines.push(definition);
  }
  lines.push(comment(`R_φ: one condition c_i = R_φ(e_i) per event, tracked by the literal r_i`));
  const tracked: { position: number; literal: string; condition: string }[] = [];
  for (const { position, condition } of conditions) {
    const literal = `r${position}`;
    const name = `c${position}`;
    tracked.push({ position, literal, condition: name });
    lines.push(`(declare-const ${name} Bool)`);
    lines.push(`(assert (= ${name} ${condition}))`);
    lines.push(`(declare-const ${literal} Bool)`);
    lines.push(`(assert (=> ${literal} ${name}))`);
  }
  return { body: lines.join("\n") + "\n", conditions: tracked };
}

/** A query longer than `LowerOptions.maxLength`: how long it had grown when lowering stopped. */
export class QueryTooLarge extends Error {
  constructor(readonly length: number, readonly limit: number) {
    super(`the SMT query is over ${limit} characters`);
  }
}

/** The characters written so far, against the limit. */
class TextBudget {
  private used = 0;
  constructor(private readonly limit: number) {}
  charge(length: number): void {
    this.used += length;
    if (this.used > this.limit) throw new QueryTooLarge(this.used, this.limit);
  }
}

/**
 * A candidate binding of the statement's variables at one event: a guard (the values exist), the
 * term (a Value, or a Binding tuple), and the term of each variable's value in the statement's order.
 */
interface BindingTerm {
  readonly guard: string;
  readonly term: string;
  readonly parts: readonly string[];
}

class Lowering {
  readonly definitions: string[] = [];
  private readonly events: readonly TraceEvent[];
  private readonly n: number;
  private definitionCounter = 0;

  constructor(
    private readonly statement: CheckedStatement,
    private readonly facts: FactBase,
    private readonly encoding: Encoding,
    private readonly windowSpelledOutUpTo: number,
    private readonly budget: TextBudget,
  ) {
    this.events = facts.events;
    this.n = this.events.length;
  }

  conditions(): { position: number; condition: string }[] {
    const s = this.statement;
    const positions = this.events.map((e) => e.position);
    switch (s.form) {
      case "abs":
        // (Abs) R_φ(e) = ¬ψ(e)
        return positions.map((p, i) => this.charged(p, not(this.pattern(s.pattern.formula, i))));
      case "always":
        // (Fallback) R_φ(e) = Θ(e)
        return positions.map((p, i) => this.charged(p, this.body(s.body, i)));
      case "prec":
        // (Prec) R_φ(e) = ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e')
        return this.guarded(s.first, (i, binding) => this.somewhere(s.second, binding, i, "before"));
      case "resp":
        // (Resp) R_φ(e) = ψ(e) ⇒ ∨_{e' ≻ e} ψ'(e')
        return this.guarded(s.first, (i, binding) => this.somewhere(s.second, binding, i, "after"));
      case "bresp":
        // (BResp) R_φ(e) = ψ(e) ⇒ ∨_{e ≺_ℓ e'} ψ'(e'); with a time d, over the e' ≻ e with t(e') − t(e) ≤ d
        return this.guarded(s.first, (i, binding) => this.within(s.second, binding, i, this.windowEnd(s.window, i) - i - 1));
      case "limit":
        // (Limit) R_φ(e) = ψ(e, ν) ⇒ Σ_{e' ∈ W(e)} [ψ(e', ν)]·a(e') ≤ M, and a(e) defined
        return this.guarded(s.pattern, (i, binding) => this.limited(s.pattern, s.measure, s.per, binding, i));
      case "rslv":
        // (Rslv) R_φ(e) = ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e'))
        return this.guarded(s.first, (i, binding) =>
          or(this.matchAt(s.second, binding, i), this.somewhere([s.second, s.first], binding, i, "after")),
        );
      case "until":
        // (Until) R_φ(e) = ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec))
        return this.guarded(s.trigger, (i, binding) => this.guardedInterval(s.resolve, s.bad, binding, i));
    }
  }

  /**
   * ∧_{bindings b} (ψ(e_i, b) ⇒ body(i, b)). Without variables there is one binding, and this is
   * Figure 5's ψ(e) ⇒ body. With variables, b ranges over the candidates of e_i (a superset of the
   * bindings ψ gives it, each guarded by its values existing), and the body's disjuncts gain the
   * conjunct e'[k'] = e[k] through `b`.
   */
  private guarded(first: CheckedPattern, body: (i: number, binding: BindingTerm | undefined) => string) {
    return this.events.map((event, i) => {
      if (first.variables.length === 0) return this.charged(event.position, implies(this.pattern(first.formula, i), body(i, undefined)));
      const conditions = this.candidates(first, i).map((b) => implies(and(b.guard, this.relation(first.formula, i, b)), body(i, b)));
      return this.charged(event.position, and(...conditions));
    });
  }

  /** ψ'(e_j, b): event j matches the pattern with the given binding (if any). */
  private matchAt(pattern: CheckedPattern, binding: BindingTerm | undefined, j: number): string {
    if (binding === undefined || pattern.variables.length === 0) return this.pattern(pattern.formula, j);
    return this.relation(pattern.formula, j, binding);
  }

  /** ∨_{e_j ≺ e_i} (or ≻) of ψ'(e_j) [∧ binding], for one pattern or the disjunction of several. */
  private somewhere(patterns: CheckedPattern | CheckedPattern[], binding: BindingTerm | undefined, i: number, direction: "before" | "after"): string {
    const list = Array.isArray(patterns) ? patterns : [patterns];
    if (this.encoding === "literal") {
      const range = direction === "before" ? indices(0, i) : indices(i + 1, this.n);
      return orAll(range.map((j) => or(...list.map((p) => this.matchAt(p, binding, j)))));
    }
    if (binding === undefined || list.every((p) => p.variables.length === 0)) {
      return this.runningDisjunction(list, direction)[i]!;
    }
    return `(select ${this.runningSet(list, direction)[i]!} ${binding.term})`;
  }

  /**
   * The end (exclusive, 0-based) of the window that opens after e_i: e_{i+1} … e_{i+ℓ} for ℓ events,
   * the e_j with t(e_j) − t(e_i) ≤ d for a time d (a ground fact: times are computed outside the
   * solver, and never go back, so the window is a run of consecutive events).
   */
  private windowEnd(window: Window, i: number): number {
    if (window.unit === "events") return Math.min(this.n, i + 1 + window.size);
    const limit = this.time(i) + window.size;
    let end = i + 1;
    while (end < this.n && this.time(end) <= limit) end++;
    return end;
  }

  /** The time of e_i (the decider refuses a run without times before lowering a statement that reads them). */
  private time(i: number): number {
    return this.events[i]!.time ?? 0;
  }

  /**
   * The first event (0-based) a limit counts for e_i: with a window d, the earliest e_j with
   * t(e_i) − t(e_j) < d (a ground fact); without one, the first event.
   */
  private windowStart(per: number | undefined, i: number): number {
    if (per === undefined) return 0;
    let start = i;
    while (start > 0 && this.time(i) - this.time(start - 1) < per) start--;
    return start;
  }

  /**
   * The limit at e_i under a binding: the amount of e_i is defined (otherwise the condition is
   * false: an amount that cannot be counted breaks the limit), and the sum over the window of the
   * amounts of the events matching the pattern (one each, for a count) is at most the maximum.
   * Amounts are ground facts (`eventAmount`, exact decimals); without variables the shared encoding
   * sums by prefix (P_i = P_{i−1} + [ψ(e_i)]·a_i, the window's sum P_i − P_{start−1}); with variables,
   * the sum is written out, as in the literal encoding.
   */
  private limited(pattern: CheckedPattern, measure: LimitMeasure, per: number | undefined, binding: BindingTerm | undefined, i: number): string {
    if (this.amount(measure, i) === undefined) return "false";
    const start = this.windowStart(per, i);
    const maximum = this.numeral(measure, measure.kind === "count" ? { units: BigInt(measure.maximum), exponent: 0 } : decimalOf(measure.maximum)!);
    if (this.encoding === "shared" && (binding === undefined || pattern.variables.length === 0)) {
      const sums = this.prefixSums(pattern, measure);
      const window = start === 0 ? sums[i]! : `(- ${sums[i]!} ${sums[start - 1]!})`;
      return `(<= ${window} ${maximum})`;
    }
    if (this.encoding === "shared" && binding !== undefined) {
      // Per binding: the window's sum is the difference of two running sums of the binding.
      const sums = this.prefixSumsPerBinding(pattern, measure);
      const upTo = `(select ${sums[i]!} ${binding.term})`;
      return `(<= ${start === 0 ? upTo : `(- ${upTo} (select ${sums[start - 1]!} ${binding.term}))`} ${maximum})`;
    }
    const terms = indices(start, i + 1).map((j) => this.counted(pattern, measure, binding, j));
    return `(<= ${terms.length === 1 ? terms[0]! : `(+ ${terms.join(" ")})`} ${maximum})`;
  }

  /** [ψ(e_j, b)]·a_j: what e_j adds to a limit's sum (nothing when its amount cannot be counted). */
  private counted(pattern: CheckedPattern, measure: LimitMeasure, binding: BindingTerm | undefined, j: number): string {
    const amount = this.amount(measure, j);
    const zero = this.numeral(measure, { units: 0n, exponent: 0 });
    if (amount === undefined) return zero;
    return ite(this.matchAt(pattern, binding, j), this.numeral(measure, amount), zero);
  }

  private readonly amounts = new Map<number, Decimal | undefined>();

  /** a(e_i): one for a count, the event's amount for a sum (`eventAmount`, the engine's); undefined when it cannot be counted. */
  private amount(measure: LimitMeasure, i: number): Decimal | undefined {
    if (measure.kind === "count") return { units: 1n, exponent: 0 };
    if (!this.amounts.has(i)) this.amounts.set(i, eventAmount(this.events[i]!, measure.subject, measure.key));
    return this.amounts.get(i);
  }

  /** A number as the solver reads it: an Int for a count, a Real for a sum. */
  private numeral(measure: LimitMeasure, value: Decimal): string {
    const text = formatDecimal(value);
    if (measure.kind === "count") return text;
    return text.includes(".") ? text : `${text}.0`;
  }

  /** P[i] abbreviates Σ_{j ≤ i} [ψ(e_j)]·a_j, the running sum of a limit's measure. */
  private prefixSums(pattern: CheckedPattern, measure: LimitMeasure): string[] {
    const cacheKey = `p:${this.patternId(pattern)}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("P");
    const sort = measure.kind === "count" ? "Int" : "Real";
    this.definitions.push(comment(`${name}_i abbreviates the sum over e_j ≼ e_i of the measure of the events matching the pattern`));
    const result = new Array<string>(this.n);
    let previous = this.numeral(measure, { units: 0n, exponent: 0 });
    for (let i = 0; i < this.n; i++) {
      previous = this.define(`|${name}_${i + 1}|`, sort, `(+ ${previous} ${this.counted(pattern, measure, undefined, i)})`);
      result[i] = previous;
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  /**
   * Q[i] abbreviates, per binding b, Σ_{j ≤ i} [ψ(e_j, b)]·a_j: an array from bindings to the
   * running sum of a limit's measure. Each candidate binding of e_i that the pattern holds for is
   * stored as Q[i−1][b] + a_i, read from Q[i−1]: a binding that two candidates of e_i give is
   * counted once, as Figure 5's [ψ(e_i, ν)] counts it.
   */
  private prefixSumsPerBinding(pattern: CheckedPattern, measure: LimitMeasure): string[] {
    const cacheKey = `q:${this.patternId(pattern)}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("Q");
    const sort = `(Array ${this.bindingSort()} ${measure.kind === "count" ? "Int" : "Real"})`;
    this.definitions.push(comment(`${name}_i abbreviates, per binding, the sum over e_j ≼ e_i of the measure of the events matching the pattern with it`));
    const result = new Array<string>(this.n);
    let previous = `((as const ${sort}) ${this.numeral(measure, { units: 0n, exponent: 0 })})`;
    for (let i = 0; i < this.n; i++) {
      const amount = this.amount(measure, i);
      let term = previous;
      if (amount !== undefined) {
        let step = 0;
        for (const b of this.candidates(pattern, i)) {
          const stored = `(store ${term} ${b.term} (+ (select ${previous} ${b.term}) ${this.numeral(measure, amount)}))`;
          term = this.define(`|${name}_${i + 1}.${step++}|`, sort, ite(and(b.guard, this.relation(pattern.formula, i, b)), stored, term));
        }
      }
      previous = this.define(`|${name}_${i + 1}|`, sort, term);
      result[i] = previous;
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  /** ∨_{i < j ≤ i+ℓ} ψ'(e_j) [∧ binding]. */
  private within(pattern: CheckedPattern, binding: BindingTerm | undefined, i: number, bound: number): string {
    // A short window is cheapest spelled out (its size is the bound, not the trace); a long one uses
    // the nearest later match, an integer per position.
    if (this.encoding === "literal" || bound <= this.windowSpelledOutUpTo) {
      return orAll(indices(i + 1, Math.min(this.n, i + 1 + bound)).map((j) => this.matchAt(pattern, binding, j)));
    }
    // The nearest later position where ψ' holds is within ℓ exactly when the windowed disjunction is true.
    const perBinding = binding !== undefined && pattern.variables.length > 0;
    const nearest = this.nearestLater(pattern, perBinding);
    const at = nearest[i]!;
    const position = perBinding ? `(select ${at} ${binding.term})` : at;
    return `(<= ${position} ${i + 1 + bound})`;
  }

  /** ∧_{b > i} (ψb(e_b) ⇒ ∨_{i < c < b} ψ'(e_c)), with the trigger's binding where patterns use it. */
  private guardedInterval(resolve: CheckedPattern, bad: CheckedPattern, binding: BindingTerm | undefined, i: number): string {
    if (this.encoding === "literal") {
      return andAll(
        indices(i + 1, this.n).map((b) =>
          implies(this.matchAt(bad, binding, b), orAll(indices(i + 1, b).map((c) => this.matchAt(resolve, binding, c)))),
        ),
      );
    }
    const clear = this.clearFrom(resolve, bad, binding !== undefined);
    const next = clear[i + 1]!;
    return binding !== undefined ? `(select ${next} ${binding.term})` : next;
  }

  // ---- shared encoding: named running summaries --------------------------------------------

  private readonly runningCache = new Map<string, string[]>();

  /** R_φ(e) at a position, its text counted against the budget. */
  private charged(position: number, condition: string): { position: number; condition: string } {
    this.budget.charge(condition.length);
    return { position, condition };
  }

  private define(name: string, sort: string, term: string): string {
    this.budget.charge(name.length + term.length + 40);
    if (sort === "Bool" || sort === "Int" || sort === "Real") {
      // A Boolean abbreviation is a constant equal to its term, not a `define-fun`: Z3 expands
      // macros, and flattening the expansion of a running disjunction is quadratic in the trace.
      this.definitions.push(`(declare-const ${name} ${sort})`, `(assert (= ${name} ${term}))`);
    } else {
      // Arrays and positions stay macros: expanded, `select` over a `store` chain simplifies away,
      // where a constant would leave the array theory to reason about equalities of arrays.
      this.definitions.push(`(define-fun ${name} () ${sort} ${term})`);
    }
    return name;
  }

  private fresh(prefix: string): string {
    return `${prefix}${this.definitionCounter++}`;
  }

  /** D[i] abbreviates ∨_{j < i} (or j > i) of ∨_p ψ_p(e_j). */
  private runningDisjunction(patterns: CheckedPattern[], direction: "before" | "after"): string[] {
    const cacheKey = `d:${direction}:${patterns.map((p) => this.patternId(p)).join(",")}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("D");
    this.definitions.push(comment(`${name}_i abbreviates the disjunction over e_j ${direction === "before" ? "≺" : "≻"} e_i`));
    const result = new Array<string>(this.n);
    let previous = "false";
    const order = direction === "before" ? indices(0, this.n) : indices(0, this.n).reverse();
    for (const i of order) {
      const neighbour = direction === "before" ? i - 1 : i + 1;
      const term = neighbour < 0 || neighbour >= this.n ? "false" : or(previous, ...patterns.map((p) => this.pattern(p.formula, neighbour)));
      previous = this.define(`|${name}_${i + 1}|`, "Bool", term);
      result[i] = previous;
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  /**
   * S[i] abbreviates the set of bindings b with ∨_{e_j ≺ e_i} (or ≻) ∨_p (ψ_p(e_j) ∧ b binds
   * at e_j), as an array from bindings to Bool: selecting b from it is that disjunction.
   */
  private runningSet(patterns: CheckedPattern[], direction: "before" | "after"): string[] {
    const cacheKey = `s:${direction}:${patterns.map((p) => this.patternId(p)).join(",")}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("S");
    const sort = `(Array ${this.bindingSort()} Bool)`;
    this.definitions.push(comment(`${name}_i abbreviates the set of bindings seen at some e_j ${direction === "before" ? "≺" : "≻"} e_i`));
    const result = new Array<string>(this.n);
    let previous = `((as const ${sort}) false)`;
    const order = direction === "before" ? indices(0, this.n) : indices(0, this.n).reverse();
    for (const i of order) {
      const neighbour = direction === "before" ? i - 1 : i + 1;
      let term = previous;
      if (neighbour >= 0 && neighbour < this.n) {
        let step = 0;
        for (const pattern of patterns) {
          for (const b of this.candidates(pattern, neighbour)) {
            const matches = this.relation(pattern.formula, neighbour, b);
            term = this.define(`|${name}_${i + 1}.${step++}|`, sort, ite(and(b.guard, matches), `(store ${term} ${b.term} true)`, term));
          }
        }
      }
      previous = this.define(`|${name}_${i + 1}|`, sort, term);
      result[i] = previous;
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  /**
   * N[i] abbreviates the position (1-based) of the nearest e_j ≻ e_i where ψ' holds (per binding,
   * when the pattern binds variables), or n + 1 + the largest bound when there is none. So
   * `N[i] ≤ i + ℓ` is exactly ∨_{e_i ≺_ℓ e_j} ψ'(e_j).
   */
  private nearestLater(pattern: CheckedPattern, perBinding: boolean): string[] {
    const cacheKey = `n:${perBinding}:${this.patternId(pattern)}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("N");
    const never = this.n + 1 + (this.statement.form === "bresp" && this.statement.window.unit === "events" ? this.statement.window.size : 0);
    const sort = perBinding ? `(Array ${this.bindingSort()} Int)` : "Int";
    this.definitions.push(comment(`${name}_i abbreviates the position of the nearest e_j ≻ e_i matching ψ' (${never} if none)`));
    const result = new Array<string>(this.n);
    let previous = perBinding ? `((as const ${sort}) ${never})` : `${never}`;
    for (let i = this.n - 1; i >= 0; i--) {
      let term = previous;
      const j = i + 1;
      if (j < this.n) {
        if (perBinding) {
          let step = 0;
          for (const b of this.candidates(pattern, j)) {
            const matches = this.relation(pattern.formula, j, b);
            term = this.define(`|${name}_${i + 1}.${step++}|`, sort, ite(and(b.guard, matches), `(store ${term} ${b.term} ${j + 1})`, term));
          }
        } else term = ite(this.pattern(pattern.formula, j), `${j + 1}`, term);
      }
      previous = this.define(`|${name}_${i + 1}|`, sort, term);
      result[i] = previous;
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  /**
   * G[j] (0-based j, with G[n] = true) abbreviates ∧_{b ≥ j} (ψb(e_b) ⇒ ∨_{j ≤ c < b} ψ'(e_c)),
   * by G[j] = ¬ψb(e_j) ∧ (ψ'(e_j) ∨ G[j+1]); per binding when the statement has variables (an
   * array that is true for the bindings still clear of ψb).
   */
  private clearFrom(resolve: CheckedPattern, bad: CheckedPattern, perBinding: boolean): string[] {
    const cacheKey = `g:${perBinding}`;
    const cached = this.runningCache.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = this.fresh("G");
    this.definitions.push(comment(`${name}_j abbreviates: from e_j on, no bad event comes before a resolving one`));
    const result = new Array<string>(this.n + 1);
    if (!perBinding) {
      result[this.n] = "true";
      for (let j = this.n - 1; j >= 0; j--) {
        const term = and(not(this.pattern(bad.formula, j)), or(this.pattern(resolve.formula, j), result[j + 1]!));
        result[j] = this.define(`|${name}_${j + 1}|`, "Bool", term);
      }
    } else {
      const sort = `(Array ${this.bindingSort()} Bool)`;
      const constant = (value: boolean) => `((as const ${sort}) ${value})`;
      result[this.n] = constant(true);
      for (let j = this.n - 1; j >= 0; j--) {
        // First the resolutions make bindings clear, then bad events make them dirty: ¬ψb ∧ (ψ' ∨ G).
        // Every intermediate array is named, so that each step mentions the previous one by name:
        // written inline, the `ite` would repeat it and the term would double with every binding.
        let term = result[j + 1]!;
        let step = 0;
        const named = (next: string) => this.define(`|${name}_${j + 1}.${step++}|`, sort, next);
        if (resolve.variables.length === 0) term = named(ite(this.pattern(resolve.formula, j), constant(true), term));
        else for (const b of this.candidates(resolve, j)) term = named(ite(and(b.guard, this.relation(resolve.formula, j, b)), `(store ${term} ${b.term} true)`, term));
        if (bad.variables.length === 0) term = named(ite(this.pattern(bad.formula, j), constant(false), term));
        else for (const b of this.candidates(bad, j)) term = named(ite(and(b.guard, this.relation(bad.formula, j, b)), `(store ${term} ${b.term} false)`, term));
        result[j] = this.define(`|${name}_${j + 1}|`, sort, term);
      }
    }
    this.runningCache.set(cacheKey, result);
    return result;
  }

  // ---- patterns and bodies at one event ----------------------------------------------------

  private readonly patternIds = new Map<CheckedPattern, number>();
  private patternId(pattern: CheckedPattern): number {
    let id = this.patternIds.get(pattern);
    if (id === undefined) this.patternIds.set(pattern, (id = this.patternIds.size));
    return id;
  }

  private bindingSort(): string {
    return this.statement.variables.length > 1 ? TUPLE_SORT : VALUE_SORT;
  }

  /**
   * The candidate bindings of a pattern at e_i: per variable, the values of e_i at every place the
   * pattern binds it (`k = $x`, one per index below the longest list under k, guarded by the value
   * existing) and the bound values a `k contains $x` holds for on e_i (ground facts); the product
   * over the statement's variables. Every binding ν with ψ(e_i, ν) is among them, so a condition
   * over "the bindings of e_i" is the same over the candidates with ψ(e_i, ν) as a premise.
   */
  private candidates(pattern: CheckedPattern, i: number): BindingTerm[] {
    const position = this.events[i]!.position;
    let partial: { guards: string[]; parts: string[] }[] = [{ guards: [], parts: [] }];
    for (const uses of this.usesByVariable(pattern)) {
      const options: { guard?: string; term: string }[] = [];
      for (const atom of uses) {
        if (atom.kind === "keyBind") {
          const facts = this.facts.keys.get(placeId(atom.subject, atom.key))!;
          for (let j = 0; j < facts.maxCount; j++) options.push({ guard: `(< ${j} (${facts.countFunction} ${position}))`, term: `(${facts.valueFunction} ${position} ${j})` });
        } else {
          for (const value of this.facts.contains.get(atom)!.holding.get(position) ?? []) options.push({ term: value });
        }
      }
      const next: typeof partial = [];
      for (const prefix of partial) {
        for (const option of options) next.push({ guards: option.guard === undefined ? prefix.guards : [...prefix.guards, option.guard], parts: [...prefix.parts, option.term] });
      }
      partial = next;
    }
    return partial.map(({ guards, parts }) => ({
      guard: and(...guards),
      term: parts.length === 1 ? parts[0]! : `(tuple ${parts.join(" ")})`,
      parts,
    }));
  }

  private readonly uses = new Map<CheckedPattern, VariableAtom[][]>();

  /** Per statement variable, in order, the atoms of a pattern that use it: found once per pattern. */
  private usesByVariable(pattern: CheckedPattern): VariableAtom[][] {
    let uses = this.uses.get(pattern);
    if (uses === undefined) {
      const atoms = variableAtoms(pattern.formula);
      uses = this.statement.variables.map((variable) => atoms.filter((atom) => atom.variable === variable));
      this.uses.set(pattern, uses);
    }
    return uses;
  }

  /**
   * ψ(e_i, b): the pattern on e_i under a binding. `k = $x` is b's value for x being one of e_i's
   * values at k; `k contains $x` is the ground relation of the fact base; every other atom is its
   * ground outcome.
   */
  private relation(formula: Formula, i: number, b: BindingTerm): string {
    const position = this.events[i]!.position;
    switch (formula.kind) {
      case "keyBind": {
        const facts = this.facts.keys.get(placeId(formula.subject, formula.key))!;
        const value = b.parts[this.statement.variables.indexOf(formula.variable)]!;
        return orAll(
          Array.from({ length: facts.maxCount }, (_, j) => and(`(< ${j} (${facts.countFunction} ${position}))`, eq(`(${facts.valueFunction} ${position} ${j})`, value))),
        );
      }
      case "keyContains":
        return `(${this.facts.contains.get(formula)!.symbol} ${position} ${b.parts[this.statement.variables.indexOf(formula.variable)]!})`;
      case "and":
        return and(...formula.operands.map((o) => this.relation(o, i, b)));
      case "or":
        return or(...formula.operands.map((o) => this.relation(o, i, b)));
      case "not":
        return not(this.relation(formula.operand, i, b));
      default:
        return this.pattern(formula, i);
    }
  }

  private readonly temporalCache = new Map<Formula, string[]>();

  /** Θ(e_i) for a temporal body (Figure 5's foot, second row). */
  private body(formula: Formula, i: number): string {
    switch (formula.kind) {
      case "and":
        return and(...formula.operands.map((o) => this.body(o, i)));
      case "or":
        return or(...formula.operands.map((o) => this.body(o, i)));
      case "not":
        return not(this.body(formula.operand, i));
      case "once":
      case "eventually": {
        const before = formula.kind === "once";
        const range = this.temporalRange(formula, i);
        if (this.encoding === "literal") return orAll(indices(range.from, range.to).map((j) => this.body(formula.operand, j)));
        if (formula.within === undefined) return this.temporalSummary(formula, before)[i]!;
        // The nearest operand event before (after) e_i is in the window exactly when the windowed disjunction is true.
        const nearest = this.nearestOperand(formula, before)[i]!;
        return before ? `(>= ${nearest} ${range.from + 1})` : `(<= ${nearest} ${range.to})`;
      }
      default:
        return this.pattern(formula, i);
    }
  }

  /**
   * The events (0-based, `to` exclusive) `once Θ` or `eventually Θ` looks at from e_i: the earlier
   * (later) ones, and with a window d, those at most d before (after) e_i in time, a ground fact.
   */
  private temporalRange(formula: TemporalFormula, i: number): { from: number; to: number } {
    const within = formula.within;
    if (formula.kind === "once") {
      let from = within === undefined ? 0 : i;
      if (within !== undefined) while (from > 0 && this.time(i) - this.time(from - 1) <= within) from--;
      return { from, to: i };
    }
    let to = within === undefined ? this.n : i + 1;
    if (within !== undefined) while (to < this.n && this.time(to) - this.time(i) <= within) to++;
    return { from: i + 1, to };
  }

  /**
   * L[i] abbreviates the position (1-based) of the nearest e_j ≺ e_i where the operand holds (0 if
   * none), for `once[d]`; for `eventually[d]`, of the nearest e_j ≻ e_i (n + 1 if none).
   */
  private nearestOperand(formula: TemporalFormula, before: boolean): string[] {
    const cached = this.temporalCache.get(formula);
    if (cached !== undefined) return cached;
    for (let j = 0; j < this.n; j++) this.body(formula.operand, j);
    const name = this.fresh(before ? "L" : "M");
    this.definitions.push(comment(`${name}_i abbreviates the position of the nearest e_j ${before ? "≺" : "≻"} e_i where the operand holds (${before ? 0 : this.n + 1} if none)`));
    const result = new Array<string>(this.n);
    let previous = before ? "0" : `${this.n + 1}`;
    const order = before ? indices(0, this.n) : indices(0, this.n).reverse();
    for (const i of order) {
      const neighbour = before ? i - 1 : i + 1;
      const term = neighbour < 0 || neighbour >= this.n ? previous : ite(this.body(formula.operand, neighbour), `${neighbour + 1}`, previous);
      previous = this.define(`|${name}_${i + 1}|`, "Int", term);
      result[i] = previous;
    }
    this.temporalCache.set(formula, result);
    return result;
  }

  /** T[i] abbreviates ∨_{j < i} Θ(e_j) for `once Θ`, or ∨_{j > i} Θ(e_j) for `eventually Θ`. */
  private temporalSummary(formula: Extract<Formula, { kind: "once" | "eventually" }>, before: boolean): string[] {
    const cached = this.temporalCache.get(formula);
    if (cached !== undefined) return cached;
    // Inner summaries are defined first, so that every definition only uses earlier ones.
    for (let j = 0; j < this.n; j++) this.body(formula.operand, j);
    const name = this.fresh(before ? "O" : "E");
    this.definitions.push(comment(`${name}_i abbreviates the disjunction of the operand over e_j ${before ? "≺" : "≻"} e_i`));
    const result = new Array<string>(this.n);
    let previous = "false";
    const order = before ? indices(0, this.n) : indices(0, this.n).reverse();
    for (const i of order) {
      const neighbour = before ? i - 1 : i + 1;
      const term = neighbour < 0 || neighbour >= this.n ? "false" : or(previous, this.body(formula.operand, neighbour));
      previous = this.define(`|${name}_${i + 1}|`, "Bool", term);
      result[i] = previous;
    }
    this.temporalCache.set(formula, result);
    return result;
  }

  /** ψ(e_i): the pattern's predicate on one event, over the fact base's symbols. */
  private pattern(formula: Formula, i: number): string {
    const position = this.events[i]!.position;
    switch (formula.kind) {
      case "action":
      case "status":
      case "keyIn":
      case "keyMatch":
      case "keyRegex":
        // An atom is a ground fact of ⟦τ⟧: its outcome on e_i, decided by the engine's atom module.
        return `(${this.facts.atoms.get(formula)!} ${position})`;
      case "keyBind":
      case "keyContains":
        throw new Error("internal error: an atom with a variable is lowered with a binding");
      case "and":
        return and(...formula.operands.map((o) => this.pattern(o, i)));
      case "or":
        return or(...formula.operands.map((o) => this.pattern(o, i)));
      case "not":
        return not(this.pattern(formula.operand, i));
      case "once":
      case "eventually":
        return this.body(formula, i);
    }
  }
}

function indices(from: number, to: number): number[] {
  const result: number[] = [];
  for (let i = from; i < to; i++) result.push(i);
  return result;
}


/**
 * A standalone SMT-LIB 2.6 script for one statement, for re-checking with any solver: `unsat`
 * means the trace breaks the statement, and `(get-unsat-core)` names the offending events' literals.
 */
export function renderSmtLib(statement: CheckedStatement, events: readonly TraceEvent[], options: LowerOptions = {}): string {
  if (statement.scope !== undefined) return renderScoped(statement, statement.scope, events, options);
  const query = lowerStatement(statement, events, options);
  const header = [
    comment(`Vigil: policy ${statement.policy}, rule ${statement.name} (${statement.form})`),
    ...(statement.doc !== undefined ? statement.doc.split("\n").map((line) => comment(`/// ${line}`)) : []),
    comment("unsat ⇔ the trace breaks the rule; the unsat core's r_i name the offending events e_i"),
    "(set-option :produce-unsat-cores true)",
  ];
  const literals = query.conditions.map((c) => c.literal).join(" ");
  return [...header, query.body.trimEnd(), `(check-sat-assuming (${literals}))`, "(get-unsat-core)", ""].join("\n");
}

/**
 * A scoped statement's scripts: one per judged stretch (the stretches are computed outside the
 * solver, as the decider does), each over the stretch's events renumbered from 1, with the places
 * they have in the whole run in a comment.
 */
function renderScoped(statement: CheckedStatement, scope: CheckedScope, events: readonly TraceEvent[], options: LowerOptions): string {
  const { scope: _scope, ...unscoped } = statement;
  const scripts = scopeStretches(scope, events).flatMap((stretch) => {
    if (!stretch.judged || stretch.events.length === 0) return [];
    const first = stretch.events[0]!.position;
    const last = stretch.events[stretch.events.length - 1]!.position;
    const renumbered = stretch.events.map((event, index) => ({ ...event, position: index + 1 }));
    return [[comment(`scope ${scope.kind}: the stretch of events ${first}–${last}, numbered 1–${renumbered.length} below (event i is event ${first} + i − 1 of the run)`), renderSmtLib(unscoped as CheckedStatement, renumbered, options)].join("\n")];
  });
  if (scripts.length === 0) return `${comment(`Vigil: policy ${statement.policy}, rule ${statement.name}: no stretch of the run is judged under its scope (${scope.kind}); it holds`)}\n`;
  return scripts.join("\n(reset)\n");
}
