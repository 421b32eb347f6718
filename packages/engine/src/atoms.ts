import { usesContains, usesVariables, type Comparison, type Formula, type Subject } from "@vigil/checker/ir";
import {
  boundValueText,
  compileRegex,
  isRegexProblem,
  searchableText,
  valueKey,
  valuesAtSubject,
  wildcardMatches,
  type JsonValue,
  type PathSegment,
  type TraceEvent,
  addDecimal,
  compareDecimal,
  decimalOf,
  numberOf,
  ZERO,
  type Decimal,
} from "@vigil/trace";
import { junctionTruth, notTruth, Truth, truthOf } from "./truth.js";

/**
 * One meaning per atom. Whether an atom of Figure 5's foot holds on one event, and which values an
 * event binds a variable to, are decided here and nowhere else: the forward engine, the online
 * monitor and the SMT fact base (which asserts each atom's ground outcome per event) all ask this
 * module. The foot, with the documented list extension (a condition on a key holds when it holds for
 * some value under the key, Section "Lists" of docs/semantics.md):
 *
 *   (a ∈ α)(e) ≜ a(e) ∈ α        (k ∈ S)(e) ≜ e[k] ∈ S        (k ~ p)(e) ≜ e[k] ≈ p
 *   (s = ⊤)(e) ≜ s(e) = ⊤        (s = ⊥)(e) ≜ s(e) = ⊥        (o ~ p)(e) ≜ o(e) ≈ p
 *   (k matches r)(e) ≜ some text of e[k] contains a match of r
 *   (k = x)(e, ν) ≜ ν(x) ∈ e[k]  (k contains x)(e, ν) ≜ some text of e[k] contains text(ν(x))
 *   (k ⋈ N)(e) ≜ some value of e[k] is a number n (or a string spelling one) with n ⋈ N, exactly
 *   (count(k) ⋈ N)(e) ≜ |e[k]| ⋈ N, the number of values under k (0 when it has none)
 *
 * With `every` (`every(k) …`), a condition on a key holds when the key has a value and every value
 * under it meets the condition; without it (or with `some`), when some value does.
 *
 * A key path (names, and list indexes after the first: `argv.0`) leads into the arguments or, from
 * `output`, into the output (`valuesAtSubject`, the one definition of what a path reaches). The
 * atoms with a variable are relations between an event and a binding ν: `holdsWith` decides them,
 * and `bindings` enumerates the ν a binding pattern gives an event. As a condition on one event
 * alone, `k = x` holds when e has a value at k.
 *
 * A call without a result has no status and no output: `status = ok`, `status = error` and every
 * condition on the output are false on it.
 */
export type Atom = Extract<Formula, { kind: "action" | "keyIn" | "keyMatch" | "keyBind" | "keyRegex" | "keyContains" | "keyCompare" | "keyCount" | "status" }>;

/** Whether an order between two numbers (`compareDecimal`'s -1, 0 or 1) satisfies a comparison. */
export function comparisonHolds(op: Comparison, order: number): boolean {
  switch (op) {
    case "<":
      return order < 0;
    case "<=":
      return order <= 0;
    case ">":
      return order > 0;
    case ">=":
      return order >= 0;
    case "=":
      return order === 0;
    case "!=":
      return order !== 0;
  }
}

/** `k ⋈ N` on one value: a number, or a string spelling one, that compares so with N. */
export function compareValue(value: JsonValue, op: Comparison, bound: Decimal): boolean {
  const number = numberOf(value);
  return number !== undefined && comparisonHolds(op, compareDecimal(number, bound));
}

/** `count(k) ⋈ N` on an event: the number of values under the key path. */
export function countHolds(event: TraceEvent, subject: Subject, key: readonly PathSegment[], op: Comparison, bound: Decimal): boolean {
  return comparisonHolds(op, compareDecimal({ units: BigInt(valuesAtSubject(event, subject, key).length), exponent: 0 }, bound));
}

/** A compiled one-event predicate. */
export type EventPredicate = (event: TraceEvent) => boolean;

export function isAtom(formula: Formula): formula is Atom {
  switch (formula.kind) {
    case "and":
    case "or":
    case "not":
    case "once":
    case "eventually":
      return false;
    default:
      return true;
  }
}

/** Whether one atom holds on one event. */
export function atomHolds(atom: Atom, event: TraceEvent): boolean {
  return compileAtom(atom)(event);
}

