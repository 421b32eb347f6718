import { readdirSync } from "node:fs";
import { dirname, isAbsolute, join, posix, resolve } from "node:path";
import { LOOKUP_UNITS, mayName, pathWord, spend } from "./guard-paths.js";

/**
 * What the guard protects: the enforcement database's files and Vigil's state directory, Claude
 * Code's settings, and how a protected path is recognised in what a call names (a name pattern
 * that may match it, a text that mentions it, the files a protected directory holds).
 */

/** A path the guard protects. */
export interface ProtectedPath {
  /** Absolute. */
  readonly path: string;
  /** What it is, for the refusal: "the enforcement database". */
  readonly what: string;
  /** Everything under it is protected too (a directory). */
  readonly tree?: boolean;
  /** Reading it is refused too (a token). */
  readonly secret?: boolean;
  /** For a directory, the names of what it holds, when they are known ("*": any). */
  readonly contents?: readonly string[];
}

/**
 * What of Vigil's state a sandbox must keep the agent from: the `.vigil` directory that holds the
 * database (and the tokens, and the key file put there), whole; or, for a database elsewhere, its
 * four files.
 */
export function stateToSeal(database: string): { readonly path: string; readonly tree: boolean }[] {
  const path = resolve(database);
  if (posix.basename(dirname(path)) === ".vigil") return [{ path: dirname(path), tree: true }];
  return ["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${path}${suffix}`, tree: false }));
}

/** The database's files: the file, its write-ahead log, its shared memory and a rollback journal. */
export function databaseFiles(database: string): ProtectedPath[] {
  if (database === ":memory:") return [];
  const path = resolve(database);
  const files: ProtectedPath[] = ["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${path}${suffix}`, what: "the enforcement database" }));
  // A directory of Vigil's own (`.vigil`) is protected whole: the database's files and the token live there.
  if (posix.basename(dirname(path)) === ".vigil") {
    const name = posix.basename(path);
    files.push({ path: dirname(path), what: "Vigil's state directory", tree: true, contents: [name, `${name}-wal`, `${name}-shm`, `${name}-journal`, "*.token", "*.db", "*.db-*"] });
  }
  return files;
}

export function directoryFiles(directory: string): string[] {
  spend(LOOKUP_UNITS);
  try {
    return readdirSync(directory).map((name) => join(directory, name));
  } catch {
    return [];
  }
}

/**
 * Whether an effect limited to names (`find -name N`) may reach a protected entry: its own name
 * matches, or, for a directory, a name it may hold does (its `contents`; the names found in it
 * when not given), or, when what bears the name is affected with all it holds (`-exec rm -rf {}`),
 * the name of a directory above it does. Names are compared whatever the case (`-iname`).
 */
export function namedBy(names: readonly string[] | undefined, entry: ProtectedPath, reachTree: boolean): boolean {
  if (names === undefined || names.length === 0) return true;
  const above = reachTree ? entry.path.split("/").filter((part) => part !== "") : [];
  const held = entry.tree === true ? (entry.contents ?? (reachTree ? ["*"] : namesIn(entry.path))) : [];
  const candidates = [posix.basename(entry.path), ...held, ...above].map((candidate) => candidate.toLowerCase());
  // Either side may be a pattern: `-name '*.db'` against `audit.db`, `-name x.db` against a directory's `*.db`.
  const match = (pattern: string, name: string) => mayName(pathWord(pattern, "/", { dotglob: true }), `/${name}`);
  return names.some((name) => candidates.some((candidate) => candidate === "*" || match(name.toLowerCase(), candidate) || match(candidate, name.toLowerCase())));
}

const namesFound = new Map<string, string[]>();

/**
 * The names a directory holds, as patterns: `*.EXT` for a name with an extension, the name itself
 * otherwise; `*` when there are too many to look through.
 */
function namesIn(directory: string): string[] {
  const known = namesFound.get(directory);
  if (known !== undefined) return known;
  const names = new Set<string>();
  const pending = [directory];
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > 20_000) {
        namesFound.set(directory, ["*"]);
        return ["*"];
      }
      const extension = /\.[^.]+$/.exec(entry.name);
      names.add(entry.name.startsWith(".") || extension === null ? entry.name : `*${extension[0]}`);
      if (entry.isDirectory()) pending.push(join(current, entry.name));
    }
  }
  const result = [...names];
  namesFound.set(directory, result);
  return result;
}

/**
 * Whether a text mentions a protected path: as written whole; as its last two names
 * (`.vigil/audit.db`); a directory of Vigil's own by its name (`.vigil`); a file's name and its
 * hidden directory's, apart (`os.chdir('.claude'); open('policy.vigil')`); relative to the working
 * directory (`audit.db` inside `.vigil`); or, where that is not known, by a file's name alone.
 */
export function mentions(text: string, entry: ProtectedPath, cwd: string | undefined): boolean {
  const path = entry.path;
  // A handful of scans of the text for plain strings, each cheaper than the matcher's steps: a unit per two characters.
  spend(Math.ceil(text.length / 2));
  if (text.includes(path)) return true;
  const name = posix.basename(path);
  const parent = posix.basename(posix.dirname(path));
  if (name.startsWith(".") && entry.tree === true && named(text, name)) return true;
  if (parent !== "" && text.includes(`${parent}/${name}`)) return true;
  if (parent.startsWith(".") && named(text, parent) && named(text, name)) return true;
  if (cwd !== undefined && path.startsWith(`${cwd}/`)) {
    const relative = path.slice(cwd.length + 1);
    if (relative.includes("/") ? text.includes(relative) : named(text, relative)) return true;
  }
  if (cwd === undefined && entry.tree !== true && name.includes(".") && named(text, name)) return true;
  return false;
}

/** Whether `name` stands in `text` as a name of its own (not part of a longer one). */
function named(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_.-])${escapeRegExp(name)}($|[^A-Za-z0-9_.-])`).test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Claude Code's settings files that may install the hook, from the working directory up and in the
 * home directory, and its shell snapshots.
 */
export function claudeSettingsEntries(cwd: string | undefined, home: string): ProtectedPath[] {
  const directories = new Set<string>([home]);
  if (cwd !== undefined && isAbsolute(cwd)) {
    let current = cwd;
    for (let depth = 0; depth < 64; depth++) {
      directories.add(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  return [
    ...[...directories].flatMap((directory) =>
      ["settings.json", "settings.local.json"].map((name) => ({ path: join(directory, ".claude", name), what: "Claude Code's settings, which install Vigil's hook" })),
    ),
    // The shell setup Claude Code takes from the user's shell at the start of a session and runs
    // before each Bash call: a function or a command written there would run unseen.
    { path: join(home, ".claude", "shell-snapshots"), what: "Claude Code's shell snapshots, which run before each Bash call", tree: true },
  ];
}
