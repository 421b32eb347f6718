import type { CheckedScope, CheckedStatement } from "@vigil/checker";
import { scopeStretches } from "@vigil/engine";
import type { TraceEvent } from "@vigil/trace";
import { lowerStatement } from "./lower-smt.js";
import type { LowerOptions } from "./smt-query.js";
import { comment } from "./smt-terms.js";

/**
 * A standalone SMT-LIB 2.6 script for one statement, for re-checking with any solver: `unsat`
 * means the trace breaks the statement, and `(get-unsat-core)` names the offending events' literals.
 */
export function renderSmtLib(statement: CheckedStatement, events: readonly TraceEvent[], options: LowerOptions = {}): string {
  if (statement.scope !== undefined) return renderScoped(statement, statement.scope, events, options);
  const query = lowerStatement(statement, events, options);
  const header = [
    comment(`Vigil: policy ${statement.policy}, rule ${statement.name} (${statement.form})`),
    ...(statement.doc !== undefined ? statement.doc.split("\n").map((line) => comment(`/// ${line}`)) : []),
    comment("unsat ⇔ the trace breaks the rule; the unsat core's r_i name the offending events e_i"),
    "(set-option :produce-unsat-cores true)",
  ];
  const literals = query.conditions.map((c) => c.literal).join(" ");
  return [...header, query.body.trimEnd(), `(check-sat-assuming (${literals}))`, "(get-unsat-core)", ""].join("\n");
}

/**
 * A scoped statement's scripts: one per judged stretch (the stretches are computed outside the
 * solver, as the decider does), each over the stretch's events renumbered from 1, with the places
 * they have in the whole run in a comment.
 */
function renderScoped(statement: CheckedStatement, scope: CheckedScope, events: readonly TraceEvent[], options: LowerOptions): string {
  const { scope: _scope, ...unscoped } = statement;
  const scripts = scopeStretches(scope, events).flatMap((stretch) => {
    if (!stretch.judged || stretch.events.length === 0) return [];
    const first = stretch.events[0]!.position;
    const last = stretch.events[stretch.events.length - 1]!.position;
    const renumbered = stretch.events.map((event, index) => ({ ...event, position: index + 1 }));
    return [[comment(`scope ${scope.kind}: the stretch of events ${first}–${last}, numbered 1–${renumbered.length} below (event i is event ${first} + i − 1 of the run)`), renderSmtLib(unscoped as CheckedStatement, renumbered, options)].join("\n")];
  });
  if (scripts.length === 0) return `${comment(`Vigil: policy ${statement.policy}, rule ${statement.name}: no stretch of the run is judged under its scope (${scope.kind}); it holds`)}\n`;
  return scripts.join("\n(reset)\n");
}
