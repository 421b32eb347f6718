import type { CheckedPattern, CheckedScope, CheckedStatement, Formula, LimitMeasure, Subject } from "@vigil/checker";
import { bindsVariable, needsTime, statementPatterns, walkFormula } from "@vigil/checker";
import { boundValueKeys, compileAtom, eventAmount, formatDecimal, isAtom, PatternBinder, Truth, type Atom, type Decimal } from "@vigil/engine";
import {
  boundValueText,
  decimalOf,
  keyPathDisplay,
  keyPathId,
  valuesAtSubject,
  valueKey,
  type JsonValue,
  type PathSegment,
  type Signature,
  type TraceEvent,
} from "@vigil/trace";
import { and, eq, implies, ite, not, or } from "./smt-terms.js";
import { textClasses, type TextCondition } from "./text-classes.js";

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
 * milliseconds, never going back).
 *
 * **The candidates are every class of values the atoms tell apart** (`universeOf`). The keys whose
 * values a variable ties together (`k = $x` and `m = $x` in one statement) form a group; a group's
 * values are found from all its atoms together: the rules' constants, and for the texts, every
 * class of the wildcards, regular expressions and text constants on its keys (`textClasses`: the
 * texts that match several of them at once, or some and not others), and values with no text
 * (`null`, objects) when no text stands for them. Two values of one class are alike to every atom,
 * so a run over any values becomes a run over candidates, event by event, by a one-to-one renaming
 * within each class; a group whose keys bind variables has as many distinct values of each class
 * as a run of `runLength` events can hold, so the renaming never has to merge two values. What
 * this does not reach is said, per key (`Universe.gaps`): `contains` (texts related to each other,
 * not only to patterns), objects read at several paths, amounts of sums, several values at once
 * under one key (a list), a class search that stopped short. Under a signature, a key whose values
 * it knows all of holds exactly those.
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
  /** The longest run the candidates have enough distinct values for. */
  readonly runLength: number;
  /** What the candidates leave out: none when every value a run of up to `runLength` events can hold is matched by a candidate of its class. */
  readonly gaps: readonly Gap[];
}

