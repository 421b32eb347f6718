import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The dependency rules of docs/ARCHITECTURE.md, checked on the sources: each package imports only
 * the packages below it, third-party libraries stay in the package that owns them, packages
 * reach each other by name, never by a relative path, and no module of a package imports itself
 * back through others (no cycle, type-only imports included: a cycle of types is still two
 * modules that cannot be understood apart).
 */
const root = join(import.meta.dirname, "..");

const allowed: Readonly<Record<string, readonly string[]>> = {
  diagnostics: [],
  trace: ["@vigil/diagnostics", "zod", "mvdan-sh", "re2js", "@eslint-community/regexpp"],
  syntax: ["@vigil/diagnostics", "chevrotain"],
  checker: ["@vigil/diagnostics", "@vigil/syntax", "@vigil/trace"],
  engine: ["@vigil/diagnostics", "@vigil/checker", "@vigil/trace"],
  smt: ["@vigil/diagnostics", "@vigil/checker", "@vigil/engine", "@vigil/trace", "z3-solver"],
  sql: ["@vigil/diagnostics", "@vigil/checker", "@vigil/trace", "@duckdb/node-api"],
  compiler: ["@vigil/diagnostics", "@vigil/syntax", "@vigil/trace", "@vigil/checker", "@vigil/engine", "@vigil/smt", "@vigil/sql"],
  "language-server": ["@vigil/compiler", "@vigil/diagnostics", "@vigil/syntax", "@vigil/trace", "vscode-languageserver", "vscode-languageserver-textdocument", "tinyglobby"],
  draft: ["@vigil/compiler", "@anthropic-ai/sdk", "openai"],
  runtime: ["@vigil/compiler", "@vigil/diagnostics", "@vigil/engine", "@vigil/trace", "better-sqlite3", "@modelcontextprotocol/sdk", "@pondwader/socks5-server"],
  adapters: ["@vigil/compiler", "@vigil/runtime"],
  cli: ["@vigil/compiler", "@vigil/diagnostics", "@vigil/draft", "@vigil/runtime", "@vigil/sql", "@vigil/syntax", "@vigil/trace", "commander", "picocolors", "@babel/code-frame", "piscina", "tinyglobby", "sarif", "@anthropic-ai/sandbox-runtime"],
};

function sources(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true }).flatMap((entry) => {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) return sources(path);
    return /\.(c|m)?ts$/.test(entry.name) && !entry.name.endsWith(".d.ts") ? [path] : [];
  });
}

function imports(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^"';]*?from\s+["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)/g)].map(
    (match) => match[1] ?? match[2]!,
  );
}

const packages = readdirSync(join(root, "packages"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

it("knows the rules of every package", () => {
  expect(packages.filter((name) => allowed[name] === undefined)).toEqual([]);
});

describe.each(packages.filter((name) => allowed[name] !== undefined))("package %s", (name) => {
  const directory = join(root, "packages", name, "src");

  it("imports only what the architecture allows", () => {
    const violations: string[] = [];
    for (const file of sources(directory)) {
      for (const specifier of imports(file)) {
        if (specifier.startsWith("node:")) continue;
        if (specifier.startsWith(".")) {
          if (relative(directory, resolve(dirname(file), specifier)).startsWith("..")) {
            violations.push(`${relative(root, file)}: relative import leaves the package: ${specifier}`);
          }
          continue;
        }
        const packageName = specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!;
        if (!allowed[name]!.includes(packageName)) violations.push(`${relative(root, file)}: ${specifier}`);
      }
    }
    expect(violations).toEqual([]);
  });

  it("has no import cycle among its modules (type-only imports included)", () => {
    const files = sources(directory);
    const known = new Set(files);
    // A relative import names the emitted file (`./x.js`): the source is `x.ts` (`.cjs`: `.cts`).
    const graph = new Map(
      files.map((file) => [
        file,
        imports(file)
          .filter((specifier) => specifier.startsWith("."))
          .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, ".ts").replace(/\.cjs$/, ".cts").replace(/\.mjs$/, ".mts"))
          .filter((target) => known.has(target)),
      ]),
    );
    const cycles = stronglyConnected(graph).filter((component) => component.length > 1 || graph.get(component[0]!)!.includes(component[0]!));
    expect(cycles.map((component) => component.map((file) => relative(directory, file)).sort().join(" → "))).toEqual([]);
  });

  it("declares every package it imports", () => {
    const manifest = JSON.parse(readFileSync(join(root, "packages", name, "package.json"), "utf8")) as { dependencies?: Record<string, string> };
    const declared = Object.keys(manifest.dependencies ?? {});
    const used = new Set<string>();
    for (const file of sources(directory)) {
      for (const specifier of imports(file)) {
        if (specifier.startsWith(".") || specifier.startsWith("node:")) continue;
        used.add(specifier.startsWith("@") ? specifier.split("/").slice(0, 2).join("/") : specifier.split("/")[0]!);
      }
    }
    // A types-only package (`import type … from "sarif"`) is declared as its `@types/` package.
    expect([...used].filter((dependency) => !declared.includes(dependency) && !declared.includes(`@types/${dependency}`))).toEqual([]);
  });
});

/** The strongly connected components of a directed graph (Tarjan's algorithm, iterative). */
function stronglyConnected(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const components: string[][] = [];
  let counter = 0;
  for (const start of graph.keys()) {
    if (index.has(start)) continue;
    const work: { node: string; next: number }[] = [{ node: start, next: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const targets = graph.get(frame.node) ?? [];
      if (frame.next < targets.length) {
        const target = targets[frame.next++]!;
        if (!index.has(target)) {
          index.set(target, counter);
          low.set(target, counter++);
          stack.push(target);
          onStack.add(target);
          work.push({ node: target, next: 0 });
        } else if (onStack.has(target)) {
          low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        }
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        components.push(component);
      }
    }
  }
  return components;
}
