import type { Formula } from "@vigil/checker";
import { valueKey, valuesAtPath, wildcardMatches, type JsonValue, type TraceEvent } from "@vigil/trace";

/**
 * One meaning per atom. Whether an atom of Figure 5's foot holds on one event, and which values an
 * event binds a variable to, are decided here and nowhere else: the forward engine, the online
 * monitor and the SMT fact base (which asserts each atom's ground outcome per event) all ask this
 * module. The foot, with the documented list extension (a condition on a key holds when it holds for
 * some value under the key, Section "Lists" of docs/semantics.md):
 *
 *   (a ∈ α)(e) ≜ a(e) ∈ α        (k ∈ S)(e) ≜ e[k] ∈ S        (k ~ p)(e) ≜ e[k] ≈ p
 *   (s = ⊤)(e) ≜ s(e) = ⊤        (s = ⊥)(e) ≜ s(e) = ⊥        (o ~ p)(e) ≜ o(e) ≈ p
 *   (k = x)(e) ≜ k ∈ dom(e)      as a condition on one event; the form relates the bound values.
 *
 * A call without a result has no status and no output: `status = ok`, `status = error` and
 * `output ~ p` are false on it.
 */
export type Atom = Extract<Formula, { kind: "action" | "keyIn" | "keyMatch" | "keyBind" | "status" | "outputMatch" }>;

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
      const key = atom.key;
      return (event) => someValueAt(event, key, (value) => wanted.has(valueKey(value)));
    }
    case "keyMatch": {
      const { key, pattern } = atom;
      return (event) => someValueAt(event, key, (value) => wildcardMatches(pattern, value));
    }
    case "keyBind": {
      const key = atom.key;
      return (event) => someValueAt(event, key, () => true);
    }
    case "status": {
      const status = atom.status;
      return (event) => event.status === status;
    }
    case "outputMatch": {
      const pattern = atom.pattern;
      return (event) => event.output !== undefined && wildcardMatches(pattern, event.output);
    }
  }
}

/**
 * Whether some value under a key path satisfies `test`. The common case, one plain segment holding
 * a scalar, is read directly; every other case goes through {@link valuesAtPath}, the one
 * definition of what a key path reaches.
 */
