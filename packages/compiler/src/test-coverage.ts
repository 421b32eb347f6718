import { ruleId, type CheckedStatement } from "@vigil/checker";
import type { Span } from "@vigil/diagnostics";
import type { PatternMatchCount } from "@vigil/engine";
import type { RuleCoverage, TestResult } from "./test-results.js";

/**
 * What the tests that ran cover of each rule: violated as expected, held non-vacuously as expected,
 * and the patterns that matched some event. Only expectations that passed count.
 */
export function coverageOf(statements: readonly CheckedStatement[], results: readonly TestResult[]): RuleCoverage[] {
  return statements.map((statement, index) => {
    const rule = ruleId(statement);
    const violatedBy = results.filter((result) => result.covers.violated.includes(rule)).map((result) => result.name);
    const heldBy = results.filter((result) => result.covers.heldNonVacuously.includes(rule)).map((result) => result.name);
    const holdApplies = statement.form !== "abs" && statement.form !== "always";
    return {
      policy: statement.policy,
      name: statement.name,
      form: statement.form,
      span: statement.span,
      violatedBy,
      ...(holdApplies ? { heldBy } : {}),
      patterns: statementPatternsMatched(results, index),
      covered: violatedBy.length > 0 && (!holdApplies || heldBy.length > 0),
    };
  });
}

function statementPatternsMatched(results: readonly TestResult[], index: number): RuleCoverage["patterns"] {
  const totals: { role: PatternMatchCount["role"]; span: Span; matched: number }[] = [];
  for (const result of results) {
    const why = result.rules[index];
    if (why === undefined) continue;
    why.patterns.forEach((pattern, i) => {
      totals[i] ??= { role: pattern.role, span: pattern.span, matched: 0 };
      totals[i]!.matched += pattern.count;
    });
  }
  return totals;
}
