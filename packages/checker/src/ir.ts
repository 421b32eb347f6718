import type { Span } from "@vigil/diagnostics";
import type { Form, RuleResponse, ScopeKind } from "@vigil/syntax";
import type { JsonValue, PathSegment } from "@vigil/trace";

/**
 * The checked form of a policy, which both decision procedures consume. Named patterns are
 * inlined, `implies` is desugared (Θ ⇒ Θ' ≡ ¬(Θ ∧ ¬Θ')), every name is resolved, every wildcard
 * is known to compile, and the variable discipline holds. A statement appears here only if it
 * checked without errors.
 *
 * This module is also the package's `@vigil/checker/ir` entry: the engines import its helpers from
 * there, so that a process that only runs checked statements (the Claude Code hook, reading its
 * policy from the database) does not load the checker and the parser. It imports types only.
 */
export interface CheckedProgram {
  readonly policies: readonly CheckedPolicy[];
}

export interface CheckedPolicy {
  readonly name: string;
  readonly doc?: string;
  readonly span: Span;
  readonly statements: readonly CheckedStatement[];
  /**
   * The policy's `read_only` pattern (a one-event formula with no variable): the calls a run
   * quarantined by one of its rules may still make. Absent when the policy declares none.
   */
  readonly readOnly?: Formula;
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
  | KeyRegexAtom
  | KeyContainsAtom
  | KeyCompareAtom
  | KeyCountAtom
  | StatusAtom
  | { readonly kind: "and"; readonly operands: readonly Formula[]; readonly span: Span }
  | { readonly kind: "or"; readonly operands: readonly Formula[]; readonly span: Span }
  | { readonly kind: "not"; readonly operand: Formula; readonly span: Span }
  | TemporalFormula;

/**
 * `once Θ`: Θ held at some strictly earlier event; `eventually Θ`: at some strictly later one. With
 * `within` (`once[5m]`), that event is at most `within` milliseconds away in time.
 */
export interface TemporalFormula {
  readonly kind: "once" | "eventually";
  readonly operand: Formula;
  /** The window in milliseconds; absent: any distance. */
  readonly within?: number;
  readonly span: Span;
}

/** a(e) ∈ α. Actions outside Σ are kept: they simply never match (closed world). */
export interface ActionAtom {
  readonly kind: "action";
  readonly span: Span;
  readonly actions: readonly string[];
}

/**
 * Where a key path leads: into the event's arguments e[k], or into its output o(e). In the output,
 * the empty path is the output's text and a longer one leads into the JSON object the text holds
 * (no values when it holds none, or when the observation cut it). A key path (`key` below) is a
 * list of segments: names (strings) and, after the first, list indexes (numbers: `argv.0` is
 * `["argv", 0]`), read by the trace's `valuesAtPath`.
 */
export type Subject = "args" | "output";

/**
 * Which values under a key path a condition on the key asks of (`every` on the atoms below that
 * carry it): absent, some value satisfies it (the paper's e[k] on a list, and `some(KEY)`); `every`,
 * the key has a value and every value satisfies it (`every(KEY)`).
 */
export interface Quantified {
  readonly every?: true;
}

/** e[k] ∈ S: some value under the key path is in the set. */
export interface KeyInAtom extends Quantified {
  readonly kind: "keyIn";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly values: readonly { readonly key: string; readonly value: JsonValue }[];
}

/** A comparison of exact decimals. */
export type Comparison = "<" | "<=" | ">" | ">=" | "=" | "!=";

/**
 * `KEY OP N`: some value under the key path is a number, or a string that spells a JSON number, and
 * compares so with N as exact decimals (`!=` too needs a number: a missing key or a text is not
 * `!= 5`). `value` is N's canonical decimal text (`formatDecimal`).
 */
export interface KeyCompareAtom extends Quantified {
  readonly kind: "keyCompare";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly op: Comparison;
  readonly value: string;
}

/** `count(KEY) OP N`: the number of values under the key path (0 when it has none) compares so with N. */
export interface KeyCountAtom {
  readonly kind: "keyCount";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly op: Comparison;
  readonly value: string;
}

/** e[k] ≈ p, evaluated outside the solver; `output ~ p` (o(e) ≈ p) is the output's empty path. */
export interface KeyMatchAtom extends Quantified {
  readonly kind: "keyMatch";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly pattern: string;
}

/**
 * k = x. As a condition on one event it holds when the event carries a value under the key; the
 * statement's form relates the values the variable takes in its two patterns.
 */
export interface KeyBindAtom {
  readonly kind: "keyBind";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly variable: string;
}

/** Some text value under the key contains a match of the regular expression; evaluated outside the solver. */
export interface KeyRegexAtom extends Quantified {
  readonly kind: "keyRegex";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  /** The ECMAScript source and flags (`i`, `s`), known to compile to the linear-time engine. */
  readonly source: string;
  readonly flags: string;
}

/**
 * k contains x: some text value under the key contains the text of the value bound to x. It tests
 * a value the statement binds elsewhere and binds nothing itself.
 */
export interface KeyContainsAtom extends Quantified {
  readonly kind: "keyContains";
  readonly span: Span;
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly variable: string;
}

export interface StatusAtom {
  readonly kind: "status";
  readonly span: Span;
  readonly status: "ok" | "error";
}

/** The atoms that use a variable: `k = $x` binds it, `k contains $x` tests it. */
export type VariableAtom = KeyBindAtom | KeyContainsAtom;

/**
 * A pattern operand of a form: its formula, and the statement's variables it uses. The checker's
 * discipline: each variable once in every conjunction, once in every branch of an `or` that uses
 * it, never under `not`; in the first pattern of a binary form (the trigger of `until`) every use
 * binds (`k = $x`).
 */
export interface CheckedPattern {
  readonly formula: Formula;
  /** The variables the pattern uses, sorted by name. */
  readonly variables: readonly string[];
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
      readonly window: Window;
      readonly first: CheckedPattern;
      readonly second: CheckedPattern;
    })
  | (StatementCommon & {
      readonly form: "limit";
      readonly pattern: CheckedPattern;
      readonly measure: LimitMeasure;
      /** The length of the sliding window in milliseconds; absent: the whole run. */
      readonly per?: number;
    })
  | (StatementCommon & {
      readonly form: "until";
      readonly trigger: CheckedPattern;
      readonly resolve: CheckedPattern;
      readonly bad: CheckedPattern;
    })
  | (StatementCommon & { readonly form: "always"; readonly body: Formula });

