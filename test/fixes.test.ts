import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { compile, readTrace, signatureOf, type Diagnostic, type Signature } from "@vigil/compiler";
import * as tier from "./support/tier.js";

/**
 * Every fix the compiler offers, applied: the result is re-parsed and re-checked, and it must be
 * no worse than before (no more errors, no more warnings, no new kind of diagnostic) and must have
 * resolved the diagnostic that offered it. An editor applies these fixes with one click.
 */

const root = join(import.meta.dirname, "..");

interface Case {
  readonly name: string;
  readonly text: string;
  readonly signature?: Signature;
}

function signatureOfLines(lines: string): Signature {
  return signatureOf(readTrace(lines).trace.events);
}

function goldenCases(directory: string): Case[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith(".vigil"))
    .map((name) => {
      const trace = join(directory, name.replace(/\.vigil$/, ".jsonl"));
      return {
        name: `${directory.split("/").slice(-3).join("/")}/${name}`,
        text: readFileSync(join(directory, name), "utf8"),
        ...(existsSync(trace) ? { signature: signatureOfLines(readFileSync(trace, "utf8")) } : {}),
      };
    });
}

/** A trace whose names need care when written in a policy: keywords, spaces, dots, dashes. */
const awkwardTrace = [
  { action: "until", args: { until: 1, "content-type": "json", "a.b": "x", mode: 6 } },
  { action: "git push", args: { force: true, status_code: "200" } },
  { action: "Read", args: { file_path: "/tmp/x", once: "y" } },
]
  .map((event) => JSON.stringify(event))
  .join("\n");

const crafted: Case[] = [
  { name: "an action misspelled near a keyword", text: "policy p {\n  rule r: abs(action in {untill})\n}\n", signature: signatureOfLines(awkwardTrace) },
  { name: "an action misspelled near a name with a space", text: "policy p {\n  rule r: abs(action in {gitpush})\n}\n", signature: signatureOfLines(awkwardTrace) },
  { name: "a quoted action misspelled", text: 'policy p {\n  rule r: abs(action in {"git psuh"})\n}\n', signature: signatureOfLines(awkwardTrace) },
  { name: "a key misspelled near a keyword", text: "policy p {\n  rule r: abs(action in {Read} and untl in {1})\n}\n", signature: signatureOfLines(awkwardTrace) },
  { name: "a key misspelled near a quoted key", text: 'policy p {\n  rule r: abs(action in {Read} and content_type ~ "j*")\n}\n', signature: signatureOfLines(awkwardTrace) },
  { name: "a key misspelled near a dotted name", text: 'policy p {\n  rule r: abs(action in {Read} and "a.c" ~ "x")\n}\n', signature: signatureOfLines(awkwardTrace) },
  { name: "a key misspelled near `once`", text: 'policy p {\n  rule r: abs(action in {Read} and onc ~ "y")\n}\n', signature: signatureOfLines(awkwardTrace) },
  { name: "a value of the wrong JSON type", text: 'policy p {\n  rule r: abs(mode in {"6"} and status_code in {200})\n}\n', signature: signatureOfLines(awkwardTrace) },
  { name: "an unknown pattern", text: "policy p {\n  pattern secret = action in {Read}\n  rule r: abs(secrte)\n}\n" },
  { name: "a bresp without its bound", text: "policy p {\n  rule r: bresp(action in {a}, action in {b})\n}\n" },
  { name: "an empty remediation", text: 'policy p {\n  rule r: abs(action in {a}) warn "  "\n}\n' },
  { name: "a stray doc comment", text: "policy p {\n  /// nothing\n\n  rule r: abs(action in {a})\n}\n" },
  { name: "a misspelled response", text: "policy p {\n  rule r: abs(action in {a}) blokc\n}\n" },
  { name: "a remediation without a response", text: 'policy p {\n  rule r: abs(action in {a}) "stop"\n}\n' },
  { name: "an unclosed string", text: 'policy p {\n  rule r: abs(path ~ "abc)\n}\n' },
  { name: "a missing brace", text: "policy p\n  rule r: abs(action in {a})\n}\n" },
  { name: "an unclosed policy", text: "policy p {\n  rule r: abs(action in {a})\n" },
  { name: "a reserved word as a name", text: "policy p {\n  rule r: abs(action in {a} and until ~ \"x\")\n}\n" },
];

