import type { CheckedStatement } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { buildFactBase } from "./fact-base.js";
import { Lowering } from "./lower-forms.js";
import { defaultWindowSpelledOutUpTo, TextBudget, type LowerOptions, type SmtQuery } from "./smt-query.js";
import { comment } from "./smt-terms.js";

/**
 * Lowers a statement to its requirement R_φ = ∧_e R_φ(e) over the fact base (Figure 5, Section
 * 5.2). Each R_φ(e) is asserted under its own assumption literal, so the solver's unsatisfiable
 * core names the events whose conditions the facts refute (Section 5.3).
 */
export function lowerStatement(statement: CheckedStatement, events: readonly TraceEvent[], options: LowerOptions = {}): SmtQuery {
  const budget = new TextBudget(options.maxLength ?? Infinity);
  // The text per event grows with the atoms, windows and bindings, and is never below the condition's four lines.
  budget.charge(events.length * 80);
  const facts = buildFactBase(statement, events);
  for (const line of facts.lines) budget.charge(line.length + 1);
  const lowering = new Lowering(statement, facts, options.encoding ?? "shared", options.windowSpelledOutUpTo ?? defaultWindowSpelledOutUpTo, budget);
  const conditions = lowering.conditions();
  const lines = [...facts.lines];
  if (lowering.definitions.length > 0) {
    lines.push(comment("abbreviations of the running disjunctions (each states what it abbreviates)"));
    for (const definition of lowering.definitions) lines.push(definition);
  }
  lines.push(comment(`R_φ: one condition c_i = R_φ(e_i) per event, tracked by the literal r_i`));
  const tracked: { position: number; literal: string; condition: string }[] = [];
  for (const { position, condition } of conditions) {
    const literal = `r${position}`;
    const name = `c${position}`;
    tracked.push({ position, literal, condition: name });
    lines.push(`(declare-const ${name} Bool)`);
    lines.push(`(assert (= ${name} ${condition}))`);
    lines.push(`(declare-const ${literal} Bool)`);
    lines.push(`(assert (=> ${literal} ${name}))`);
  }
  return { body: lines.join("\n") + "\n", conditions: tracked };
}