/**
 * How far `bresp` looks for a response: the next `size` events (`bresp[3]`), or the events at most
 * `size` milliseconds after the trigger (`bresp[5m]`).
 */
export type Window = { readonly unit: "events"; readonly size: number } | { readonly unit: "time"; readonly size: number };

/**
 * What `limit` bounds: how many events match its pattern (at most `maximum`, a whole number), or the
 * sum of the numbers at a key of those events (`of KEY`: at most `maximum`, an exact decimal, as
 * JSON number text). Per binding of its variables, when the pattern binds any.
 */
export type LimitMeasure =
  | { readonly kind: "count"; readonly maximum: number }
  | { readonly kind: "sum"; readonly subject: Subject; readonly key: KeyInAtom["key"]; readonly maximum: string; readonly span: Span };

/** Whether judging a statement reads the times of events: a window of time, or a limit per a time. */
export function needsTime(statement: CheckedStatement): boolean {
  switch (statement.form) {
    case "bresp":
      return statement.window.unit === "time";
    case "limit":
      return statement.per !== undefined;
    case "always":
      return hasTimeWindow(statement.body);
    default:
      return false;
  }
}

/**
 * Where in the run a statement is judged (Dwyer's scopes). `open` and `close` are one-event
 * patterns with no variable. `after`: from the first event matching `open` on. `before`: up to (not
 * including) the first event matching `open`, or the whole run if none does. `between`: each stretch
 * from an event matching `open` (included) to the next matching `close` (excluded); a stretch that
 * never closes is not judged. `afterUntil`: the same, a stretch still open at the end judged too.
 * Each stretch is judged as a trace of its own; witnesses keep their places in the whole run.
 */
export interface CheckedScope {
  readonly kind: ScopeKind;
  readonly open: Formula;
  readonly close?: Formula;
  readonly span: Span;
}

