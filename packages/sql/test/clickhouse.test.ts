import { compile, type TraceEvent } from "@vigil/compiler";
import { ClickHouseBackend, SqlJudge } from "@vigil/sql";
import { describe, expect, it } from "vitest";
import { openChdb } from "../../../test/support/chdb.js";

/**
 * The SQL engine in embedded ClickHouse (chdb, installed on first use: heavy tier, vitest.config.ts).
 * The other undecided cases of the SQL engine are in sql.test.ts.
 */

const ev = (position: number, action: string, args: Record<string, unknown> = {}): TraceEvent => ({ position, action, args, status: "ok" }) as TraceEvent;

describe("the SQL engine fails closed as the forward engine does, in ClickHouse", () => {
  it("leaves the rules of a query past its time undecided, saying why (ClickHouse's max_execution_time)", async () => {
    const session = openChdb();
    const judge = new SqlJudge(await ClickHouseBackend.create(session, () => session.cleanup(), { timeoutMs: 1 }));
    try {
      for (let position = 1; position <= 50_000; position++) judge.append("run", ev(position, position % 2 === 0 ? "a" : "b", { n: position }));
      const text = `policy p { rule r: prec(action in {a} and n = $x, action in {b} and n = $x) }`;
      const outcome = (await judge.judge(compile(text).program)).get("run")!.outcomes[0]!;
      expect(outcome).toMatchObject({ holds: false, witnesses: [], undecided: expect.stringMatching(/^the SQL engine could not run the rule's query: .*Timeout exceeded/) });
    } finally {
      judge.close();
    }
  });
});