const compiledAtoms = new WeakMap<Atom, EventPredicate>();

/** The atom as a predicate, compiled once per atom (sets built, paths split). */
export function compileAtom(atom: Atom): EventPredicate {
  let predicate = compiledAtoms.get(atom);
  if (predicate === undefined) compiledAtoms.set(atom, (predicate = buildAtom(atom)));
  return predicate;
}

function buildAtom(atom: Atom): EventPredicate {
  switch (atom.kind) {
    case "action": {
      const actions = new Set(atom.actions);
      return (event) => actions.has(event.action);
    }
    case "keyIn": {
      const wanted = new Set(atom.values.map((v) => v.key));
      return valuesMeet(atom, (value) => wanted.has(valueKey(value)));
    }
    case "keyMatch": {
      const { pattern } = atom;
      return valuesMeet(atom, (value) => wildcardMatches(pattern, value));
    }
    case "keyRegex": {
      const regex = compileRegex(atom.source, atom.flags);
      // The checker admits only expressions that compile; a stale one matches nothing.
      if (isRegexProblem(regex)) return () => false;
      return valuesMeet(atom, (value) => {
        const text = searchableText(value);
        return text !== undefined && regex.test(text);
      });
    }
    case "keyCompare": {
      const { op } = atom;
      const bound = decimalOf(atom.value)!;
      return valuesMeet(atom, (value) => compareValue(value, op, bound));
    }
    case "keyCount": {
      const { subject, key, op } = atom;
      const bound = decimalOf(atom.value)!;
      return (event) => countHolds(event, subject, key, op, bound);
    }
    case "keyBind": {
      const { subject, key } = atom;
      return (event) => someValueAt(event, subject, key, () => true);
    }
    case "keyContains":
      // Alone, without a binding: text is there to search (a binding decides the rest).
      return valuesMeet(atom, (value) => searchableText(value) !== undefined);
    case "status": {
      const status = atom.status;
      return (event) => event.status === status;
    }
  }
}

/**
 * A condition on a key as a predicate: some value under the key path passes `test`, or, with
 * `every`, the path has a value and every value passes it.
 */
function valuesMeet(atom: { readonly subject: Subject; readonly key: readonly PathSegment[]; readonly every?: true }, test: (value: JsonValue) => boolean): EventPredicate {
  const { subject, key } = atom;
  if (atom.every !== true) return (event) => someValueAt(event, subject, key, test);
  return (event) => everyValueAt(event, subject, key, test);
}

/** Whether a key path has a value and every value under it satisfies `test`. */
function everyValueAt(event: TraceEvent, subject: Subject, key: readonly PathSegment[], test: (value: JsonValue) => boolean): boolean {
  const values = valuesAtSubject(event, subject, key);
  if (values.length === 0) return false;
  for (const value of values) if (!test(value)) return false;
  return true;
}

/**
 * Whether some value under a key path satisfies `test`. The common case, one plain segment holding
 * a scalar, is read directly; every other case goes through {@link valuesAtSubject}, the one
 * definition of what a key path reaches.
 */
function someValueAt(event: TraceEvent, subject: Subject, key: readonly PathSegment[], test: (value: JsonValue) => boolean): boolean {
  if (subject === "output" && key.length === 0) {
    // The output's text: read directly, like the common argument case below.
    const output = event.output;
    return output !== undefined && test(output);
  }
  if (subject === "args" && key.length === 1) {
    const args = event.args;
    // A path's first segment is a name (an index only follows one).
    const name = key[0] as string;
    if (!Object.prototype.hasOwnProperty.call(args, name)) return false;
    const value = args[name]!;
    if (typeof value !== "object" || value === null) return test(value);
  }
  for (const value of valuesAtSubject(event, subject, key)) if (test(value)) return true;
  return false;
}

const compiledFormulas = new WeakMap<Formula, EventPredicate>();

/**
 * A pattern ψ (atoms under `and`, `or`, `not`) as a one-event predicate, compiled once per formula.
 * The temporal operators are not one-event predicates; the forward engine handles them.
 */
export function compilePattern(formula: Formula): EventPredicate {
  let predicate = compiledFormulas.get(formula);
  if (predicate === undefined) compiledFormulas.set(formula, (predicate = buildPattern(formula)));
  return predicate;
}

