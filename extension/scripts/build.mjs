#!/usr/bin/env node
// Builds the extension into dist/, ready for `vsce package --no-dependencies`:
//
//   dist/extension.js   the client (src/extension.ts), CommonJS for VS Code's extension host
//   dist/server.mjs     the language server (packages/language-server/src/main.ts) with every
//                       dependency bundled, an ES module run by the client with VS Code's Node
//   dist/analysis-worker.mjs  the server's analysis worker (findings/worker.ts), bundled alike: the
//                       thread in which the server runs Z3 for the analysis and the diff
//   dist/node_modules/  z3-solver and its dependencies, copied as published: the solver is a
//                       WebAssembly module with threads that loads its files from its own folder,
//                       so it cannot be bundled; the SMT engine of "Check against trace…" uses it.
//                       And mvdan-sh (the shell parser) and zod, which the trace reader loads on
//                       first use.
//
// The workspace packages are bundled from their TypeScript sources (the "@vigil/source" export
// condition), so the bundle never depends on a stale build of a package.

import { build } from "esbuild";
import { cpSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const extension = join(import.meta.dirname, "..");
const root = join(extension, "..");
const dist = join(extension, "dist");

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

// The syntax package loads chevrotain's single-file build from where npm installed it
// (packages/syntax/src/chevrotain.ts); in a bundle, chevrotain is bundled like any package.
const chevrotainBundled = {
  name: "chevrotain-bundled",
  setup(build) {
    build.onLoad({ filter: /[\\/]packages[\\/]syntax[\\/]src[\\/]chevrotain\.ts$/ }, () => ({ contents: 'export * from "chevrotain";', loader: "ts", resolveDir: join(root, "packages", "syntax") }));
  },
};

const common = {
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  sourcemap: "linked",
  conditions: ["@vigil/source"],
  logLevel: "warning",
  legalComments: "none",
  minify: true,
  keepNames: true,
  plugins: [chevrotainBundled],
};

await build({
  ...common,
  entryPoints: [join(extension, "src", "extension.ts")],
  outfile: join(dist, "extension.js"),
  external: ["vscode"],
});

await build({
  ...common,
  entryPoints: [join(root, "packages", "language-server", "src", "main.ts")],
  outfile: join(dist, "server.mjs"),
  // An ES module, as the server's sources are (its entry awaits at the top level). The CommonJS
  // packages bundled into it (the LSP library) require Node's built-in modules, which an ES module
  // does through a require of its own.
  format: "esm",
  // @vigil/sql (embedded DuckDB, a native module) is loaded only by the `sql` engine, which the
  // editor never runs: it stays out of the bundle and the package.
  external: ["z3-solver", "mvdan-sh", "zod", "@vigil/sql"],
  // The server starts its analysis worker from this file, beside it (findings/runner.ts).
  define: { VIGIL_ANALYSIS_WORKER: JSON.stringify("./analysis-worker.mjs") },
  banner: { js: 'import { createRequire as __vigilCreateRequire } from "node:module"; const require = __vigilCreateRequire(import.meta.url);' },
});

// The analysis worker (Z3 off the server's thread), bundled the same way as the server.
await build({
  ...common,
  entryPoints: [join(root, "packages", "language-server", "src", "findings", "worker.ts")],
  outfile: join(dist, "analysis-worker.mjs"),
  format: "esm",
  external: ["z3-solver", "mvdan-sh", "zod", "@vigil/sql"],
  banner: { js: 'import { createRequire as __vigilCreateRequire } from "node:module"; const require = __vigilCreateRequire(import.meta.url);' },
});

// z3-solver and the packages it requires at run time, as npm installed them; and mvdan-sh and zod,
// which the trace reader loads on first use (through a require of its own, which a bundler does not
// follow), so that a process that never needs them does not pay for loading them.
copyWithDependencies("z3-solver", root);
copyWithDependencies("mvdan-sh", root);
copyWithDependencies("zod", root);

/** Copies a package into dist/node_modules, then each of its dependencies, resolved from where it is installed. */
function copyWithDependencies(name, fromDirectory, copied = new Set()) {
  if (copied.has(name)) return;
  copied.add(name);
  const manifestPath = createRequire(join(fromDirectory, "package.json")).resolve(`${name}/package.json`);
  const from = dirname(manifestPath);
  cpSync(from, join(dist, "node_modules", name), {
    recursive: true,
    // Type declarations, sources and nested installs are of no use here (dependencies are copied flat).
    filter: (source) => !/\.(ts|map)$/.test(source) && !source.slice(from.length).includes("node_modules"),
  });
  const manifest = JSON.parse(readFileSync(manifestPath, "utf8"));
  for (const dependency of Object.keys(manifest.dependencies ?? {})) copyWithDependencies(dependency, from, copied);
}

cpSync(join(extension, "schemas", "vigil.config.schema.json"), join(dist, "vigil.config.schema.json"));
// The explanation of every diagnostic code, which the server links each diagnostic's code to
// (it looks for docs/language.md beside itself; a test file's codes are explained in testing.md).
mkdirSync(join(dist, "docs"), { recursive: true });
cpSync(join(root, "docs", "language.md"), join(dist, "docs", "language.md"));
cpSync(join(root, "docs", "testing.md"), join(dist, "docs", "testing.md"));
