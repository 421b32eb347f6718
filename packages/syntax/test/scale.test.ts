import { format, parse } from "@vigil/syntax";
import { describe, expect, it } from "vitest";

/**
 * Policies far larger than anyone writes by hand, but easily generated (one rule per line of a
 * log, one set with every value of a trace): parsing and formatting them must not overflow the
 * stack, which a spread of an input-sized array into a call's arguments or a recursion over the
 * input does. The sizes are well past where either fails; the time limit only keeps a regression
 * from hanging the suite.
 */
const generous = 120_000;

function lines(text: string): string[] {
  return text.split("\n");
}

describe("scale", () => {
  it("parses and formats 50,000 rules", () => {
    const count = 50_000;
    const response = (i: number) => (i % 2 === 0 ? "" : ` warn "Do not call a${i}."`);
    const rules = Array.from({ length: count }, (_, i) => `  /// Rule ${i}.\n  rule r${i}: abs(action in {a${i}})${response(i)}`);
    const text = `policy p {\n${rules.join("\n")}\n}\n`;
    const parsed = parse(text);
    expect(parsed.diagnostics).toEqual([]);
    expect(parsed.file.policies[0]!.items.length).toBe(count);
    expect(parsed.file.policies[0]!.items[count - 1]).toMatchObject({ response: { value: "warn" }, remediation: { value: `Do not call a${count - 1}.` } });
    const formatted = format(text).text!;
    expect(formatted).toBe(text);
  }, generous);

  it("parses and formats a set of 200,000 values", () => {
    const count = 200_000;
    const values = Array.from({ length: count }, (_, i) => `"v${i}"`);
    const text = `policy p {\n  rule r: abs(transform in {${values.join(", ")}})\n}\n`;
    const parsed = parse(text);
    expect(parsed.diagnostics).toEqual([]);
    const formatted = format(text).text!;
    const out = lines(formatted);
    // One value per line, with a trailing comma, between the rule's opening and closing lines.
    expect(out.slice(0, 4)).toEqual(["policy p {", "  rule r: abs(", "    transform in {", '      "v0",']);
    expect(out.slice(count + 2)).toEqual([`      "v${count - 1}",`, "    },", "  )", "}", ""]);
    expect(out.length).toBe(count + 7);
  }, generous);

  it("parses and formats 100,000 operands, conjuncts and comments", () => {
    const count = 100_000;
    const operands = Array.from({ length: count }, (_, i) => `    // Operand ${i}.\n    a${i},`);
    const conjuncts = Array.from({ length: count }, (_, i) => `k${i} ~ "x"`).join(" and ");
    const text = `policy p {\n  rule r: prec(\n${operands.join("\n")}\n  )\n  rule s: abs(${conjuncts})\n}\n`;
    const parsed = parse(text);
    expect(parsed.diagnostics).toEqual([]);
    const formatted = format(text).text!;
    expect(formatted.startsWith(`policy p {\n  rule r: prec(\n    // Operand 0.\n    a0,\n`)).toBe(true);
    expect(formatted).toContain(`    // Operand ${count - 1}.\n    a${count - 1},\n  )\n  rule s: abs(\n    k0 ~ "x"\n    and k1 ~ "x"\n`);
  }, generous);

  it("reports every error of 30,000 broken rules", () => {
    const count = 30_000;
    const rules = Array.from({ length: count }, (_, i) => `  rule r${i}: abs(a b)`);
    const parsed = parse(`policy p {\n${rules.join("\n")}\n}\n`);
    expect(parsed.diagnostics.length).toBe(count);
    expect(parsed.file.policies[0]!.items.length).toBe(count);
  }, generous);
});
