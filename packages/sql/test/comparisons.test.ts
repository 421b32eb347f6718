import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compile, createEngine, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { compileSql, dialectNames, likePattern, SqliteBackend, SqlJudge } from "@vigil/sql";
import { compareDecimal, compileWildcard, eventRow, eventValueRows, keyPathPlace, numberOrderKey, valuesAtSubject, type JsonValue, type PathSegment } from "@vigil/trace";
import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { expectGolden, renderDiagnostics } from "../../../test/support/golden.js";

/**
 * Comparisons, `every(KEY)` and `count(KEY)` in SQL: decided as the forward engine decides them
 * (engine/atoms.ts), exactly, in DuckDB and SQLite; and wildcards as `LIKE` where an engine has no
 * RE2 (Trino, Snowflake). test/sql-agrees.test.ts checks the same atoms on random policies.
 */

let duckdb: SqlJudge;
let sqlite: SqlJudge;
beforeAll(async () => {
  duckdb = await SqlJudge.create();
  sqlite = new SqlJudge(new SqliteBackend(new Database(":memory:")));
});
afterAll(() => {
  duckdb?.close();
  sqlite?.close();
});

const ev = (position: number, args: Record<string, unknown>, extra: Partial<TraceEvent> = {}): TraceEvent => ({ position, action: "a", args, status: "ok", ...extra }) as TraceEvent;

/**
 * The events (one per arguments object, in order) on which `atom` holds: `abs(atom)`'s witnesses,
 * the same in DuckDB, in SQLite and in the forward engine.
 */
async function holdsOn(atom: string, args: readonly Record<string, unknown>[], extra: readonly Partial<TraceEvent>[] = []): Promise<number[]> {
  const statements: CheckedStatement[] = compile(`policy p { rule r: abs(${atom}) }`).program.policies.flatMap((p) => p.statements);
  const events = args.map((each, i) => ev(i + 1, each, extra[i]));
  const forward = createEngine("eval").start(statements);
  for (const event of events) forward.step(event);
  const expected = (await forward.finish())[0]!;
  for (const judge of [duckdb, sqlite]) {
    await judge.reset();
    for (const event of events) judge.append("run", event);
    judge.addRun("run");
    const outcome = (await judge.judge(statements)).get("run")!.outcomes[0];
    expect(outcome, `${atom} in ${judge.dialect}`).toEqual(expected);
  }
  return expected.witnesses;
}

