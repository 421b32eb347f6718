import type { CheckedPattern, CheckedScope, CheckedStatement, Formula, LimitMeasure } from "@vigil/checker";
import { bindsVariable } from "@vigil/checker";
import { eventAmount, formatDecimal, type Decimal } from "@vigil/engine";
import { decimalOf } from "@vigil/trace";
import { and, eq, implies, ite, not, or } from "./smt-terms.js";
import { SymbolicPatterns } from "./symbolic-patterns.js";

/**
 * The SMT encoding of statements over a symbolic run of `length` events of a universe (Figure 5 read
 * over positions, as `test/figure5.ts` reads it over a trace): each statement's violation at each
 * position is a term (`violationAt`), so a query asks for runs where statements hold or break. The
 * events' constants are `SymbolicEvents`', and the patterns on them `SymbolicPatterns`'; here are
 * the scopes' stretches and the forms.
 */
export class SymbolicRun extends SymbolicPatterns {
  /** ψ(e_j) with the binding where the pattern has variables. */
  private matches(pattern: CheckedPattern, variables: readonly string[], j: number, binding: readonly string[]): string {
    return pattern.variables.length === 0 ? this.pattern(pattern.formula, j) : this.relation(pattern.formula, variables, j, binding);
  }

  /**
   * Where a scope puts each event: `inside[i]` (in a stretch), `starts[i]` (opens one), and
   * `judged[i]` (in a stretch that is judged), as `scopeStretches` reads the run.
   */
  private stretches(scope: CheckedScope): { inside: string[]; starts: string[]; judged: string[] } {
    const n = this.length;
    const q = (i: number) => this.pattern(scope.open, i);
    const r = (i: number) => (scope.close === undefined ? "false" : this.pattern(scope.close, i));
    const inside: string[] = [];
    const starts: string[] = [];
    const judged: string[] = [];
    if (scope.kind === "after" || scope.kind === "before") {
      for (let i = 1; i <= n; i++) {
        const seen = or(...Array.from({ length: i }, (_, k) => q(k + 1)));
        if (scope.kind === "after") {
          inside.push(seen);
          starts.push(and(q(i), not(or(...Array.from({ length: i - 1 }, (_, k) => q(k + 1))))));
        } else {
          inside.push(not(seen));
          starts.push(i === 1 ? "true" : "false");
        }
        judged.push(inside[i - 1]!);
      }
      return { inside, starts, judged };
    }
    // between / after-until: a stretch opens at a Q read outside one, and ends before the next R.
    let open = "false";
    for (let i = 1; i <= n; i++) {
      starts.push(and(not(open), q(i)));
      inside.push(ite(open, not(r(i)), q(i)));
      open = inside[i - 1]!;
    }
    for (let i = 1; i <= n; i++) {
      if (scope.kind === "afterUntil") {
        judged.push(inside[i - 1]!);
        continue;
      }
      // Judged when the stretch is closed: some later event ends it (inside before it, an R, not a start).
      const closes: string[] = [];
      for (let m = i + 1; m <= n; m++) {
        const allInside = and(...Array.from({ length: m - i }, (_, k) => inside[i + k - 1]!), ...Array.from({ length: m - i - 1 }, (_, k) => not(starts[i + k]!)));
        closes.push(and(allInside, not(inside[m - 1]!), not(starts[m - 1]!)));
      }
      judged.push(and(inside[i - 1]!, or(...closes)));
    }
    return { inside, starts, judged };
  }

  private readonly scopeCache = new Map<CheckedScope, { inside: string[]; starts: string[]; judged: string[] }>();

  /** Whether e_j is in the same judged stretch as e_i (always, without a scope). */
  private same(statement: CheckedStatement, i: number, j: number): string {
    if (statement.scope === undefined) return "true";
    const { inside, starts } = this.scope(statement.scope);
    const [from, to] = i < j ? [i, j] : [j, i];
    return and(...Array.from({ length: to - from + 1 }, (_, k) => inside[from + k - 1]!), ...Array.from({ length: to - from }, (_, k) => not(starts[from + k]!)));
  }

