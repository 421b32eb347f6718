import { checkSourceFile } from "@vigil/checker";
import { parse } from "@vigil/syntax";
import { signatureOf } from "@vigil/trace";
import { describe, expect, it } from "vitest";

/**
 * Checking generated policies of a size no one writes by hand: a set with a value per line of a
 * log, a rule per tool. Each step must stay linear (no membership test by scanning in a loop); the
 * time limit only keeps a regression from hanging the suite.
 */
const generous = 120_000;

describe("scale", () => {
  it("checks sets of 200,000 values and actions, duplicates removed once", () => {
    const count = 200_000;
    const values = Array.from({ length: count }, (_, i) => `"v${i % (count / 2)}"`).join(", ");
    const actions = Array.from({ length: count }, (_, i) => `a${i}`).join(", ");
    const text = `policy p {\n  rule r: prec(transform in {${values}} and k = $x, action in {${actions}} and j = $x) warn\n}\n`;
    const parsed = parse(text);
    const checked = checkSourceFile(parsed.file);
    expect([...parsed.diagnostics, ...checked.diagnostics]).toEqual([]);
    const statement = checked.program.policies[0]!.statements[0]!;
    expect(statement).toMatchObject({ form: "prec", response: "warn" });
    if (statement.form !== "prec") return;
    const first = statement.first.formula;
    const second = statement.second.formula;
    expect(first.kind === "and" && first.operands[0]!.kind === "keyIn" ? first.operands[0].values.length : 0).toBe(count / 2);
    expect(second.kind === "and" && second.operands[0]!.kind === "action" ? second.operands[0].actions.length : 0).toBe(count);
  }, generous);

  it("checks 50,000 documented rules and finds the one stray doc comment among them", () => {
    const count = 50_000;
    const rules = Array.from({ length: count }, (_, i) => `  /// Rule ${i}.\n  rule r${i}: abs(action in {a${i}})`);
    const text = `policy p {\n${rules.join("\n")}\n  /// Documents nothing.\n}\n`;
    const checked = checkSourceFile(parse(text).file);
    expect(checked.diagnostics.map((d) => [d.code, d.span?.line])).toEqual([["V1105", 2 * count + 2]]);
    expect(checked.program.policies[0]!.statements.length).toBe(count);
  }, generous);

  it("checks a set of 160,000 values against a trace's signature without scanning the trace's values per literal", () => {
    const values = Array.from({ length: 160_000 }, (_, i) => `"v${i}"`).join(", ");
    const parsed = parse(`policy p {\n  rule r: abs(action in {a} and transform in {${values}, 6})\n}\n`);
    const signature = signatureOf(Array.from({ length: 1000 }, (_, i) => ({ position: i + 1, action: "a", args: { transform: i === 0 ? "6" : `t${i}` } })));
    const { diagnostics } = checkSourceFile(parsed.file, { signature });
    expect(diagnostics.filter((d) => d.code === "V1103")).toHaveLength(160_001);
    // The literal 6 is a number; the trace has the string "6": the fix says so.
    expect(diagnostics.find((d) => d.message.startsWith("the value 6 "))?.fix?.title).toBe('replace with "6"');
  }, generous);

  it("bounds the depth of patterns that refer to patterns (V1107), in either order, without overflowing the stack", () => {
    const forward = Array.from({ length: 20_000 }, (_, i) => `  pattern p${i} = ${i === 0 ? "action in {a}" : `p${i - 1} and action in {a}`}`);
    const backward = Array.from({ length: 20_000 }, (_, i) => `  pattern p${i} = ${i === 19_999 ? "action in {a}" : `p${i + 1} and action in {a}`}`);
    for (const [patterns, used] of [[forward, "p19999"], [backward, "p0"]] as const) {
      const parsed = parse(`policy p {\n${patterns.join("\n")}\n  rule r: abs(${used})\n}\n`);
      const { diagnostics, program } = checkSourceFile(parsed.file);
      expect(diagnostics.length).toBeGreaterThan(0);
      expect(diagnostics.every((d) => d.code === "V1107")).toBe(true);
      expect(program.policies[0]!.statements).toEqual([]);
    }
    // A chain within the bound is checked.
    const short = Array.from({ length: 400 }, (_, i) => `  pattern p${i} = ${i === 0 ? "action in {a}" : `p${i - 1} and action in {a}`}`);
    const { diagnostics, program } = checkSourceFile(parse(`policy p {\n${short.join("\n")}\n  rule r: abs(p399)\n}\n`).file);
    expect(diagnostics).toEqual([]);
    expect(program.policies[0]!.statements).toHaveLength(1);
  }, generous);
});
