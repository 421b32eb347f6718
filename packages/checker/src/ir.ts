import type { Span } from "@vigil/diagnostics";
import type { Form, RuleResponse } from "@vigil/syntax";
import type { JsonValue } from "@vigil/trace";

/**
 * The checked form of a policy, which both decision procedures consume. Named patterns are
 * inlined, `implies` is desugared (Θ ⇒ Θ' ≡ ¬(Θ ∧ ¬Θ')), every name is resolved, every wildcard
 * is known to compile, and the variable discipline holds. A statement appears here only if it
 * checked without errors.
 */
export interface CheckedProgram {
  readonly policies: readonly CheckedPolicy[];
}

export interface CheckedPolicy {
  readonly name: string;
  readonly doc?: string;
  readonly span: Span;
  readonly statements: readonly CheckedStatement[];
}

/**
 * A formula over one event (a pattern ψ), or, under `always`, a temporal body Θ that may also use
 * `once` and `eventually`. Atoms follow Figure 5's foot; `or` and `not` inside patterns are the
 * documented extension.
 *
 * Every node keeps the span of the source it came from: a node inlined from a named pattern keeps
 * the span in the pattern's declaration, and the nodes `implies` desugars to keep the span of the
 * `implies` expression (the negated consequent, the consequent's).
 */
export type Formula =
  | ActionAtom
  | KeyInAtom
  | KeyMatchAtom
  | KeyBindAtom
  | StatusAtom
  | OutputMatchAtom
  | { readonly kind: "and"; readonly operands: readonly Formula[]; readonly span: Span }
  | { readonly kind: "or"; readonly operands: readonly Formula[]; readonly span: Span }
  | { readonly kind: "not"; readonly operand: Formula; readonly span: Span }
  | { readonly kind: "once"; readonly operand: Formula; readonly span: Span }
  | { readonly kind: "eventually"; readonly operand: Formula; readonly span: Span };

/** a(e) ∈ α. Actions outside Σ are kept: they simply never match (closed world). */
export interface ActionAtom {
  readonly kind: "action";
  readonly span: Span;
  readonly actions: readonly string[];
}

/** e[k] ∈ S: some value under the key path is in the set. */
export interface KeyInAtom {
  readonly kind: "keyIn";
  readonly span: Span;
  readonly key: readonly string[];
  readonly values: readonly { readonly key: string; readonly value: JsonValue }[];
}

/** e[k] ≈ p, evaluated outside the solver. */
export interface KeyMatchAtom {
  readonly kind: "keyMatch";
  readonly span: Span;
  readonly key: readonly string[];
  readonly pattern: string;
}

/**
 * k = x. As a condition on one event it holds when the event carries a value under the key; the
 * statement's form relates the values the variable takes in its two patterns.
 */
export interface KeyBindAtom {
  readonly kind: "keyBind";
  readonly span: Span;
  readonly key: readonly string[];
  readonly variable: string;
}

export interface StatusAtom {
  readonly kind: "status";
  readonly span: Span;
  readonly status: "ok" | "error";
}

/** o(e) ≈ p, evaluated outside the solver. */
export interface OutputMatchAtom {
  readonly kind: "outputMatch";
  readonly span: Span;
  readonly pattern: string;
}

/** A pattern operand of a form: its formula and, per variable, the key it binds. */
export interface CheckedPattern {
  readonly formula: Formula;
  /** Variable name → the key path it is bound to in this pattern (each variable at most once). */
  readonly bindings: ReadonlyMap<string, readonly string[]>;
  readonly span: Span;
}

export type CheckedStatement =
  | (StatementCommon & { readonly form: "abs"; readonly pattern: CheckedPattern })
  | (StatementCommon & {
      readonly form: "prec" | "resp" | "rslv";
      readonly first: CheckedPattern;
      readonly second: CheckedPattern;
    })
  | (StatementCommon & {
      readonly form: "bresp";
      readonly bound: number;
      readonly first: CheckedPattern;
      readonly second: CheckedPattern;
    })
  | (StatementCommon & {
      readonly form: "until";
      readonly trigger: CheckedPattern;
      readonly resolve: CheckedPattern;
      readonly bad: CheckedPattern;
    })
  | (StatementCommon & { readonly form: "always"; readonly body: Formula });

interface StatementCommon {
  readonly form: Form;
  readonly policy: string;
  readonly name: string;
  /** The `///` text of the rule: the natural-language requirement. */
  readonly doc?: string;
  /**
   * What enforcement does with a violation: `block` the call (the default, when the rule names no
   * response), `warn` (let it through and report it) or `ask` a person. It changes no verdict.
   */
  readonly response: RuleResponse;
  /** What to tell the agent so that it complies, as the rule writes it; absent when none is (or it is empty). */
  readonly remediation?: string;
  /** The span of the whole `rule …` declaration. */
  readonly span: Span;
  /**
   * The statement's variables in a fixed order (sorted by name). A binding of a pattern is a tuple
   * of values in this order.
   */
  readonly variables: readonly string[];
}

/** Every pattern operand of a statement (none for `always`). */
export function statementPatterns(statement: CheckedStatement): CheckedPattern[] {
  switch (statement.form) {
    case "abs":
      return [statement.pattern];
    case "prec":
    case "resp":
    case "rslv":
    case "bresp":
      return [statement.first, statement.second];
    case "until":
      return [statement.trigger, statement.resolve, statement.bad];
    case "always":
      return [];
  }
}

/** Calls `visit` on every node of a formula, parents before children. */
export function walkFormula(formula: Formula, visit: (node: Formula) => void): void {
  visit(formula);
  switch (formula.kind) {
    case "and":
    case "or":
      for (const operand of formula.operands) walkFormula(operand, visit);
      break;
    case "not":
    case "once":
    case "eventually":
      walkFormula(formula.operand, visit);
      break;
    default:
      break;
  }
}
