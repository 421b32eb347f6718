import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { homedir } from "node:os";
import { join } from "node:path";
import type { ClickHouseSession } from "@vigil/sql";
import { environmentOutsideNpm } from "../../scripts/editor-tools/install.mjs";

/**
 * Embedded ClickHouse for the tests: the npm package `chdb`, whose ClickHouse library (546 MB)
 * ships in a platform package on the registry. It is installed on first use into a cache folder
 * outside the repository, not with the project: a user's `npm ci` does not fetch half a gigabyte for
 * one test, and the lockfile stays installable (the registry has no build of the library for the
 * other platforms chdb names, which `npm ci` would want in the lockfile).
 */
export const chdbVersion = "3.4.0";

/** A chdb session: what the SQL engine's backend uses, and a synchronous query and cleanup. */
export interface ChdbSession extends ClickHouseSession {
  query(sql: string, format?: string): string;
  cleanup(): void;
}

const marker = "complete.json";

/** `$XDG_CACHE_HOME` or `~/.cache`, then `vigil-test-tools/chdb-<version>`. */
function chdbDirectory(): string {
  const cache = process.env["XDG_CACHE_HOME"] || join(homedir(), ".cache");
  return join(cache, "vigil-test-tools", `chdb-${chdbVersion}`);
}

/**
 * Installs chdb when the cache folder is not complete. Test files run in parallel: each installs
 * into a folder of its own and renames it into place; the first rename wins and the others keep
 * what it installed.
 */
function ensureChdb(): string {
  const directory = chdbDirectory();
  if (existsSync(join(directory, marker))) return directory;
  rmSync(directory, { recursive: true, force: true });
  const partial = `${directory}.partial-${process.pid}`;
  rmSync(partial, { recursive: true, force: true });
  mkdirSync(partial, { recursive: true });
  const result = spawnSync("npm", ["install", "--no-save", "--no-package-lock", "--no-audit", "--no-fund", "--prefix", partial, `chdb@${chdbVersion}`], {
    encoding: "utf8",
    env: environmentOutsideNpm(),
    timeout: 600_000,
  });
  if (result.status !== 0) {
    rmSync(partial, { recursive: true, force: true });
    throw new Error(`npm install chdb@${chdbVersion} failed (${result.status ?? result.signal}): ${result.stderr.slice(-2000)}`);
  }
  writeFileSync(join(partial, marker), `${JSON.stringify({ chdbVersion })}\n`);
  try {
    renameSync(partial, directory);
  } catch (error) {
    rmSync(partial, { recursive: true, force: true });
    if (!existsSync(join(directory, marker))) throw error;
  }
  return directory;
}

/** A new chdb session over a temporary data folder (removed by `cleanup`). */
export function openChdb(): ChdbSession {
  const directory = ensureChdb();
  const chdb = createRequire(join(directory, "node_modules", "index.js"))("chdb") as { Session: new () => ChdbSession };
  return new chdb.Session();
}
