import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compileRegex, isRegexProblem, type CompiledRegex, type RegexProblem } from "@vigil/trace";
import { cases } from "../../../test/support/tier.js";

/** Compiles a pattern that must be accepted. */
function accepted(source: string, flags = ""): CompiledRegex {
  const compiled = compileRegex(source, flags);
  if (isRegexProblem(compiled)) throw new Error(`/${source}/${flags} was rejected: ${compiled.message}`);
  return compiled;
}

/** Compiles a pattern that must be rejected. */
function rejected(source: string, flags = ""): RegexProblem {
  const compiled = compileRegex(source, flags);
  if (!isRegexProblem(compiled)) throw new Error(`/${source}/${flags} was accepted`);
  return compiled;
}

const unit = (code: number) => String.fromCharCode(code);
const allUnits = Array.from({ length: 0x10000 }, (_, code) => unit(code));

describe("regular expressions agree with ECMAScript", () => {
  const texts = ["", "a", "abc", "ABC", "a\nc", "a\rc", "a\u2028c", "a\u2029c", "a c", "a\tc", "a😀c", "😀", "\uD83D", "\uDE00", "x\uDE00\uD83Dy", "foo bar", "foobar", "_x9", "é", "É", "a/b", "a.b", "\u00A0", "\uFEFF", "\0", "\b", "\x01", "line\n", "12-34", "aaa", "{}", "]"];
  it.each([
    // `.`: every unit but the line terminators, or every unit with `s`; an astral character is two units.
    ["a.c", ""], ["a.c", "s"], ["^.$", ""], ["^..$", ""], ["^.$", "s"], ["a.*c", ""], ["a[^]c", ""],
    // Class escapes and word boundaries.
    ["\\s", ""], ["\\S", ""], ["a\\sc", ""], ["\\w+", ""], ["^\\W$", ""], ["\\d", ""], ["\\D", ""], ["\\bbar", ""], ["o\\b", ""], ["o\\B", ""], ["\\B", ""], ["^\\b$", ""],
    // Classes.
    ["[a-c]", ""], ["[^a-c]", ""], ["^[^a-z]$", ""], ["[]", ""], ["[^]", ""], ["[\\d-z]", ""], ["[\\b]", ""], ["[-a]", ""], ["[a-]", ""], ["[\\]]", ""], ["[\\w\\s]", "i"], ["[^\\W]", ""], ["[A-Z]", "i"], ["[^A-Z]", "i"], ["[\\uD800-\\uDBFF]", ""], ["^[\\uD800-\\uDBFF]", ""], ["[^\\uD83D]", ""], ["[é]", "i"], ["[\\u00e0-\\u00ff]", "i"],
    // Escapes.
    ["\\u0041", ""], ["\\x41", "i"], ["\\cJ", ""], ["\\0", ""], ["a\\/b", ""], ["a\\.b", ""], ["\\t", ""], ["\\n", ""], ["\\r", ""], ["\\v", ""], ["\\f", ""], ["\\{\\}", ""], ["\\uD83D", ""], ["\\uDE00", ""], ["\\uD83D\\uDE00", ""], ["😀", ""], ["^😀$", ""], ["(?:😀)+", ""],
    // Anchors: no `m`, so only the ends of the text; `$` does not match before a final newline.
    ["^a", ""], ["c$", ""], ["^$", ""], ["line$", ""], ["^line\\n$", ""], ["^a|c$", ""], ["(?:^|-)34", ""],
    // Quantifiers, groups, alternatives, Annex B literals.
    ["a{2}", ""], ["a{2,}", ""], ["a{1,2}b", ""], ["a{0}b", ""], ["a+?", ""], ["(a|b)*c", ""], ["(?<name>fo+)bar", ""], ["(?:)", ""], ["", ""], ["a|", ""], ["]", ""], ["{", ""], ["a{", ""], ["x{1", ""], ["a{,5}", ""], ["(?:foo|bar)$", ""],
    // Case-insensitive matching without `u`.
    ["ABC", "i"], ["é", "i"], ["\\u00C9", "i"], ["foo BAR", "i"],
  ])("/%s/%s", (source, flags) => {
    const compiled = accepted(source, flags);
    for (const text of texts) expect([text, compiled.test(text)]).toEqual([text, new RegExp(source, flags).test(text)]);
  });

  it.each([
    ["k", "\u212A"], ["K", "\u212A"], ["s", "\u017F"], ["S", "\u017F"], ["\u017F", "S"], ["ß", "ẞ"], ["ẞ", "ß"], ["σ", "ς"], ["ς", "Σ"], ["Σ", "σ"], ["ǅ", "Ǆ"], ["ǆ", "ǅ"],
    ["i", "İ"], ["i", "ı"], ["ı", "I"], ["µ", "μ"], ["µ", "Μ"], ["ÿ", "Ÿ"], ["\u0345", "ι"], ["ﬀ", "FF"], ["[a-z]", "\u212A"], ["[^k]", "\u212A"], ["\\w", "\u017F"], ["\\W", "k"],
  ])("/%s/i on %j, where ECMAScript's case rules are not Unicode folding", (source, text) => {
    expect(accepted(source, "i").test(text)).toBe(new RegExp(source, "i").test(text));
  });

  it("reads `.`, `\\s`, `\\w`, `\\d` and their negations as ECMAScript does, on every code unit", () => {
    for (const source of ["^.$", "^\\s$", "^\\S$", "^\\w$", "^\\W$", "^\\d$", "^[^\\s\\d]$", "^[\\S]$"]) {
      for (const flags of ["", "i", "s"]) {
        const compiled = accepted(source, flags);
        const native = new RegExp(source, flags);
        const differing = allUnits.filter((text) => compiled.test(text) !== native.test(text));
        expect([source, flags, differing]).toEqual([source, flags, []]);
      }
    }
  });

  it("matches a character under `i` exactly where ECMAScript does, for every unit with a case mapping", () => {
    // Candidates for each unit: every unit with the same upper or lower case as it, its case
    // mappings and theirs; this includes the partners of Unicode folding (K and the Kelvin sign).
    const byUpper = new Map<string, string[]>();
    const byLower = new Map<string, string[]>();
    for (const text of allUnits) {
      byUpper.set(text.toUpperCase(), [...(byUpper.get(text.toUpperCase()) ?? []), text]);
      byLower.set(text.toLowerCase(), [...(byLower.get(text.toLowerCase()) ?? []), text]);
    }
    let checked = 0;
    for (const text of allUnits) {
      const upper = text.toUpperCase();
      const lower = text.toLowerCase();
      if (upper === text && lower === text) continue;
      const source = `^\\u${text.charCodeAt(0).toString(16).padStart(4, "0")}$`;
      const compiled = accepted(source, "i");
      const native = new RegExp(source, "i");
      const candidates = new Set([text, upper, lower, upper.toLowerCase(), lower.toUpperCase(), ...(byUpper.get(upper) ?? []), ...(byLower.get(lower) ?? []), ...(byUpper.get(lower.toUpperCase()) ?? [])]);
      for (const candidate of candidates) {
        expect([source, candidate, compiled.test(candidate)]).toEqual([source, candidate, native.test(candidate)]);
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(4000);
  });

  it("reads the modifiers of ES2025 as the flags they name, inside their group", () => {
    // Node 20's own RegExp has no modifiers: each is compared with the same pattern spelled out.
    const pairs: [string, string, string][] = [
      ["(?i:ab)c", "", "[aA][bB]c"],
      ["(?-i:ab)c", "i", "abc"],
      ["a(?s:.)b", "", "a[^]b"],
      ["a(?-s:.)b", "s", "a.b"],
      ["(?i-s:a.)b", "s", "[aA].b"],
      ["(?i:[^k])", "", "[^kK]"],
    ];
    for (const [source, flags, equivalent] of pairs) {
      const compiled = accepted(source, flags);
      for (const text of ["abc", "ABc", "ABC", "Abc", "a\nb", "A\nb", "k", "K", "\u212A", "x"]) {
        expect([source, text, compiled.test(text)]).toEqual([source, text, new RegExp(equivalent).test(text)]);
      }
    }
    expect(accepted("(?<x>a)|(?<x>b)").test("b")).toBe(true);
  });
});

describe("random regular expressions", () => {
  const runs = cases(300, 3000);
  const patternCharacters = ["a", "b", "A", "k", "K", "s", "\u017F", "\u212A", "é", "É", "ß", "σ", "ς", " ", "_", "-", "1", "\\n", "\\r", "\\u2028", "\\x41", "\\u00e9", "\\t", "\\/", "\\.", "\\cJ"];
  const classItems = ["a", "b", "K", "k", "s", "é", "1", "_", " ", "\\-", "\\]", "\\^", "a-c", "A-Z", "\\u00e0-\\u00ff", "\\d", "\\w", "\\s", "\\W", "\\b", "\\uD800-\\uDBFF", "\\uDE00"];
  const atom = fc.oneof(
    fc.constantFrom(...patternCharacters),
    fc.constantFrom(".", "\\s", "\\S", "\\w", "\\W", "\\d", "\\D", "(?:😀)", "(?:\\uD83D)", "(?:\\0)"),
    fc.tuple(fc.boolean(), fc.array(fc.constantFrom(...classItems), { maxLength: 4 })).map(([negated, items]) => `[${negated ? "^" : ""}${items.join("")}]`),
  );
  // ECMAScript's RegExp backtracks, and nested quantifiers took it minutes on ten characters: the
  // body of `*`, `+` and `{2,}` is characters with bounded counts, and texts are short.
  const unbounded = fc.constantFrom("*", "+", "{2,}", "*?", "+?");
  const bounded = fc.constantFrom("", "", "?", "{0,2}", "{1,3}", "{2}", "??");
  const assertion = fc.constantFrom("^", "$", "\\b", "\\B");
  const group = (inner: fc.Arbitrary<string>, quantifier: fc.Arbitrary<string>) =>
    fc.tuple(fc.constantFrom("(", "(?:"), inner, quantifier).map(([open, body, q]) => `${open}${body})${q}`);
  const alternatives = (term: fc.Arbitrary<string>) =>
    fc.array(fc.array(term, { maxLength: 3 }).map((terms) => terms.join("")), { minLength: 1, maxLength: 2 }).map((parts) => parts.join("|"));
  const depth = { maxDepth: 2, depthSize: "small", withCrossShrink: true } as const;
  const { pattern } = fc.letrec<{ pattern: string; boundedPattern: string; term: string; boundedTerm: string }>((tie) => ({
    pattern: alternatives(tie("term")),
    boundedPattern: alternatives(tie("boundedTerm")),
    term: fc.oneof(depth, fc.tuple(atom, fc.oneof(unbounded, bounded)).map(([a, q]) => a + q), assertion, group(tie("pattern"), bounded), group(tie("boundedPattern"), unbounded)),
    boundedTerm: fc.oneof(fc.tuple(atom, bounded).map(([a, q]) => a + q), assertion),
  }));
  const textUnits = ["a", "b", "A", "B", "k", "K", "s", "S", "\u017F", "\u212A", "é", "É", "ß", "ẞ", "σ", "ς", "Σ", " ", "\n", "\r", "\u2028", "\t", "_", "-", "1", "\b", "\0", "😀", "\uD83D", "\uDE00", "\u00A0", "/", "."];
  const text = fc.array(fc.constantFrom(...textUnits), { maxLength: 6 }).map((units) => units.join(""));
  const flags = fc.subarray(["i", "s"]).map((letters) => letters.join(""));

  it("are accepted and find a match exactly when ECMAScript's RegExp does", () => {
    fc.assert(
      fc.property(pattern, flags, fc.array(text, { minLength: 1, maxLength: 6 }), (source, flagLetters, texts) => {
        const compiled = accepted(source, flagLetters);
        const native = new RegExp(source, flagLetters);
        for (const sample of texts) expect(compiled.test(sample)).toBe(native.test(sample));
      }),
      { numRuns: runs },
    );
  });

  it("never throw, and place every problem inside the source and flags", () => {
    const anyText = fc.string({ unit: fc.constantFrom("a", "(", ")", "[", "]", "{", "}", "\\", "|", "*", "+", "?", "^", "$", ".", "-", "1", "2", ",", "k", "<", ">", "=", "!", "u", "x", "c", "😀", "\uD83D") });
    fc.assert(
      fc.property(anyText, fc.string({ maxLength: 4 }), anyText, (source, flagLetters, sample) => {
        const compiled = compileRegex(source, flagLetters);
        if (isRegexProblem(compiled)) {
          expect(compiled.offset).toBeGreaterThanOrEqual(0);
          expect(compiled.length).toBeGreaterThanOrEqual(0);
          expect(compiled.offset + compiled.length).toBeLessThanOrEqual(source.length + 1 + flagLetters.length);
          expect(compiled.message).not.toBe("");
        } else {
          expect(compiled.test(sample.slice(0, 8))).toBe(new RegExp(source, flagLetters).test(sample.slice(0, 8)));
        }
      }),
      { numRuns: runs },
    );
  });
});

describe("located problems", () => {
  it.each([
    // Back-references and lookaround: a linear-time automaton cannot run them.
    ["(a)\\1", "", 3, 2, "the back-reference `\\1` cannot be matched in linear time"],
    ["(?<x>a)b\\k<x>", "", 8, 5, "the back-reference `\\k<x>` cannot be matched in linear time"],
    ["a(?=b)", "", 1, 5, "`(?=…)` (lookahead) cannot be matched in linear time"],
    ["a(?!b)c", "", 1, 5, "`(?!…)` (negative lookahead) cannot be matched in linear time"],
    ["(?<=a)b", "", 0, 6, "`(?<=…)` (lookbehind) cannot be matched in linear time"],
    ["x(?<!a)b", "", 1, 6, "`(?<!…)` (negative lookbehind) cannot be matched in linear time"],
    ["(?:a|(?=b))+", "", 5, 5, "`(?=…)` (lookahead) cannot be matched in linear time"],
    // Syntax errors, placed on the construct at fault.
    ["(", "", 0, 1, "this `(` is not closed by a `)`"],
    ["a(b(c)", "", 1, 1, "this `(` is not closed by a `)`"],
    ["[", "", 0, 1, "this `[` is not closed by a `]`"],
    ["ab[(c", "", 2, 1, "this `[` is not closed by a `]`"],
    ["a)", "", 1, 1, "this `)` closes no group"],
    ["a{2,1}", "", 1, 5, "the counts in `{2,1}` are out of order"],
    ["a**", "", 2, 1, "`*` has nothing to repeat"],
    ["x{1}{2}", "", 4, 3, "`{2}` has nothing to repeat"],
    ["a[z-a]", "", 1, 4, "a range in this class runs backwards"],
    ["ab\\", "", 2, 1, "a `\\` at the end of the pattern escapes nothing"],
    ["(?<n>a)(?<n>b)", "", 12, 1, "duplicate capture group name"],
    // Flags: at source.length + 1 + their index.
    ["a", "g", 2, 1, "the flag `g` is not supported: the flags are `i` and `s`"],
    ["ab", "im", 4, 1, "the flag `m` is not supported: the flags are `i` and `s`"],
    ["a", "u", 2, 1, "the flag `u` is not supported: the flags are `i` and `s`"],
    ["a", "isi", 4, 1, "the flag `i` is repeated"],
    ["a", "x", 2, 1, "unknown flag `x`: the flags are `i` and `s`"],
    ["(?m:^a)", "", 2, 1, "the modifier `m` is not supported: the flags are `i` and `s`"],
    // Limits of a linear-time matcher.
    ["a{1001}", "", 1, 6, "the count 1001 is more than 1000, the most a linear-time matcher repeats"],
    ["x{2,99999}", "", 1, 9, "the count 99999 is more than 1000, the most a linear-time matcher repeats"],
    ["(a{1000}){1000}", "", 0, 15, "these nested counts repeat 1000000 times in all, more than 1000, the most a linear-time matcher repeats"],
    ["b(?:(?:a{0,10}){0,10}){0,20}", "", 1, 27, "these nested counts repeat 2000 times in all, more than 1000, the most a linear-time matcher repeats"],
    // What Annex B reads as something nobody meant.
    ["\\z", "", 0, 2, "`\\z` is not an escape here: without the `u` flag it would mean the letter `z`"],
    ["a\\p{L}", "", 1, 2, "`\\p` is not an escape here: without the `u` flag it would mean the letter `p`"],
    ["\\u{41}", "", 0, 2, "`\\u` is not an escape here: without the `u` flag it would mean the letter `u`"],
    ["\\1", "", 0, 2, "`\\1` refers to no group, so it would be an octal escape for U+0001"],
    ["(a)\\8", "", 3, 2, "`\\8` refers to no group, so it would mean the digit `8`"],
    ["[\\12]", "", 1, 3, "`\\12` in a class would be an octal escape for U+000A"],
    ["\\c1", "", 0, 2, "`\\c` must be followed by a letter"],
    ["x[😀]", "", 2, 2, "without the `u` flag, a class holds UTF-16 units: `😀` here is its two halves, each matched alone"],
    ["x😀+", "", 1, 3, "without the `u` flag, `+` after `😀` repeats only the second of its two UTF-16 units"],
  ])("/%s/%s at %i, length %i: %s", (source, flags, offset, length, message) => {
    expect(rejected(source, flags)).toMatchObject({ offset, length, message });
  });

  it("says what to write instead where there is something", () => {
    expect(rejected("a(?=b)").help).toContain("`ab`");
    expect(rejected("a(?!b)").help).toContain("not KEY matches");
    expect(rejected("\\Afoo").help).toBe("for the start of the text, write `^`");
    expect(rejected("foo\\z").help).toBe("for the end of the text, write `$`");
    expect(rejected("a", "g").help).toBe("`matches` already searches the whole text; drop `g`");
    expect(rejected("😀+").help).toBe("to repeat the character, write `(?:😀)+`");
    expect(rejected("\\1").help).toBe("for that character, write `\\x01`");
  });

  it("bounds the size of the program and the depth of groups", () => {
    expect(accepted("(?:a?){1000}a{1000}").test("a".repeat(1500))).toBe(true);
    expect(accepted("(?:(?:a{0,10}){0,10}){0,10}")).toBeDefined();
    const large = "(?:a?){1000}a{1000}".repeat(2);
    expect(rejected(large)).toMatchObject({ offset: 0, length: large.length, message: "this part of the pattern compiles to about 6000 instructions, more than the 5000 a pattern may have" });
    expect(rejected(large).help).toContain("`*` or `+`");
    const long = rejected("x".repeat(5001));
    expect([long.offset, long.length, long.help]).toEqual([0, 5001, undefined]);
    expect(accepted("(".repeat(100) + "a" + ")".repeat(100)).test("a")).toBe(true);
    expect(rejected("(".repeat(101) + "a" + ")".repeat(101))).toMatchObject({ offset: 100, length: 1, message: "groups nest more than 100 deep" });
    expect(rejected("(".repeat(50_000))).toMatchObject({ offset: 100, length: 1 });
  });
});

describe("hostile input", () => {
  // Each of these takes exponential or quadratic time in a backtracking matcher. The answers are
  // known by reading the pattern; the time is bounded only by the test's time-out (speed is for
  // the benchmarks).
  const as = "a".repeat(100_000);
  it.each([
    ["(a+)+$", as + "b", false],
    ["(a+)+$", as, true],
    ["(a|a)*b", as, false],
    ["(a|aa)+c", as, false],
    ["(.*a){20}", as, true],
    ["(.*a){20}x", as, false],
    ["(a*)*b", as, false],
    ["^(\\w+\\s?)*$", "a ".repeat(50_000) + "!", false],
    ["(x+x+)+y", "x".repeat(100_000), false],
    ["^(a|b|ab)*c$", "ab".repeat(50_000), false],
    ["(?:a?){1000}a{1000}", as, true],
    ["\\s*$x", " ".repeat(100_000), false],
    ["(?:😀)+x", "😀".repeat(50_000), false],
    ["[^\\n]*\\n", "\uD83D".repeat(100_000), false],
  ])("/%s/ on %#", (source, text, expected) => {
    expect(accepted(source, "i").test(text)).toBe(expected);
  });
});
