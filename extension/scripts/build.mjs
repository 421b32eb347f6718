#!/usr/bin/env node
// Builds the extension into dist/, ready for `vsce package --no-dependencies`:
//
//   dist/extension.js   the client (src/extension.ts), CommonJS for VS Code's extension host
//   dist/server.js      the language server (packages/language-server/src/main.ts) with every
//                       dependency bundled, run by the client with VS Code's Node
//   dist/node_modules/  z3-solver and its one dependency, copied as published: the solver is a
//                       WebAssembly module with threads that loads its files from its own folder,
//                       so it cannot be bundled; the SMT engine of "Check against trace…" uses it
//
// The workspace packages are bundled from their TypeScript sources (the "@vigil/source" export
// condition), so the bundle never depends on a stale build of a package.

import { build } from "esbuild";
import { cpSync, mkdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

const extension = join(import.meta.dirname, "..");
const root = join(extension, "..");
const dist = join(extension, "dist");
const require = createRequire(join(root, "package.json"));

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist, { recursive: true });

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
  outfile: join(dist, "server.js"),
  external: ["z3-solver"],
  // The sources are ES modules; the bundle is CommonJS (the extension's package.json has no
  // "type": "module"), where import.meta is empty, so its one use, the module's own URL, is
  // given from the bundle's file name.
  define: { "import.meta.url": "__vigilModuleUrl" },
  banner: { js: 'const __vigilModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
});

// z3-solver and async-mutex (its only dependency), as npm installed them.
for (const name of ["z3-solver", "async-mutex"]) {
  const from = dirname(require.resolve(`${name}/package.json`));
  const to = join(dist, "node_modules", name);
  cpSync(from, to, {
    recursive: true,
    // Type declarations and sources are of no use at run time.
    filter: (source) => !/\.(d\.ts|ts|map)$/.test(source) && !source.includes(`${name}/node_modules`),
  });
}

cpSync(join(extension, "schemas", "vigil.config.schema.json"), join(dist, "vigil.config.schema.json"));
