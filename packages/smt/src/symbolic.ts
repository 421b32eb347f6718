import type { CheckedPattern, CheckedScope, CheckedStatement, Formula, LimitMeasure, Subject } from "@vigil/checker";
import { needsTime, statementPatterns, variableAtoms, walkFormula } from "@vigil/checker";
import { boundValueKeys, compileAtom, eventAmount, formatDecimal, isAtom, PatternBinder, type Atom, type Decimal } from "@vigil/engine";
import { decimalOf, keyPathId, regexExamples, valuesAtSubject, valueKey, wildcardExamples, type JsonValue, type PathSegment, type Signature, type TraceEvent } from "@vigil/trace";
import { and, eq, implies, ite, not, or } from "./smt-terms.js";

/**
 * Symbolic runs: the events of a run of K events are unknowns, and a statement's meaning over them
 * is a formula for Z3 (Figure 5 read over positions, as `test/figure5.ts` reads it over a trace).
 * What an atom means on a value is never restated here: every atom is decided by the forward
 * engine's own predicates (`compileAtom`, `PatternBinder`, `boundValueKeys`, `eventAmount`) on
 * each candidate value, ahead of time, and the formula only chooses among candidates.
 *
 * An event is a choice of: its action (one of the policies' actions, or one they do not name), its
 * status (none, ok, error), for each root the policies read (a top-level argument, or the output)
 * one candidate value or none, and, when a statement measures time, its time (an integer of
 * milliseconds, never going back). A root's candidates are built from a pool of values: the
 * policies' constants, texts their wildcards and regular expressions match (`wildcardExamples`,
 * `regexExamples`), the maxima of their sums and one more, and fresh texts; a root read at deeper
 * paths (`n.p`, `m.0`) also takes objects and lists holding pool values at those paths, and the
 * output takes the pool's texts and the JSON text of such objects. A difference that needs a value
 * outside the candidates is not found: analyses say what they searched.
 */
export interface Universe {
  /**
   * The actions an event can have: the policies' and one they do not name; under a signature, the
   * signature's only (the closed world).
   */
  readonly actions: readonly string[];
  /** The actions of `actions` the policies name. */
  readonly named: readonly string[];
  readonly roots: readonly Root[];
  readonly places: readonly Place[];
  /** Every value a place can hold under some candidate, by index (from 1): what variables bind to. */
  readonly bound: readonly JsonValue[];
  /** Whether events carry times. */
  readonly timed: boolean;
}

/** A top-level argument (`name`), or the output (`name` undefined), with its candidate values. */
export interface Root {
  readonly subject: Subject;
  readonly name?: string;
  /** Candidate 0 is "no value" and is not listed: index c here is candidate c + 1. */
  readonly candidates: readonly JsonValue[];
}

/** Where atoms read: the arguments or the output at a key path, inside one root. */
export interface Place {
  readonly subject: Subject;
  readonly key: readonly PathSegment[];
  readonly id: string;
  readonly root: number;
  /** Per root candidate (0 for none), the indexes in `bound` of the values the place reaches, distinct. */
  readonly reaches: readonly (readonly number[])[];
}

/** The atoms of a formula, temporal operands included. */
export function atomsOf(formula: Formula): Atom[] {
  const atoms: Atom[] = [];
  walkFormula(formula, (node) => {
    if (isAtom(node)) atoms.push(node);
  });
  return atoms;
}

/** Every formula a statement reads: its patterns (or body) and its scope's. */
export function formulasOf(statement: CheckedStatement): Formula[] {
  const own = statement.form === "always" ? [statement.body] : statementPatterns(statement).map((pattern) => pattern.formula);
  const scope = statement.scope === undefined ? [] : [statement.scope.open, ...(statement.scope.close === undefined ? [] : [statement.scope.close])];
  return [...own, ...scope];
}

/** How many pool values a root's structures take per path (the first few are paired in lists). */
const PAIRED = 3;

/**
 * The universe of the symbolic runs of some statements (of one policy or of two being compared),
 * with any further values and actions to include. Under a signature Σ (a trace's, or tool schemas')
 * the world is closed: events have Σ's actions only, an argument Σ lacks is never there, and one
 * whose values Σ knows all of holds only those.
 */