  private judged(statement: CheckedStatement, i: number): string {
    return statement.scope === undefined ? "true" : this.scope(statement.scope).judged[i - 1]!;
  }

  private scope(scope: CheckedScope) {
    let known = this.scopeCache.get(scope);
    if (known === undefined) this.scopeCache.set(scope, (known = this.stretches(scope)));
    return known;
  }

  /** ¬R_φ(e_i): the statement is broken at event i. */
  violationAt(s: CheckedStatement, i: number): string {
    const n = this.length;
    const range = (from: number, to: number) => Array.from({ length: Math.max(0, to - from + 1) }, (_, k) => from + k);
    const some = (from: number, to: number, test: (j: number) => string) => or(...range(from, to).map((j) => and(this.same(s, i, j), test(j))));
    const all = (from: number, to: number, test: (j: number) => string) => and(...range(from, to).map((j) => implies(this.same(s, i, j), test(j))));
    /** ∃ν ∈ bindings of `first` at e_i: ¬body(ν). */
    const broken = (first: CheckedPattern, body: (binding: readonly string[]) => string): string => {
      if (first.variables.length === 0) return and(this.pattern(first.formula, i), not(body([])));
      return or(...this.candidates(first, s.variables, i).map((c) => and(c.guard, this.relation(first.formula, s.variables, i, c.terms), not(body(c.terms)))));
    };
    let violated: string;
    switch (s.form) {
      case "abs":
        violated = this.pattern(s.pattern.formula, i);
        break;
      case "always":
        violated = not(this.body(s, s.body, i));
        break;
      case "prec":
        violated = broken(s.first, (b) => some(1, i - 1, (j) => this.matches(s.second, s.variables, j, b)));
        break;
      case "resp":
        violated = broken(s.first, (b) => some(i + 1, n, (j) => this.matches(s.second, s.variables, j, b)));
        break;
      case "bresp": {
        const window = s.window;
        const inWindow = (j: number) => (window.unit === "events" ? (j - i <= window.size ? "true" : "false") : `(<= (- ${this.time(j)} ${this.time(i)}) ${window.size})`);
        violated = broken(s.first, (b) => some(i + 1, n, (j) => and(inWindow(j), this.matches(s.second, s.variables, j, b))));
        break;
      }
      case "rslv":
        violated = broken(s.first, (b) =>
          or(this.matches(s.second, s.variables, i, b), some(i + 1, n, (j) => or(this.matches(s.second, s.variables, j, b), this.matches(s.first, s.variables, j, b)))),
        );
        break;
      case "until":
        violated = broken(s.trigger, (b) =>
          all(i + 1, n, (k) => implies(this.matches(s.bad, s.variables, k, b), or(...range(i + 1, k - 1).map((c) => this.matches(s.resolve, s.variables, c, b))))),
        );
        break;
      case "limit":
        violated = broken(s.pattern, (b) => this.withinLimit(s, s.measure, i, b));
        break;
    }
    return and(this.judged(s, i), violated);
  }

  /** a(e_i) is defined and Σ_{e_j ≼ e_i, same stretch, ψ(e_j, ν), in the window} a(e_j) ≤ M. */
  private withinLimit(s: Extract<CheckedStatement, { form: "limit" }>, measure: LimitMeasure, i: number, b: readonly string[]): string {
    const terms: string[] = [];
    for (let j = 1; j <= i; j++) {
      const inWindow = s.per === undefined ? "true" : `(< (- ${this.time(i)} ${this.time(j)}) ${s.per})`;
      const counted = and(this.same(s, i, j), inWindow, this.matches(s.pattern, s.variables, j, b));
      terms.push(ite(counted, this.amount(measure, j), measure.kind === "count" ? "0" : "0.0"));
    }
    const total = terms.length === 1 ? terms[0]! : `(+ ${terms.join(" ")})`;
    const maximum = measure.kind === "count" ? String(measure.maximum) : real(decimalOf(measure.maximum)!);
    return and(this.amountDefined(measure, i), `(<= ${total} ${maximum})`);
  }

