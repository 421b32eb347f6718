#!/usr/bin/env node
// Builds the Claude Code hook's startup snapshot of this install, for the Node.js that runs this
// script (packages/cli/src/enforcement/hook-snapshot.ts says what it is and how it is checked):
//
//   1. bundles dist/enforcement/hook-snapshot-main.js, with all it imports, into one CommonJS file (esbuild), as
//      the same code: each file's `import.meta.url` becomes the URL of the file it was, the native
//      addon of better-sqlite3 is loaded at run time from the file its `bindings` would load, and
//      what the hook loads only in rare cases (the compiler, the egress proxy, the MCP gateway) stays
//      outside, imported from its own files when needed; every file bundled, and how each package
//      was found, is recorded to be checked at every start;
//   2. runs it under `node --build-snapshot` (which also does the guard's walk of the module graph,
//      recording what it read) and writes the blob and its manifest under
//      dist/hook-snapshot/node-VERSION-PLATFORM-ARCH/;
//   3. starts the hook from the blob once (`--help`), to see that the snapshot is used.
//
// Run by `npm run build` (and `npm test`, `npm ci`'s prepare) after `tsc -b`, and by
// `vigilc hook claude-code --install` when the snapshot is missing or out of date. Does nothing
// when the snapshot is up to date (--force builds it anyway). Needs esbuild, one of the workspace's
// dev dependencies; without it the hook runs without a snapshot.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { closeSync, fstatSync, mkdirSync, openSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { dirname, join, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const cli = join(dirname(fileURLToPath(import.meta.url)), "..");
const dist = join(cli, "dist");
const snapshot = await import(pathToFileURL(join(dist, "enforcement", "hook-snapshot.js")).href);

/** Modules the hook imports only in rare cases: imported from their own files when needed, not bundled. */
const FROM_DISK = new Set(["@vigil/compiler", "./egress.js", "./mcp-gateway.js"]);
/** Built-in modules that cannot be loaded while a snapshot is built (node:http on Node.js 20): loaded at first use. */
const LAZY_BUILTINS = new Set(["node:http", "http"]);

