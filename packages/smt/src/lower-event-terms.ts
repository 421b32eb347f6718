import type { CheckedPattern, CheckedStatement, Formula, TemporalFormula } from "@vigil/checker";
import { variableAtoms, type VariableAtom } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { placeId, TUPLE_SORT, VALUE_SORT, type FactBase } from "./fact-base.js";
import type { Encoding, TextBudget } from "./smt-query.js";
import { and, comment, eq, ite, not, or, orAll } from "./smt-terms.js";

/**
 * A candidate binding of the statement's variables at one event: a guard (the values exist), the
 * term (a Value, or a Binding tuple), and the term of each variable's value in the statement's order.
 */
export interface BindingTerm {
  readonly guard: string;
  readonly term: string;
  readonly parts: readonly string[];
}

/**
 * The terms of Figure 5 at one event, over the fact base's symbols: ψ(e_i), ψ(e_i, b) under a
 * candidate binding, and Θ(e_i) of a temporal body. Every abbreviation the lowering writes goes to
 * `definitions` through `define`, in the order it is made, so that each uses only earlier ones; a
 * temporal body's `once` and `eventually` are summarized here (in the shared encoding), since ψ
 * and Θ call each other. The running summaries of the forms' disjunctions are `RunningSummaries`',
 * and each form's condition R_φ(e) is `Lowering`'s.
 */
export abstract class EventTerms {
  readonly definitions: string[] = [];
  protected readonly events: readonly TraceEvent[];
  protected readonly n: number;
  private definitionCounter = 0;

  constructor(
    protected readonly statement: CheckedStatement,
    protected readonly facts: FactBase,
    protected readonly encoding: Encoding,
    protected readonly windowSpelledOutUpTo: number,
    protected readonly budget: TextBudget,
  ) {
    this.events = facts.events;
    this.n = this.events.length;
  }

  /** The time of e_i (the decider refuses a run without times before lowering a statement that reads them). */
  protected time(i: number): number {
    return this.events[i]!.time ?? 0;
  }

  /** Names `term` (of `sort`) `name` among the definitions, its text counted against the budget. */
  protected define(name: string, sort: string, term: string): string {
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

  /** A new name for a family of abbreviations (`D0`, `P1`, …), numbered in the order they are made. */
  protected fresh(prefix: string): string {
    return `${prefix}${this.definitionCounter++}`;
  }

  /** ψ'(e_j, b): event j matches the pattern with the given binding (if any). */
  protected matchAt(pattern: CheckedPattern, binding: BindingTerm | undefined, j: number): string {
    if (binding === undefined || pattern.variables.length === 0) return this.pattern(pattern.formula, j);
    return this.relation(pattern.formula, j, binding);
  }

  private readonly patternIds = new Map<CheckedPattern, number>();
  protected patternId(pattern: CheckedPattern): number {
    let id = this.patternIds.get(pattern);
    if (id === undefined) this.patternIds.set(pattern, (id = this.patternIds.size));
    return id;
  }

  protected bindingSort(): string {
    return this.statement.variables.length > 1 ? TUPLE_SORT : VALUE_SORT;
  }

  /**
   * The candidate bindings of a pattern at e_i: per variable, the values of e_i at every place the
   * pattern binds it (`k = $x`, one per index below the longest list under k, guarded by the value
   * existing) and the bound values a `k contains $x` holds for on e_i (ground facts); the product
   * over the statement's variables. Every binding ν with ψ(e_i, ν) is among them, so a condition
   * over "the bindings of e_i" is the same over the candidates with ψ(e_i, ν) as a premise.
   */
  protected candidates(pattern: CheckedPattern, i: number): BindingTerm[] {
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
  protected relation(formula: Formula, i: number, b: BindingTerm): string {
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
  protected body(formula: Formula, i: number): string {
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
  protected pattern(formula: Formula, i: number): string {
    const position = this.events[i]!.position;
    switch (formula.kind) {
      case "action":
      case "status":
      case "keyIn":
      case "keyMatch":
      case "keyRegex":
      case "keyCompare":
      case "keyCount":
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

/** The integers from `from` up to `to`, exclusive. */
export function indices(from: number, to: number): number[] {
  const result: number[] = [];
  for (let i = from; i < to; i++) result.push(i);
  return result;
}
