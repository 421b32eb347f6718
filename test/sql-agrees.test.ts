import { compile, type CheckedStatement } from "@vigil/compiler";
import { SqlJudge } from "@vigil/sql";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { policyText, trace } from "./arbitraries.js";
import { figure5UntilBreakers, figure5Witnesses } from "./figure5.js";

/**
 * The SQL engine against Figure 5 read literally (test/figure5.ts), as the other engines are
 * (engines-agree.test.ts): random policies as text, random traces, the policy compiled to SQL and
 * run in embedded DuckDB over the events and values tables; the verdict, every witness and, for
 * `until`, every breaking event must be the reference's. Each case costs a query of some twenty
 * common table expressions, so a quarter of VIGIL_PROPERTY_RUNS cases are run (500 by default).
 */
const runs = Number(process.env["VIGIL_PROPERTY_RUNS"] ?? 2000) / 4;

function onlyStatement(source: string): CheckedStatement {
  const compiled = compile(source);
  expect(compiled.diagnostics.filter((d) => d.severity === "error"), source).toEqual([]);
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  expect(statements).toHaveLength(1);
  return statements[0]!;
}

describe("the SQL engine agrees with Figure 5 read literally", () => {
  let judge: SqlJudge;
  beforeAll(async () => {
    judge = await SqlJudge.create();
  });
  afterAll(() => judge.close());

  it(`in DuckDB, on ${runs} random policies and traces`, async () => {
    await fc.assert(
      fc.asyncProperty(policyText, trace, async (source, events) => {
        const statement = onlyStatement(source);
        const expected = figure5Witnesses(statement, events);
        await judge.reset();
        for (const event of events) judge.append("run", event);
        judge.addRun("run");
        const verdicts = (await judge.judge(compile(source).program)).get("run")!;
        expect(verdicts.outcomes[0], source).toEqual({ holds: expected.length === 0, witnesses: expected });
        if (statement.form === "until") expect(verdicts.brokenBy[0]).toEqual(figure5UntilBreakers(statement, events));
      }),
      { numRuns: runs },
    );
  }, 900_000);
});
