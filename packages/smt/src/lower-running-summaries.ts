import type { CheckedPattern, LimitMeasure } from "@vigil/checker";
import { eventAmount, formatDecimal, type Decimal } from "@vigil/engine";
import { and, comment, ite, not, or } from "./smt-terms.js";
import { EventTerms, indices, type BindingTerm } from "./lower-event-terms.js";

/**
 * The shared encoding's running summaries: each disjunction, set of bindings, nearest position or
 * sum that Figure 5 writes out per event is named once per position, as a constant (or, for arrays
 * and positions, a macro) defined from the one before it, so that the query is linear in the trace.
 * Each definition is preceded by a comment saying what it abbreviates. A limit's running sums need
 * the measure of each event (`amount`, `counted`), which the literal encoding uses too.
 */
export abstract class RunningSummaries extends EventTerms {
  private readonly runningCache = new Map<string, string[]>();

  /** D[i] abbreviates ∨_{j < i} (or j > i) of ∨_p ψ_p(e_j). */
  protected runningDisjunction(patterns: CheckedPattern[], direction: "before" | "after"): string[] {
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
  protected runningSet(patterns: CheckedPattern[], direction: "before" | "after"): string[] {
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
  protected nearestLater(pattern: CheckedPattern, perBinding: boolean): string[] {
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
  protected clearFrom(resolve: CheckedPattern, bad: CheckedPattern, perBinding: boolean): string[] {
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

  private readonly amounts = new Map<number, Decimal | undefined>();

  /** a(e_i): one for a count, the event's amount for a sum (`eventAmount`, the engine's); undefined when it cannot be counted. */
  protected amount(measure: LimitMeasure, i: number): Decimal | undefined {
    if (measure.kind === "count") return { units: 1n, exponent: 0 };
    if (!this.amounts.has(i)) this.amounts.set(i, eventAmount(this.events[i]!, measure.subject, measure.key));
    return this.amounts.get(i);
  }

  /** A number as the solver reads it: an Int for a count, a Real for a sum. */
  protected numeral(measure: LimitMeasure, value: Decimal): string {
    const text = formatDecimal(value);
    if (measure.kind === "count") return text;
    return text.includes(".") ? text : `${text}.0`;
  }

  /** [ψ(e_j, b)]·a_j: what e_j adds to a limit's sum (nothing when its amount cannot be counted). */
  protected counted(pattern: CheckedPattern, measure: LimitMeasure, binding: BindingTerm | undefined, j: number): string {
    const amount = this.amount(measure, j);
    const zero = this.numeral(measure, { units: 0n, exponent: 0 });
    if (amount === undefined) return zero;
    return ite(this.matchAt(pattern, binding, j), this.numeral(measure, amount), zero);
  }

  /** P[i] abbreviates Σ_{j ≤ i} [ψ(e_j)]·a_j, the running sum of a limit's measure. */
  protected prefixSums(pattern: CheckedPattern, measure: LimitMeasure): string[] {
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
  protected prefixSumsPerBinding(pattern: CheckedPattern, measure: LimitMeasure): string[] {
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
}
