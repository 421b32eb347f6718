import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { scanTokens } from "../src/index.js";

// The editor's view of the tokens: every character that is not white space belongs to exactly one
// token, in order, and each keyword carries its ASCII spelling.

const pieces = ["policy", "pattern", "rule", "prec", "bresp", "always", "□", "¬", "∧", "∨", "->", "⇒", "→", "◇⁻", "◇⁺", "in", "index", "action", "ok", "true", "{", "}", "(", ")", "[", "]", ",", ":", "=", "~", ".", "$x", "$", '"a"', '"\\q', '"open', "6", "-6", "6.0e+3", ".5", "01", "6fps", "// c", "/// d", "\n", " ", "\t", "é", "#", "&&", "-", "x_1", "😀"];

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
      { numRuns: 2000 },
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
