import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { parse } from "../src/index.js";

// Re-parsing with an earlier parse to reuse must give exactly what a fresh parse gives: the same
// tree (spans included) and the same diagnostics, whatever the edit. The texts are every policy
// the repository ships and every syntax golden input, including the broken ones.

const root = join(import.meta.dirname, "../../..");
const sources = [
  ...readdirSync(join(root, "packages/syntax/test/golden"))
    .filter((name) => name.endsWith(".vigil"))
    .map((name) => join(root, "packages/syntax/test/golden", name)),
  ...readdirSync(join(root, "examples"), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) =>
      readdirSync(join(root, "examples", entry.name))
        .filter((name) => name.endsWith(".vigil"))
        .map((name) => join(root, "examples", entry.name, name)),
    ),
].map((path) => readFileSync(path, "utf8"));

const fragments = ["\n", " ", "x", "(", ")", "{", "}", "rule r: abs(action in {a})\n", "/// doc\n", "// c\n", "pattern p = q\n", ",", "\"", "$v"];

/** An edit: replace `length` characters at a position (a fraction of the text) with a fragment. */
const edit = fc.record({ at: fc.double({ min: 0, max: 1, noNaN: true }), length: fc.nat(12), fragment: fc.constantFrom(...fragments) });

function applyEdit(text: string, { at, length, fragment }: { at: number; length: number; fragment: string }): string {
  const start = Math.floor(at * text.length);
  return text.slice(0, start) + fragment + text.slice(start + length);
}

describe("parse with reuse of an earlier parse", () => {
  it("gives the tree and the diagnostics of a fresh parse after any sequence of edits", () => {
    fc.assert(
      fc.property(fc.constantFrom(...sources), fc.array(edit, { minLength: 1, maxLength: 4 }), (source, edits) => {
        let previous = parse(source);
        let text = source;
        for (const change of edits) {
          text = applyEdit(text, change);
          const reused = parse(text, { reuse: previous });
          const fresh = parse(text);
          expect(reused.file).toEqual(fresh.file);
          expect(reused.diagnostics).toEqual(fresh.diagnostics);
          previous = reused;
        }
      }),
      { numRuns: cases(40, 400) },
    );
  });

  it("reuses the declarations an edit did not touch", () => {
    const text = readFileSync(join(root, "examples/coding-agent/coding-agent.vigil"), "utf8");
    const first = parse(text);
    const edited = text.replace("rule no_force_push:", "rule no_force_pushes:");
    const second = parse(edited, { reuse: first });
    const items = (file: typeof first.file) => file.policies.flatMap((p) => p.items);
    const before = items(first.file);
    const after = items(second.file);
    const index = after.findIndex((item) => item.name.text === "no_force_pushes");
    expect(index).toBeGreaterThan(0);
    // Declarations before the edit are the very same objects; the one edited is new.
    for (let i = 0; i < index; i++) expect(after[i]).toBe(before[i]);
    expect(after[index]).not.toBe(before[index]);
    expect(second.file).toEqual(parse(edited).file);
  });
});