export async function buildHookSnapshot({ force = false } = {}) {
  if (!force) {
    const usable = snapshot.usableHookSnapshot();
    if ("blob" in usable) return { blob: usable.blob, built: false };
  }
  if (process.platform === "win32") throw new Error("the hook's command line with a snapshot is a POSIX shell's: not on Windows");
  if (typeof process.getBuiltinModule !== "function") throw new Error(`Node.js ${process.version} has no process.getBuiltinModule (20.16 or later has)`);
  let esbuild;
  try {
    esbuild = await import("esbuild");
  } catch (error) {
    throw new Error(`esbuild, which bundles the hook, is not installed (${error.message})`);
  }
  const paths = snapshot.hookSnapshotPaths();
  mkdirSync(paths.directory, { recursive: true });
  const directory = realpathSync(paths.directory);
  const temporary = (name) => join(directory, `${name}.${process.pid}.tmp`);
  const observations = new Map();
  const note = (kind, path, expected = snapshot.observe(kind, path), sha256 = expected.startsWith("f:") ? snapshot.fileHash(path) : undefined) => {
    if (!observations.has(`${kind}\0${path}`)) observations.set(`${kind}\0${path}`, sha256 !== undefined ? [kind, path, expected, sha256] : [kind, path, expected]);
  };

  // The native addon: the file better-sqlite3's `bindings` loads, found by loading it here.
  const requireFromCli = createRequire(join(cli, "package.json"));
  const runtimeEntry = requireFromCli.resolve("@vigil/runtime");
  const requireFromRuntime = createRequire(runtimeEntry);
  const Database = requireFromRuntime("better-sqlite3");
  new Database(":memory:").close();
  const addon = Object.keys(requireFromRuntime.cache).find((file) => file.endsWith(`${sep}better_sqlite3.node`));
  if (addon === undefined || !addon.endsWith(join("build", "Release", "better_sqlite3.node"))) throw new Error(`better-sqlite3's addon is not where a snapshot expects it (${addon})`);
  const addonRoot = dirname(dirname(dirname(addon)));
  note("stat", addon);
  // `bindings` tries these before build/Release: one appearing there would be loaded instead.
  note("stat", join(addonRoot, "build", "better_sqlite3.node"));
  note("stat", join(addonRoot, "build", "Debug", "better_sqlite3.node"));

  const shellModule = join(dirname(requireFromCli.resolve("@vigil/trace")), "grounding", "shell-syntax.js");
  let mvdanRewrites = 0;
  const plugin = {
    name: "vigil-hook-snapshot",
    setup(build) {
      build.onResolve({ filter: /.*/ }, async (args) => {
        if (args.pluginData === "vigil-resolving") return undefined;
        if (args.path === "bindings") {
          if (!args.importer.startsWith(addonRoot + sep)) throw new Error(`${args.importer} imports bindings, which the snapshot does not provide`);
          return { path: "bindings", namespace: "vigil-bindings" };
        }
        if (LAZY_BUILTINS.has(args.path)) return { path: args.path.startsWith("node:") ? args.path : `node:${args.path}`, namespace: "vigil-lazy-builtin" };
        if (args.kind === "dynamic-import" && FROM_DISK.has(args.path)) {
          const resolved = await build.resolve(args.path, { kind: "import-statement", importer: args.importer, resolveDir: args.resolveDir, pluginData: "vigil-resolving" });
          if (resolved.errors.length > 0) return { errors: resolved.errors };
          return { path: pathToFileURL(resolved.path).href, external: true };
        }
        const bare = !args.path.startsWith(".") && !args.path.startsWith("/") && !args.path.startsWith("node:") && !builtinModules.includes(args.path);
        if (!bare || args.importer === "" || args.namespace !== "file") return undefined;
        // A package is found in the nearest node_modules above its importer that holds it: one
        // appearing nearer, or the one found changing, would make Node.js load another.
        const name = args.path.split("/").slice(0, args.path.startsWith("@") ? 2 : 1).join("/");
        for (let at = dirname(args.importer); ; at = dirname(at)) {
          const candidate = join(at, "node_modules", name);
          note("exists", candidate);
          if (snapshot.observe("exists", candidate) === "yes") {
            note("real", candidate);
            note("stat", join(candidate, "package.json"));
            const resolved = await build.resolve(args.path, { kind: args.kind, importer: args.importer, resolveDir: args.resolveDir, pluginData: "vigil-resolving" });
            if (resolved.errors.length > 0) return { errors: resolved.errors };
            if (!resolved.path.startsWith(realpathSync(candidate) + sep)) throw new Error(`esbuild found ${args.path} at ${resolved.path}, Node.js would look in ${candidate}`);
            return { path: resolved.path, sideEffects: resolved.sideEffects };
          }
          if (dirname(at) === at) return undefined;
        }
      });
      build.onLoad({ filter: /.*/, namespace: "vigil-bindings" }, () => ({
        contents: `module.exports = function bindings(name) { if (name !== "better_sqlite3.node") throw new Error("no addon " + name + " in the hook's snapshot"); return require("node:module").createRequire(${JSON.stringify(addon)})(${JSON.stringify(addon)}); };`,
        loader: "js",
      }));
      build.onLoad({ filter: /.*/, namespace: "vigil-lazy-builtin" }, (args) => {
        const names = Object.keys(requireFromCli(args.path)).filter((name) => /^[A-Za-z_$][\w$]*$/.test(name));
        const getters = names.map((name) => `get ${name}() { return load().${name}; }`).join(", ");
        return { contents: `let loaded;\nconst load = () => (loaded ??= process.getBuiltinModule(${JSON.stringify(args.path)}));\nmodule.exports = { ${getters} };\n`, loader: "js" };
      });
      build.onLoad({ filter: /.*/ }, (args) => {
        const loader = /\.(c|m)?js$/.test(args.path) ? "js" : args.path.endsWith(".json") ? "json" : undefined;
        if (loader === undefined) throw new Error(`the hook's bundle cannot hold ${args.path}`);
        const descriptor = openSync(args.path, "r");
        let text;
        try {
          const before = snapshot.fingerprint(fstatSync(descriptor));
          const bytes = readFileSync(descriptor);
          if (snapshot.fingerprint(fstatSync(descriptor)) !== before || snapshot.observe("stat", args.path) !== before) throw new Error(`${args.path} changed while it was bundled`);
          note("stat", args.path, before, createHash("sha256").update(bytes).digest("hex"));
          text = bytes.toString("utf8");
        } finally {
          closeSync(descriptor);
        }
        if (loader === "js") {
          // mvdan-sh, which shell-syntax.js loads at the first command line it parses, is bundled (and initialised in the snapshot).
          text = text.replace(/createRequire\(import\.meta\.url\)\((["'])mvdan-sh\1\)/g, () => {
            if (args.path !== shellModule) throw new Error(`${args.path} loads mvdan-sh`);
            mvdanRewrites++;
            return 'require("mvdan-sh")';
          });
          text = text.replaceAll("import.meta.url", JSON.stringify(pathToFileURL(args.path).href));
          if (/\bimport\.meta\b/.test(text)) throw new Error(`${args.path} uses import.meta beyond import.meta.url`);
        }
        return { contents: text, loader };
      });
    },
  };

  const main = join(dist, "enforcement", "hook-snapshot-main.js");
  const result = await esbuild.build({
    // Imported for its effects: the snapshot builder's script is not a module with exports.
    stdin: { contents: `import ${JSON.stringify(main)};\n`, resolveDir: dist, sourcefile: "hook-snapshot-entry.js", loader: "js" },
    bundle: true,
    platform: "node",
    format: "cjs",
    target: `node${process.versions.node}`,
    // Fewer bytes of source in the heap, which every start reads back; names are kept as they were.
    minify: true,
    keepNames: true,
    legalComments: "none",
    write: false,
    logLevel: "silent",
    plugins: [plugin],
  });
  if (result.warnings.length > 0) {
    const messages = await esbuild.formatMessages(result.warnings, { kind: "warning" });
    throw new Error(`bundling the hook warned:\n${messages.join("\n")}`);
  }
  if (mvdanRewrites !== 1) throw new Error(`expected shell-syntax.js to load mvdan-sh once, found ${mvdanRewrites} places`);

  let text = result.outputFiles[0].text;
  let dynamicImports = 0;
  // The snapshot's code has no host for `import()`: modules left outside are imported through a
  // script that has Node.js's own loader, built-in modules are taken as they are.
  text = text.replace(/\bimport\((["'])(file:\/\/[^"']+|node:[a-z_/]+)\1\)/g, (_, quote, specifier) => {
    dynamicImports++;
    return specifier.startsWith("node:") ? `__vigilBuiltin(${JSON.stringify(specifier)})` : `__vigilImport(${JSON.stringify(specifier)})`;
  });
  const left = /\bimport\s*\(/.exec(text);
  if (left !== null) throw new Error(`the bundle still holds an import(): …${text.slice(Math.max(0, left.index - 80), left.index + 80)}…`);
  const helpers = [
    `"use strict";`,
    `const __vigilBuiltin = (name) => Promise.resolve().then(() => { const module = process.getBuiltinModule(name); return Object.assign(Object.create(null), module, { default: module }); });`,
    `const __vigilImport = (url) => {`,
    `  const vm = process.getBuiltinModule("node:vm");`,
    `  const emitWarning = process.emitWarning;`,
    `  process.emitWarning = function (warning, ...rest) { if (String(warning?.message ?? warning).includes("USE_MAIN_CONTEXT_DEFAULT_LOADER")) return; return emitWarning.call(this, warning, ...rest); };`,
    `  try { return new vm.Script("(url) => import(url)", { importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER }).runInThisContext()(url); }`,
    `  finally { process.emitWarning = emitWarning; }`,
    `};`,
  ];
  text = `${helpers.join("\n")}\n${text}`;

  const bundle = temporary("hook-bundle.cjs");
  const manifest = temporary("manifest.json");
  const blob = temporary("hook.blob");
  try {
    writeFileSync(bundle, text);
    writeFileSync(manifest, JSON.stringify({ format: 1, node: {}, blob: join(directory, "hook.blob"), observations: [...observations.values()] }));
    const built = spawnSync(process.execPath, ["--snapshot-blob", blob, "--build-snapshot", bundle], {
      cwd: directory,
      env: { ...plainEnvironment(), VIGIL_HOOK_SNAPSHOT_MANIFEST: manifest },
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    if (built.status !== 0) throw new Error(`node --build-snapshot failed (${built.status ?? built.signal}):\n${built.stderr}`);
    renameSync(bundle, paths.bundle);
    renameSync(blob, paths.blob);
    renameSync(manifest, paths.manifest);
  } finally {
    for (const file of [bundle, manifest, blob]) rmSync(file, { force: true });
  }

  // The hook from the blob, once: it must start from the snapshot and answer as the normal path does.
  const vigilc = join(cli, "bin", "vigilc.js");
  const fast = spawnSync(process.execPath, ["--snapshot-blob", paths.blob, vigilc, "hook", "claude-code", "--help"], { env: { ...plainEnvironment(), [snapshot.SNAPSHOT_REPORT_VARIABLE]: "1" }, encoding: "utf8" });
  const plain = spawnSync(process.execPath, [vigilc, "hook", "claude-code", "--help"], { env: plainEnvironment(), encoding: "utf8" });
  if (fast.status !== 0 || fast.stderr !== "vigil hook snapshot: used\n" || fast.stdout !== plain.stdout) {
    rmSync(paths.manifest, { force: true });
    throw new Error(`the hook did not start from the snapshot it was built (exit ${fast.status}): ${fast.stderr}`);
  }
  return { blob: paths.blob, built: true, imports: dynamicImports, observations: observations.size };
}

/**
 * This process's environment without NODE_OPTIONS: V8's options are part of a snapshot (Node.js
 * refuses a blob built with others), and the hook runs with Claude Code's environment, not the
 * build's.
 */
function plainEnvironment() {
  const env = { ...process.env };
  delete env["NODE_OPTIONS"];
  return env;
}

if (process.argv[1] !== undefined && realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const force = process.argv.includes("--force");
  const quiet = process.argv.includes("--quiet");
  try {
    const started = performance.now();
    const done = await buildHookSnapshot({ force });
    if (!quiet) console.log(done.built ? `built the hook's startup snapshot ${done.blob} in ${((performance.now() - started) / 1000).toFixed(1)} s` : `the hook's startup snapshot ${done.blob} is up to date`);
  } catch (error) {
    console.error(`error: the hook's startup snapshot was not built: ${error.message}`);
    process.exit(1);
  }
}
