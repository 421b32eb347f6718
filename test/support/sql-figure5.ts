import { compile } from "@vigil/compiler";
import { compileSql, type SqlJudge } from "@vigil/sql";
import fc from "fast-check";
import { expect } from "vitest";
import { onlyStatement, policyText, trace } from "../arbitraries.js";
import { figure5UntilBreakers, figure5Witnesses } from "../figure5.js";

/**
 * The SQL engine against Figure 5 read literally (test/figure5.ts), as the other engines are
 * (engines-agree.test.ts): random policies as text, random traces, the policy compiled to SQL and
 * run by `judge` over the events and values tables; the verdict, every witness and, for `until`,
 * every breaking event must be the reference's. Run on the embedded databases by
 * test/sql-agrees.test.ts and on the servers by test/sql-agrees-servers.test.ts.
 */
export function agreesWithFigure5(judge: () => SqlJudge) {
  return fc.asyncProperty(policyText, trace, async (source, events) => {
    const judge_ = judge();
    const statement = onlyStatement(source);
    const expected = figure5Witnesses(statement, events);
    await judge_.reset();
    for (const event of events) judge_.append("run", event);
    judge_.addRun("run");
    const verdicts = (await judge_.judge(compile(source).program)).get("run")!;
    const sql = compileSql([statement], { dialect: judge_.dialect });
    if (sql.rules[0]!.sql === undefined) {
      // A construct the dialect cannot express exactly (SQLite has no exact decimals for sums,
      // PostgreSQL counts at most 255 repetitions) is refused with a located S0001, and the rule is
      // undecided: never an approximation.
      expect(sql.diagnostics.map((d) => [d.code, d.message])).toEqual([["S0001", expect.stringMatching(/exact decimal|at most 255 repetitions/)]]);
      expect(verdicts.outcomes[0]).toMatchObject({ holds: false, undecided: expect.stringContaining("S0001") });
      return;
    }
    expect(verdicts.outcomes[0], source).toEqual({ holds: expected.length === 0, witnesses: expected });
    if (statement.form === "until") expect(verdicts.brokenBy[0]).toEqual(figure5UntilBreakers(statement, events));
  });
}
