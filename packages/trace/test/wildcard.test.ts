import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileWildcard, wildcardMatches } from "@vigil/trace";

describe("wildcards", () => {
  it.each([
    ["*", "", true],
    ["*", "a/b/c", true],
    ["a*c", "abbbc", true],
    ["a*c", "abbb", false],
    ["a?c", "abc", true],
    ["a?c", "ac", false],
    ["a?c", "a😀c", true],
    ["[a-c]x", "bx", true],
    ["[a-c]x", "dx", false],
    ["[!a-c]x", "dx", true],
    ["[^a-c]x", "ax", false],
    ["databricks --version*", "databricks --version --json", true],
    ["[-a]", "-", true],
    ["[]]", "]", true],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["ABC", "abc", false],
    ["/etc/*", "/etc/passwd", true],
    ["*.json", "out.json\n", false],
  ])("%j on %j is %s", (pattern, text, expected) => {
    expect(wildcardMatches(pattern, text)).toBe(expected);
  });

  it("matches numbers and booleans by their JSON text, never null, lists or objects", () => {
    expect(wildcardMatches("6", 6)).toBe(true);
    expect(wildcardMatches("tr*", true)).toBe(true);
    expect(wildcardMatches("*", null)).toBe(false);
    expect(wildcardMatches("*", ["a"])).toBe(false);
    expect(wildcardMatches("*", { a: 1 })).toBe(false);
  });

  it.each([
    ["[abc", "a `[` in a wildcard is not closed by `]`"],
    ["abc\\", "a `\\` at the end of a wildcard escapes nothing"],
    ["[z-a]", "the range `z-a` in a wildcard class runs backwards"],
  ])("reports %j as malformed", (pattern, message) => {
    const compiled = compileWildcard(pattern);
    expect(compiled.ok).toBe(false);
    if (!compiled.ok) expect(compiled.message).toBe(message);
  });

  const escape = (text: string) => text.replace(/[\\*?[\]]/g, (c) => `\\${c}`);

  it("matches any text exactly when every special character is escaped", () => {
    fc.assert(
      fc.property(fc.string({ unit: "grapheme-composite" }), fc.string(), (text, other) => {
        expect(wildcardMatches(escape(text), text)).toBe(true);
        expect(wildcardMatches(escape(text), other)).toBe(other === text);
      }),
      { numRuns: 2000 },
    );
  });

  it("agrees with a reference matcher on `*` and `?` patterns", () => {
    const reference = (pattern: string[], text: string[]): boolean => {
      const memo = new Map<string, boolean>();
      const go = (p: number, t: number): boolean => {
        const key = `${p},${t}`;
        if (memo.has(key)) return memo.get(key)!;
        let result: boolean;
        if (p === pattern.length) result = t === text.length;
        else if (pattern[p] === "*") result = go(p + 1, t) || (t < text.length && go(p, t + 1));
        else result = t < text.length && (pattern[p] === "?" || pattern[p] === text[t]) && go(p + 1, t + 1);
        memo.set(key, result);
        return result;
      };
      return go(0, 0);
    };
    const alphabet = fc.constantFrom("a", "b", "/", ".", "😀");
    fc.assert(
      fc.property(fc.array(fc.oneof(alphabet, fc.constantFrom("*", "?")), { maxLength: 8 }), fc.array(alphabet, { maxLength: 10 }), (pattern, text) => {
        expect(wildcardMatches(pattern.join(""), text.join(""))).toBe(reference(pattern, text));
      }),
      { numRuns: 3000 },
    );
  });
});
