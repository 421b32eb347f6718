import type { CheckedStatement, Formula, KeyContainsAtom, Subject } from "@vigil/checker";
import { statementPatterns, walkFormula } from "@vigil/checker";
import { atomHolds, containsText, isAtom, type Atom } from "@vigil/engine";
import { displayValue, keyPathDisplay, keyPathId, valueKey, valuesAtSubject, type JsonValue, type PathSegment, type TraceEvent } from "@vigil/trace";
import { comment, quotedSymbol } from "./smt-terms.js";

/**
 * The part of the fact base ⟦τ⟧ (Definition 1) that one statement's requirement can mention,
 * with the SMT symbols that name each fact. Facts about symbols the requirement never uses cannot
 * change its satisfiability, so they are left out of the query.
 *
 * Each atom of the statement's patterns (Figure 5's foot: a ∈ α, k ∈ S, k ~ p, k = x, s = ⊤/⊥,
 * o ~ p) is a ground fact per event: `(|ψn| i)` is its outcome on e_i, decided by the engine's atom
 * module, the one place that says what an atom means on an event. The solver sees the atoms'
 * ground outcomes, as the paper has it for text matching, and reasons about everything above them:
 * the connectives, the temporal forms, and the values variables bind. For a key bound to a variable,
 * `(|#k| i)` is how many values e_i has under k (0 when it lacks k, 1 for a scalar, the length of a
 * list) and `(|k| i j)` its j-th value, a constructor of the Value datatype.
 */
export interface FactBase {
  readonly events: readonly TraceEvent[];
  /** Value constructors by {@link valueKey}; only values under keys the statement binds. */
  readonly valueSymbols: ReadonlyMap<string, string>;
  /** Per bound key (by {@link placeId}): its function symbols and the longest list seen under it. */
  readonly keys: ReadonlyMap<string, KeyFacts>;
  /** Per atom without a variable: the symbol of its ground outcome. */
  readonly atoms: ReadonlyMap<Atom, string>;
  /**
   * Per `k contains $x` atom: the symbol of the relation `(|C| i v)` (e_i's text at k contains the
   * text of the value v), and per event position the value constructors for which it holds.
   */
  readonly contains: ReadonlyMap<KeyContainsAtom, { readonly symbol: string; readonly holding: ReadonlyMap<number, readonly string[]> }>;
  /** SMT-LIB declarations and fact assertions, line by line. */
  readonly lines: readonly string[];
}

export interface KeyFacts {
  readonly subject: Subject;
  /** The key path: names, and list indexes (`argv.0` is `["argv", 0]`). */
  readonly segments: readonly PathSegment[];
  /** `(|k| i j)`: the j-th value of e_i under k. */
  readonly valueFunction: string;
  /** `(|#k| i)`: how many values e_i has under k. */
  readonly countFunction: string;
  /** The largest count over the trace: the bound of the finite quantification over a key's values. */
  readonly maxCount: number;
}

export const VALUE_SORT = "Value";
export const TUPLE_SORT = "Binding";

