import { describe, expect, it } from "vitest";
import { compile, termAt, type TermAt } from "../src/index.js";

// Cursor-marker tests of the editor's queries: `<|>` marks the offset asked about.

function at(textWithCursor: string): { text: string; offset: number } {
  const offset = textWithCursor.indexOf("<|>");
  return { text: textWithCursor.replace("<|>", ""), offset };
}

function termIn(textWithCursor: string): TermAt | undefined {
  const { text, offset } = at(textWithCursor);
  return termAt(compile(text), offset);
}

const policy = `/// The pipeline.
policy p {
  /// A successful warp.
  pattern warp = action in {warpAffine} and status = ok
  pattern checked = action in {validate} and target = $t
  rule r: prec(warp and transform = $x, action in {validate} and target = $x) warn "validate first"
  rule s: abs(warp and not checked)
  rule t: always not (warp and once warp)
}
policy q {
  pattern warp = action in {other}
  rule u: abs(warp)
}`;

describe("the symbol table", () => {
  const compiled = compile(policy);
  const find = (kind: string, name: string, scope?: string) =>
    compiled.symbols.symbols.find((s) => s.kind === kind && s.name === name && (scope === undefined || s.scope === scope || s.policy === scope))!;

  it("lists policies, patterns, rules and variables with their documentation", () => {
    expect(compiled.symbols.symbols.map((s) => `${s.kind}:${s.policy}.${s.scope ?? ""}${s.name}`)).toEqual([
      "policy:p.p",
      "pattern:p.warp",
      "pattern:p.checked",
      "rule:p.r",
      "rule:p.s",
      "rule:p.t",
      "variable:p.checkedt",
      "variable:p.rx",
      "policy:q.q",
      "pattern:q.warp",
      "rule:q.u",
    ]);
    expect(find("pattern", "warp", "p").doc).toBe("A successful warp.");
    expect(find("policy", "p").doc).toBe("The pipeline.");
  });

  it("resolves a pattern reference within its own policy only", () => {
    const warp = find("pattern", "warp", "p");
    const texts = warp.references.map((span) => policy.slice(span.start, span.end));
    expect(texts).toEqual(["warp", "warp", "warp", "warp"]);
    expect(warp.references.every((span) => span.start < policy.indexOf("policy q"))).toBe(true);
    expect(find("pattern", "warp", "q").references).toHaveLength(1);
  });

  it("scopes a variable to its rule: its first occurrence declares it, the others refer to it", () => {
    const x = find("variable", "x", "r");
    expect(policy.slice(x.nameSpan.start, x.nameSpan.end)).toBe("$x");
    expect(x.references).toHaveLength(1);
    expect(x.references[0]!.start).toBeGreaterThan(x.nameSpan.start);
  });

  it("finds the declaration or reference under a cursor, its end included", () => {
    const offset = policy.indexOf("checked)") + "checked".length;
    const occurrence = compiled.symbols.symbolAt(offset);
    expect(occurrence?.symbol.name).toBe("checked");
    expect(occurrence?.declaration).toBe(false);
    expect(compiled.symbols.symbolAt(policy.indexOf("rule s") + 1)).toBeUndefined();
  });
});

describe("termAt", () => {
  it("names a rule's form keyword", () => {
    const term = termIn(`policy p { rule r: pr<|>ec(action in {a}, action in {b}) }`);
    expect(term).toMatchObject({ kind: "form", form: "prec" });
  });

  it("names an action, a key, and a value with its key", () => {
    expect(termIn(`policy p { rule r: abs(action in {a, "git p<|>ush"}) }`)).toMatchObject({ kind: "action", name: "git push" });
    expect(termIn(`policy p { rule r: abs(headers.ho<|>st ~ "*") }`)).toMatchObject({ kind: "key", path: ["headers", "host"] });
    expect(termIn(`policy p { rule r: abs(n in {1, 2<|>}) }`)).toMatchObject({ kind: "value", key: ["n"], value: 2 });
  });

  it("names a symbol: a rule's name, a pattern reference, a variable", () => {
    expect(termIn(`policy p { rule r<|>1: abs(action in {a}) }`)).toMatchObject({ kind: "symbol", declaration: true, symbol: { kind: "rule", name: "r1" } });
    expect(termIn(`policy p { pattern w = action in {a} rule r: abs(w<|>) }`)).toMatchObject({ kind: "symbol", declaration: false, symbol: { kind: "pattern", name: "w" } });
    expect(termIn(`policy p { rule r: prec(action in {a} and k = $<|>v, action in {b} and k = $v) }`)).toMatchObject({
      kind: "symbol",
      declaration: true,
      symbol: { kind: "variable", name: "v", scope: "r" },
    });
  });

  it("answers on broken text and says nothing on punctuation", () => {
    expect(termIn(`policy p { rule r: abs(action in {a} and<|> ) }`)).toBeUndefined();
    expect(termIn(`policy p { rule r: prec(action in {ab<|>`)).toMatchObject({ kind: "action", name: "ab" });
  });
});
