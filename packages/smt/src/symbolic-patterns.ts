import type { CheckedPattern, Formula, Subject } from "@vigil/checker";
import { compileAtom, PatternBinder, Truth, type Atom } from "@vigil/engine";
import { keyPathId, valueKey, type PathSegment, type TraceEvent } from "@vigil/trace";
import { and, eq, implies, not, or } from "./smt-terms.js";
import type { Place, Universe } from "./symbolic.js";
import { eventOf, SymbolicEvents } from "./symbolic-events.js";

/**
 * Patterns on the events of a symbolic run: ψ(e_i), and ψ(e_i, ν) under a binding of the variables
 * to bound values. Every atom is decided ahead of time by the engine's predicates on each candidate
 * value (`compileAtom`, `PatternBinder`), and a term only chooses among candidates.
 *
 * What many terms share is defined once, as a constant of its own (`d_…`, `v_…`: an atom on an
 * event, the value a place reaches, whether an output contains a bound value), so that a query's
 * size grows with its structure, not with the candidates at each use. Building a term may add such
 * definitions to `declarations`: read it after the terms.
 */
export class SymbolicPatterns extends SymbolicEvents {
  /** The constants defined so far, by what they stand for (a constant's name, or a small term kept inline). */
  private readonly definitions = new Map<string, string>();
  /** Per defined value constant, the indexes in `bound` it can take. */
  private readonly domains = new Map<string, ReadonlySet<number>>();
  private readonly placeIndex: Map<string, number>;

  constructor(universe: Universe, length: number) {
    super(universe, length);
    this.placeIndex = new Map(universe.places.map((place, index) => [place.id, index]));
  }

  /** The event holding only candidate `candidate` of root `root`: what the engine judges an atom on. */
  protected single(root: number, candidate: number): TraceEvent {
    return eventOf(this.universe, { action: 0, status: 0, roots: this.universe.roots.map((_, r) => (r === root ? candidate : 0)) }, 1);
  }

  /** The candidates (from 1) of a root. */
  protected candidatesOf(root: number): number[] {
    return this.universe.roots[root]!.candidates.map((_, c) => c + 1);
  }

  /**
   * The candidates of the atom's root on which the engine's predicate for the atom holds (once per
   * universe), 0 (no value) among them when it holds there too (`count(k) < 1`).
   */
  private holding(atom: Exclude<Atom, { kind: "action" | "status" }>): readonly number[] {
    const truths = cacheOf(this.universe).truths;
    let known = truths.get(atom);
    if (known === undefined) {
      const predicate = compileAtom(atom);
      const root = this.placeAt(atom.subject, atom.key).root;
      known = [0, ...this.candidatesOf(root)].filter((candidate) => predicate(this.single(root, candidate)));
      truths.set(atom, known);
    }
    return known;
  }

  /**
   * A Boolean term defined once per run: a constant equal to it (a term of a few characters is
   * kept inline). `key` says what it stands for.
   */
  private defined(key: string, term: () => string): string {
    let name = this.definitions.get(key);
    if (name === undefined) {
      const text = term();
      if (text.length <= 40) name = text;
      else {
        name = `d_${this.definitions.size}`;
        this.declarations.push(`(declare-const ${name} Bool)`, `(assert (= ${name} ${text}))`);
      }
      this.definitions.set(key, name);
    }
    return name;
  }

  protected placeAt(subject: Subject, key: readonly PathSegment[]): Place {
    const index = this.placeIndex.get(`${subject}:${keyPathId(key)}`);
    if (index === undefined) throw new Error("internal error: a place outside the universe");
    return this.universe.places[index]!;
  }

