import { join } from "node:path";
import { compile, createEngine, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { compileSql, dialectNames, SqlJudge } from "@vigil/sql";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { expectGolden, renderDiagnostics } from "../../../test/support/golden.js";

const golden = join(import.meta.dirname, "golden");
const policyFile = "every-form.vigil";
const source = readFileSync(join(golden, policyFile), "utf8");
const program = compile(source, { file: policyFile }).program;

describe("the SQL of every form, per dialect (golden files)", () => {
  it.each(dialectNames)("%s", (dialect) => {
    const sql = compileSql(program, { dialect, file: policyFile });
    expect(sql.rules).toHaveLength(16);
    const text = `-- diagnostics\n${renderDiagnostics(sql.diagnostics).replace(/^/gm, "-- ")}\n${sql.sql ?? "-- no rule\n"}`;
    expectGolden(golden, `every-form.${dialect}.sql`, ".sql", text);
  });

  it("refuses, located, what a dialect's regular expressions cannot keep exactly", () => {
    // The regular expression and the wildcards (`~`) need RE2 or PostgreSQL's rewriting.
    const spark = compileSql(program, { dialect: "spark", file: policyFile });
    expect(spark.diagnostics.map((d) => [d.code, d.span?.line])).toEqual([
      ["S0001", 5],
      ["S0001", 3],
      ["S0001", 14],
    ]);
    expect(spark.rules.filter((rule) => rule.sql === undefined).map((rule) => rule.name)).toEqual(["no_keys", "no_egress_after_read", "rm_guard"]);
    // Trino and Snowflake match the wildcards, which have no class, with LIKE: only the regular expression is refused.
    for (const dialect of ["trino", "snowflake"] as const) {
      const sql = compileSql(program, { dialect, file: policyFile });
      expect(sql.diagnostics.map((d) => [d.code, d.span?.line])).toEqual([["S0001", 5]]);
      expect(sql.rules.filter((rule) => rule.sql === undefined).map((rule) => rule.name)).toEqual(["no_keys"]);
    }
    const sqlite = compileSql(program, { dialect: "sqlite" });
    expect(sqlite.diagnostics.map((d) => d.message)).toEqual([expect.stringContaining("sqlite has no exact decimal numbers to sum `of amount`")]);
  });

  it("refuses a table name that is not one", () => {
    expect(() => compileSql(program, { tables: { events: "events; DROP TABLE x" } })).toThrow(/not a table name/);
  });
});

const ev = (position: number, action: string, args: Record<string, unknown> = {}, extra: Partial<TraceEvent> = {}): TraceEvent =>
  ({ position, action, args, status: "ok", ...extra }) as TraceEvent;

async function both(text: string, events: readonly TraceEvent[]) {
  const statements: CheckedStatement[] = compile(text).program.policies.flatMap((p) => p.statements);
  const judge = await SqlJudge.create();
  try {
    for (const event of events) judge.append("run", event);
    judge.addRun("run");
    const sql = (await judge.judge(statements)).get("run")!.outcomes;
    const forward = createEngine("eval").start(statements);
    for (const event of events) forward.step(event);
    return { sql, eval: await forward.finish() };
  } finally {
    judge.close();
  }
}

describe("the SQL engine fails closed as the forward engine does", () => {
  it("is undecided on a rule that measures time, at the event without a time, in the same words", async () => {
    const text = `policy p { rule r: bresp[5m](action in {a}, action in {b}) }`;
    const { sql, eval: forward } = await both(text, [ev(1, "a", {}, { time: 0, source: { line: 1, file: "t.jsonl" } }), ev(2, "b", {}, { source: { line: 2, file: "t.jsonl" } })]);
    expect(sql).toEqual(forward);
    expect(sql[0]!.undecided).toBe("event 2 (line 2 of t.jsonl) has no time, and the rule measures time");
  });

  it("is undecided where times go back", async () => {
    const text = `policy p { rule r: limit[1 per 1h](action in {a}) }`;
    const { sql, eval: forward } = await both(text, [ev(1, "a", {}, { time: 5000 }), ev(2, "a", {}, { time: 1000 })]);
    expect(sql).toEqual(forward);
    expect(sql[0]!.undecided).toMatch(/^event 2 has a time \(1970-01-01T00:00:01.000Z\) earlier than the event before it/);
  });

  it("sums exact decimals, and is undecided on an amount with more digits than its decimals hold", async () => {
    const text = `policy p { rule r: limit[0.3 of amount](action in {pay}) }`;
    const exact = await both(text, [ev(1, "pay", { amount: 0.1 }), ev(2, "pay", { amount: 0.2 }), ev(3, "pay", { amount: 0.0000001 })]);
    expect(exact.sql).toEqual(exact.eval);
    expect(exact.sql[0]).toEqual({ holds: false, witnesses: [3] });
    const tiny = await both(text, [ev(1, "pay", { amount: 1e-30 })]);
    expect(tiny.eval[0]).toEqual({ holds: true, witnesses: [] });
    expect(tiny.sql[0]).toMatchObject({ holds: false, undecided: expect.stringContaining("more digits than the SQL engine's exact decimals hold") });
  });

  it("matches a regular expression on text outside the Basic Multilingual Plane as ECMAScript does (UTF-16 units)", async () => {
    // `.` is one UTF-16 unit: an emoji is two, so `^.$` does not match it, and `^..$` does.
    const text = `policy p { rule one: abs(action in {say} and text matches /^.$/) rule two: abs(action in {say} and text matches /^..$/) }`;
    const { sql, eval: forward } = await both(text, [ev(1, "say", { text: "😀" })]);
    expect(sql).toEqual(forward);
    expect(sql.map((o) => o.holds)).toEqual([true, false]);
  });
});
