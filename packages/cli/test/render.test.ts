import { codeFrameColumns } from "@babel/code-frame";
import { check, compile, diagnosticCodes, type Diagnostic, type TraceEvent } from "@vigil/compiler";
import { describe, expect, it } from "vitest";
import {
  codeFrame,
  describeEvent,
  FRAME_LINES,
  FRAME_WIDTH,
  printableLine,
  printableText,
  renderClosedWorldSummary,
  renderDiagnostic,
  renderReport,
} from "../src/reports/render.js";

/** The code frames of `vigilc`'s diagnostics and reports, from the renderer itself (the rest through runs of `vigilc`). */
const plain = { enabled: false };

describe("codeFrame", () => {
  it("is the ordinary code frame when everything fits", () => {
    const source = "policy p {\n  rule r: always not action in {x}\n}\n";
    const start = { line: 2, column: 3 };
    const end = { line: 2, column: 36 };
    expect(codeFrame(source, start, end, 1, plain)).toBe(codeFrameColumns(source, { start, end }, { linesAbove: 1, linesBelow: 0 }));
  });

  it("is the ordinary code frame for a span over a few lines", () => {
    const source = "policy p {\n  rule r: prec(\n    a,\n    b,\n  )\n}\n";
    const start = { line: 2, column: 3 };
    const end = { line: 5, column: 4 };
    expect(codeFrame(source, start, end, 0, plain)).toBe(codeFrameColumns(source, { start, end }, { linesAbove: 0, linesBelow: 0 }));
  });

  it("shows a window of a very long line, with the marker under the span", () => {
    const line = Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(" ");
    const column = line.indexOf("w1500") + 1;
    const source = `first\n${line}\n`;
    const frame = codeFrame(source, { line: 2, column }, { line: 2, column: column + 5 }, 1, plain);
    const rows = frame.split("\n");
    for (const row of rows) expect(row.length).toBeLessThan(FRAME_WIDTH + 20);
    const textRow = rows.find((row) => row.startsWith("> 2 |"))!;
    const markerRow = rows[rows.indexOf(textRow) + 1]!;
    expect(textRow).toContain("…");
    const caret = markerRow.indexOf("^");
    expect(textRow.slice(caret, caret + 5)).toBe("w1500");
    expect(markerRow.slice(caret)).toBe("^^^^^");
  });

  it("shows the first lines of a span over many lines", () => {
    const source = ["policy p {", ...Array.from({ length: 200 }, (_, i) => `  // line ${i}`), "}"].join("\n");
    const frame = codeFrame(source, { line: 1, column: 1 }, { line: 202, column: 2 }, 0, plain);
    const numbered = frame.split("\n").filter((row) => /^\s*>?\s*\d+ \|/.test(row));
    expect(numbered.length).toBe(FRAME_LINES);
  });

  it("does not throw on a span past the end of the text", () => {
    expect(() => codeFrame("policy p {", { line: 3, column: 9 }, { line: 4, column: 1 }, 1, plain)).not.toThrow();
    expect(() => codeFrame("", { line: 1, column: 1 }, { line: 1, column: 1 }, 1, plain)).not.toThrow();
  });
});

/** A policy judged in-process against some events, rendered as `vigilc check` prints it. */
async function reportFor(policySource: string, events: TraceEvent[]): Promise<string> {
  const policy = compile(policySource);
  expect(policy.ok).toBe(true);
  const report = await check(policy, events);
  return renderReport({ report, policySource, policyFile: "p.vigil", traceFile: "t.jsonl", eventCount: events.length, eventAt: (position) => events[position - 1] }, plain);
}

const event = (position: number, action: string, args: TraceEvent["args"] = {}): TraceEvent => ({ position, action, args, status: "ok" });

/** A raw control character or bidi override in printed text: none may ever reach the terminal. */
const unsafe = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe("responses", () => {
  it("shows a violated rule's response and remediation under its witnesses", async () => {
    const source = [
      "policy p {",
      "  /// Nothing is deleted.",
      '  rule no_rm: abs(action in {rm}) warn "Move files to the trash instead."',
      "  rule no_dd: abs(action in {dd})",
      "}",
      "",
    ].join("\n");
    const text = await reportFor(source, [event(1, "rm"), event(2, "dd")]);
    const lines = text.split("\n");
    const witness = lines.indexOf("  witness event 1 (t.jsonl:?): rm {} [ok]");
    expect(witness).toBeGreaterThan(0);
    expect(lines[witness + 1]).toBe("  = response: warn — Move files to the trash instead.");
    // A rule that names no response blocks, and says so.
    const second = lines.indexOf("  witness event 2 (t.jsonl:?): dd {} [ok]");
    expect(lines[second + 1]).toBe("  = response: block");
  });
});

