import { compile, type CheckedStatement } from "@vigil/compiler";
import { evaluateStatement } from "@vigil/engine";
import type { JsonValue, TraceEvent } from "@vigil/trace";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compareStatements, SymbolicSearch } from "../src/analysis.js";
import { universeOf } from "../src/candidate-values.js";
import { cases } from "../../../test/support/tier.js";

/**
 * `compareStatements` misses no difference over values that several patterns of one key must meet
 * together. Random pairs of rules over one or two keys (`path`, `mode`), whose patterns combine
 * wildcards, regular expressions, constants, comparisons, `every(…)`, `some(…)` and `count(…)` on a
 * key (with `and`, `or`, `not`), are compared;
 * then brute force, the obviously right reference, judges with the forward engine every run of up
 * to two events over a small universe: the actions `a` and `b`, and at each key no value or one of
 * a fixed list built to meet several of the patterns at once (`/etc/secret.env` is under `/etc/`,
 * ends in `.env` and holds `secret`), together with the comparison's own candidate values. Every
 * difference brute force finds, the comparison must have found (a run the same version rejects),
 * and every run it reports must replay; a run holding a list at a key whose lists the comparison
 * says it left out (a key with none of the atoms lists are searched for) is not asked of it. A run of two events is enumerated when the universe of one
 * event is small enough (one key); with two keys, runs of one event. 30 pairs in the heavy tier, 10
 * in the fast one (test/support/tier.ts).
 */
const runs = cases(10, 30);

const pathAtoms = [
  'path ~ "*.env"',
  'path ~ "/etc/*"',
  'path ~ "?"',
  'path ~ "*secret*"',
  "path matches /secret/",
  "path matches /^\\/etc/",
  "path matches /\\.ENV$/i",
  "path matches /\\d/",
  'path in {"a.env"}',
  'path in {"/etc/shadow", "x"}',
  "path in {1}",
  'every(path) ~ "*.env"',
  "count(path) > 1",
  "some(path) matches /secret/",
];
const modeAtoms = ['mode ~ "r*"', "mode matches /w/", 'mode in {"rw"}', 'mode in {"r"}', "mode > 1", "mode <= 1.5", 'every(mode) in {"r", "rw"}', "count(mode) >= 2", 'every(mode) ~ "r*"'];
/** Values built to meet several of the patterns at once, and some to meet none; numbers, texts spelling them, and lists. */
const pathValues: JsonValue[] = ["/etc/secret.env", "/etc/1.ENV", "secret.env", "/etc/shadow", "a.env", "x", "7", 1, "", "s3cret", "/etc/", "q", ["a.env", "x"], ["secret.env", "/etc/secret.env"], ["x", "7", 1]];
const modeValues: JsonValue[] = ["rw", "r", "w", "rx", "", 1, "2", 1.5, 1.25, ["r", "w"], ["rw", 2], ["r", "r", "r"]];

const patternOf = (atoms: readonly string[]): fc.Arbitrary<string> =>
  fc.letrec<{ p: string }>((tie) => ({
    p: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 4, arbitrary: fc.constantFrom(...atoms) },
      { weight: 2, arbitrary: fc.tuple(tie("p"), tie("p")).map(([l, r]) => `(${l} and ${r})`) },
      { weight: 1, arbitrary: fc.tuple(tie("p"), tie("p")).map(([l, r]) => `(${l} or ${r})`) },
      { weight: 1, arbitrary: tie("p").map((p) => `not (${p})`) },
    ),
  })).p;

/** A rule over one key (`path`) or two (`path` and `mode`). */
const ruleText = (twoKeys: boolean): fc.Arbitrary<string> => {
  const pattern = patternOf(twoKeys ? [...pathAtoms, ...modeAtoms] : pathAtoms);
  return fc.oneof(
    pattern.map((p) => `abs(action in {a} and ${p})`),
    fc.tuple(pattern, pattern).map(([p, q]) => `prec(action in {a} and ${p}, action in {b} and ${q})`),
    fc.tuple(pattern, pattern).map(([p, q]) => `resp(action in {a} and ${p}, action in {b} and ${q})`),
    pattern.map((p) => `limit[1](action in {a} and ${p})`),
    pattern.map((p) => `prec(action in {a} and path = $x and ${p}, action in {b} and path = $x)`),
  );
};

const pair = fc.boolean().chain((twoKeys) => fc.tuple(ruleText(twoKeys), ruleText(twoKeys)));

function statementOf(rule: string): CheckedStatement {
  const compiled = compile(`policy p {\n  rule r: ${rule}\n}\n`);
  if (!compiled.ok) throw new Error(`${rule}: ${compiled.diagnostics.map((d) => d.message).join("; ")}`);
  return compiled.program.policies[0]!.statements[0]!;
}

/** The events of the brute force: each action, with no value or each value at each key the rules read. */
function alphabet(statements: readonly CheckedStatement[]): Omit<TraceEvent, "position">[] {
  const universe = universeOf(statements, { runLength: 2 });
  const valuesAt = (key: string, fixed: readonly JsonValue[]): (JsonValue | undefined)[] => {
    const root = universe.roots.find((r) => r.name === key);
    if (root === undefined) return [undefined];
    const all = new Map<string, JsonValue>();
    for (const value of [...fixed, ...root.candidates]) all.set(JSON.stringify(value), value);
    return [undefined, ...all.values()];
  };
  const events: Omit<TraceEvent, "position">[] = [];
  for (const action of ["a", "b"]) {
    for (const path of valuesAt("path", pathValues)) {
      for (const mode of valuesAt("mode", modeValues)) {
        const args: Record<string, JsonValue> = {};
        if (path !== undefined) args["path"] = path;
        if (mode !== undefined) args["mode"] = mode;
        events.push({ action, args, status: "ok" });
      }
    }
  }
  return events;
}

