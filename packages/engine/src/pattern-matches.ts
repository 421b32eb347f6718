import type { CheckedPattern, CheckedStatement } from "@vigil/checker";
import type { Span } from "@vigil/diagnostics";
import type { TraceEvent } from "@vigil/trace";
import { PatternBinder } from "./atoms.js";

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

/** The patterns of a statement with their roles, in the order the form names them. */
export function statementPatterns(statement: CheckedStatement): readonly { readonly role: PatternRole; readonly pattern: CheckedPattern }[] {
  switch (statement.form) {
    case "abs":
      return [{ role: "pattern", pattern: statement.pattern }];
    case "prec":
    case "resp":
    case "rslv":
    case "bresp":
      return [
        { role: "first", pattern: statement.first },
        { role: "second", pattern: statement.second },
      ];
    case "until":
      return [
        { role: "trigger", pattern: statement.trigger },
        { role: "resolve", pattern: statement.resolve },
        { role: "bad", pattern: statement.bad },
      ];
    case "always":
      return [];
  }
}

/** Counts, over a run read event by event, the events each pattern of each statement matched. */
export class PatternMatches {
  private readonly patterns: { readonly role: PatternRole; readonly span: Span; readonly binder: PatternBinder; count: number; readonly first: number[] }[][];

  constructor(readonly statements: readonly CheckedStatement[]) {
    this.patterns = statements.map((statement) =>
      statementPatterns(statement).map(({ role, pattern }) => ({ role, span: pattern.span, binder: new PatternBinder(pattern, statement.variables), count: 0, first: [] })),
    );
  }

  step(event: TraceEvent): void {
    for (const patterns of this.patterns) {
      for (const entry of patterns) {
        if (!entry.binder.mayHoldForSome(event)) continue;
        entry.count++;
        if (entry.first.length < MATCHES_KEPT) entry.first.push(event.position);
      }
    }
  }

  /** The counts of the statement at `index`, one per pattern in the form's order. */
  counts(index: number): readonly PatternMatchCount[] {
    return (this.patterns[index] ?? []).map(({ role, span, count, first }) => ({ role, span, count, first: [...first] }));
  }
}