interface StatementCommon {
  readonly form: Form;
  /** Absent: the whole run. */
  readonly scope?: CheckedScope;
  readonly policy: string;
  readonly name: string;
  /** The `///` text of the rule: the natural-language requirement. */
  readonly doc?: string;
  /**
   * What enforcement does with a violation: `block` the call (the default, when the rule names no
   * response), `warn` (let it through and report it), `ask` a person, or contain the run: `halt`
   * it or `quarantine` it (see `readOnly`). It changes no verdict.
   */
  readonly response: RuleResponse;
  /**
   * For a `quarantine` rule, its policy's `read_only` pattern: the calls a run it quarantined may
   * still make. Carried by the rule itself, so that whatever runs the checked statements (the
   * monitor, a hook reading them from the database) has it without the policy.
   */
  readonly readOnly?: Formula;
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

/**
 * A rule's identity, `policy.rule`: how reports, tests and commands name it, and the key of a
 * rule's entry in any table. Names are identifiers (no `.`), so the identity is unambiguous.
 */
export function ruleId(rule: { readonly policy: string; readonly name: string }): string {
  return `${rule.policy}.${rule.name}`;
}

/** Every pattern operand of a statement (none for `always`). */
export function statementPatterns(statement: CheckedStatement): CheckedPattern[] {
  switch (statement.form) {
    case "abs":
    case "limit":
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

/** The atoms of a formula that use a variable, in source order. */
export function variableAtoms(formula: Formula): VariableAtom[] {
  const atoms: VariableAtom[] = [];
  walkFormula(formula, (node) => {
    if (node.kind === "keyBind" || node.kind === "keyContains") atoms.push(node);
  });
  return atoms;
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

/**
 * What a formula uses, as every consumer asks it (the forward machines, the SQL compiler, the
 * symbolic runs, the enforcer's explanations): this is the one definition of each fact. Facts are
 * found once per formula node and kept, since formulas never change and the forward engine asks
 * some of them per event.
 */
interface FormulaFacts {
  /** `once` or `eventually` occurs. */
  readonly temporal: boolean;
  readonly eventually: boolean;
  /** A `once` or `eventually` with a window of time (`once[5m]`) occurs. */
  readonly timeWindow: boolean;
  /** A variable is used: bound (`k = $x`) or tested (`k contains $x`). */
  readonly variables: boolean;
  readonly contains: boolean;
}

const NO_FACTS: FormulaFacts = { temporal: false, eventually: false, timeWindow: false, variables: false, contains: false };
const formulaFacts = new WeakMap<Formula, FormulaFacts>();

function factsOf(formula: Formula): FormulaFacts {
  let facts = formulaFacts.get(formula);
  if (facts === undefined) formulaFacts.set(formula, (facts = findFacts(formula)));
  return facts;
}

function findFacts(formula: Formula): FormulaFacts {
  switch (formula.kind) {
    case "keyBind":
      return { ...NO_FACTS, variables: true };
    case "keyContains":
      return { ...NO_FACTS, variables: true, contains: true };
    case "and":
    case "or": {
      const operands = formula.operands.map(factsOf);
      return {
        temporal: operands.some((facts) => facts.temporal),
        eventually: operands.some((facts) => facts.eventually),
        timeWindow: operands.some((facts) => facts.timeWindow),
        variables: operands.some((facts) => facts.variables),
        contains: operands.some((facts) => facts.contains),
      };
    }
    case "not":
      return factsOf(formula.operand);
    case "once":
    case "eventually": {
      const operand = factsOf(formula.operand);
      return {
        ...operand,
        temporal: true,
        eventually: operand.eventually || formula.kind === "eventually",
        timeWindow: operand.timeWindow || formula.within !== undefined,
      };
    }
    default:
      return NO_FACTS;
  }
}

/** Whether `once` or `eventually` occurs in a formula: a temporal body, not a one-event pattern. */
export function isTemporal(formula: Formula): boolean {
  return factsOf(formula).temporal;
}

/** Whether `eventually` occurs in a formula: a body that looks at later events. */
export function usesEventually(formula: Formula): boolean {
  return factsOf(formula).eventually;
}

/** Whether a `once` or `eventually` of a formula has a window of time, so that judging it reads the events' times. */
export function hasTimeWindow(formula: Formula): boolean {
  return factsOf(formula).timeWindow;
}

/** Whether a formula uses a variable: binds it (`k = $x`) or tests it (`k contains $x`). */
export function usesVariables(formula: Formula): boolean {
  return factsOf(formula).variables;
}

/** Whether a formula tests a variable with `k contains $x` (its bindings can then be tested, not listed). */
export function usesContains(formula: Formula): boolean {
  return factsOf(formula).contains;
}

/** Whether a formula binds the variable (`k = $x`) somewhere. */
export function bindsVariable(formula: Formula, variable: string): boolean {
  return variableAtoms(formula).some((atom) => atom.kind === "keyBind" && atom.variable === variable);
}
