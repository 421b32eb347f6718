import type { CheckedStatement, Formula } from "@vigil/checker";
import { statementPatterns, walkFormula } from "@vigil/checker";
import {
  displayValue,
  keyPathDisplay,
  keyPathId,
  valueKey,
  valuesAtPath,
  wildcardMatches,
  type JsonValue,
  type TraceEvent,
} from "@vigil/trace";
import { comment, quotedSymbol } from "./smt-terms.js";

/**
 * The part of the fact base ⟦τ⟧ (Definition 1) that one statement's requirement can mention,
 * with the SMT symbols that name each field. Facts about symbols the requirement never uses
 * cannot change its satisfiability, so they are left out of the query.
 *
 * Fields of event e_i become applications of uninterpreted functions to the event's position i:
 * `(action i)`, `(status i)`, and for an argument key k, `(|#k| i)` (how many values e_i has under
 * k: 0 when it lacks k, 1 for a scalar, the length of a list) and `(|k| i j)` (its j-th value).
 * Wildcard conditions are decided outside the solver: `(|~n| i)` is the ground outcome e_i[k] ≈ p.
 */
export interface FactBase {
  readonly events: readonly TraceEvent[];
  readonly usesAction: boolean;
  readonly usesStatus: boolean;
  /** The action constructor of each action name of the trace. */
  readonly actionSymbols: ReadonlyMap<string, string>;
  /** Value constructors by {@link valueKey}; only values under keys the statement uses. */
  readonly valueSymbols: ReadonlyMap<string, string>;
  /** Per used key (by keyPathId): its function symbols and the longest list seen under it. */
  readonly keys: ReadonlyMap<string, KeyFacts>;
  /** Per wildcard atom: the symbol of its ground outcome. */
  readonly matches: ReadonlyMap<Formula, string>;
  /** Whether a tuple sort is needed for statements with several variables. */
  readonly tupleArity: number;
  /** SMT-LIB declarations and fact assertions, line by line. */
  readonly lines: readonly string[];
}

export interface KeyFacts {
  readonly segments: readonly string[];
  /** `(|k| i j)`: the j-th value of e_i under k. */
  readonly valueFunction: string;
  /** `(|#k| i)`: how many values e_i has under k. */
  readonly countFunction: string;
  /** The largest count over the trace: the bound of the finite quantification over a key's values. */
  readonly maxCount: number;
}

export const STATUS_SORT = "Status";
export const ACTION_SORT = "Action";
export const VALUE_SORT = "Value";
export const TUPLE_SORT = "Binding";

