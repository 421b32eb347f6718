import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { parse, scanTokens } from "../src/index.js";

// The editor's view of the tokens: every character that is not white space belongs to exactly one
// token, in order, and each keyword carries its ASCII spelling.

const pieces = ["policy", "pattern", "rule", "prec", "bresp", "always", "□", "¬", "∧", "∨", "->", "⇒", "→", "◇⁻", "◇⁺", "in", "index", "action", "ok", "true", "{", "}", "(", ")", "[", "]", ",", ":", "=", "~", ".", "$x", "$", '"a"', '"\\q', '"open', "6", "-6", "6.0e+3", ".5", "01", "6fps", "// c", "/// d", "\n", " ", "\t", "é", "#", "&&", "-", "x_1", "😀", "after", "before", "between", "until", "and", "limit", "of", "per", "5m", "500ms"];

describe("scanTokens", () => {
  it("covers every character but white space exactly once, in order", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        const tokens = scanTokens(text);
        let at = 0;
        for (const token of tokens) {
          expect(token.start).toBeGreaterThanOrEqual(at);
          expect(text.slice(at, token.start).trim()).toBe("");
          expect(text.slice(token.start, token.end)).toBe(token.text);
          at = token.end;
        }
        expect(text.slice(at).trim()).toBe("");
      }),
      { numRuns: cases(200, 2000) },
    );
  });

  it("names the kinds an editor highlights", () => {
    expect(scanTokens('rule r: abs(k in {"a", 6, $v}) /// d\n// c\n"open &&').map((t) => [t.kind, t.text])).toEqual([
      ["keyword", "rule"],
      ["identifier", "r"],
      ["punctuation", ":"],
      ["keyword", "abs"],
      ["punctuation", "("],
      ["identifier", "k"],
      ["keyword", "in"],
      ["punctuation", "{"],
      ["string", '"a"'],
      ["punctuation", ","],
      ["number", "6"],
      ["punctuation", ","],
      ["variable", "$v"],
      ["punctuation", "}"],
      ["punctuation", ")"],
      ["doc-comment", "/// d"],
      ["comment", "// c"],
      ["unterminated-string", '"open &&'],
    ]);
    expect(scanTokens("a && b").map((t) => t.kind)).toEqual(["identifier", "unknown", "identifier"]);
  });

  it("spells Unicode keywords in ASCII", () => {
    expect(scanTokens("□ ¬ ∧ ∨ ⇒ → -> ◇⁻ ◇⁺").map((token) => token.keyword)).toEqual(["always", "not", "and", "or", "implies", "implies", "implies", "once", "eventually"]);
  });
});

describe("scanTokens and scopes", () => {
  const marked = (text: string) =>
    scanTokens(text)
      .filter((token) => token.scopeWord === true)
      .map((token) => [token.kind, token.keyword, token.start]);

  it("reads a scope's words as keywords where the parser reads a scope, and as names elsewhere", () => {
    const text = [
      "policy p {",
      "  pattern after = action in {before} and between in {1}",
      "  rule a: abs(after) after action in {x} and y in {1} until after",
      "  rule b: resp(after, before) between (action in {q} and z in {1}) and action in {r} and s in {2} warn",
      "  rule c: always not after before between",
      "  rule d: always x and y between after and before",
      "  rule after: abs(x) before action in {approve} and r in {1}",
      "}",
    ].join("\n");
    const at = (needle: string, from = 0) => text.indexOf(needle, from);
    const lineA = at("rule a");
    const lineB = at("rule b");
    const lineC = at("rule c");
    const lineD = at("rule d");
    const lineE = at("rule after");
    expect(marked(text)).toEqual([
      ["keyword", "after", at(") after", lineA) + 2],
      ["keyword", "until", at("until", lineA)],
      ["keyword", "between", at("between", lineB)],
      ["keyword", "and", at(") and", lineB + 30) + 2],
      ["keyword", "before", at("before between", lineC)],
      ["keyword", "between", at("between", lineD)],
      ["keyword", "and", at("and before", lineD)],
      ["keyword", "before", at("before", lineE)],
    ]);
    // The other words are names: a pattern called `after`, an action `before`, a key `between`.
    const names = scanTokens(text).filter((token) => ["after", "before", "between"].includes(token.text) && token.scopeWord !== true);
    expect(names.every((token) => token.kind === "identifier")).toBe(true);
    expect(names).toHaveLength(12);
    // The parser finds the same scopes.
    const parsed = parse(text);
    expect(parsed.diagnostics).toEqual([]);
    const words = parsed.file.policies[0]!.items.flatMap((item) => (item.kind === "RuleDecl" && item.statement.scope !== undefined ? [item.statement.scope.wordSpan.start] : []));
    expect(words).toEqual(marked(text).filter(([, keyword]) => keyword !== "and" && keyword !== "until").map(([, , start]) => start));
  });

  it("marks a scope word being typed, and nothing in a pattern declaration or after a keyword", () => {
    expect(marked("policy p {\n  rule r: abs(x) after")).toEqual([["keyword", "after", 28]]);
    expect(marked("policy p {\n  rule r: always after\n}")).toEqual([]);
    expect(marked("policy p {\n  pattern q = x after y\n}")).toEqual([]);
    expect(marked("policy p {\n  rule r: abs(x)\n} after y")).toEqual([]);
  });
});