function buildPattern(formula: Formula): EventPredicate {
  if (isAtom(formula)) return compileAtom(formula);
  switch (formula.kind) {
    case "and": {
      const operands = formula.operands.map(compilePattern);
      if (operands.length === 2) {
        const [left, right] = operands as [EventPredicate, EventPredicate];
        return (event) => left(event) && right(event);
      }
      return (event) => operands.every((operand) => operand(event));
    }
    case "or": {
      const operands = formula.operands.map(compilePattern);
      return (event) => operands.some((operand) => operand(event));
    }
    case "not": {
      const operand = compilePattern(formula.operand);
      return (event) => !operand(event);
    }
    default:
      throw new Error(`internal error: \`${formula.kind}\` is not a one-event predicate`);
  }
}

/** A pattern on a call that has not run, in Kleene's three values (`truth.ts`). */
export type PendingPredicate = (event: TraceEvent) => Truth;

/** Applies a pending predicate: `junctionTruth`'s reader, shared so that no event allocates one. */
const applyPending = (predicate: PendingPredicate, event: TraceEvent): Truth => predicate(event);

const compiledPending = new WeakMap<Formula, PendingPredicate>();

/** A pattern as a three-valued predicate on a call whose result is not known yet. */
export function compilePendingPattern(formula: Formula): PendingPredicate {
  let predicate = compiledPending.get(formula);
  if (predicate === undefined) compiledPending.set(formula, (predicate = buildPendingPattern(formula)));
  return predicate;
}

function buildPendingPattern(formula: Formula): PendingPredicate {
  if (isAtom(formula)) {
    if (formula.kind !== "action" && formula.kind !== "status" && formula.subject === "output") return () => Truth.Unknown;
    if (formula.kind === "status") return formula.status === "ok" ? () => Truth.True : () => Truth.False;
    const exact = compileAtom(formula);
    return (event) => truthOf(exact(event));
  }
  switch (formula.kind) {
    case "and":
    case "or": {
      const kind = formula.kind;
      const operands = formula.operands.map(compilePendingPattern);
      return (event) => junctionTruth(kind, operands, applyPending, event);
    }
    case "not": {
      const operand = compilePendingPattern(formula.operand);
      return (event) => notTruth(operand(event));
    }
    default:
      throw new Error(`internal error: \`${formula.kind}\` is not a one-event predicate`);
  }
}

/** Whether a pattern ψ holds on one event. */
export function matchesPattern(formula: Formula, event: TraceEvent): boolean {
  return compilePattern(formula)(event);
}

/**
 * What an event adds to the sum of `limit[X of KEY]`: the sum of the numbers at the key (each
 * element of a list counts), when the event has a value there and every value is a number, zero
 * or more. Undefined otherwise: an amount that cannot be counted, which makes the event a witness
 * of the limit (it cannot be shown to stay within it).
 */
export function eventAmount(event: TraceEvent, subject: Subject, key: readonly PathSegment[]): Decimal | undefined {
  const values = valuesAtSubject(event, subject, key);
  if (values.length === 0) return undefined;
  let total = ZERO;
  for (const value of values) {
    if (typeof value !== "number") return undefined;
    const amount = decimalOf(value);
    if (amount === undefined || amount.units < 0n) return undefined;
    total = addDecimal(total, amount);
  }
  return total;
}

/** The values an event binds under a key path, distinct by the language's equality, as value keys. */
export function boundValueKeys(event: TraceEvent, subject: Subject, key: readonly PathSegment[]): string[] {
  if (subject === "args" && key.length === 1) {
    // The common case: one plain key holding a scalar (a path's first segment is a name).
    const args = event.args;
    const name = key[0] as string;
    if (!Object.prototype.hasOwnProperty.call(args, name)) return [];
    const value = args[name]!;
    if (typeof value !== "object" || value === null) return [valueKey(value)];
  }
  const keys = new Set<string>();
  for (const value of valuesAtSubject(event, subject, key)) keys.add(valueKey(value));
  return [...keys];
}

/**
 * `k contains x` for one binding: some text under the key path (a string, or a number's or a
 * boolean's JSON text) contains the text of the bound value, given by its value key; with `every`,
 * the path has a value and every value is such a text. The engine's
 * relation and the SMT fact base both decide it here.
 */
