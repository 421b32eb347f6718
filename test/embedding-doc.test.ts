import { readFileSync } from "node:fs";
import { join } from "node:path";
import * as compiler from "@vigil/compiler";
import { expect, it } from "vitest";

/**
 * docs/embedding.md against `@vigil/compiler`: every function the API table names is exported, and
 * every value the package exports is documented on the page.
 */
const page = readFileSync(join(import.meta.dirname, "../docs/embedding.md"), "utf8");
const table = page.slice(page.indexOf("## The API"), page.indexOf("## Failing closed"));
const documentedInTable = [...table.matchAll(/^\| (.*?) \|/gm)].flatMap((row) => [...row[1]!.matchAll(/`([A-Za-z]+)[.(`]/g)].map((m) => m[1]!));

it("names only functions the package exports", () => {
  expect(documentedInTable.length).toBeGreaterThan(10);
  expect(documentedInTable.filter((name) => !(name in compiler))).toEqual([]);
});

it("documents every value the package exports", () => {
  const mentioned = new Set([...page.matchAll(/`([A-Za-z_]+)/g)].map((m) => m[1]!));
  expect(Object.keys(compiler).filter((name) => !mentioned.has(name))).toEqual([]);
});