function* allRuns(events: readonly Omit<TraceEvent, "position">[], depth: number): Generator<TraceEvent[]> {
  for (const first of events) {
    yield [{ ...first, position: 1 }];
    if (depth < 2) continue;
    for (const second of events) yield [{ ...first, position: 1 }, { ...second, position: 2 }];
  }
}

describe("comparing rules whose patterns a value must meet together", () => {
  let search: SymbolicSearch;
  beforeAll(async () => {
    search = await SymbolicSearch.create();
  });
  afterAll(async () => {
    await search.dispose();
  });

  it("finds a difference a single event shows, over a value two patterns of one key need at once", async () => {
    const old = [statementOf('abs(action in {a} and path ~ "*.env")'), statementOf("abs(action in {a} and path matches /secret/)")];
    const next = [statementOf('abs(action in {a} and path ~ "*.env")'), statementOf('abs(action in {a} and path matches /secret/ and not path ~ "*.env")')];
    // Together the same, rule by rule not: `secret.env` is what tells the second rules apart.
    const whole = await compareStatements(search, old, next, 5);
    expect(whole).toMatchObject({ relation: "equivalent", basis: "proof" });
    const second = await compareStatements(search, [old[1]!], [next[1]!], 5);
    expect(second.relation).toBe("looser");
    const value = second.counterexamples[0]!.events[0]!.args["path"] as string;
    expect(value.endsWith(".env") && value.includes("secret")).toBe(true);
    const constant = await compareStatements(search, [statementOf('abs(action in {a} and path ~ "*.env")')], [statementOf('abs(action in {a} and path ~ "*.env" and not path in {"a.env"})')], 5);
    expect(constant).toMatchObject({ relation: "looser", basis: "bounded" });
    expect(constant.counterexamples[0]!.events[0]!.args).toEqual({ path: "a.env" });
  });

  it("widens the search to what a limit needs, and says what it left out", async () => {
    const widened = await compareStatements(search, [statementOf("limit[5 per 1h](action in {a})")], [statementOf("limit[7 per 1h](action in {a})")], 5);
    expect(widened).toMatchObject({ relation: "looser", depth: 8, values: false, leftOut: [] });
    expect(widened.counterexamples[0]!.events).toHaveLength(6);
    const beyond = await compareStatements(search, [statementOf("limit[20](action in {a})")], [statementOf("limit[21](action in {a})")], 5);
    expect(beyond).toMatchObject({ relation: "equivalent", basis: "bounded", depth: 12 });
    expect(beyond.leftOut).toEqual(["runs of 21 events, which rule `p.r` (a limit of 20) needs", "runs of 22 events, which rule `p.r` (a limit of 21) needs"]);
    const bound = await compareStatements(search, [statementOf("prec(action in {a} and path = $x, action in {b} and path = $x)")], [statementOf("prec(action in {a} and path = $x, action in {b} and path = $x)")], 5);
    expect(bound).toMatchObject({ relation: "equivalent", basis: "proof" });
    const lists = await compareStatements(search, [statementOf("prec(action in {a} and path = $x, action in {b} and path = $x)")], [statementOf('prec(action in {a} and path = $x, action in {b} and path = $x and (path ~ "*" or not path ~ "*"))')], 3);
    expect(lists).toMatchObject({ relation: "equivalent", basis: "bounded", values: true });
    expect(lists.leftOut).toEqual(["lists at `path` (several values bound at once)"]);
  });

  it(`misses no difference brute force finds, over values built to meet several patterns at once (${runs} pairs)`, async () => {
    await fc.assert(
      fc.asyncProperty(pair, async ([oldRule, newRule]) => {
        const old = statementOf(oldRule);
        const next = statementOf(newRule);
        const events = alphabet([old, next]);
        const depth = events.length <= 150 ? 2 : 1;
        const difference = await compareStatements(search, [old], [next], depth);
        const label = `${oldRule}\n${newRule}`;
        expect(difference.unknown, label).toBeUndefined();
        for (const counterexample of difference.counterexamples) expect(counterexample.confirmed, label).toBe(true);
        const found: { new?: TraceEvent[]; old?: TraceEvent[] } = {};
        // A list at a key whose lists the comparison says it left out may show what it did not see.
        const listsLeftOut = new Set(["path", "mode"].filter((key) => difference.leftOut.some((text) => text.startsWith(`lists at \`${key}\``))));
        const excused = (run: readonly TraceEvent[]) => run.some((event) => Object.entries(event.args).some(([key, value]) => Array.isArray(value) && listsLeftOut.has(key)));
        for (const run of allRuns(events, depth)) {
          if (excused(run)) continue;
          const oldHolds = evaluateStatement(old, run).holds;
          const newHolds = evaluateStatement(next, run).holds;
          if (oldHolds && !newHolds) found.new ??= run;
          if (newHolds && !oldHolds) found.old ??= run;
          if (found.new !== undefined && found.old !== undefined) break;
        }
        const reported = { new: difference.counterexamples.some((c) => c.rejectedBy === "new"), old: difference.counterexamples.some((c) => c.rejectedBy === "old") };
        if (found.new !== undefined) expect(reported.new, `${label}\nmissed: ${JSON.stringify(found.new)}`).toBe(true);
        if (found.old !== undefined) expect(reported.old, `${label}\nmissed: ${JSON.stringify(found.old)}`).toBe(true);
      }),
      { numRuns: runs },
    );
  }, 600_000);
});
