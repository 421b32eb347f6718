import { compile, type CheckedStatement } from "@vigil/compiler";
import { compileAtom, type Atom } from "@vigil/engine";
import { numberOf, type JsonValue, type Signature, type TraceEvent } from "@vigil/trace";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeStatements, compareStatements, SymbolicSearch } from "../src/analysis.js";
import { atomsOf, formulasOf, universeOf } from "../src/candidate-values.js";
import { MAX_LIST_LENGTH } from "../src/list-candidates.js";
import { lengthRanges, spellText } from "../src/number-classes.js";
import { cases } from "../../../test/support/tier.js";

/**
 * The symbolic search over comparisons (`amount > 100`), `every(KEY)`/`some(KEY)` and
 * `count(KEY) ⋈ N`: the candidates are every class of values and lists those atoms tell apart
 * (checked against a brute force over values built independently of them), so `vigilc diff` tells
 * `> 100` from `>= 100` by one event holding 100, proves the equivalent rewrites, and `vigilc analyze`
 * calls nothing unmatchable that a list matches.
 */
const runs = cases(40, 300);

function statementOf(rule: string): CheckedStatement {
  const compiled = compile(`policy p {\n  rule r: ${rule}\n}\n`);
  if (!compiled.ok) throw new Error(`${rule}: ${compiled.diagnostics.map((d) => d.message).join("; ")}`);
  return compiled.program.policies[0]!.statements[0]!;
}

function atomsOfRule(statement: CheckedStatement): Atom[] {
  return formulasOf(statement).flatMap(atomsOf).filter((atom) => atom.kind !== "action");
}

/** Each atom's truth on an event holding `value` at `key` (none when undefined). */
function vector(atoms: readonly Atom[], key: string, value: JsonValue | undefined): string {
  const event: TraceEvent = { position: 1, action: "a", args: value === undefined ? {} : { [key]: value } };
  return atoms.map((atom) => (compileAtom(atom)(event) ? "1" : "0")).join("");
}

