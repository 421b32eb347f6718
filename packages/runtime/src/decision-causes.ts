import type { CheckedStatement, Formula, Violation } from "@vigil/compiler";
import { isTemporal, matchesPattern, ruleId } from "@vigil/engine";
import type { JsonValue, TraceEvent } from "@vigil/trace";
import { timeField, type CallEvent } from "./call-events.js";
import type { InvolvedEvent } from "./reason.js";
import type { RunQueries } from "./run-queries.js";

/**
 * The events a decision names, so that its reason can show them: the earlier events that made a
 * violation where its witnesses alone do not show them (the causes), and every event the
 * violations name, read back from the run's stored events or taken from the call being decided.
 */

export class DecisionCauses {
  constructor(
    private readonly queries: RunQueries,
    private readonly statements: readonly CheckedStatement[],
  ) {}

  /**
   * The earlier events that made each violation, where its witnesses alone do not show them: for
   * `always not (egress and once read_secret)`, broken by an egress, the latest reads of a secret.
   * The `once` operands that are patterns (conditions on one event) are matched against the run's
   * events before `before`, newest first. Keyed by the rule's identity (`ruleId`).
   */
  of(runId: string, violations: readonly Violation[], before: number): Map<string, number[]> {
    const causes = new Map<string, number[]>();
    const wanted = violations.flatMap((violation) => {
      const statement = this.statement(violation);
      const operands = statement?.form === "always" ? onceOperands(statement.body) : [];
      return operands.length > 0 ? [{ violation, operands }] : [];
    });
    if (wanted.length === 0) return causes;
    for (const row of this.queries.eventsBefore(runId, before, CAUSE_SEARCH_DEPTH)) {
      const event: TraceEvent = {
        position: row.position,
        action: row.action,
        args: JSON.parse(row.args) as { [key: string]: JsonValue },
        ...(row.status === "ok" || row.status === "error" ? { status: row.status } : {}),
        ...(row.output !== null ? { output: row.output } : {}),
        ...timeField(row.time ?? undefined),
      };
      let searching = false;
      for (const { violation, operands } of wanted) {
        const found = causes.get(ruleId(violation)) ?? [];
        if (found.length >= CAUSES_SHOWN) continue;
        searching = true;
        if (operands.some((operand) => matchesPattern(operand, event))) causes.set(ruleId(violation), [...found, event.position]);
      }
      if (!searching) break;
    }
    return causes;
  }

  /** The events the violations name: earlier ones from the database, the call's own from `events`. */
  involvedEvents(runId: string, violations: readonly Violation[], events: readonly CallEvent[], firstPosition: number, causes = new Map<string, number[]>()): InvolvedEvent[] {
    const positions = [...new Set([...violations.flatMap((v) => v.witnesses), ...[...causes.values()].flat()])].sort((a, b) => a - b);
    const involved: InvolvedEvent[] = [];
    for (const position of positions.slice(0, 50)) {
      if (position >= firstPosition) {
        const event = events[position - firstPosition];
        if (event !== undefined) involved.push({ position, action: event.action, args: event.args, current: true, ...(position > firstPosition ? { grounded: true } : {}) });
        continue;
      }
      const row = this.queries.event(runId, position);
      if (row !== undefined) involved.push({ position, action: row.action, args: JSON.parse(row.args) as { [key: string]: JsonValue }, current: false });
    }
    return involved;
  }

  private statement(violation: Violation): CheckedStatement | undefined {
    return this.statements.find((s) => s.policy === violation.policy && s.name === violation.name);
  }
}

/** The involved events by position, as the reasons (reason.ts) look them up. */
export function lookup(involved: readonly InvolvedEvent[]): (position: number) => InvolvedEvent | undefined {
  const byPosition = new Map(involved.map((event) => [event.position, event]));
  return (position) => byPosition.get(position);
}

/** How many earlier events are searched for the causes of a violation, and how many are named. */
const CAUSE_SEARCH_DEPTH = 10_000;
const CAUSES_SHOWN = 3;

/** The operands of the `once` operators of a formula that are patterns (no temporal operator inside). */
function onceOperands(formula: Formula): Formula[] {
  const found: Formula[] = [];
  const visit = (f: Formula): void => {
    if (f.kind === "once" && !isTemporal(f.operand)) found.push(f.operand);
    if (f.kind === "and" || f.kind === "or") f.operands.forEach(visit);
    else if (f.kind === "not" || f.kind === "once" || f.kind === "eventually") visit(f.operand);
  };
  visit(formula);
  return found;
}