describe("comparisons are exact decimals", () => {
  it("at more digits than a double or DECIMAL(38, 18) holds", async () => {
    const values = [{ x: 0.1 }, { x: "0.1000000000000000000001" }, { x: 0.1 + 0.2 }, { x: "0.3" }, { x: 0.09999999999999999 }];
    expect(await holdsOn("x > 0.1", values)).toEqual([2, 3, 4]);
    expect(await holdsOn("x = 0.3", values)).toEqual([4]);
    expect(await holdsOn("x > 0.3", values)).toEqual([3]);
    expect(await holdsOn("x < 0.1000000000000000000001", values)).toEqual([1, 5]);
    expect(await holdsOn("x <= 0.1000000000000000000001", values)).toEqual([1, 2, 5]);
  });

  it("at 1e-30, and at a number of hundreds of digits", async () => {
    const tiny = [{ x: 1e-30 }, { x: 0 }, { x: "1e-31" }, { x: "0.000000000000000000000000000001" }];
    expect(await holdsOn("x > 0", tiny)).toEqual([1, 3, 4]);
    expect(await holdsOn("x = 1e-30", tiny)).toEqual([1, 4]);
    expect(await holdsOn("x < 1e-30", tiny)).toEqual([2, 3]);
    const huge = `1${"0".repeat(300)}`;
    const big = [{ x: 1e308 }, { x: huge }, { x: `${huge}.5` }, { x: "123456789012345678901234567890" }, { x: "9007199254740993" }, { x: 9007199254740992 }];
    expect(await holdsOn(`x > ${huge}`, big)).toEqual([1, 3]);
    expect(await holdsOn(`x = 1e300`, big)).toEqual([2]);
    expect(await holdsOn("x >= 123456789012345678901234567890", big)).toEqual([1, 2, 3, 4]);
    expect(await holdsOn("x = 9007199254740993", big)).toEqual([5]);
    expect(await holdsOn("x < 9007199254740993", big)).toEqual([6]);
  });

  it("on a string spelling a number (\"150.00\"), and on nothing else", async () => {
    const values = [{ x: "150.00" }, { x: 150 }, { x: " 150" }, { x: "0150" }, { x: "1.5e2" }, { x: "150 USD" }, { x: true }, { x: null }, { x: { n: 150 } }, {}];
    expect(await holdsOn("x = 150", values)).toEqual([1, 2, 5]);
    expect(await holdsOn("x > 149.99", values)).toEqual([1, 2, 5]);
    // `!=` needs a number too: a text, a boolean, null, an object or a missing key is not `!= 5`.
    expect(await holdsOn("x != 5", values)).toEqual([1, 2, 5]);
  });

  it("on negative numbers and -0", async () => {
    const values = [{ x: -1 }, { x: -0.5 }, { x: "-0.101" }, { x: -0.1 }, { x: -10 }, { x: -0 }, { x: "-0" }, { x: "-0.0" }, { x: 0 }, { x: "-1e-400" }, { x: "-1e-401" }];
    expect(await holdsOn("x < 0", values)).toEqual([1, 2, 3, 4, 5, 10]);
    expect(await holdsOn("x = 0", values)).toEqual([6, 7, 8, 9]);
    expect(await holdsOn("x < -0.1", values)).toEqual([1, 2, 3, 5]);
    expect(await holdsOn("x > -0.101", values)).toEqual([4, 6, 7, 8, 9, 10]);
    expect(await holdsOn("x >= -1", values)).toEqual([1, 2, 3, 4, 6, 7, 8, 9, 10]);
    // Beyond the exponents Vigil compares (400), a string spells no number: it never compares.
    expect(await holdsOn("x != 1", values)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await holdsOn("x < -9", values)).toEqual([5]);
  });

  it("on output fields", async () => {
    const outputs = ['{"total": 100.5}', '{"total": "99"}', '{"total": [1, 200]}', "total: 300"];
    expect(await holdsOn("output.total > 100", outputs.map(() => ({})), outputs.map((output) => ({ output })))).toEqual([1, 3]);
  });
});

describe("every(KEY) needs a value, and every value to pass", () => {
  const values = [{ x: [] }, {}, { x: [1, 2] }, { x: [1, "x"] }, { x: 3 }, { x: [[2], [3, 4]] }, { x: null }, { x: [{ y: 1 }] }];

  it("on comparisons", async () => {
    expect(await holdsOn("every(x) > 0", values)).toEqual([3, 5, 6]);
    expect(await holdsOn("every(x) != 1", values)).toEqual([5, 6]);
    expect(await holdsOn("some(x) > 2", values)).toEqual([5, 6]);
  });

  it("on sets, wildcards and regular expressions", async () => {
    expect(await holdsOn("every(x) in {1, 2, 3}", values)).toEqual([3, 5]);
    expect(await holdsOn('every(x) ~ "?"', values)).toEqual([3, 4, 5, 6]);
    expect(await holdsOn("every(x) matches /^[0-9]$/", values)).toEqual([3, 5, 6]);
    // null and objects have no text: they fail every test of text.
    expect(await holdsOn('not every(x) ~ "*"', values)).toEqual([1, 2, 7, 8]);
  });

  it("on `contains $x`, for each binding", async () => {
    // Each `a` must follow a `b` every one of whose texts contains its `p`.
    const statements = compile(`policy p { rule r: prec(action in {a} and p = $p, action in {b} and every(t) contains $p) }`).program.policies.flatMap((p) => p.statements);
    const b = (position: number, t: string[]): TraceEvent => ({ ...ev(position, { t }), action: "b" });
    const events = [b(1, ["xaby", "ab"]), ev(2, { p: "ab" }), b(3, ["xay", "ay"]), ev(4, { p: "y" }), b(5, []), ev(6, { p: "x" })];
    const forward = createEngine("eval").start(statements);
    for (const event of events) forward.step(event);
    const expected = await forward.finish();
    expect(expected[0]).toEqual({ holds: false, witnesses: [6] });
    for (const judge of [duckdb, sqlite]) {
      await judge.reset();
      for (const event of events) judge.append("run", event);
      judge.addRun("run");
      expect((await judge.judge(statements)).get("run")!.outcomes).toEqual(expected);
    }
  });
});