function someValueAt(event: TraceEvent, key: readonly string[], test: (value: JsonValue) => boolean): boolean {
  if (key.length === 1) {
    const args = event.args;
    const name = key[0]!;
    if (!Object.prototype.hasOwnProperty.call(args, name)) return false;
    const value = args[name]!;
    if (typeof value !== "object" || value === null) return test(value);
  }
  for (const value of valuesAtPath(event.args, key)) if (test(value)) return true;
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

/**
 * Truth on a call that has not run. Its action and arguments are known; it is judged as if it will
 * succeed (`status = ok` holds, `status = error` does not: a rule about a successful call blocks it
 * before it runs, and one about a failure can only be judged once it failed); its output is not
 * known. `unknown` is Kleene's third value: a formula is `true` only if it holds whatever the
 * output, `false` only if it fails whatever the output.
 */
export const Truth = { False: 0, True: 1, Unknown: 2 } as const;
export type Truth = (typeof Truth)[keyof typeof Truth];

export type PendingPredicate = (event: TraceEvent) => Truth;

const compiledPending = new WeakMap<Formula, PendingPredicate>();

/** A pattern as a three-valued predicate on a call whose result is not known yet. */
export function compilePendingPattern(formula: Formula): PendingPredicate {
  let predicate = compiledPending.get(formula);
  if (predicate === undefined) compiledPending.set(formula, (predicate = buildPendingPattern(formula)));
  return predicate;
}

function buildPendingPattern(formula: Formula): PendingPredicate {
  if (isAtom(formula)) {
    if (formula.kind === "outputMatch") return () => Truth.Unknown;
    if (formula.kind === "status") return formula.status === "ok" ? () => Truth.True : () => Truth.False;
    const exact = compileAtom(formula);
    return (event) => (exact(event) ? Truth.True : Truth.False);
  }
  switch (formula.kind) {
    case "and": {
      const operands = formula.operands.map(compilePendingPattern);
      return (event) => {
        let result: Truth = Truth.True;
        for (const operand of operands) {
          const value = operand(event);
          if (value === Truth.False) return Truth.False;
          if (value === Truth.Unknown) result = Truth.Unknown;
        }
        return result;
      };
    }
    case "or": {
      const operands = formula.operands.map(compilePendingPattern);
      return (event) => {
        let result: Truth = Truth.False;
        for (const operand of operands) {
          const value = operand(event);
          if (value === Truth.True) return Truth.True;
          if (value === Truth.Unknown) result = Truth.Unknown;
        }
        return result;
      };
    }
    case "not": {
      const operand = compilePendingPattern(formula.operand);
      return (event) => {
        const value = operand(event);
        return value === Truth.Unknown ? Truth.Unknown : value === Truth.True ? Truth.False : Truth.True;
      };
    }
    default:
      throw new Error(`internal error: \`${formula.kind}\` is not a one-event predicate`);
  }
}

/** Whether a pattern ψ holds on one event. */
export function matchesPattern(formula: Formula, event: TraceEvent): boolean {
  return compilePattern(formula)(event);
}

/** The values an event binds under a key path, distinct by the language's equality, as value keys. */
export function boundValueKeys(event: TraceEvent, key: readonly string[]): string[] {
  if (key.length === 1) {
    // The common case: one plain key holding a scalar.
    const args = event.args;
    const name = key[0]!;
    if (!Object.prototype.hasOwnProperty.call(args, name)) return [];
    const value = args[name]!;
    if (typeof value !== "object" || value === null) return [valueKey(value)];
  }
  const keys = new Set<string>();
  for (const value of valuesAtPath(event.args, key)) keys.add(valueKey(value));
  return [...keys];
}

/** The separator of tuple keys: value keys never contain it (it cannot appear unescaped in JSON text). */
const TUPLE_SEPARATOR = "\u0001";

// Shared, never changed (the type says so). Not frozen: V8's optimizing compiler cannot iterate a
// frozen array without allocating, and these are returned for most events.
const NO_BINDINGS: readonly string[] = [];
const THE_EMPTY_BINDING: readonly string[] = [""];

/**
 * How a pattern is matched: `exact` on a complete event; on a call that has not run, `definitely`
 * (it matches whatever its output) or `possibly` (it matches for some output).
 */
export type BindingMode = "exact" | "definitely" | "possibly";

/** A pattern operand of a form, with the variables it binds. */
export interface BindingPattern {
  readonly formula: Formula;
  readonly bindings: ReadonlyMap<string, readonly string[]>;
}

/**
 * A pattern operand prepared for one statement: its predicates compiled once, so that reading an
 * event costs the predicate and nothing else when the event does not match.
 */
export class PatternBinder {
  private readonly exact: EventPredicate;
  private readonly pending: PendingPredicate;
  /** The bound keys in the order of the statement's variables. */
  private readonly keys: readonly (readonly string[])[];

  constructor(
    readonly pattern: BindingPattern,
    variables: readonly string[],
  ) {
    this.exact = compilePattern(pattern.formula);
    this.pending = compilePendingPattern(pattern.formula);
    this.keys = variables.flatMap((variable) => {
      const key = pattern.bindings.get(variable);
      return key === undefined ? [] : [key];
    });
  }

  /** Whether the pattern binds any variable. */
  get binds(): boolean {
    return this.keys.length > 0;
  }

  /**
   * The bindings an event gives the pattern: one tuple of values (in the order of the statement's
   * variables) per combination of the values under the bound keys, as a string key. An event that
   * does not match has none; a pattern without variables has the one empty tuple "" on a match.
   * On a call that has not run (judged as succeeding, its output unknown), `definitely` counts a
   * match only if it holds whatever the output, `possibly` if it holds for some output.
   */
  bindings(event: TraceEvent, mode: BindingMode = "exact"): readonly string[] {
    const matches =
      mode === "exact" ? this.exact(event) : mode === "definitely" ? this.pending(event) === Truth.True : this.pending(event) !== Truth.False;
    if (!matches) return NO_BINDINGS;
    if (this.keys.length === 0) return THE_EMPTY_BINDING;
    if (this.keys.length === 1) return boundValueKeys(event, this.keys[0]!);
    let tuples: string[] = [""];
    let first = true;
    for (const key of this.keys) {
      const values = boundValueKeys(event, key);
      const next: string[] = [];
      for (const prefix of tuples) for (const value of values) next.push(first ? value : prefix + TUPLE_SEPARATOR + value);
      tuples = next;
      first = false;
    }
    return tuples;
  }
}

