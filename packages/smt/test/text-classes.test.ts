import { compileRegex, isRegexProblem, wildcardMatches } from "@vigil/trace";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { textClasses, type TextCondition } from "../src/text-classes.js";

/**
 * `textClasses` against the real matchers: every class it names holds texts on which the matchers
 * say exactly what the class says, and every combination the matchers show on any text of a
 * small alphabet (surrogates, word and non-word characters, line breaks, letters in both cases)
 * is among the classes it names.
 */
const compiled = new Map<string, ReturnType<typeof compileRegex>>();

function holds(condition: TextCondition, text: string): boolean {
  switch (condition.kind) {
    case "equals":
      return text === condition.text;
    case "wildcard":
      return wildcardMatches(condition.pattern, text);
    case "regex": {
      const key = `/${condition.source}/${condition.flags}`;
      let regex = compiled.get(key);
      if (regex === undefined) compiled.set(key, (regex = compileRegex(condition.source, condition.flags)));
      if (isRegexProblem(regex)) throw new Error(regex.message);
      return regex.test(text);
    }
  }
}

const wildcards = ["*.env", "x*", "?", "??", "*x*", "[!x]*", "a\\*b", "*", "[a-c]?", "\uD83D\uDE00", "?\uDE00", "[\uD800-\uDBFF]"];
const regexes: [string, string][] = [
  ["secret", ""],
  ["^x", "i"],
  ["\\bx\\b", ""],
  ["\\Bx", ""],
  ["x.y", "s"],
  ["x.y", ""],
  ["^$", ""],
  ["(x|1)+$", ""],
  ["\\d{2,3}", ""],
  ["^.$", ""],
  ["[\\uDC00-\\uDFFF]", ""],
  ["é", "i"],
];
const constants = ["", "x", "secret.env", "\uD83D"];
const condition: fc.Arbitrary<TextCondition> = fc.oneof(
  fc.constantFrom(...wildcards).map((pattern) => ({ kind: "wildcard" as const, pattern })),
  fc.constantFrom(...regexes).map(([source, flags]) => ({ kind: "regex" as const, source, flags })),
  fc.constantFrom(...constants).map((text) => ({ kind: "equals" as const, text })),
);
const alphabet = ["x", "X", "y", "1", "2", " ", "\n", ".", "e", "n", "v", "\uD83D", "\uDE00", "\uDC00", "É", "é"];

function* texts(maxLength: number): Generator<string> {
  yield "";
  let layer = [""];
  for (let length = 1; length <= maxLength; length++) {
    const next: string[] = [];
    for (const prefix of layer) for (const c of alphabet) next.push(prefix + c);
    yield* next;
    layer = next;
  }
}

describe("the classes of texts that conditions tell apart", () => {
  it("finds the text two patterns of one key need together, and one and not the other", () => {
    const conditions: TextCondition[] = [
      { kind: "wildcard", pattern: "*.env" },
      { kind: "regex", source: "secret", flags: "" },
    ];
    const found = textClasses(conditions, 1);
    expect(found.incomplete).toBeUndefined();
    const byHolds = new Map(found.classes.map((c) => [c.holds.join(","), c.texts[0]!]));
    expect([...byHolds.keys()].sort()).toEqual(["false,false", "false,true", "true,false", "true,true"]);
    expect(byHolds.get("true,true")).toBe("secret.env");
  });

  it("gives as many distinct texts of a class as asked for, or all it has", () => {
    const found = textClasses([{ kind: "regex", source: "^[ab]$", flags: "" }], 5);
    const inside = found.classes.find((c) => c.holds[0])!;
    expect(inside.texts).toEqual(["a", "b"]);
    const outside = found.classes.find((c) => !c.holds[0])!;
    expect(new Set(outside.texts).size).toBe(5);
  });

  it("says when it stops short", () => {
    const found = textClasses([{ kind: "regex", source: "x{100}", flags: "" }], 1, { states: 10 });
    expect(found.incomplete).toMatch(/more than 10 combinations/);
  });

  it("agrees with the matchers on random sets of conditions, and misses no class a text of a small alphabet shows", () => {
    fc.assert(
      fc.property(fc.array(condition, { minLength: 1, maxLength: 3 }), (conditions) => {
        const found = textClasses(conditions, 2);
        expect(found.incomplete).toBeUndefined();
        const named = new Set<string>();
        for (const c of found.classes) {
          named.add(c.holds.join(","));
          for (const text of c.texts) expect(conditions.map((k) => holds(k, text)), JSON.stringify({ conditions, text })).toEqual(c.holds);
        }
        for (const text of texts(3)) {
          const shown = conditions.map((k) => holds(k, text)).join(",");
          expect(named.has(shown), JSON.stringify({ conditions, text, shown })).toBe(true);
        }
      }),
      { numRuns: cases(15, 60) },
    );
  });
});