describe("count(KEY) counts the values a key path reaches", () => {
  it("through nested lists and lists of objects, and 0 when there are none", async () => {
    const values = [{ m: [[1, 2], [3]] }, { m: [{ a: 1 }, { a: [2, 3] }, { b: 4 }] }, { m: [] }, {}, { m: [[]] }, { m: { a: [[1], []] } }, { m: null }];
    expect(await holdsOn("count(m) = 3", values)).toEqual([1, 2]);
    expect(await holdsOn("count(m.a) = 3", values)).toEqual([2]);
    expect(await holdsOn("count(m) = 0", values)).toEqual([3, 4, 5]);
    expect(await holdsOn("count(m) = 1", values)).toEqual([6, 7]);
    expect(await holdsOn("count(m.a) >= 1", values)).toEqual([2, 6]);
    expect(await holdsOn("count(m.0) = 2", values)).toEqual([1]);
  });

  it("against any number: fractions, negatives, and beyond every count", async () => {
    const values = [{ m: [1, 2] }, {}, { m: 1 }];
    expect(await holdsOn("count(m) < 1.5", values)).toEqual([2, 3]);
    expect(await holdsOn("count(m) > 1.5", values)).toEqual([1]);
    expect(await holdsOn("count(m) = 1.5", values)).toEqual([]);
    expect(await holdsOn("count(m) != 1.5", values)).toEqual([1, 2, 3]);
    expect(await holdsOn("count(m) > -1", values)).toEqual([1, 2, 3]);
    expect(await holdsOn("count(m) <= -0.5", values)).toEqual([]);
    expect(await holdsOn("count(m) < 1e30", values)).toEqual([1, 2, 3]);
    expect(await holdsOn("count(output) = 1", [{}, {}], [{ output: "" }, {}])).toEqual([1]);
  });

  it("is the number of values table rows at the key path, for any JSON", () => {
    const names = ["a", "b", "0"];
    const json: fc.Arbitrary<JsonValue> = fc.letrec<{ value: JsonValue }>((tie) => ({
      value: fc.oneof(
        { depthSize: "small", withCrossShrink: true },
        fc.constantFrom<JsonValue>(1, "x", null, true),
        fc.array(tie("value"), { maxLength: 3 }),
        fc.dictionary(fc.constantFrom(...names), tie("value"), { maxKeys: 3 }),
      ),
    })).value;
    const path = fc.tuple(fc.constantFrom(...names), fc.array(fc.oneof(fc.constantFrom(...names), fc.constantFrom(0, 1)), { maxLength: 3 }));
    fc.assert(
      fc.property(fc.dictionary(fc.constantFrom(...names), json, { maxKeys: 3 }), path, (args, [first, rest]) => {
        const key: PathSegment[] = [first, ...rest];
        const event = ev(1, args);
        const place = keyPathPlace(key);
        const rows = eventValueRows("run", event).filter((row) => row.subject === "args" && ("names" in place ? row.names === place.names : new RegExp(place.chainPattern).test(row.chain)));
        expect(rows.length).toBe(valuesAtSubject(event, "args", key).length);
      }),
      { numRuns: 500 },
    );
  });
});