export function buildFactBase(statement: CheckedStatement, events: readonly TraceEvent[]): FactBase {
  const formulas = statement.form === "always" ? [statement.body] : statementPatterns(statement).map((p) => p.formula);
  let usesAction = false;
  let usesStatus = false;
  const usedKeys = new Map<string, readonly string[]>();
  const wildcardAtoms: Formula[] = [];
  for (const formula of formulas) {
    walkFormula(formula, (node) => {
      switch (node.kind) {
        case "action":
          usesAction = true;
          break;
        case "status":
          usesStatus = true;
          break;
        case "keyIn":
        case "keyBind":
          usedKeys.set(keyPathId(node.key), node.key);
          break;
        case "keyMatch":
        case "outputMatch":
          if (!wildcardAtoms.includes(node)) wildcardAtoms.push(node);
          break;
        default:
          break;
      }
    });
  }

  const lines: string[] = [];
  const facts: string[] = [];

  const actionSymbols = new Map<string, string>();
  if (usesAction) {
    for (const event of events) {
      if (!actionSymbols.has(event.action)) actionSymbols.set(event.action, quotedSymbol("a", event.action, actionSymbols.size));
    }
    // A datatype needs a constructor; an empty trace gets one that no event carries.
    const constructors = actionSymbols.size > 0 ? [...actionSymbols.values()] : ["|a#none|"];
    lines.push(comment("A: the actions of the trace"));
    lines.push(`(declare-datatype ${ACTION_SORT} (${constructors.map((c) => `(${c})`).join(" ")}))`);
    lines.push(`(declare-fun action (Int) ${ACTION_SORT})`);
    for (const event of events) facts.push(`(assert (= (action ${event.position}) ${actionSymbols.get(event.action)}))`);
  }

  if (usesStatus) {
    lines.push(comment("s(e): ok (⊤), error (⊥), or none while the call has no result"));
    lines.push(`(declare-datatype ${STATUS_SORT} ((ok) (error) (none)))`);
    lines.push(`(declare-fun status (Int) ${STATUS_SORT})`);
    for (const event of events) facts.push(`(assert (= (status ${event.position}) ${event.status ?? "none"}))`);
  }

  const valueSymbols = new Map<string, string>();
  const valueComments: string[] = [];
  const keys = new Map<string, KeyFacts>();
  const keyFacts: string[] = [];
  let keyIndex = 0;
  for (const [id, segments] of usedKeys) {
    const display = keyPathDisplay(segments);
    const valueFunction = quotedSymbol("k", display, keyIndex);
    const countFunction = quotedSymbol("#k", display, keyIndex);
    keyIndex++;
    let maxCount = 0;
    for (const event of events) {
      const values = valuesAtPath(event.args, segments);
      maxCount = Math.max(maxCount, values.length);
      keyFacts.push(`(assert (= (${countFunction} ${event.position}) ${values.length}))`);
      values.forEach((value: JsonValue, j) => {
        const key = valueKey(value);
        let symbol = valueSymbols.get(key);
        if (symbol === undefined) {
          symbol = `v${valueSymbols.size}`;
          valueSymbols.set(key, symbol);
          valueComments.push(comment(`${symbol} = ${truncate(displayValue(value))}`));
        }
        keyFacts.push(`(assert (= (${valueFunction} ${event.position} ${j}) ${symbol}))`);
      });
    }
    keys.set(id, { segments, valueFunction, countFunction, maxCount });
  }
  const tupleArity = statement.variables.length;
  if (usedKeys.size > 0) {
    lines.push(comment("V: the values under the keys this statement mentions"));
    lines.push(...valueComments);
    const constructors = valueSymbols.size > 0 ? [...valueSymbols.values()] : ["|v#none|"];
    lines.push(`(declare-datatype ${VALUE_SORT} (${constructors.map((c) => `(${c})`).join(" ")}))`);
    if (tupleArity > 1) {
      const fields = Array.from({ length: tupleArity }, (_, i) => `(${TUPLE_SORT.toLowerCase()}${i} ${VALUE_SORT})`).join(" ");
      lines.push(comment("a binding of the statement's variables, in the order " + statement.variables.map((v) => `$${v}`).join(", ")));
      lines.push(`(declare-datatype ${TUPLE_SORT} ((tuple ${fields})))`);
    }
    for (const info of keys.values()) {
      lines.push(comment(`e[${keyPathDisplay(info.segments)}]: value count and values`));
      lines.push(`(declare-fun ${info.countFunction} (Int) Int)`);
      lines.push(`(declare-fun ${info.valueFunction} (Int Int) ${VALUE_SORT})`);
    }
  }

  const matches = new Map<Formula, string>();
  wildcardAtoms.forEach((atom, index) => {
    const symbol = `|~${index}|`;
    matches.set(atom, symbol);
    const description =
      atom.kind === "keyMatch" ? `${keyPathDisplay(atom.key)} ~ ${JSON.stringify(atom.pattern)}` : atom.kind === "outputMatch" ? `output ~ ${JSON.stringify(atom.pattern)}` : "";
    lines.push(comment(`ground outcome of ${truncate(description)}, decided outside the solver`));
    lines.push(`(declare-fun ${symbol} (Int) Bool)`);
    for (const event of events) {
      const outcome =
        atom.kind === "keyMatch"
          ? valuesAtPath(event.args, atom.key).some((value) => wildcardMatches(atom.pattern, value))
          : atom.kind === "outputMatch" && event.output !== undefined && wildcardMatches(atom.pattern, event.output);
      facts.push(outcome ? `(assert (${symbol} ${event.position}))` : `(assert (not (${symbol} ${event.position})))`);
    }
  });

  lines.push(comment(`⟦τ⟧: the facts of the ${events.length} events`));
  lines.push(...facts, ...keyFacts);
  return { events, usesAction, usesStatus, actionSymbols, valueSymbols, keys, matches, tupleArity, lines };
}

function truncate(text: string): string {
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