/** Values a root's candidates do not stand for, in words (`text` names the key). */
export interface Gap {
  /** The index of the root in `Universe.roots`. */
  readonly root: number;
  readonly text: string;
  /**
   * Whether the gap can change which single events a pattern matches; false for several values
   * at once under a key whose patterns a single value of the same classes meets as well (the
   * values then matter only for what variables bind).
   */
  readonly oneEvent: boolean;
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

/** How many values a root read at several paths pairs in lists and objects (the first few). */
const PAIRED = 3;

/** The most texts made for a `contains` (the values bound elsewhere, alone and joined to examples). */
const MAX_CONTAINING = 2_000;

export interface UniverseOptions {
  /** Further values every root may hold. */
  readonly values?: readonly JsonValue[];
  /** Further actions. */
  readonly actions?: readonly string[];
  /**
   * Runs under this signature Σ only (a trace's, or tool schemas'): the world is closed, events
   * have Σ's actions only, an argument Σ lacks is never there, and one whose values Σ knows all of
   * holds only those.
   */
  readonly signature?: Signature;
  /** The longest run searched (default 5): how many distinct values of each class a key that binds a variable needs. */
  readonly runLength?: number;
}

/** The root a place is in: the output, or a top-level argument. */
function rootKey(subject: Subject, key: readonly PathSegment[]): string {
  return subject === "output" ? "output" : `args:${String(key[0])}`;
}

/** How a key is named in what the search leaves out. */
function shownKey(subject: Subject, key: readonly PathSegment[]): string {
  return subject === "output" ? (key.length === 0 ? "`output`" : `\`output.${keyPathDisplay(key)}\``) : `\`${keyPathDisplay(key)}\``;
}

/**
 * The universe of the symbolic runs of some statements (of one policy or of two being compared):
 * their actions and one more, and per root the candidates of every class of values its atoms (and
 * those of the keys a variable ties it to) tell apart; see `Universe`.
 */
export function universeOf(statements: readonly CheckedStatement[], options: UniverseOptions = {}): Universe {
  const runLength = Math.max(1, options.runLength ?? 5);
  const signature = options.signature;
  const actions = new Set<string>(options.actions ?? []);
  const places = new Map<string, { subject: Subject; key: readonly PathSegment[]; atoms: Atom[] }>();
  const placeOf = (subject: Subject, key: readonly PathSegment[]) => {
    const id = `${subject}:${keyPathId(key)}`;
    let place = places.get(id);
    if (place === undefined) places.set(id, (place = { subject, key, atoms: [] }));
    return id;
  };
  let timed = false;
  // Roots a variable ties together, `contains` tests (the place searched, the places that bind the
  // variable), and the amounts of sums.
  const ties: string[][] = [];
  const containsTests: { place: string; binders: string[] }[] = [];
  const amounts = new Map<string, JsonValue[]>();
  for (const statement of statements) {
    if (needsTime(statement)) timed = true;
    const binders = new Map<string, string[]>();
    const tested: { variable: string; place: string }[] = [];
    for (const formula of formulasOf(statement)) {
      for (const atom of atomsOf(formula)) {
        if (atom.kind === "action") {
          for (const action of atom.actions) actions.add(action);
          continue;
        }
        if (atom.kind === "status") continue;
        const id = placeOf(atom.subject, atom.key);
        places.get(id)!.atoms.push(atom);
        if (atom.kind === "keyBind") binders.set(atom.variable, [...(binders.get(atom.variable) ?? []), id]);
        if (atom.kind === "keyContains") tested.push({ variable: atom.variable, place: id });
      }
    }
    for (const list of binders.values()) ties.push(list.map((id) => rootKey(places.get(id)!.subject, places.get(id)!.key)));
    for (const { variable, place } of tested) containsTests.push({ place, binders: binders.get(variable) ?? [] });
    if (statement.form === "limit" && statement.measure.kind === "sum") {
      const id = placeOf(statement.measure.subject, statement.measure.key);
      const maximum = decimalOf(statement.measure.maximum);
      const list = amounts.get(id) ?? [];
      list.push(0, Number(statement.measure.maximum));
      if (maximum !== undefined) list.push(Number(formatDecimal({ units: maximum.units + 10n ** BigInt(Math.max(0, -maximum.exponent)), exponent: maximum.exponent })));
      amounts.set(id, list);
    }
  }
  let other = "other";
  for (let n = 2; actions.has(other); n++) other = `other_${n}`;
  // Under Σ: its actions only.
  const eventActions = signature === undefined ? [...actions, other] : signature.actions.size > 0 ? [...signature.actions] : [other];

  // Roots: each top-level argument read, and the output; each with the paths read inside it.
  const rootInfo = new Map<string, { subject: Subject; name?: string; paths: Map<string, PathSegment[]>; places: string[] }>();
  for (const [id, { subject, key }] of places) {
    const rk = rootKey(subject, key);
    let root = rootInfo.get(rk);
    if (root === undefined) rootInfo.set(rk, (root = subject === "output" ? { subject, paths: new Map(), places: [] } : { subject, name: String(key[0]), paths: new Map(), places: [] }));
    const path = [...(subject === "output" ? key : key.slice(1))];
    root.paths.set(keyPathId(path), path);
    root.places.push(id);
  }
  // Groups: the roots a variable ties together share their values.
  const parent = new Map<string, string>([...rootInfo.keys()].map((k) => [k, k]));
  const find = (k: string): string => {
    let at = k;
    while (parent.get(at) !== at) at = parent.get(at)!;
    parent.set(k, at);
    return at;
  };
  for (const list of ties) for (const k of list.slice(1)) parent.set(find(k), find(list[0]!));
  const groups = new Map<string, string[]>();
  for (const k of rootInfo.keys()) groups.set(find(k), [...(groups.get(find(k)) ?? []), k]);

  const gapsByRoot = new Map<string, { text: string; oneEvent: boolean }[]>();
  const gap = (rk: string, text: string, oneEvent = true) => gapsByRoot.set(rk, [...(gapsByRoot.get(rk) ?? []), { text, oneEvent }]);
  const addTo = (list: Map<string, JsonValue>, value: JsonValue) => {
    if (!list.has(valueKey(value))) list.set(valueKey(value), value);
  };

  // Each group's values: its constants, every class of texts its atoms tell apart, values with no text.
  const groupValues = new Map<string, Map<string, JsonValue>>();
  /** Per group, the first text of each class (for joining to the values a `contains` looks for). */
  const groupExamples = new Map<string, string[]>();
  const groupBinds = new Map<string, boolean>();
  for (const [leader, members] of groups) {
    const atoms = members.flatMap((rk) => rootInfo.get(rk)!.places.flatMap((id) => places.get(id)!.atoms));
    const conditions = new Map<string, TextCondition>();
    const values = new Map<string, JsonValue>();
    for (const atom of atoms) {
      if (atom.kind === "keyMatch") conditions.set(`w:${atom.pattern}`, { kind: "wildcard", pattern: atom.pattern });
      if (atom.kind === "keyRegex") conditions.set(`r:${atom.flags}:${atom.source}`, { kind: "regex", source: atom.source, flags: atom.flags });
      if (atom.kind === "keyIn") {
        for (const { value } of atom.values) {
          addTo(values, value);
          if (typeof value === "string") {
            conditions.set(`e:${value}`, { kind: "equals", text: value });
            // The same text as a number or a Boolean: equal to no constant, and every pattern's text.
            if (value !== "" && Number.isFinite(Number(value)) && JSON.stringify(Number(value)) === value) addTo(values, Number(value));
            if (value === "true" || value === "false") addTo(values, value === "true");
          }
        }
      }
    }
    const binds = atoms.some((atom) => atom.kind === "keyBind");
    groupBinds.set(leader, binds);
    // Enough distinct values of each class for every value a run can hold in the group's roots.
    const perClass = binds ? runLength * members.length : 1;
    const list = [...conditions.values()];
    const classes = textClasses(list, perClass);
    if (classes.incomplete !== undefined) {
      for (const rk of members) gap(rk, `some texts at ${shownRootKey(rootInfo.get(rk)!)} (its patterns' classes were not all found: ${classes.incomplete})`);
    }
    let withNoPattern = 0;
    for (const c of classes.classes) {
      for (const text of c.texts) addTo(values, text);
      if (c.holds.every((h) => !h)) withNoPattern += c.texts.length;
    }
    // (With one class, a value alone is as good as joined to anything.)
    groupExamples.set(leader, classes.classes.length > 1 ? classes.classes.map((c) => c.texts.find((t) => t !== "") ?? c.texts[0]!) : []);
    // Values with no text (`null`, objects) match no text pattern: when no text is in that class, or too few, they stand for it.
    // (A constant is a class of its own: it does not count, and is not added as one of them.)
    const constants = new Set(atoms.flatMap((atom) => (atom.kind === "keyIn" ? atom.values.map((v) => v.key) : [])));
    for (let k = 0; withNoPattern < perClass; k++) {
      const value: JsonValue = k === 0 ? null : { v: k };
      if (constants.has(valueKey(value))) continue;
      addTo(values, value);
      withNoPattern++;
    }
    for (const rk of members) {
      const info = rootInfo.get(rk)!;
      for (const path of info.paths.values()) {
        const full = info.subject === "output" ? path : [info.name!, ...path];
        const known = info.subject === "args" ? signature?.keys.get(keyPathId(full.filter((s): s is string => typeof s === "string"))) : undefined;
        if (known !== undefined) [...known.values.values()].slice(0, known.openValues === true ? 20 : undefined).forEach((v) => addTo(values, v));
      }
      for (const id of info.places) for (const amount of amounts.get(id) ?? []) addTo(values, amount);
    }
    for (const value of options.values ?? []) addTo(values, value);
    groupValues.set(leader, values);
  }

  const rootKeys = [...rootInfo.keys()];
  const roots: Root[] = rootKeys.map((rk) => {
    const { subject, name, paths, places: rootPlaces } = rootInfo.get(rk)!;
    const leader = find(rk);
    const scalars = [...groupValues.get(leader)!.values()].filter((value) => typeof value !== "object" || value === null || !Array.isArray(value));
    const candidates = new Map<string, JsonValue>();
    const add = (value: JsonValue) => addTo(candidates, value);
    const pathList = [...paths.values()];
    const deep = pathList.filter((path) => path.length > 0);
    const shown = shownRootKey({ subject, ...(name !== undefined ? { name } : {}) });
    if (signature !== undefined && subject === "args") {
      // An argument Σ lacks is never there; one whose values Σ knows all of (and read only at its name) holds those.
      const info = signature.keys.get(keyPathId([name!]));
      const known = [...signature.keys.values()].some((key) => key.segments[0] === name);
      if (!known) return { subject, name: name!, candidates: [] };
      if (info !== undefined && info.openValues !== true && deep.length === 0) return { subject, name: name!, candidates: [...info.values.values()] };
    }
    if (deep.length < pathList.length) {
      // Read at the root itself: the group's values (the output holds texts only).
      for (const value of scalars) if (subject === "args" || typeof value === "string") add(value);
    }
    if (deep.length > 0) {
      const maximal = deep.filter((path) => !deep.some((other) => other.length > path.length && path.every((segment, i) => segment === other[i])));
      const structures: JsonValue[] = [];
      for (const value of scalars) structures.push(structureOf(maximal, () => value));
      if (pathList.length > 1) {
        const firstFew = scalars.slice(0, PAIRED);
        for (const a of firstFew) for (const b of firstFew) if (a !== b) structures.push(structureOf(maximal, (index) => (index === 0 ? a : b)));
        gap(rk, `${shown} other than with one value at every path it is read at (${pathList.map((path) => shownKey(subject, subject === "output" ? path : [name!, ...path])).join(", ")}), or two of a few`);
      }
      for (const structure of structures) add(subject === "output" ? JSON.stringify(structure) : structure);
    }
    // `contains`: the texts that hold a value bound elsewhere: the value, and each class's example joined to it.
    const tests = containsTests.filter((test) => rootPlaces.includes(test.place));
    if (tests.length > 0) {
      const examples = groupExamples.get(leader) ?? [];
      let made = 0;
      for (const test of tests) {
        const haystackDeep = places.get(test.place)!.key.length > (subject === "output" ? 0 : 1);
        for (const binder of test.binders) {
          const binderRoot = rootKey(places.get(binder)!.subject, places.get(binder)!.key);
          for (const value of groupValues.get(find(binderRoot))?.values() ?? []) {
            const needle = boundValueText(valueKey(value));
            for (const text of haystackDeep ? [] : [needle, ...examples.flatMap((w) => (w === "" ? [] : [w + needle, needle + w]))]) {
              if (made++ < MAX_CONTAINING) add(text);
            }
          }
        }
      }
      gap(rk, `texts at ${shown} that \`contains\` a bound value in, other than the value itself${(groupExamples.get(leader) ?? []).length > 0 ? " or joined to an example of each class" : ""}`);
    }
    for (const value of options.values ?? []) if (subject === "args" || typeof value === "string") add(value);
    if (rootPlaces.some((id) => amounts.has(id))) gap(rk, `amounts at ${shown} other than 0, each maximum and one unit more`);
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
  const placeList: Place[] = [...places.entries()].map(([id, { subject, key }]) => {
    const root = rootKeys.indexOf(rootKey(subject, key));
    const reaches = [0, ...roots[root]!.candidates.map((_, c) => c + 1)].map((candidate) => {
      const event = eventOf(universeWithoutPlaces, { action: 0, status: 0, roots: roots.map((_, r) => (r === root ? candidate : 0)) }, 1);
      return [...new Set(boundValueKeys(event, subject, key))].map((k) => boundIndex(valueOfKey(event, subject, key, k)));
    });
    return { subject, key, id, root, reaches };
  });

  // Several values at once under one key (a list): a list matches what one of its values matches,
  // so it matters to a single event only when it meets a combination of the key's patterns no one
  // value meets; and it always matters to what variables bind (it binds each of its values).
  rootKeys.forEach((rk, r) => {
    const info = rootInfo.get(rk)!;
    if (signature !== undefined && info.subject === "args") {
      const known = signature.keys.get(keyPathId([info.name!]));
      if (known !== undefined && known.listLength === undefined && info.paths.size === 1 && info.paths.has("")) return;
    }
    const atoms = info.places.flatMap((id) => places.get(id)!.atoms).filter((atom) => atom.kind !== "keyBind" && atom.kind !== "keyContains");
    const seen = new Set<string>();
    for (let c = 1; c <= roots[r]!.candidates.length; c++) {
      const event = eventOf(universeWithoutPlaces, { action: 0, status: 0, roots: roots.map((_, k) => (k === r ? c : 0)) }, 1);
      seen.add(atoms.map((atom) => (compileAtom(atom)(event) ? "1" : "0")).join(""));
    }
    const vectors = [...seen];
    const union = (a: string, b: string) => Array.from(a, (bit, k) => (bit === "1" || b[k] === "1" ? "1" : "0")).join("");
    const closed = vectors.every((a) => vectors.every((b) => seen.has(union(a, b))));
    const binds = info.places.some((id) => places.get(id)!.atoms.some((atom) => atom.kind === "keyBind"));
    const shown = shownRootKey(info);
    if (!closed) gap(rk, `lists at ${shown} (their values meet patterns no one value meets together)`);
    else if (binds && groupBinds.get(find(rk)) === true) gap(rk, `lists at ${shown} (several values bound at once)`, false);
  });

  const gaps: Gap[] = [];
  rootKeys.forEach((rk, root) => {
    for (const { text, oneEvent } of gapsByRoot.get(rk) ?? []) gaps.push({ root, text, oneEvent });
  });
  return { actions: eventActions, named: eventActions.filter((action) => actions.has(action)), roots, places: placeList, bound: [...bound.values()].map((entry) => entry.value), timed, runLength, gaps };
}

function shownRootKey(root: { readonly subject: Subject; readonly name?: string }): string {
  return root.subject === "output" ? "`output`" : `\`${keyPathDisplay([root.name!])}\``;
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
 *
 * What many terms share is defined once, as a constant of its own (`d_…`, `v_…`: an atom on an
 * event, the value a place reaches, whether an output contains a bound value), so that a query's
 * size grows with its structure, not with the candidates at each use. Building a term may add such
 * definitions to `declarations`: read it after the terms.
 */
export class SymbolicRun {
  readonly declarations: string[] = [];
  /** The constants defined so far, by what they stand for (a constant's name, or a small term kept inline). */
  private readonly definitions = new Map<string, string>();
  /** Per defined value constant, the indexes in `bound` it can take. */
  private readonly domains = new Map<string, ReadonlySet<number>>();
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

  /** The candidates of the atom's root on which the engine's predicate for the atom holds (once per universe). */
  private holding(atom: Exclude<Atom, { kind: "action" | "status" }>): readonly number[] {
    const truths = cacheOf(this.universe).truths;
    let known = truths.get(atom);
    if (known === undefined) {
      const predicate = compileAtom(atom);
      const root = this.placeAt(atom.subject, atom.key).root;
      known = this.candidatesOf(root).filter((candidate) => predicate(this.single(root, candidate)));
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
        return this.defined(`atom:${atomIdOf(formula)}:${i}`, () => this.oneOf(this.placeAt(formula.subject, formula.key).root, i, this.holding(formula)));
    }
  }

  // ---- bindings ----------------------------------------------------------------------------

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


/** An exact decimal as an SMT real. */
function real(value: Decimal): string {
  const text = formatDecimal(value);
  return text.includes(".") ? text : `${text}.0`;
}
