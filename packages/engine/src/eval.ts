import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { createMachine, sortedUnique } from "./machines.js";

/**
 * The offline check of one statement: its forward machine run over the whole trace, every event
 * in order, then `finish`. The witnesses are every event whose condition R_φ(e) is false, ascending
 * (Figure 5, Section 5.3); the SMT decider must return exactly the same.
 */
export function evaluateStatement(statement: CheckedStatement, events: Iterable<TraceEvent>): StatementOutcome {
  const machine = createMachine(statement);
  const witnesses: number[] = [];
  for (const event of events) for (const position of machine.step(event)) witnesses.push(position);
  for (const position of machine.finish()) witnesses.push(position);
  const sorted = sortedUnique(witnesses);
  return { holds: sorted.length === 0, witnesses: sorted };
}
