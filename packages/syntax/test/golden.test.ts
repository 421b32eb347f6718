import { readFileSync } from "node:fs";
import { join } from "node:path";
import { format, parse } from "@vigil/syntax";
import { describe, expect, it } from "vitest";
import { expectGolden, goldenInputs, renderDiagnostics } from "../../../test/support/golden.js";
import { dumpSourceFile } from "./ast-dump.js";

/**
 * Golden parser tests: for each `golden/*.vigil`, the syntax diagnostics, the tree, and (for a file
 * without errors) the canonical formatting, in `golden/*.golden`.
 */
const directory = join(import.meta.dirname, "golden");

describe.each(goldenInputs(directory, ".vigil"))("%s", (input) => {
  const text = readFileSync(join(directory, input), "utf8");

  it("parses to the recorded diagnostics, tree and formatting", () => {
    const parsed = parse(text);
    const formatted = format(text);
    const sections = [
      "# diagnostics",
      renderDiagnostics(parsed.diagnostics).trimEnd(),
      "# tree",
      dumpSourceFile(parsed.file).trimEnd(),
      "# formatted",
      formatted.text === undefined ? "(not formatted: the file has syntax errors)" : formatted.text.trimEnd(),
    ];
    expectGolden(directory, input, ".vigil", sections.join("\n") + "\n");
  });

  it("formats idempotently, keeping the tree and every comment", () => {
    const result = format(text);
    const once = result.text;
    if (once === undefined) {
      // A file with syntax errors is never formatted: the formatter says why instead.
      expect(result.diagnostics.some((d) => d.severity === "error")).toBe(true);
      return;
    }
    expect(format(once).text).toBe(once);
    const before = parse(text);
    const after = parse(once);
    expect(dumpSourceFile(after.file).replace(/^comments:.*$/m, "")).toBe(dumpSourceFile(before.file).replace(/^comments:.*$/m, ""));
    const texts = (file: typeof before.file) => file.comments.map((c) => c.text.trimEnd()).sort();
    expect(texts(after.file)).toEqual(texts(before.file));
  });
});