const cases: Case[] = [
  ...goldenCases(join(root, "packages/syntax/test/golden")),
  ...goldenCases(join(root, "packages/checker/test/golden")),
  ...crafted,
];

function applyFix(text: string, diagnostic: Diagnostic): string {
  const edits = [...diagnostic.fix!.edits].sort((a, b) => b.span.start - a.span.start);
  let result = text;
  for (const edit of edits) result = result.slice(0, edit.span.start) + edit.newText + result.slice(edit.span.end);
  return result;
}

function counts(diagnostics: readonly Diagnostic[]): { errors: number; warnings: number; codes: Map<string, number> } {
  const codes = new Map<string, number>();
  for (const d of diagnostics) codes.set(d.code, (codes.get(d.code) ?? 0) + 1);
  return {
    errors: diagnostics.filter((d) => d.severity === "error").length,
    warnings: diagnostics.filter((d) => d.severity === "warning").length,
    codes,
  };
}

/** Checks every fix of a text; returns how many fixes it applied. */
function checkEveryFix({ text, signature, name }: Case): number {
  const options = signature === undefined ? {} : { signature };
  const before = compile(text, options);
  const fixable = before.diagnostics.filter((d) => d.fix !== undefined);
  for (const diagnostic of fixable) {
    const fixed = applyFix(text, diagnostic);
    const after = compile(fixed, options);
    const was = counts(before.diagnostics);
    const now = counts(after.diagnostics);
    const context = `${name}: ${diagnostic.code} "${diagnostic.fix!.title}" gives\n${fixed}\n${after.diagnostics.map((d) => `${d.code} ${d.message}`).join("\n")}`;
    expect(now.errors, context).toBeLessThanOrEqual(was.errors);
    expect(now.warnings, context).toBeLessThanOrEqual(was.warnings);
    for (const code of now.codes.keys()) expect(was.codes.has(code), `${context}\nnew code ${code}`).toBe(true);
    expect(now.codes.get(diagnostic.code) ?? 0, context).toBeLessThan(was.codes.get(diagnostic.code)!);
  }
  return fixable.length;
}

describe("every fix the compiler offers", () => {
  it.each(cases.map((c) => [c.name, c] as const))("%s", (_name, testCase) => {
    const applied = checkEveryFix(testCase);
    expect(applied).toBeGreaterThanOrEqual(0);
  });

  it("exercises a fix of every code that has one", () => {
    const codes = new Set(cases.flatMap((c) => compile(c.text, c.signature === undefined ? {} : { signature: c.signature }).diagnostics.filter((d) => d.fix).map((d) => d.code)));
    // Every code whose diagnostics can carry a fix (see the `fix:` sites in packages/*/src).
    expect([...codes].sort()).toEqual(["V0001", "V0002", "V0003", "V0005", "V0007", "V0008", "V1001", "V1009", "V1018", "V1101", "V1102", "V1103", "V1105", "V1106", "V1108", "V1109"]);
  });

  it("keeps a misspelled name's fix valid whatever the names of the trace are", () => {
    const name = fc.oneof(
      fc.constantFrom("until", "once", "in", "and", "git push", "content-type", "a.b", "x y", "rule", "policy", "ok", "status", "output", "action", "é", "$x", "\"q\""),
      fc.string({ minLength: 1, maxLength: 8 }),
    );
    fc.assert(
      fc.property(name, fc.nat(3), fc.boolean(), (actual, cut, asKey) => {
        const trace = JSON.stringify(asKey ? { action: "a", args: { [actual]: 1 } } : { action: actual });
        const misspelled = actual.length > 1 ? actual.slice(0, cut % actual.length) + actual.slice((cut % actual.length) + 1) : `${actual}${actual}`;
        const written = JSON.stringify(misspelled);
        const text = asKey ? `policy p {\n  rule r: abs(action in {a} and ${written} in {1})\n}\n` : `policy p {\n  rule r: abs(action in {${written}})\n}\n`;
        checkEveryFix({ name: `${asKey ? "key" : "action"} ${JSON.stringify(actual)}`, text, signature: signatureOfLines(trace) });
      }),
      { numRuns: tier.cases(30, 300) },
    );
  });
});