  /** The root of event i is one of the candidates given. */
  protected oneOf(root: number, i: number, candidates: readonly number[]): string {
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
        return this.defined(`atom:${atomIdOf(formula)}:${i}`, () => this.oneOf(this.placeAt(formula.subject, formula.key).root, i, this.holding(formula)));
    }
  }

  /**
   * The j-th value (an index in `bound`) a place reaches on event i, and whether there is one. The
   * value is a constant defined by one implication per candidate (what it is when the root holds
   * that candidate), free when the guard is false: every use is under its guard.
   */
  private reached(place: Place, i: number, j: number): { guard: string; term: string } {
    const having = [0, ...this.candidatesOf(place.root)].filter((candidate) => (place.reaches[candidate]?.length ?? 0) > j);
    const guard = this.defined(`has:${place.id}:${i}:${j}`, () => this.oneOf(place.root, i, having));
    const values = new Set(having.map((candidate) => place.reaches[candidate]![j]!));
    if (values.size <= 1) return { guard, term: String([...values][0] ?? 0) };
    const key = `value:${place.id}:${i}:${j}`;
    let term = this.definitions.get(key);
    if (term === undefined) {
      term = `v_${this.definitions.size}`;
      const name = term;
      this.declarations.push(
        `(declare-const ${name} Int)`,
        `(assert ${and(...having.map((candidate) => implies(eq(this.root(place.root, i), String(candidate)), eq(name, String(place.reaches[candidate]![j]!)))))})`,
      );
      this.definitions.set(key, name);
      this.domains.set(name, values);
    }
    return { guard, term };
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
        // Per bound value the binding can take, whether e_i's value at the place contains it: the
        // candidates the engine's relation holds for, defined once per event and value.
        const place = this.placeAt(formula.subject, formula.key);
        const bound = binding[variables.indexOf(formula.variable)]!;
        const domain = /^\d+$/.test(bound) ? new Set([Number(bound)]) : this.domains.get(bound);
        const cases: string[] = [];
        for (const [value, candidates] of this.containing(formula, place)) {
          if (domain !== undefined && !domain.has(value)) continue;
          const holds = this.defined(`contains:${place.id}:${i}:${value}`, () => this.oneOf(place.root, i, candidates));
          cases.push(and(eq(bound, String(value)), holds));
        }
        return or(...cases);
      }
      default:
        return this.pattern(formula, i);
    }
  }

  /**
   * For a `contains`: per index in `bound` (from 1), the candidates of the place's root whose value
   * there contains that value, as the engine's relation (`PatternBinder`) decides; once per universe.
   */
  private containing(formula: Extract<Formula, { kind: "keyContains" }>, place: Place): ReadonlyMap<number, readonly number[]> {
    const cache = cacheOf(this.universe).containing;
    const key = place.id;
    const known = cache.get(key);
    if (known !== undefined) return known;
    const made = new Map<number, number[]>();
    const binder = new PatternBinder({ formula, variables: [formula.variable] }, [formula.variable]);
    const keys = this.universe.bound.map((value) => valueKey(value));
    for (const candidate of this.candidatesOf(place.root)) {
      const event = this.single(place.root, candidate);
      keys.forEach((k, index) => {
        if (binder.holds(event, k) !== Truth.True) return;
        const list = made.get(index + 1);
        if (list === undefined) made.set(index + 1, [candidate]);
        else list.push(candidate);
      });
    }
    cache.set(key, made);
    return made;
  }
}

/** What a universe's runs share: the candidates each atom holds on, and each `contains` relation. */
interface UniverseCache {
  readonly truths: Map<Atom, readonly number[]>;
  readonly containing: Map<string, ReadonlyMap<number, readonly number[]>>;
}

const universeCaches = new WeakMap<Universe, UniverseCache>();

function cacheOf(universe: Universe): UniverseCache {
  let cache = universeCaches.get(universe);
  if (cache === undefined) universeCaches.set(universe, (cache = { truths: new Map(), containing: new Map() }));
  return cache;
}

const atomIds = new WeakMap<Atom, number>();

/** A number per atom object, for naming what is defined of it. */
function atomIdOf(atom: Atom): number {
  let id = atomIds.get(atom);
  if (id === undefined) atomIds.set(atom, (id = nextAtomId++));
  return id;
}

let nextAtomId = 0;