describe("the candidates of comparisons, counts and every()", () => {
  it("try each threshold exactly, a number between neighbours, one below and one above, and a non-number", () => {
    const universe = universeOf([statementOf("abs(action in {refund} and amount > 100)"), statementOf("abs(action in {refund} and amount >= 100)")]);
    const candidates = universe.roots[0]!.candidates;
    expect(candidates).toContain(100);
    expect(candidates.some((v) => typeof v === "number" && v > 100)).toBe(true);
    expect(candidates.some((v) => typeof v === "number" && v < 100)).toBe(true);
    expect(candidates.some((v) => numberOf(v) === undefined)).toBe(true);
    expect(universe.gaps).toEqual([]);
  });

  it("writes exact decimals: a JSON number where its text is exact, else a string spelling it", () => {
    const universe = universeOf([statementOf("abs(amount > 0.1 and amount <= 0.15)")]);
    const candidates = universe.roots[0]!.candidates;
    expect(candidates).toEqual(expect.arrayContaining([0.1, 0.125, 0.15]));
    // Past a double's precision: the threshold and its neighbours as strings, read exactly.
    const fine = universeOf([statementOf("abs(amount >= 12345678901234567890.5)")]).roots[0]!.candidates;
    expect(fine).toContain("12345678901234567890.5");
    expect(fine).toContain("12345678901234567891.5");
    expect(spellText({ units: 1n, exponent: 400 })).toBe("1e400");
    expect(spellText({ units: 15n, exponent: -401 })).toBeUndefined();
  });

  it("give a threshold that is a constant a spelling that is not one", () => {
    const candidates = universeOf([statementOf('abs(amount in {100} and amount > 50)')]).roots[0]!.candidates;
    expect(candidates).toContain(100);
    expect(candidates).toContain("100");
    const both = universeOf([statementOf('abs(amount in {100, "100"} and amount > 50)')]).roots[0]!.candidates;
    expect(both).toContain("100.0");
  });

  it("give counts a list of each length class, none past the bound", () => {
    expect(lengthRanges([{ units: 25n, exponent: -1 }, { units: 3n, exponent: 0 }])).toEqual([
      { low: 1n, high: 2n },
      { low: 3n, high: 3n },
      { low: 4n, high: undefined },
    ]);
    const universe = universeOf([statementOf("abs(count(p) > 2)")]);
    const lengths = universe.roots[0]!.candidates.map((v) => (Array.isArray(v) ? v.length : 1)).sort();
    expect(lengths).toEqual(expect.arrayContaining([1, 2, 3]));
    expect(universe.gaps).toEqual([]);
    const far = universeOf([statementOf(`abs(count(p) > ${MAX_LIST_LENGTH})`)]);
    expect(far.gaps.map((g) => g.text)).toEqual([`lists at \`p\` (lists of more than 1,000 values)`]);
    // Under a signature: lists no longer than it shows (a schema's array without a bound has none).
    const under = (listLength: number) => universeOf([statementOf(`abs(count(p) > ${MAX_LIST_LENGTH})`)], { signature: { actions: new Set(["a"]), keys: new Map([["p", { segments: ["p"], values: new Map(), openValues: true, listLength }]]), outputCount: 0 } });
    expect(under(Infinity).gaps.map((g) => g.text)).toEqual([`lists at \`p\` (lists of more than 1,000 values)`]);
    expect(under(3).gaps).toEqual([]);
    expect(Math.max(...under(3).roots[0]!.candidates.map((v) => (Array.isArray(v) ? v.length : 1)))).toBeLessThanOrEqual(3);
  });

  it("give every() lists whose elements all pass and lists where some fail, of objects along a nested path", () => {
    // Every age at least 2, one above 5 and one below 3: only a list of passengers ([6, 2]) meets all three.
    const candidates = universeOf([statementOf("abs(every(passengers.age) >= 2 and passengers.age > 5 and passengers.age < 3)")]).roots[0]!.candidates;
    const lists = candidates.filter((v): v is JsonValue[] => Array.isArray(v));
    expect(lists.length).toBeGreaterThan(0);
    for (const list of lists) for (const element of list) expect(element).toEqual({ age: expect.anything() });
    expect(lists.some((list) => list.every((p) => Number((p as { age: number }).age) >= 2) && list.some((p) => Number((p as { age: number }).age) > 5))).toBe(true);
    const mixed = universeOf([statementOf('abs(every(to) ~ "*@acme.com" and not to ~ "*@acme.com" or to ~ "*@acme.com")')]).roots[0]!.candidates;
    expect(mixed.some((v) => Array.isArray(v) && v.some((t) => String(t).endsWith("@acme.com")) && v.some((t) => !String(t).endsWith("@acme.com")))).toBe(true);
  });

  it("say when text patterns tell numbers' texts apart: those combinations are not all tried", () => {
    const universe = universeOf([statementOf('abs(amount ~ "1*" and amount > 5)')]);
    expect(universe.gaps.map((g) => g.text)).toEqual(["numbers at `amount` in some combinations of its comparisons and text patterns (the patterns match the texts of some numbers and not others)"]);
    // A pattern no number's text meets leaves nothing out.
    expect(universeOf([statementOf('abs(amount ~ "*@*" and amount > 5)')]).gaps).toEqual([]);
  });

  describe("miss no combination of atoms a value or a list meets (brute force)", () => {
    // A number in every gap between the thresholds the atoms use (0, 1, 1.5, 2, 2.5, 100), and texts spelling numbers.
    const scalars: JsonValue[] = [-1, 0, 0.5, 1, 1.25, 1.5, 1.75, 2, 2.25, 2.5, 3, 50, 100, 101, "1", "1.0", "2", "2.50", "1.2", "abc", "a@b", "", null, true, { v: 1 }, "1e999", "-0.5"];
    const alphabet: JsonValue[] = [...scalars];
    for (const a of scalars) for (const b of scalars) alphabet.push([a, b]);
    for (const length of [3, 4, 5, 6]) for (const a of [1, "abc", 2.5]) alphabet.push([...new Array<JsonValue>(length - 1).fill(a), 100]);
    alphabet.push([1, 2, 3], ["abc", 2, 0.5], [0, 1.5, 3, "a@b"]);
    const plainAtoms = [
      "n > 1", "n >= 1.5", "n < 0", "n > 0", "n = 2", "n != 1", "n <= 1", "n <= 100", "n < 2.5", "every(n) > 1", "every(n) = 2", "some(n) < 1.5", "every(n) != 2.5", "every(n) >= 2",
      "count(n) > 2", "count(n) = 1", "count(n) <= 3", "count(n) >= 1.5", "count(n) < 1", 'n in {1, "2"}', "every(n) in {1, 2}", 'n ~ "a*"', 'every(n) ~ "*@*"', "n matches /b/",
    ];
    const nestedAlphabet: JsonValue[] = [
      ...scalars.map((age) => ({ age })),
      ...scalars.flatMap((a) => scalars.slice(0, 14).map((b) => [{ age: a }, { age: b }])),
      [{ age: 1 }, { age: 3 }, { age: "x" }],
      [{ age: 5 }, { age: 5 }, { age: 5 }],
      { age: [1, 3] },
    ];
    const nestedAtoms = ["every(p.age) >= 2", "p.age < 2", "p.age > 1.5", "count(p.age) > 1", "p.age in {1}", "every(p.age) != 3", "count(p.age) = 3", "every(p.age) < 100"];

    const check = (rule: string, key: string, values: readonly JsonValue[]) => {
      const statement = statementOf(rule);
      const atoms = atomsOfRule(statement);
      const universe = universeOf([statement]);
      expect(universe.gaps.filter((g) => g.oneEvent).map((g) => g.text), rule).toEqual([]);
      const reached = new Set([vector(atoms, key, undefined), ...universe.roots[0]!.candidates.map((c) => vector(atoms, key, c))]);
      for (const value of values) expect(reached.has(vector(atoms, key, value)), `${rule}: ${JSON.stringify(value)}`).toBe(true);
    };

    /**
     * A set of atoms with at least one a list can meet otherwise than one value does (a comparison,
     * `every`, a count): the keys whose lists are searched. (A key with only `in`, `~` and
     * `matches` keeps its documented gap, lists that meet its patterns together.)
     */
    const atomSets = (atoms: readonly string[], most: number) => {
      const listed = atoms.filter((atom) => /^(every|count)\(|[<>]|=\s*-?\d/.test(atom));
      return fc.tuple(fc.constantFrom(...listed), fc.subarray(atoms, { maxLength: most - 1 })).map(([first, rest]) => [...new Set([first, ...rest])]);
    };

    it(`on one key, for random sets of its atoms (${runs} sets)`, () => {
      fc.assert(
        fc.property(atomSets(plainAtoms, 5), (atoms) => check(`abs(${atoms.join(" and ")})`, "n", alphabet)),
        { numRuns: runs },
      );
    });

    it(`along a nested path, for random sets of its atoms (${runs} sets)`, () => {
      fc.assert(
        fc.property(atomSets(nestedAtoms, 4), (atoms) => check(`abs(${atoms.join(" and ")})`, "p", nestedAlphabet)),
        { numRuns: runs },
      );
    });
  });
});

describe("comparing and analysing rules with comparisons, counts and every()", () => {
  let search: SymbolicSearch;
  beforeAll(async () => {
    search = await SymbolicSearch.create();
  });
  afterAll(async () => {
    await search.dispose();
  });

  const compare = (oldRule: string, newRule: string) => compareStatements(search, [statementOf(oldRule)], [statementOf(newRule)], 5);

  it("tells `amount > 100` from `amount >= 100` by one event holding 100", async () => {
    const difference = await compare("abs(action in {refund} and amount > 100)", "abs(action in {refund} and amount >= 100)");
    expect(difference).toMatchObject({ relation: "stricter", leftOut: [] });
    const [counterexample] = difference.counterexamples;
    expect(counterexample!.confirmed).toBe(true);
    expect(counterexample!.events).toHaveLength(1);
    expect(numberOf(counterexample!.events[0]!.args["amount"]!)).toEqual({ units: 100n, exponent: 0 });
  });

  it("proves the equivalent rewrites equivalent", async () => {
    for (const [oldRule, newRule] of [
      ["abs(action in {a} and count(p) <= 5)", "abs(action in {a} and not count(p) > 5)"],
      ["abs(action in {a} and count(p) > 2.5)", "abs(action in {a} and count(p) >= 3)"],
      ["abs(action in {a} and every(n) > 5)", "abs(action in {a} and every(n) >= 5 and not n = 5)"],
      ["abs(action in {a} and amount > 100)", "abs(action in {a} and amount > 100.0 and (amount >= 100.5 or amount < 100.5))"],
      ["abs(action in {a} and every(to) ~ \"*@acme.com\" and count(to) = 1)", "abs(action in {a} and to ~ \"*@acme.com\" and count(to) = 1)"],
    ]) {
      expect(await compare(oldRule!, newRule!), `${oldRule} / ${newRule}`).toMatchObject({ relation: "equivalent", basis: "proof", counterexamples: [] });
    }
  });

  it("finds the pairs that differ, each with a run the forward engine confirms", async () => {
    const cases: [string, string, string, (events: readonly TraceEvent[]) => boolean][] = [
      ["abs(action in {a} and count(p) > 2)", "abs(action in {a} and count(p) >= 2)", "stricter", (e) => Array.isArray(e[0]!.args["p"]) && (e[0]!.args["p"] as JsonValue[]).length === 2],
      // A text is no number: not `<= 5`, and not `> 5` either.
      ["abs(action in {a} and every(n) > 5)", "abs(action in {a} and count(n) >= 1 and not n <= 5)", "stricter", (e) => e[0]!.args["n"] !== undefined],
      ['abs(action in {a} and every(to) ~ "*@acme.com")', 'abs(action in {a} and to ~ "*@acme.com")', "stricter", (e) => Array.isArray(e[0]!.args["to"])],
      // Not the same: the key with no value has no value that matches, and is not every value matching.
      ['abs(action in {a} and every(to) ~ "*@acme.com")', 'abs(action in {a} and not some(to) ~ "*@acme.com")', "incomparable", () => true],
      ["abs(action in {a} and every(passengers.age) >= 2)", "abs(action in {a} and passengers.age >= 2)", "stricter", (e) => Array.isArray(e[0]!.args["passengers"])],
      ["abs(action in {a} and amount > 0.1)", "abs(action in {a} and amount >= 0.10000000000000000001)", "looser", () => true],
    ];
    for (const [oldRule, newRule, relation, shows] of cases) {
      const difference = await compare(oldRule, newRule);
      expect(difference.relation, `${oldRule} / ${newRule}`).toBe(relation);
      for (const counterexample of difference.counterexamples) {
        expect(counterexample.confirmed, `${oldRule} / ${newRule}`).toBe(true);
        expect(counterexample.events).toHaveLength(1);
      }
      expect(shows(difference.counterexamples[0]!.events), `${oldRule} / ${newRule}: ${JSON.stringify(difference.counterexamples[0]!.events)}`).toBe(true);
    }
  });

  it("calls `amount > 5 and amount < 3` unmatchable only where amount holds one value", async () => {
    const findingsOf = async (rule: string, signature?: Signature) => (await analyzeStatements(search, [statementOf(rule)], 5, signature)).map((f) => (f.kind === "unmatchable" ? `unmatchable ${f.exact}` : f.kind));
    // A list holds 6 and 2: the pattern matches, and the rule fires.
    expect(await findingsOf("abs(action in {refund} and amount > 5 and amount < 3)")).toEqual([]);
    expect(await findingsOf("abs(action in {refund} and amount > 5 and amount < 3 and count(amount) <= 1)")).toEqual(["unmatchable true", "vacuous"]);
    // Under a signature whose `amount` is never a list (tool schemas: a number).
    const scalar: Signature = { actions: new Set(["refund"]), keys: new Map([["amount", { segments: ["amount"], values: new Map(), openValues: true }]]), outputCount: 0 };
    expect(await findingsOf("abs(action in {refund} and amount > 5 and amount < 3)", scalar)).toEqual(["unmatchable true", "vacuous"]);
    const lists: Signature = { ...scalar, keys: new Map([["amount", { segments: ["amount"], values: new Map(), openValues: true, listLength: 3 }]]) };
    expect(await findingsOf("abs(action in {refund} and amount > 5 and amount < 3)", lists)).toEqual([]);
  });
});
