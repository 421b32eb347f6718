import type { CheckedPattern, LimitMeasure, Window } from "@vigil/checker";
import { decimalOf } from "@vigil/engine";
import { and, andAll, implies, not, or, orAll } from "./smt-terms.js";
import { indices, type BindingTerm } from "./lower-event-terms.js";
import { RunningSummaries } from "./lower-running-summaries.js";

/**
 * A statement's requirement per event, R_φ(e), one case per form of Figure 5 (its rule written
 * beside each), in either encoding: spelled out as in the figure (`literal`), or over the running
 * summaries (`shared`). Each condition's text is charged to the query's budget as it is made.
 */
export class Lowering extends RunningSummaries {
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

  /** R_φ(e) at a position, its text counted against the budget. */
  private charged(position: number, condition: string): { position: number; condition: string } {
    this.budget.charge(condition.length);
    return { position, condition };
  }
}