describe("output safe to print", () => {
  it("escapes control characters and bidi controls, keeping layout where it is layout", () => {
    expect(printableLine("a\u001b[31mb\u009bc\u202ed\r\n\t\u0000")).toBe("a\\u001b[31mb\\u009bc\\u202ed\\r\\n\\t\\u0000");
    expect(printableText("line\n\tindented\u001b[2J\r")).toBe("line\n\tindented\\u001b[2J\\r");
    expect(printableLine("plain text, ünïcödé, 漢字 and emoji 🎉")).toBe("plain text, ünïcödé, 漢字 and emoji 🎉");
  });

  it("prints a witness whose action and arguments carry escape sequences without them", async () => {
    const action = "rm\u001b[2J\u001b]0;owned\u0007";
    const args = { path: "/etc\u009b31m", note: "\u202egnp.exe", line: "a\rb" };
    expect(describeEvent(event(1, action, args))).not.toMatch(unsafe);
    expect(describeEvent(event(1, action, args))).toContain("rm\\u001b[2J\\u001b]0;owned\\u0007");
    const text = await reportFor("policy p {\n  rule r: abs(status = ok)\n}\n", [event(1, action, args)]);
    expect(text).not.toMatch(unsafe);
    expect(text).toContain("\\u202egnp.exe");
  });

  it("escapes what a policy brings: doc text, remediation, names in messages, and code frames", async () => {
    // A string literal may decode to a control character; a doc comment may hold one as is.
    const source = '/// Doc \u001b[31mred\npolicy p {\n  /// Rule \u001b[32mgreen \u202eevil\n  rule r: abs(action in {"x\\u001by"}) ask "Say \\u001b[5m no"\n}\n';
    const text = await reportFor(source, [event(1, "x\u001by")]);
    expect(text).not.toMatch(unsafe);
    expect(text).toContain("Rule \\u001b[32mgreen \\u202eevil");
    expect(text).toContain("= response: ask — Say \\u001b[5m no");
    const diagnostic: Diagnostic = {
      code: "V1101",
      severity: diagnosticCodes.V1101.severity,
      message: "the action `x\u001by` does not occur in the trace, so it matches no event",
      help: "did you mean `x\u009by`?",
      file: "p\u001b.vigil",
      span: { start: 0, end: 1, line: 1, column: 1, endLine: 1, endColumn: 2 },
    };
    const rendered = renderDiagnostic(diagnostic, new Map([["p\u001b.vigil", "\u001b[2J rule\n"]]), plain);
    expect(rendered).not.toMatch(unsafe);
    expect(rendered).toContain("`x\\u001by`");
  });

  it("keeps a code frame's marker under the text it marks when characters before it are escaped", () => {
    const source = 'policy p {\n  rule r: abs(k in {"\u001b\u001b"}) warn\n}\n';
    const column = source.split("\n")[1]!.indexOf("warn") + 1;
    const frame = codeFrame(source, { line: 2, column }, { line: 2, column: column + 4 }, 0, plain);
    expect(frame).not.toMatch(unsafe);
    const rows = frame.split("\n");
    const caret = rows[1]!.indexOf("^");
    expect(rows[0]!.slice(caret, caret + 4)).toBe("warn");
    expect(rows[1]!.slice(caret)).toBe("^^^^");
    // Tabs are layout in a frame, and stay.
    expect(codeFrame("\tpolicy", { line: 1, column: 2 }, { line: 1, column: 8 }, 0, plain)).toContain("\tpolicy");
  });

  it("sums up 160,000 unknown values in one message, each named once, escaped", () => {
    const count = 160_000;
    const values = Array.from({ length: count }, (_, i) => `"v${i % 2 === 0 ? i : i - 1}"`);
    const source = `k in {"\u001b", ${values.join(", ")}}`;
    const summed: Diagnostic[] = [];
    let offset = "k in {".length;
    for (const value of ['"\u001b"', ...values]) {
      summed.push({
        code: "V1103",
        severity: "info",
        message: "never occurs",
        span: { start: offset, end: offset + value.length, line: 1, column: offset + 1, endLine: 1, endColumn: offset + value.length + 1 },
      });
      offset += value.length + 2;
    }
    const text = renderClosedWorldSummary(summed, source, "t.jsonl", plain);
    expect(text).toContain(`${count / 2 + 1} names of the policy do not occur in \`t.jsonl\``);
    expect(text).toContain(`values (V1103): "\\u001b", "v0", "v2", "v4",`);
    expect(text).toContain(`, … (${count / 2 + 1 - 12} more)`);
    expect(text).not.toMatch(unsafe);
  });
});