export function buildFactBase(statement: CheckedStatement, events: readonly TraceEvent[]): FactBase {
  const patterns = statement.form === "always" ? [] : statementPatterns(statement);
  const formulas: Formula[] = statement.form === "always" ? [statement.body] : patterns.map((p) => p.formula);
  const atoms: Atom[] = [];
  const seenAtoms = new Set<Atom>();
  const containsAtoms: KeyContainsAtom[] = [];
  const boundKeys = new Map<string, { readonly subject: Subject; readonly key: readonly PathSegment[] }>();
  for (const formula of formulas) {
    walkFormula(formula, (node) => {
      if (!isAtom(node) || seenAtoms.has(node)) return;
      seenAtoms.add(node);
      // The atoms with a variable are relations to a binding, lowered with it, not ground facts.
      if (node.kind === "keyBind") boundKeys.set(placeId(node.subject, node.key), { subject: node.subject, key: node.key });
      else if (node.kind === "keyContains") containsAtoms.push(node);
      else atoms.push(node);
    });
  }

  const lines: string[] = [];
  const facts: string[] = [];

  const atomSymbols = new Map<Atom, string>();
  atoms.forEach((atom, index) => {
    const symbol = `|ψ${index}|`;
    atomSymbols.set(atom, symbol);
    lines.push(comment(`ground outcome of ${truncate(describeAtom(atom))}`));
    lines.push(`(declare-fun ${symbol} (Int) Bool)`);
    for (const event of events) {
      facts.push(atomHolds(atom, event) ? `(assert (${symbol} ${event.position}))` : `(assert (not (${symbol} ${event.position})))`);
    }
  });

  const valueSymbols = new Map<string, string>();
  const valueComments: string[] = [];
  const keys = new Map<string, KeyFacts>();
  let keyIndex = 0;
  const boundValues: { symbol: string; key: string }[] = [];
  for (const [id, { subject, key: segments }] of boundKeys) {
    const display = placeDisplay(subject, segments);
    const valueFunction = quotedSymbol("k", display, keyIndex);
    const countFunction = quotedSymbol("#k", display, keyIndex);
    keyIndex++;
    let maxCount = 0;
    for (const event of events) {
      const values = valuesAtSubject(event, subject, segments);
      maxCount = Math.max(maxCount, values.length);
      facts.push(`(assert (= (${countFunction} ${event.position}) ${values.length}))`);
      values.forEach((value: JsonValue, j) => {
        const key = valueKey(value);
        let symbol = valueSymbols.get(key);
        if (symbol === undefined) {
          symbol = `v${valueSymbols.size}`;
          valueSymbols.set(key, symbol);
          boundValues.push({ symbol, key });
          valueComments.push(comment(`${symbol} = ${truncate(displayValue(value))}`));
        }
        facts.push(`(assert (= (${valueFunction} ${event.position} ${j}) ${symbol}))`);
      });
    }
    keys.set(id, { subject, segments, valueFunction, countFunction, maxCount });
  }

  // `k contains $x`: per event, the bound values whose text its text at k contains, decided by the engine.
  const contains = new Map<KeyContainsAtom, { symbol: string; holding: Map<number, string[]> }>();
  const containsLines: string[] = [];
  containsAtoms.forEach((atom, index) => {
    const symbol = `|C${index}|`;
    const holding = new Map<number, string[]>();
    const cases: string[] = [];
    for (const event of events) {
      const found = boundValues.filter(({ key }) => containsText(event, atom.subject, atom.key, key, atom.every === true)).map(({ symbol: value }) => value);
      if (found.length === 0) continue;
      holding.set(event.position, found);
      cases.push(`(and (= i ${event.position}) ${found.length === 1 ? `(= v ${found[0]})` : `(or ${found.map((v) => `(= v ${v})`).join(" ")})`})`);
    }
    contains.set(atom, { symbol, holding });
    containsLines.push(comment(`${truncate(describeAtom(atom))}: the events and bound values for which it holds`));
    containsLines.push(`(define-fun ${symbol} ((i Int) (v ${VALUE_SORT})) Bool ${cases.length === 0 ? "false" : cases.length === 1 ? cases[0] : `(or ${cases.join(" ")})`})`);
  });
  const tupleArity = statement.variables.length;
  if (boundKeys.size > 0) {
    lines.push(comment("V: the values under the keys this statement's variables bind"));
    for (const line of valueComments) lines.push(line);
    const constructors = valueSymbols.size > 0 ? [...valueSymbols.values()] : ["|v#none|"];
    lines.push(`(declare-datatype ${VALUE_SORT} (${constructors.map((c) => `(${c})`).join(" ")}))`);
    if (tupleArity > 1) {
      const fields = Array.from({ length: tupleArity }, (_, i) => `(${TUPLE_SORT.toLowerCase()}${i} ${VALUE_SORT})`).join(" ");
      lines.push(comment("a binding of the statement's variables, in the order " + statement.variables.map((v) => `$${v}`).join(", ")));
      lines.push(`(declare-datatype ${TUPLE_SORT} ((tuple ${fields})))`);
    }
    for (const info of keys.values()) {
      lines.push(comment(`${placeDisplay(info.subject, info.segments)}: value count and values`));
      lines.push(`(declare-fun ${info.countFunction} (Int) Int)`);
      lines.push(`(declare-fun ${info.valueFunction} (Int Int) ${VALUE_SORT})`);
    }
    for (const line of containsLines) lines.push(line);
  }

  lines.push(comment(`⟦τ⟧: the facts of the ${events.length} events`));
  // A loop, not `push(...facts)`: a spread passes every fact as an argument, and the engine's
  // argument limit is far below the facts of a long trace.
  for (const fact of facts) lines.push(fact);
  return { events, valueSymbols, keys, atoms: atomSymbols, contains, lines };
}

/** A bound place's identity: its subject and key path. */
export function placeId(subject: Subject, key: readonly PathSegment[]): string {
  return `${subject}:${keyPathId(key)}`;
}

function placeDisplay(subject: Subject, key: readonly PathSegment[]): string {
  return subject === "output" ? (key.length === 0 ? "o(e)" : `o(e).${keyPathDisplay(key)}`) : `e[${keyPathDisplay(key)}]`;
}

/** An atom as the policy writes it, for the query's comments. */
function describeAtom(atom: Atom): string {
  switch (atom.kind) {
    case "action":
      return `action in {${atom.actions.join(", ")}}`;
    case "keyIn":
      return `${quantifiedPath(atom)} in {${atom.values.map((v) => displayValue(v.value)).join(", ")}}`;
    case "keyMatch":
      return `${quantifiedPath(atom)} ~ ${JSON.stringify(atom.pattern)}`;
    case "keyRegex":
      return `${quantifiedPath(atom)} matches /${atom.source}/${atom.flags}`;
    case "keyBind":
      return `${subjectPath(atom)} = $${atom.variable}`;
    case "keyContains":
      return `${quantifiedPath(atom)} contains $${atom.variable}`;
    case "keyCompare":
      return `${quantifiedPath(atom)} ${atom.op} ${atom.value}`;
    case "keyCount":
      return `count(${subjectPath(atom)}) ${atom.op} ${atom.value}`;
    case "status":
      return `status = ${atom.status}`;
  }
}

function quantifiedPath(atom: { readonly subject: Subject; readonly key: readonly PathSegment[]; readonly every?: true }): string {
  return atom.every === true ? `every(${subjectPath(atom)})` : subjectPath(atom);
}

function subjectPath(atom: { readonly subject: Subject; readonly key: readonly PathSegment[] }): string {
  if (atom.subject === "args") return keyPathDisplay(atom.key);
  return atom.key.length === 0 ? "output" : `output.${keyPathDisplay(atom.key)}`;
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