export function universeOf(
  statements: readonly CheckedStatement[],
  extra: { readonly values?: readonly JsonValue[]; readonly actions?: readonly string[]; readonly fresh?: number; readonly signature?: Signature } = {},
): Universe {
  const actions = new Set<string>(extra.actions ?? []);
  const places = new Map<string, { subject: Subject; key: readonly PathSegment[] }>();
  const pool = new Map<string, JsonValue>();
  const addValue = (value: JsonValue) => {
    if (!pool.has(valueKey(value))) pool.set(valueKey(value), value);
  };
  const addPlace = (subject: Subject, key: readonly PathSegment[]) => places.set(`${subject}:${keyPathId(key)}`, { subject, key });
  let timed = false;
  for (const statement of statements) {
    if (needsTime(statement)) timed = true;
    for (const formula of formulasOf(statement)) {
      for (const atom of atomsOf(formula)) {
        switch (atom.kind) {
          case "action":
            for (const action of atom.actions) actions.add(action);
            break;
          case "status":
            break;
          default:
            addPlace(atom.subject, atom.key);
            if (atom.kind === "keyIn") for (const { value } of atom.values) addValue(value);
            if (atom.kind === "keyMatch") for (const text of wildcardExamples(atom.pattern)) addValue(text);
            if (atom.kind === "keyRegex") for (const text of regexExamples(atom.source, atom.flags)) addValue(text);
        }
      }
    }
    if (statement.form === "limit" && statement.measure.kind === "sum") {
      addPlace(statement.measure.subject, statement.measure.key);
      const maximum = decimalOf(statement.measure.maximum);
      addValue(0);
      addValue(Number(statement.measure.maximum));
      if (maximum !== undefined) addValue(Number(formatDecimal({ units: maximum.units + 10n ** BigInt(Math.max(0, -maximum.exponent)), exponent: maximum.exponent })));
    }
  }
  for (const value of extra.values ?? []) addValue(value);
  for (let n = 1, made = 0; made < (extra.fresh ?? 3); n++) {
    const text = `v${n}`;
    if (pool.has(valueKey(text))) continue;
    addValue(text);
    made++;
  }
  let other = "other";
  for (let n = 2; actions.has(other); n++) other = `other_${n}`;
  const signature = extra.signature;
  // Under Σ: its actions, and the values it knows.
  const eventActions = signature === undefined ? [...actions, other] : signature.actions.size > 0 ? [...signature.actions] : [other];
  for (const info of signature?.keys.values() ?? []) [...info.values.values()].slice(0, 20).forEach(addValue);

  // Roots: each top-level argument read, and the output; each with the paths read inside it.
  const scalars = [...pool.values()].filter((value) => typeof value !== "object" || value === null);
  const rootPaths = new Map<string, { subject: Subject; name?: string; paths: PathSegment[][] }>();
  for (const { subject, key } of places.values()) {
    const id = subject === "output" ? "output" : `args:${String(key[0])}`;
    let root = rootPaths.get(id);
    if (root === undefined) rootPaths.set(id, (root = subject === "output" ? { subject, paths: [] } : { subject, name: String(key[0]), paths: [] }));
    root.paths.push([...(subject === "output" ? key : key.slice(1))]);
  }
  const roots: Root[] = [...rootPaths.values()].map(({ subject, name, paths }) => {
    const candidates = new Map<string, JsonValue>();
    const add = (value: JsonValue) => candidates.set(valueKey(value), value);
    const deep = paths.filter((path) => path.length > 0);
    if (signature !== undefined && subject === "args") {
      // An argument Σ lacks is never there; one whose values Σ knows all of (and read only at its name) holds those.
      const info = signature.keys.get(keyPathId([name!]));
      const known = [...signature.keys.values()].some((key) => key.segments[0] === name);
      if (!known) return { subject, name: name!, candidates: [] };
      if (info !== undefined && info.openValues !== true && deep.length === 0) return { subject, name: name!, candidates: [...info.values.values()] };
    }
    if (subject === "args") {
      // The pool's values themselves, and any object or list constant.
      for (const value of pool.values()) add(value);
    } else {
      for (const value of scalars) if (typeof value === "string") add(value);
    }
    if (deep.length > 0) {
      const maximal = deep.filter((path) => !deep.some((other) => other.length > path.length && path.every((segment, i) => segment === other[i])));
      const firstFew = scalars.slice(0, PAIRED);
      const structures: JsonValue[] = [];
      for (const value of scalars) structures.push(structureOf(maximal, () => value));
      for (const a of firstFew) for (const b of firstFew) if (a !== b) structures.push(structureOf(maximal, (index) => (index === 0 ? a : b)));
      for (const structure of structures) add(subject === "output" ? JSON.stringify(structure) : structure);
    }
    return { subject, ...(name !== undefined ? { name } : {}), candidates: [...candidates.values()] };
  });

  // What each place reaches on each candidate of its root, read by the engine.
  // Each value a place reaches, by value key, with its index (from 1).
  const bound = new Map<string, { value: JsonValue; index: number }>();
  const boundIndex = (value: JsonValue): number => {
    const key = valueKey(value);
    let known = bound.get(key);
    if (known === undefined) bound.set(key, (known = { value, index: bound.size + 1 }));
    return known.index;
  };
  const universeWithoutPlaces = { actions: eventActions, roots };
  const placeList: Place[] = [...places.values()].map(({ subject, key }) => {
    const root = roots.findIndex((r) => r.subject === subject && (subject === "output" || r.name === String(key[0])));
    const reaches = [0, ...roots[root]!.candidates.map((_, c) => c + 1)].map((candidate) => {
      const event = eventOf(universeWithoutPlaces, { action: 0, status: 0, roots: roots.map((_, r) => (r === root ? candidate : 0)) }, 1);
      return [...new Set(boundValueKeys(event, subject, key))].map((k) => boundIndex(valueOfKey(event, subject, key, k)));
    });
    return { subject, key, id: `${subject}:${keyPathId(key)}`, root, reaches };
  });
  return { actions: eventActions, named: eventActions.filter((action) => actions.has(action)), roots, places: placeList, bound: [...bound.values()].map((entry) => entry.value), timed };
}

