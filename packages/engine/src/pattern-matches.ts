import { statementPatterns, type CheckedPattern, type CheckedStatement } from "@vigil/checker/ir";
import type { Span } from "@vigil/diagnostics";
import type { TraceEvent } from "@vigil/trace";
import { PatternBinder } from "./atoms.js";
import { actionsOf } from "./machines/relevant-actions.js";

/**
 * Which events each pattern of a statement matched: the "why" behind a verdict. A pattern with
 * variables counts an event when some binding could make it match (the variables' agreement
 * between patterns is the statement's business, not the pattern's). `always` has no patterns of
 * its own here: its body is a temporal formula, judged as a whole.
 */

/** The part a pattern plays in its statement's form. */
export type PatternRole = "pattern" | "first" | "second" | "trigger" | "resolve" | "bad";

export interface PatternMatchCount {
  readonly role: PatternRole;
  /** Where the pattern is written in the policy. */
  readonly span: Span;
  /** On how many events it matched, and the first of them. */
  readonly count: number;
  readonly first: readonly number[];
}

/** How many of the first matching positions are kept per pattern. */
const MATCHES_KEPT = 10;

/** The roles of a form's patterns, in the order the checker's `statementPatterns` lists them. */
const roles: Readonly<Record<CheckedStatement["form"], readonly PatternRole[]>> = {
  abs: ["pattern"],
  prec: ["first", "second"],
  resp: ["first", "second"],
  bresp: ["first", "second"],
  rslv: ["first", "second"],
  until: ["trigger", "resolve", "bad"],
  always: [],
  limit: ["pattern"],
};

/** The patterns of a statement with their roles (none for `always`, whose body is judged whole). */
function patternsWithRoles(statement: CheckedStatement): readonly { readonly role: PatternRole; readonly pattern: CheckedPattern }[] {
  if (statement.form === "always") return [];
  return statementPatterns(statement).map((pattern, index) => ({ role: roles[statement.form][index]!, pattern }));
}

/** One pattern's count as a run reads it. */
interface PatternEntry {
  readonly role: PatternRole;
  readonly span: Span;
  readonly binder: PatternBinder;
  count: number;
  readonly first: number[];
}

/**
 * Counts, over a run read event by event, the events each pattern of each statement matched. An
 * event is tried only against the patterns that can hold on its action (most name theirs), so the
 * counting costs little beside the statements' machines.
 */
export class PatternMatches {
  private readonly patterns: PatternEntry[][];
  /** The patterns that name their actions, by action; and those that do not (tried on every event). */
  private readonly byAction = new Map<string, PatternEntry[]>();
  private readonly anyAction: PatternEntry[] = [];

  constructor(readonly statements: readonly CheckedStatement[]) {
    this.patterns = statements.map((statement) =>
      patternsWithRoles(statement).map(({ role, pattern }) => {
        const entry: PatternEntry = { role, span: pattern.span, binder: new PatternBinder(pattern, statement.variables), count: 0, first: [] };
        const actions = actionsOf(pattern.formula);
        if (actions === undefined) this.anyAction.push(entry);
        else for (const action of actions) this.byAction.set(action, [...(this.byAction.get(action) ?? []), entry]);
        return entry;
      }),
    );
  }

  step(event: TraceEvent): void {
    for (const entry of this.byAction.get(event.action) ?? NONE) count(entry, event);
    for (const entry of this.anyAction) count(entry, event);
  }

  /** The counts of the statement at `index`, one per pattern in the form's order. */
  counts(index: number): readonly PatternMatchCount[] {
    return (this.patterns[index] ?? []).map(({ role, span, count, first }) => ({ role, span, count, first: [...first] }));
  }
}

const NONE: readonly PatternEntry[] = [];

function count(entry: PatternEntry, event: TraceEvent): void {
  // A pattern that binds matches when the event gives it a binding (a key it binds must be there);
  // one that tests a bound value (`contains`) when some value could make it hold.
  const matches = entry.binder.generates ? entry.binder.bindings(event).length > 0 : entry.binder.mayHoldForSome(event);
  if (!matches) return;
  entry.count++;
  if (entry.first.length < MATCHES_KEPT) entry.first.push(event.position);
}