describe("scanTokens and the words of limits and bounds", () => {
  const keywordsAmong = (text: string, words: readonly string[]) =>
    scanTokens(text)
      .filter((token) => words.includes(token.text))
      .map((token) => [token.kind, token.text, token.start] as const);

  it("reads `limit` as a form at a statement's start, `of` and `per` in a bound, and each as a name elsewhere", () => {
    const text = [
      "policy p {",
      "  pattern limit = action in {x} and of in {1} and per in {2}",
      "  rule a: limit[3 per 1m](action in {x} and limit in {1})",
      "  rule b: limit[500 of amount per 1d](action in {refund}) warn",
      "  rule c: limit[3 of per per 1m](limit)",
      "  rule d: limit[2 of output.items.0 per 1h](of)",
      "  rule e: always not (limit and once[1h] per)",
      "  rule limit: bresp[5m](limit, of)",
      "}",
    ].join("\n");
    const parsed = parse(text);
    expect(parsed.diagnostics).toEqual([]);
    // From the tree: each `limit` form's word, and the word before each bound's key path and window.
    const tokens = scanTokens(text);
    const wordBefore = (offset: number) => tokens[tokens.findIndex((token) => token.start === offset) - 1]!.start;
    const expected = new Set<number>();
    for (const item of parsed.file.policies[0]!.items) {
      if (item.kind !== "RuleDecl") continue;
      if (item.statement.form === "limit") expected.add(item.statement.formSpan.start);
      const bound = item.statement.bound;
      if (bound?.of !== undefined) expected.add(wordBefore(bound.of.span.start));
      if (bound?.per !== undefined) expected.add(wordBefore(bound.per.span.start));
    }
    const marked = keywordsAmong(text, ["limit", "of", "per"]);
    expect(marked.filter(([kind]) => kind === "keyword").map(([, , start]) => start)).toEqual([...expected].sort((a, b) => a - b));
    expect(marked.filter(([kind]) => kind === "keyword").map(([, word]) => word)).toEqual(["limit", "per", "limit", "of", "per", "limit", "of", "per", "limit", "of", "per"]);
    // Names: the pattern `limit`, keys `of` and `per` (one after `of`), pattern references, the rule `limit`.
    expect(marked.filter(([kind]) => kind !== "keyword").every(([kind]) => kind === "identifier")).toBe(true);
    expect(marked.filter(([kind]) => kind !== "keyword")).toHaveLength(12);
    // Durations are numbers, as the lexer reads them.
    expect(scanTokens("bresp[5m] once[500ms]").filter((token) => token.kind === "number").map((token) => token.text)).toEqual(["5m", "500ms"]);
  });

  it("marks the words of a limit being typed", () => {
    expect(keywordsAmong("policy p {\n  rule r: limit[3 per", ["limit", "per"]).map(([kind]) => kind)).toEqual(["keyword", "keyword"]);
    expect(keywordsAmong("policy p {\n  rule r: limit(", ["limit"]).map(([kind]) => kind)).toEqual(["keyword"]);
    expect(keywordsAmong("policy p {\n  rule r: limit", ["limit"]).map(([kind]) => kind)).toEqual(["identifier"]);
    expect(keywordsAmong("policy p {\n  rule r: abs(limit[3 per 1m])", ["limit", "per"]).map(([kind]) => kind)).toEqual(["identifier", "identifier"]);
  });
});