  /** a(e_j): one for a count; for a sum, the amount at the key on the candidate (the engine's `eventAmount`). */
  private amount(measure: LimitMeasure, j: number): string {
    if (measure.kind === "count") return "1";
    const root = this.placeAt(measure.subject, measure.key).root;
    let term = "0.0";
    for (const candidate of this.candidatesOf(root)) {
      const amount = eventAmount(this.single(root, candidate), measure.subject, measure.key);
      if (amount !== undefined) term = ite(eq(this.root(root, j), String(candidate)), real(amount), term);
    }
    return term;
  }

  private amountDefined(measure: LimitMeasure, j: number): string {
    if (measure.kind === "count") return "true";
    const root = this.placeAt(measure.subject, measure.key).root;
    return this.oneOf(root, j, this.candidatesOf(root).filter((candidate) => eventAmount(this.single(root, candidate), measure.subject, measure.key) !== undefined));
  }

  /** Θ(e_i) of an `always` body, its `once` and `eventually` over the same stretch. */
  private body(s: CheckedStatement, formula: Formula, i: number): string {
    switch (formula.kind) {
      case "and":
        return and(...formula.operands.map((operand) => this.body(s, operand, i)));
      case "or":
        return or(...formula.operands.map((operand) => this.body(s, operand, i)));
      case "not":
        return not(this.body(s, formula.operand, i));
      case "once":
      case "eventually": {
        const js = formula.kind === "once" ? Array.from({ length: i - 1 }, (_, k) => k + 1) : Array.from({ length: this.length - i }, (_, k) => i + 1 + k);
        const within = formula.within;
        return or(
          ...js.map((j) => {
            const near = within === undefined ? "true" : formula.kind === "once" ? `(<= (- ${this.time(i)} ${this.time(j)}) ${within})` : `(<= (- ${this.time(j)} ${this.time(i)}) ${within})`;
            return and(this.same(s, i, j), near, this.body(s, formula.operand, j));
          }),
        );
      }
      default:
        return this.pattern(formula, i);
    }
  }

  private freeConstants = 0;

  /**
   * The pattern holds on e_i for some binding, in a judged stretch: the statement is triggered
   * there. A variable the pattern only tests (`contains $x`) takes its value elsewhere: it is a
   * fresh constant, any bound value (its index; no other index satisfies an atom). So the term is
   * existential: it may be asserted, or be a disjunct of what is asserted, never negated.
   */
  matchesAt(statement: CheckedStatement, pattern: CheckedPattern, i: number): string {
    if (pattern.variables.length === 0) return and(this.judged(statement, i), this.pattern(pattern.formula, i));
    const tested = statement.variables.filter((variable) => pattern.variables.includes(variable) && !bindsVariable(pattern.formula, variable));
    const free = new Map<string, string>();
    for (const variable of tested) {
      const name = `free_${++this.freeConstants}`;
      this.declarations.push(`(declare-const ${name} Int)`);
      free.set(variable, name);
    }
    const given = statement.variables.filter((variable) => !tested.includes(variable));
    const cases = this.candidates(pattern, given, i).map((c) => {
      const terms = statement.variables.map((variable) => free.get(variable) ?? c.terms[given.indexOf(variable)] ?? "0");
      return and(c.guard, this.relation(pattern.formula, statement.variables, i, terms));
    });
    return and(this.judged(statement, i), or(...cases));
  }

  /** The statement holds on the whole run. */
  holds(statement: CheckedStatement): string {
    return not(or(...Array.from({ length: this.length }, (_, k) => this.violationAt(statement, k + 1))));
  }
}

/** An exact decimal as an SMT real. */
function real(value: Decimal): string {
  const text = formatDecimal(value);
  return text.includes(".") ? text : `${text}.0`;
}