describe("a number's order key", () => {
  it("orders as the numbers, and is equal exactly when they are", () => {
    const decimal = fc.record({ units: fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }), exponent: fc.integer({ min: -40, max: 40 }) });
    const small = fc.record({ units: fc.bigInt({ min: -30n, max: 30n }), exponent: fc.integer({ min: -2, max: 2 }) });
    fc.assert(
      fc.property(fc.oneof(decimal, small), fc.oneof(decimal, small), (a, b) => {
        const [x, y] = [numberOrderKey(a)!, numberOrderKey(b)!];
        expect(/^[0-9]+$/.test(x)).toBe(true);
        expect(Math.sign(x < y ? -1 : x > y ? 1 : 0)).toBe(compareDecimal(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it("is in the values table for numbers and strings spelling them", () => {
    const rows = eventValueRows("run", ev(1, { a: -2.5, b: "150.00", c: "x", d: [1, "1e0", true] }));
    expect(rows.map((row) => [row.names, row.nkey, row.amount])).toEqual([
      [".a", "1499999907041", null],
      [".b", "3500000315", null],
      [".c", null, null],
      [".d", "350000011", "1"],
      [".d", "350000011", null],
      [".d", null, null],
    ]);
  });
});

describe("a values table read from a file", () => {
  it("is refused when its numbers have no order key (exported before `nkey`), not read as numbers that compare with nothing", async () => {
    const scratch = mkdtempSync(join(tmpdir(), "vigil-nkey-"));
    try {
      const event = ev(1, { amount: 150 });
      const policy = compile(`policy p { rule r: abs(amount > 100) }`).program;
      writeFileSync(join(scratch, "events.jsonl"), `${JSON.stringify(eventRow("run", event, "t.jsonl"))}\n`);
      const rows = eventValueRows("run", event);
      writeFileSync(join(scratch, "values.jsonl"), rows.map((row) => `${JSON.stringify(row)}\n`).join(""));
      const judge = await SqlJudge.over({ events: join(scratch, "events.jsonl"), values: join(scratch, "values.jsonl") });
      try {
        expect((await judge.judge(policy)).get("run")!.outcomes[0]).toEqual({ holds: false, witnesses: [1] });
      } finally {
        judge.close();
      }
      writeFileSync(join(scratch, "old.jsonl"), rows.map(({ nkey: _, ...old }) => `${JSON.stringify(old)}\n`).join(""));
      await expect(SqlJudge.over({ events: join(scratch, "events.jsonl"), values: join(scratch, "old.jsonl") })).rejects.toThrow(/numbers without their order key \(`nkey`\)/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});

describe("wildcards as LIKE, where an engine has no RE2 (Trino, Snowflake)", () => {
  it("writes `*` as `%`, `?` as `_`, and escapes `%`, `_` and `\\`", () => {
    expect(likePattern("*.env")).toBe("%.env");
    expect(likePattern("a?b**c")).toBe("a_b%c");
    expect(likePattern("50%_off")).toBe("50\\%\\_off");
    expect(likePattern("\\*\\?x\\\\")).toBe("*?x\\\\");
    expect(likePattern("\\[x\\]")).toBe("[x]");
    expect(likePattern("😀?")).toBe("😀_");
    expect(likePattern("")).toBe("");
    // A class has no LIKE form.
    expect(likePattern("[ab]*")).toBeUndefined();
    expect(likePattern("x[!0-9]")).toBeUndefined();
  });

  it("keeps the wildcard's meaning, with LIKE's: `_` one code point, `%` across newlines, case-sensitive", () => {
    const alphabet = ["a", "A", "%", "_", "\\", "*", "?", "\n", "😀", "é"];
    const wildcardText = fc.array(fc.constantFrom(...alphabet, "\\*", "\\?", "\\\\", "\\%"), { maxLength: 6 }).map((parts) => parts.join(""));
    const text = fc.array(fc.constantFrom("a", "A", "%", "_", "\\", "*", "?", "\n", "😀", "é"), { maxLength: 6 }).map((parts) => parts.join(""));
    fc.assert(
      fc.property(wildcardText, text, (wildcard, subject) => {
        const compiled = compileWildcard(wildcard);
        fc.pre(compiled.ok);
        expect(likeMatches(likePattern(wildcard)!, subject), `${JSON.stringify(wildcard)} on ${JSON.stringify(subject)}`).toBe(compiled.ok && compiled.matches(subject));
      }),
      { numRuns: 5000 },
    );
  });

  it("is written into the SQL with the escape character, as each engine writes strings", () => {
    const statements = compile(`policy p { rule r: abs(path ~ "*.env" or name ~ "it's 50%_?\\\\*") }`).program.policies.flatMap((p) => p.statements);
    const trino = compileSql(statements, { dialect: "trino" }).sql!;
    expect(trino).toContain(`(substr(v.vkey, 3) LIKE '%.env' ESCAPE '\\')`);
    expect(trino).toContain(`(substr(v.vkey, 3) LIKE 'it''s 50\\%\\__*' ESCAPE '\\')`);
    const snowflake = compileSql(statements, { dialect: "snowflake" }).sql!;
    expect(snowflake).toContain(`(SUBSTR(v.vkey, 3) LIKE '%.env' ESCAPE '\\\\')`);
    expect(snowflake).toContain(`(SUBSTR(v.vkey, 3) LIKE 'it\\'s 50\\\\%\\\\__*' ESCAPE '\\\\')`);
  });

  it("refuses a wildcard with a class, saying why; Spark still refuses every wildcard", () => {
    const statements = compile(`policy p { rule r: abs(path ~ "*.[ch]") }`).program.policies.flatMap((p) => p.statements);
    for (const dialect of ["trino", "snowflake"] as const) {
      const sql = compileSql(statements, { dialect });
      expect(sql.sql).toBeUndefined();
      expect(sql.diagnostics.map((d) => [d.code, d.message])).toEqual([["S0001", expect.stringContaining("a wildcard's character class (`[…]`) has no `LIKE` form")]]);
    }
    const plain = compile(`policy p { rule r: abs(path ~ "*.env") }`).program.policies.flatMap((p) => p.statements);
    expect(compileSql(plain, { dialect: "spark" }).diagnostics.map((d) => d.message)).toEqual([expect.stringContaining("spark's regular expressions are not RE2")]);
  });
});

describe("the SQL of the new atoms, per dialect (golden files)", () => {
  const golden = join(import.meta.dirname, "golden");
  const policyFile = "new-atoms.vigil";
  const program = compile(readFileSync(join(golden, policyFile), "utf8"), { file: policyFile }).program;

  it.each(dialectNames)("%s", (dialect) => {
    const sql = compileSql(program, { dialect, file: policyFile });
    const text = `-- diagnostics\n${renderDiagnostics(sql.diagnostics).replace(/^/gm, "-- ")}\n${sql.sql ?? "-- no rule\n"}`;
    expectGolden(golden, `new-atoms.${dialect}.sql`, ".sql", text);
  });

  it("compiles every rule on every dialect but Spark's wildcard and the regular expression where RE2 is missing", () => {
    for (const dialect of dialectNames) {
      const refused = compileSql(program, { dialect }).rules.filter((rule) => rule.sql === undefined).map((rule) => rule.name);
      expect(refused, dialect).toEqual(dialect === "spark" ? ["every_wildcard", "every_regex"] : dialect === "trino" || dialect === "snowflake" ? ["every_regex"] : []);
    }
  });
});

/** Whether a text matches a LIKE pattern with `\` as its escape, by SQL's definition: the whole text, `_` one code point, `%` any run of them. */
function likeMatches(pattern: string, text: string): boolean {
  let source = "";
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    if (char === "\\") source += escapeRegex(chars[++i]!);
    else if (char === "%") source += "[^]*";
    else if (char === "_") source += ".";
    else source += escapeRegex(char);
  }
  return new RegExp(`^(?:${source})$`, "su").test(text);
}

function escapeRegex(char: string): string {
  return /[\\^$.*+?()[\]{}|/-]/.test(char) ? `\\${char}` : char;
}
