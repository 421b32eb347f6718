import { codeFrameColumns } from "@babel/code-frame";
import { describe, expect, it } from "vitest";
import { codeFrame, FRAME_LINES, FRAME_WIDTH } from "../src/render.js";

/** The code frames of `vigilc`'s diagnostics and reports, in-process (the rest is tested by spawning). */
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
