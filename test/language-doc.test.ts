import { readFileSync } from "node:fs";
import { join } from "node:path";
import { diagnosticCodes } from "@vigil/diagnostics";
import { format, parse } from "@vigil/syntax";
import { checkSourceFile } from "@vigil/checker";
import { describe, expect, it } from "vitest";

/** The language reference's examples parse, check and are canonically formatted; its code table is the registry's. */
const doc = readFileSync(join(import.meta.dirname, "../docs/language.md"), "utf8");
const blocks = [...doc.matchAll(/```vigil\n([\s\S]*?)```/g)].map((match) => match[1]!);

describe.each(blocks.map((block, index) => [index + 1, block] as const))("example %i of docs/language.md", (_, block) => {
  it("has no errors and is formatted as vigilc fmt writes it", () => {
    const parsed = parse(block);
    const checked = checkSourceFile(parsed.file);
    expect([...parsed.diagnostics, ...checked.diagnostics].filter((d) => d.severity === "error")).toEqual([]);
    expect(format(block).text).toBe(block);
  });
});

it("lists every V code of the registry with its severity and summary", () => {
  for (const [code, entry] of Object.entries(diagnosticCodes)) {
    if (!code.startsWith("V")) continue;
    expect(doc).toContain(`| ${code} | ${entry.severity} | ${entry.summary} |`);
  }
});
