import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Diagnostic } from "@vigil/diagnostics";
import { expect } from "vitest";

/**
 * Data-driven ("golden") tests: every input file in a directory is run through a function, and its
 * output must equal the `.golden` file beside it. `VIGIL_BLESS=1 npm test` (or `npm run bless`)
 * rewrites the expected files from the current output; review the diff before committing it.
 */

export const blessing = process.env["VIGIL_BLESS"] === "1";

export function goldenInputs(directory: string, extension: string): string[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith(extension))
    .sort();
}

export function expectGolden(directory: string, input: string, extension: string, actual: string): void {
  const expectedFile = join(directory, input.slice(0, -extension.length) + ".golden");
  if (blessing || !existsSync(expectedFile)) {
    writeFileSync(expectedFile, actual);
    if (!blessing) throw new Error(`wrote the missing golden file ${expectedFile}; review it and run again`);
    return;
  }
  expect(actual).toBe(readFileSync(expectedFile, "utf8"));
}

/** One diagnostic per line (plus its help and fix), positions as line:column-line:column. */
export function renderDiagnostics(diagnostics: readonly Diagnostic[]): string {
  if (diagnostics.length === 0) return "(none)\n";
  return diagnostics
    .map((d) => {
      const at = d.span ? `${d.span.line}:${d.span.column}-${d.span.endLine}:${d.span.endColumn}` : "-";
      const lines = [`${d.severity} ${d.code} ${at} ${d.message}`];
      if (d.help !== undefined) lines.push(`  help: ${d.help}`);
      if (d.fix !== undefined) {
        const edits = d.fix.edits.map((e) => `${e.span.line}:${e.span.column}-${e.span.endLine}:${e.span.endColumn} ${JSON.stringify(e.newText)}`);
        lines.push(`  fix: ${d.fix.title} [${edits.join("; ")}]`);
      }
      for (const related of d.related ?? []) lines.push(`  related: ${related.span.line}:${related.span.column} ${related.message}`);
      return lines.join("\n");
    })
    .join("\n")
    .concat("\n");
}