export function containsText(event: TraceEvent, subject: Subject, key: readonly PathSegment[], boundKey: string, every = false): boolean {
  const needle = boundValueText(boundKey);
  const contains = (value: JsonValue) => {
    const text = searchableText(value);
    return text !== undefined && text.includes(needle);
  };
  return every ? everyValueAt(event, subject, key, contains) : someValueAt(event, subject, key, contains);
}

/** The separator of tuple keys: value keys never contain it (it cannot appear unescaped in JSON text). */
const TUPLE_SEPARATOR = "\u0001";

// Shared, never changed (the type says so). Not frozen: V8's optimizing compiler cannot iterate a
// frozen array without allocating, and these are returned for most events.
const NO_BINDINGS: readonly string[] = [];
const THE_EMPTY_BINDING: readonly string[] = [""];


/**
 * How a binding pattern is matched: `exact` on a complete event; `definitely` on a call that has not
 * run (its output unknown), counting only the bindings it gives whatever the output.
 */
export type BindingMode = "exact" | "definitely";

/** A pattern operand of a form, with the statement variables it uses. */
export interface BindingPattern {
  readonly formula: Formula;
  readonly variables: readonly string[];
}

/** A value key per statement variable (undefined for one the pattern does not use), in the statement's order. */
type Assignment = readonly (string | undefined)[];

/**
 * A pattern operand prepared for one statement: its predicates compiled once, so that reading an
 * event costs the predicate and nothing else when the event does not match.
 *
 * A pattern with variables is a relation ψ(e, ν) between an event and a binding ν of the statement's
 * variables (a tuple of value keys, one per variable, as one string). Two questions are asked of
 * it: which ν an event gives (`bindings`, for a pattern whose every variable use binds: the first
 * pattern of a form, and any other that only binds), and whether ψ(e, ν) holds for a given ν
 * (`holds`, for any pattern: a `contains` can only be tested).
 */
export class PatternBinder {
  private readonly exact: EventPredicate;
  private readonly pending: PendingPredicate;
  private readonly variableIndex: ReadonlyMap<string, number>;
  /** The common shape: variables bound only in the top-level conjunction, read after one predicate. */
  private readonly topLevelKeys: readonly { readonly subject: Subject; readonly key: readonly PathSegment[] }[] | undefined;
  /** Whether every use of a variable binds it (no `contains`): then `bindings` can enumerate. */
  readonly generates: boolean;

  constructor(
    readonly pattern: BindingPattern,
    private readonly variables: readonly string[],
  ) {
    this.exact = compilePattern(pattern.formula);
    this.pending = compilePendingPattern(pattern.formula);
    this.variableIndex = new Map(variables.map((variable, index) => [variable, index]));
    this.generates = !usesContains(pattern.formula);
    this.topLevelKeys = topLevelBindings(pattern.formula, variables);
  }

  /** Whether the pattern uses any variable. */
  get binds(): boolean {
    return this.pattern.variables.length > 0;
  }

  /**
   * The bindings an event gives the pattern: the tuples ν with ψ(e, ν), as string keys. An event that
   * does not match has none; a pattern without variables has the one empty tuple "" on a match. On
   * a call that has not run, `definitely` counts the ν for which ψ holds whatever its output.
   */
  bindings(event: TraceEvent, mode: BindingMode = "exact"): readonly string[] {
    const keys = this.topLevelKeys;
    if (keys !== undefined) {
      const matches = mode === "exact" ? this.exact(event) : this.pending(event) === Truth.True;
      if (!matches) return NO_BINDINGS;
      if (keys.length === 0) return THE_EMPTY_BINDING;
      if (keys.length === 1) return boundValueKeys(event, keys[0]!.subject, keys[0]!.key);
      let tuples: string[] = [""];
      let first = true;
      for (const { subject, key } of keys) {
        const values = boundValueKeys(event, subject, key);
        const next: string[] = [];
        for (const prefix of tuples) for (const value of values) next.push(first ? value : prefix + TUPLE_SEPARATOR + value);
        tuples = next;
        first = false;
      }
      return tuples;
    }
    if (!this.generates) throw new Error("internal error: the bindings of a pattern that uses `contains` cannot be enumerated");
    const assignments = this.generate(this.pattern.formula, event, mode);
    if (assignments.length === 0) return NO_BINDINGS;
    const tuples = new Set<string>();
    // A pattern that uses variables uses all of the statement's (the checker's discipline).
    for (const assignment of assignments) tuples.add(assignment.join(TUPLE_SEPARATOR));
    return [...tuples];
  }

