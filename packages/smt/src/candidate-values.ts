import type { CheckedStatement, Formula, Subject } from "@vigil/checker";
import { needsTime, statementPatterns, walkFormula } from "@vigil/checker";
import { boundValueKeys, compileAtom, formatDecimal, isAtom, type Atom } from "@vigil/engine";
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
import type { Gap, Place, Root, Universe } from "./symbolic.js";
import { listCandidates } from "./list-candidates.js";
import { NUMBER_TEXT, nonNumberLookalike, numberExamples, numberTextsAlike, valueThresholds } from "./number-classes.js";
import { eventOf } from "./symbolic-events.js";
import { textClasses, type TextCondition } from "./text-classes.js";

/**
 * The candidate values of symbolic runs: `universeOf` reads what statements read (their actions,
 * and the keys their atoms look at), and gives each root a value of every class its atoms tell
 * apart, saying per key what the candidates leave out (see `Universe`).
 */

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
    // Comparisons: every class of numbers their thresholds tell apart (`number-classes.ts`); with
    // text patterns on the same keys, whether numbers' texts all look alike to them.
    const thresholds = valueThresholds(atoms);
    const textPatterns = list.some((condition) => condition.kind !== "equals");
    if (thresholds.length > 0 && textPatterns) list.push(NUMBER_TEXT);
    const classes = textClasses(list, perClass);
    if (classes.incomplete !== undefined) {
      for (const rk of members) gap(rk, `some texts at ${shownRootKey(rootInfo.get(rk)!)} (its patterns' classes were not all found: ${classes.incomplete})`);
    }
    const constants = new Set(atoms.flatMap((atom) => (atom.kind === "keyIn" ? atom.values.map((v) => v.key) : [])));
    if (thresholds.length > 0) {
      const numbers = numberExamples(thresholds, constants, perClass);
      numbers.values.forEach((value) => addTo(values, value));
      // The output's text holds no JSON number: the same classes as strings.
      if (members.some((rk) => rootInfo.get(rk)!.subject === "output")) numbers.texts.forEach((text) => addTo(values, text));
      for (const rk of members) for (const missing of numbers.missing) gap(rk, `numbers at ${shownRootKey(rootInfo.get(rk)!)} ${missing} (none can be written)`);
      if (textPatterns) {
        if (numberTextsAlike(list, classes.classes)) addTo(values, nonNumberLookalike(constants));
        else for (const rk of members) gap(rk, `numbers at ${shownRootKey(rootInfo.get(rk)!)} in some combinations of its comparisons and text patterns (the patterns match the texts of some numbers and not others)`);
      }
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

  // Lists, at the roots whose atoms a list can meet otherwise than one value does (`every`,
  // counts, comparisons): each combination of their atoms some list meets, at each length their
  // counts tell apart (`list-candidates.ts`).
  const listed = new Set<string>();
  rootKeys.forEach((rk, r) => {
    const info = rootInfo.get(rk)!;
    const atoms = info.places.flatMap((id) => places.get(id)!.atoms);
    if (!atoms.some(listSensitive)) return;
    listed.add(rk);
    const root = roots[r]!;
    let longestKnown: number | undefined;
    if (signature !== undefined && info.subject === "args") {
      // Under Σ, lists only where it shows some, and none longer.
      const lengths = [...signature.keys.values()].flatMap((key) => (key.segments[0] === info.name && key.listLength !== undefined ? [key.listLength] : []));
      if (lengths.length === 0) return;
      longestKnown = Math.max(...lengths);
    }
    const shape = listShape(info, info.subject);
    if (shape === "text") return;
    const shown = shownRootKey(info);
    if (shape === undefined) {
      gap(rk, `lists at ${shown} (it is read at several paths${info.subject === "args" ? ", some through list indexes" : " inside it"})`);
      return;
    }
    const event = (value: JsonValue) => eventOf({ actions: eventActions, roots: [{ ...root, candidates: [value] }] }, { action: 0, status: 0, roots: [1] }, 1);
    let elements: readonly JsonValue[];
    if (shape.elements === "candidates") {
      // At one path, each element holds one value there (the list's length is the count).
      const only = info.paths.size === 1 ? [...info.paths.values()][0]! : undefined;
      elements = only === undefined ? root.candidates : root.candidates.filter((e) => valuesAtSubject(event(shape.make([e])), "args", [info.name!, ...only]).length === 1);
    } else {
      elements = [...groupValues.get(find(rk))!.values()];
    }
    const lists = listCandidates({ elements, shape: shape.make, event, atoms, ...(longestKnown !== undefined ? { longestKnown } : {}) });
    const known = new Set(root.candidates.map(valueKey));
    roots[r] = { ...root, candidates: [...root.candidates, ...lists.values.filter((value) => !known.has(valueKey(value)))] };
    if (lists.reason !== undefined) gap(rk, `lists at ${shown} (${lists.reason})`);
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
    const binds = info.places.some((id) => places.get(id)!.atoms.some((atom) => atom.kind === "keyBind"));
    const shown = shownRootKey(info);
    if (listed.has(rk)) {
      // Its lists were searched above: they matter only to what variables bind.
      if (binds && groupBinds.get(find(rk)) === true) gap(rk, `lists at ${shown} (several values bound at once)`, false);
      return;
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
    if (!closed) gap(rk, `lists at ${shown} (their values meet patterns no one value meets together)`);
    else if (binds && groupBinds.get(find(rk)) === true) gap(rk, `lists at ${shown} (several values bound at once)`, false);
  });

  const gaps: Gap[] = [];
  rootKeys.forEach((rk, root) => {
    for (const { text, oneEvent } of gapsByRoot.get(rk) ?? []) gaps.push({ root, text, oneEvent });
  });
  return { actions: eventActions, named: eventActions.filter((action) => actions.has(action)), roots, places: placeList, bound: [...bound.values()].map((entry) => entry.value), timed, runLength, gaps };
}

/** Whether a list can meet the atom otherwise than one of its values does: `every`, a count, a comparison (`amount > 5 and amount < 3` by two values). */
function listSensitive(atom: Atom): boolean {
  return atom.kind === "keyCompare" || atom.kind === "keyCount" || ("every" in atom && atom.every === true);
}

/**
 * How a root holds a list: as itself, its elements being the root's candidates (an argument read at
 * its name, or at paths that begin with a name: `passengers.age` reads every passenger's age), or
 * with the list at its one key path (`argv.0`; in the output, the one path into its JSON object,
 * the output's own text being one value), its elements being the group's values; `text` for an
 * output read as a text only; undefined when neither serves (several paths, one of them through a
 * list index, or several into the output).
 */
function listShape(
  root: { readonly name?: string; readonly paths: ReadonlyMap<string, readonly PathSegment[]> },
  subject: Subject,
): { elements: "candidates" | "group"; make: (list: JsonValue[]) => JsonValue } | "text" | undefined {
  const paths = [...root.paths.values()];
  if (subject === "args" && paths.every((path) => path.length === 0 || typeof path[0] === "string")) return { elements: "candidates", make: (list) => list };
  const inside = subject === "output" ? paths.filter((path) => path.length > 0) : paths;
  if (subject === "output" && inside.length === 0) return "text";
  if (inside.length !== 1) return undefined;
  const path = inside[0]!;
  return { elements: "group", make: (list) => (subject === "output" ? JSON.stringify(structureOf([path], () => list)) : structureOf([path], () => list)) };
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
