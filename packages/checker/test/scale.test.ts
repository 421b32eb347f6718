import { checkSourceFile } from "@vigil/checker";
import { parse } from "@vigil/syntax";
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
});