  /** The assignments ν with ψ(e, ν), structurally: products under `and`, unions under `or`. */
  private generate(formula: Formula, event: TraceEvent, mode: BindingMode): Assignment[] {
    if (!usesVariables(formula)) {
      const holds = mode === "exact" ? compilePattern(formula)(event) : compilePendingPattern(formula)(event) === Truth.True;
      return holds ? [new Array<string | undefined>(this.variables.length).fill(undefined)] : [];
    }
    switch (formula.kind) {
      case "keyBind": {
        if (mode === "definitely" && formula.subject === "output") return [];
        const index = this.variableIndex.get(formula.variable)!;
        return boundValueKeys(event, formula.subject, formula.key).map((value) => {
          const assignment = new Array<string | undefined>(this.variables.length).fill(undefined);
          assignment[index] = value;
          return assignment;
        });
      }
      case "and": {
        let result: Assignment[] = [new Array<string | undefined>(this.variables.length).fill(undefined)];
        for (const operand of formula.operands) {
          const own = this.generate(operand, event, mode);
          if (own.length === 0) return [];
          const next: Assignment[] = [];
          for (const left of result) for (const right of own) next.push(left.map((value, index) => value ?? right[index]));
          result = next;
        }
        return result;
      }
      case "or":
        return formula.operands.flatMap((operand) => this.generate(operand, event, mode));
      default:
        throw new Error(`internal error: a variable under \`${formula.kind}\``);
    }
  }

  /**
   * ψ(e, ν) for one binding ν (a tuple key of the statement's variables), in Kleene's three values:
   * `exact` on a complete event (never unknown), `pending` on a call that has not run, whose output
   * is unknown.
   */
  holds(event: TraceEvent, binding: string, mode: "exact" | "pending" = "exact"): Truth {
    const values = this.variables.length === 1 ? [binding] : binding.split(TUPLE_SEPARATOR);
    return this.relation(this.pattern.formula, event, values, mode);
  }

  /**
   * Whether ψ(e, ν) may hold for some ν: the pattern with every use of a variable unknown. False
   * means no binding can make the event match.
   */
  mayHoldForSome(event: TraceEvent): boolean {
    return this.relation(this.pattern.formula, event, undefined, "exact") !== Truth.False;
  }

  private relation(formula: Formula, event: TraceEvent, values: readonly string[] | undefined, mode: "exact" | "pending"): Truth {
    if (!usesVariables(formula)) {
      if (mode === "exact") return truthOf(compilePattern(formula)(event));
      return compilePendingPattern(formula)(event);
    }
    switch (formula.kind) {
      case "keyBind":
      case "keyContains": {
        if (values === undefined || (mode === "pending" && formula.subject === "output")) return Truth.Unknown;
        const wanted = values[this.variableIndex.get(formula.variable)!]!;
        if (formula.kind === "keyBind") return truthOf(boundValueKeys(event, formula.subject, formula.key).includes(wanted));
        return truthOf(containsText(event, formula.subject, formula.key, wanted, formula.every === true));
      }
      case "and":
      case "or":
        return junctionTruth(formula.kind, formula.operands, (operand) => this.relation(operand, event, values, mode), undefined);
      case "not":
        return notTruth(this.relation(formula.operand, event, values, mode));
      default:
        throw new Error(`internal error: \`${formula.kind}\` in a pattern`);
    }
  }
}

/**
 * The bound places in the statement's order when every variable is bound by `k = $x` in the
 * pattern's top-level conjunction (the common shape, enumerated without a structural walk), or
 * undefined otherwise (a variable under `or`, or a `contains`).
 */
function topLevelBindings(formula: Formula, variables: readonly string[]): { subject: Subject; key: readonly PathSegment[] }[] | undefined {
  const conjuncts = formula.kind === "and" ? formula.operands : [formula];
  const places = new Map<string, { subject: Subject; key: readonly PathSegment[] }>();
  for (const conjunct of conjuncts) {
    if (conjunct.kind === "keyBind") places.set(conjunct.variable, { subject: conjunct.subject, key: conjunct.key });
    else if (usesVariables(conjunct)) return undefined;
  }
  return variables.flatMap((variable) => {
    const place = places.get(variable);
    return place === undefined ? [] : [place];
  });
}