/** The value under a path whose value key is `key` (one of `boundValueKeys`). */
function valueOfKey(event: TraceEvent, subject: Subject, path: readonly PathSegment[], key: string): JsonValue {
  return valuesAtSubject(event, subject, path).find((value) => valueKey(value) === key)!;
}

/** An object or list with a value at each path (list indexes filled up to theirs). */
function structureOf(paths: readonly (readonly PathSegment[])[], valueFor: (index: number) => JsonValue): JsonValue {
  const root: Record<string, JsonValue> = {};
  const listRoot = typeof paths[0]?.[0] === "number";
  const holder: Record<string, JsonValue> = listRoot ? { list: [] } : root;
  paths.forEach((path, index) => setPath(holder, listRoot ? ["list", ...path] : path, valueFor(index)));
  return listRoot ? holder["list"]! : root;
}

/** One symbolic event's choices: indexes into the universe's actions and each root's candidates (0 for none), and its time. */
export interface EventChoice {
  readonly action: number;
  /** 0 none, 1 ok, 2 error. */
  readonly status: number;
  /** Per root (the universe's order): 0 for none, c for the root's candidate c − 1. */
  readonly roots: readonly number[];
  readonly time?: number;
}

/** A concrete event of the choices: what a counterexample run holds, and what the engines judge. */
export function eventOf(universe: Pick<Universe, "actions" | "roots">, choice: EventChoice, position: number): TraceEvent {
  const args: Record<string, JsonValue> = {};
  let output: string | undefined;
  universe.roots.forEach((root, index) => {
    const candidate = choice.roots[index] ?? 0;
    if (candidate === 0) return;
    const value = root.candidates[candidate - 1]!;
    if (root.subject === "args") args[root.name!] = value;
    else output = String(value);
  });
  return {
    position,
    action: universe.actions[choice.action]!,
    args,
    ...(choice.status === 1 ? { status: "ok" } : choice.status === 2 ? { status: "error" } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(choice.time !== undefined ? { time: choice.time } : {}),
  } as TraceEvent;
}

function setPath(target: Record<string, JsonValue>, key: readonly PathSegment[], value: JsonValue): void {
  let node: Record<string | number, JsonValue> = target;
  key.forEach((segment, index) => {
    if (index === key.length - 1) {
      fillTo(node, segment, value);
      node[segment] = value;
      return;
    }
    const next = node[segment];
    if (typeof next !== "object" || next === null) {
      fillTo(node, segment, value);
      node[segment] = typeof key[index + 1] === "number" ? [] : {};
    }
    node = node[segment] as Record<string | number, JsonValue>;
  });
}

/** A list gets every index below the one set (holding the same value), so that the index exists. */
function fillTo(node: Record<string | number, JsonValue>, segment: PathSegment, value: JsonValue): void {
  if (Array.isArray(node) && typeof segment === "number") while (node.length < segment) node.push(value);
}

/**
 * The SMT encoding of statements over a symbolic run of `length` events of a universe. Constants,
 * for event i (1-based): `act_i`, `st_i`, `r<root>_i` and `t_i`; each statement's violation at
 * each position is a term (`violationAt`), so a query asks for runs where statements hold or break.
 */
export class SymbolicRun {
  readonly declarations: string[] = [];
  private readonly placeIndex: Map<string, number>;

  constructor(
    readonly universe: Universe,
    readonly length: number,
  ) {
    this.placeIndex = new Map(universe.places.map((place, index) => [place.id, index]));
    for (let i = 1; i <= length; i++) {
      this.declarations.push(`(declare-const ${this.act(i)} Int)`, `(assert (and (<= 0 ${this.act(i)}) (< ${this.act(i)} ${universe.actions.length})))`);
      this.declarations.push(`(declare-const ${this.st(i)} Int)`, `(assert (and (<= 0 ${this.st(i)}) (<= ${this.st(i)} 2)))`);
      universe.roots.forEach((root, index) => {
        const r = this.root(index, i);
        this.declarations.push(`(declare-const ${r} Int)`, `(assert (and (<= 0 ${r}) (<= ${r} ${root.candidates.length})))`);
      });
      if (universe.timed) {
        this.declarations.push(`(declare-const ${this.time(i)} Int)`);
        this.declarations.push(i === 1 ? `(assert (>= ${this.time(i)} 0))` : `(assert (>= ${this.time(i)} ${this.time(i - 1)}))`);
      }
    }
  }

  act(i: number): string {
    return `act_${i}`;
  }
  st(i: number): string {
    return `st_${i}`;
  }
  time(i: number): string {
    return `t_${i}`;
  }
  root(root: number, i: number): string {
    return `r${root}_${i}`;
  }

  /** The constants whose values make the run's events, in order, for reading a model. */
  constants(): { name: string; sort: "Int" }[] {
    const names: string[] = [];
    for (let i = 1; i <= this.length; i++) {
      names.push(this.act(i), this.st(i), ...this.universe.roots.map((_, index) => this.root(index, i)));
      if (this.universe.timed) names.push(this.time(i));
    }
    return names.map((name) => ({ name, sort: "Int" }));
  }

  /** The run's choices from the constants' values (in the order of `constants`). */
  choicesOf(values: readonly number[]): EventChoice[] {
    const width = 2 + this.universe.roots.length + (this.universe.timed ? 1 : 0);
    return Array.from({ length: this.length }, (_, index) => {
      const row = values.slice(index * width, (index + 1) * width);
      return { action: row[0]!, status: row[1]!, roots: row.slice(2, 2 + this.universe.roots.length), ...(this.universe.timed ? { time: row[width - 1]! } : {}) };
    });
  }

  /** The constraints that fix the run to concrete choices (every event's, in order). */
  fixedTo(choices: readonly EventChoice[]): string[] {
    return choices.flatMap((choice, index) => {
      const i = index + 1;
      return [
        `(assert ${eq(this.act(i), String(choice.action))})`,
        `(assert ${eq(this.st(i), String(choice.status))})`,
        ...choice.roots.map((value, root) => `(assert ${eq(this.root(root, i), String(value))})`),
        ...(this.universe.timed ? [`(assert ${eq(this.time(i), String(choice.time ?? 0))})`] : []),
      ];
    });
  }

  // ---- atoms: decided by the engine's predicates on each candidate, ahead of time -------------

  /** The event holding only candidate `candidate` of root `root`: what the engine judges an atom on. */
  private single(root: number, candidate: number): TraceEvent {
    return eventOf(this.universe, { action: 0, status: 0, roots: this.universe.roots.map((_, r) => (r === root ? candidate : 0)) }, 1);
  }

  /** The candidates (from 1) of a root. */
  private candidatesOf(root: number): number[] {
    return this.universe.roots[root]!.candidates.map((_, c) => c + 1);
  }

  private readonly truths = new Map<Atom, readonly number[]>();

  /** The candidates of the atom's root on which the engine's predicate for the atom holds. */
  private holding(atom: Exclude<Atom, { kind: "action" | "status" }>): readonly number[] {
    let known = this.truths.get(atom);
    if (known === undefined) {
      const predicate = compileAtom(atom);
      const root = this.placeAt(atom.subject, atom.key).root;
      known = this.candidatesOf(root).filter((candidate) => predicate(this.single(root, candidate)));
      this.truths.set(atom, known);
    }
    return known;
  }

  private placeAt(subject: Subject, key: readonly PathSegment[]): Place {
    const index = this.placeIndex.get(`${subject}:${keyPathId(key)}`);
    if (index === undefined) throw new Error("internal error: a place outside the universe");
    return this.universe.places[index]!;
  }

  /** The root of event i is one of the candidates given. */
  private oneOf(root: number, i: number, candidates: readonly number[]): string {
    return or(...candidates.map((candidate) => eq(this.root(root, i), String(candidate))));
  }

  /** ψ(e_i) for a formula without variables (no temporal operator). */
  pattern(formula: Formula, i: number): string {
    switch (formula.kind) {
      case "and":
        return and(...formula.operands.map((operand) => this.pattern(operand, i)));
      case "or":
        return or(...formula.operands.map((operand) => this.pattern(operand, i)));
      case "not":
        return not(this.pattern(formula.operand, i));
      case "action":
        return or(...formula.actions.map((action) => this.universe.actions.indexOf(action)).filter((index) => index >= 0).map((index) => eq(this.act(i), String(index))));
      case "status":
        return eq(this.st(i), formula.status === "ok" ? "1" : "2");
      case "once":
      case "eventually":
        throw new Error("internal error: a temporal operator in a pattern");
      default:
        return this.oneOf(this.placeAt(formula.subject, formula.key).root, i, this.holding(formula));
    }
  }

  // ---- bindings ----------------------------------------------------------------------------

  /** The j-th value (an index in `bound`) a place reaches on event i, and whether there is one. */
  private reached(place: Place, i: number, j: number): { guard: string; term: string } {
    const having = [0, ...this.candidatesOf(place.root)].filter((candidate) => (place.reaches[candidate]?.length ?? 0) > j);
    let term = "0";
    for (const candidate of having) term = ite(eq(this.root(place.root, i), String(candidate)), String(place.reaches[candidate]![j]!), term);
    return { guard: this.oneOf(place.root, i, having), term };
  }

  private widest(place: Place): number {
    return Math.max(0, ...place.reaches.map((values) => values.length));
  }

  /**
   * The candidate bindings of a pattern at e_i: per statement variable, each value at each place
   * the pattern binds it (`k = $x`); every binding ν with ψ(e_i, ν) is among them. A binding is a
   * list of terms (indexes in `bound`), one per statement variable, in the statement's order.
   */
  candidates(pattern: CheckedPattern, variables: readonly string[], i: number): { guard: string; terms: string[] }[] {
    let partial: { guards: string[]; terms: string[] }[] = [{ guards: [], terms: [] }];
    for (const variable of variables) {
      const places = new Set<Place>();
      const visit = (node: Formula): void => {
        if (node.kind === "keyBind" && node.variable === variable) places.add(this.placeAt(node.subject, node.key));
        if (node.kind === "and" || node.kind === "or") node.operands.forEach(visit);
      };
      visit(pattern.formula);
      const options = [...places].flatMap((place) => Array.from({ length: this.widest(place) }, (_, j) => this.reached(place, i, j)));
      const next: typeof partial = [];
      for (const prefix of partial) for (const option of options) next.push({ guards: [...prefix.guards, option.guard], terms: [...prefix.terms, option.term] });
      partial = next;
    }
    return partial.map(({ guards, terms }) => ({ guard: and(...guards), terms }));
  }

  /** ψ(e_i, ν) under a binding (terms per statement variable); a pattern without variables ignores it. */
  relation(formula: Formula, variables: readonly string[], i: number, binding: readonly string[]): string {
    switch (formula.kind) {
      case "and":
        return and(...formula.operands.map((operand) => this.relation(operand, variables, i, binding)));
      case "or":
        return or(...formula.operands.map((operand) => this.relation(operand, variables, i, binding)));
      case "not":
        return not(this.relation(formula.operand, variables, i, binding));
      case "keyBind": {
        const place = this.placeAt(formula.subject, formula.key);
        const bound = binding[variables.indexOf(formula.variable)]!;
        return or(
          ...Array.from({ length: this.widest(place) }, (_, j) => {
            const { guard, term } = this.reached(place, i, j);
            return and(guard, eq(term, bound));
          }),
        );
      }
      case "keyContains": {
        // The pairs (candidate of the root, bound value) the engine's relation holds for.
        const place = this.placeAt(formula.subject, formula.key);
        const bound = binding[variables.indexOf(formula.variable)]!;
        const binder = new PatternBinder({ formula, variables: [formula.variable] }, [formula.variable]);
        const pairs: string[] = [];
        for (const candidate of this.candidatesOf(place.root)) {
          const event = this.single(place.root, candidate);
          this.universe.bound.forEach((value, index) => {
            if (binder.holds(event, valueKey(value)) === 1) pairs.push(and(eq(this.root(place.root, i), String(candidate)), eq(bound, String(index + 1))));
          });
        }
        return or(...pairs);
      }
      default:
        return this.pattern(formula, i);
    }
  }

  /** ψ(e_j) with the binding where the pattern has variables. */
  private matches(pattern: CheckedPattern, variables: readonly string[], j: number, binding: readonly string[]): string {
    return pattern.variables.length === 0 ? this.pattern(pattern.formula, j) : this.relation(pattern.formula, variables, j, binding);
  }

  // ---- scopes ------------------------------------------------------------------------------

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

  // ---- statements --------------------------------------------------------------------------

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

  /** The pattern holds on e_i for some binding, in a judged stretch: the statement is triggered there. */
  matchesAt(statement: CheckedStatement, pattern: CheckedPattern, i: number): string {
    if (pattern.variables.length === 0) return and(this.judged(statement, i), this.pattern(pattern.formula, i));
    // A variable the pattern only tests (`contains $x`) takes its value elsewhere: any bound value.
    const tested = statement.variables.filter((variable) => pattern.variables.includes(variable) && !bindsIn(pattern.formula, variable));
    const free = tested.reduce<Map<string, string>[]>(
      (partial, variable) => partial.flatMap((assignment) => this.universe.bound.map((_, index) => new Map([...assignment, [variable, String(index + 1)]]))),
      [new Map()],
    );
    const given = statement.variables.filter((variable) => !tested.includes(variable));
    const generated = this.candidates(pattern, given, i);
    const cases: string[] = [];
    for (const assignment of free) {
      for (const c of generated) {
        const terms = statement.variables.map((variable) => assignment.get(variable) ?? c.terms[given.indexOf(variable)] ?? "0");
        cases.push(and(c.guard, this.relation(pattern.formula, statement.variables, i, terms)));
      }
    }
    return and(this.judged(statement, i), or(...cases));
  }

  /** The statement holds on the whole run. */
  holds(statement: CheckedStatement): string {
    return not(or(...Array.from({ length: this.length }, (_, k) => this.violationAt(statement, k + 1))));
  }
}

/** Whether a formula binds a variable (`k = $x`) somewhere. */
function bindsIn(formula: Formula, variable: string): boolean {
  return variableAtoms(formula).some((atom) => atom.kind === "keyBind" && atom.variable === variable);
}

/** An exact decimal as an SMT real. */
function real(value: Decimal): string {
  const text = formatDecimal(value);
  return text.includes(".") ? text : `${text}.0`;
}
