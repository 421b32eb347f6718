import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, realpathSync, statSync, type Stats } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The Claude Code hook's startup snapshot: a V8 heap taken after the hook's code (hook.ts and all
 * it loads for a decision: the runtime, the monitor, the guard, mvdan-sh) was loaded and
 * initialised, and after the guard's walk of Vigil's module graph (`vigilCodePaths`). Claude Code
 * starts a new process for every event; one started with `node --snapshot-blob BLOB` begins where
 * that heap was, instead of loading and initialising it all again (docs/performance.md,
 * "Enforcement").
 *
 * It is the same code, bundled into one file (hook-snapshot-main.ts is its entry; the bundle and the
 * blob are built by packages/cli/scripts/build-hook-snapshot.mjs), and it is used only while it is
 * what the normal path would run: the snapshot records what its heap was built from (every file
 * bundled, how each package was found, what the guard's walk read, the Node.js binary, the blob's
 * own place) and checks it all before it reads the event. Anything out of date, and the process
 * exits with {@link SNAPSHOT_STALE_EXIT} before reading standard input; the command line Claude
 * Code runs (claude-settings.ts) then runs the normal path on the same input. Node.js itself refuses
 * a blob built by another binary, or a damaged one, before any of it runs, with another exit code
 * than 0 or 2: the normal path answers then too.
 *
 * The snapshot is kept under the package's `dist/`, which the sandbox of every agent command may
 * not write (Vigil's own code is protected whole).
 */

/** The exit code of a snapshot that is not what the normal path would run: answer without it. */
export const SNAPSHOT_STALE_EXIT = 75;

/** Set (to anything) in the environment, the snapshot says on standard error whether it answered. */
export const SNAPSHOT_REPORT_VARIABLE = "VIGIL_HOOK_SNAPSHOT_REPORT";

/**
 * One fact the snapshot was built on: `kind` of `path` was `expected`. `stat` and `lstat`: the
 * file's identity and times (see {@link observe}), or `absent`; `exists`: `yes` or `no`; `real`:
 * the real path (symbolic links resolved), or the error. A file's `stat` may carry the SHA-256 of
 * what it held: a file written again with the same bytes (a build that emits it again) is then
 * still the same.
 */
export type Observation = readonly [kind: "stat" | "lstat" | "exists" | "real", path: string, expected: string, sha256?: string];

/** The SHA-256 of a file's bytes, hex; undefined when it cannot be read. */
export function fileHash(path: string): string | undefined {
  try {
    return createHash("sha256").update(readFileSync(path)).digest("hex");
  } catch {
    return undefined;
  }
}

export interface SnapshotManifest {
  readonly format: 1;
  /** The Node.js that built it: the snapshot runs only in the same binary, at the same path. */
  readonly node: { readonly version: string; readonly platform: string; readonly arch: string; readonly execPath: string };
  /** The blob's real path: a copy elsewhere holds the paths of this install. */
  readonly blob: string;
  readonly observations: readonly Observation[];
}

/** What `kind` of `path` is now, in the form {@link Observation} records. */
export function observe(kind: Observation[0], path: string): string {
  try {
    switch (kind) {
      case "stat":
        return fingerprint(statSync(path, { throwIfNoEntry: false }));
      case "lstat":
        return fingerprint(lstatSync(path, { throwIfNoEntry: false }));
      case "exists":
        return existsSync(path) ? "yes" : "no";
      case "real":
        return realpathSync.native(path);
    }
  } catch (error) {
    return `error:${(error as NodeJS.ErrnoException).code ?? "?"}`;
  }
}

/**
 * A file's identity and times: its change time moves with every write to it or to its metadata (and
 * cannot be set back), a directory's with every entry added, removed or renamed in it.
 */
export function fingerprint(stats: Stats | undefined): string {
  if (stats === undefined) return "absent";
  return `${stats.isDirectory() ? "d" : stats.isSymbolicLink() ? "l" : "f"}:${stats.dev}:${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
}

/**
 * The same facts, fewer to check at every start: a path that does not exist stays absent while the
 * first missing directory on the way to it stays absent (the many places Node.js looks for a
 * package, `a/node_modules/x`, `a/node_modules/y`, are mostly one missing `a/node_modules`), and
 * a path whose real path is checked exists.
 */
export function compactObservations(observations: readonly Observation[]): Observation[] {
  const kept = new Map<string, Observation>();
  const keep = (observation: Observation): void => {
    const key = `${observation[0]}\u0000${observation[1]}`;
    if (!kept.has(key)) kept.set(key, observation);
  };
  const resolved = new Set(observations.filter(([kind, , expected]) => kind === "real" && !expected.startsWith("error:")).map(([, path]) => path));
  for (const observation of observations) {
    const [kind, path, expected] = observation;
    if (kind === "exists" && expected === "yes" && resolved.has(path)) continue;
    if ((kind === "exists" && expected === "no") || (kind === "stat" && expected === "absent")) {
      let missing = path;
      while (dirname(missing) !== missing && observe("exists", dirname(missing)) === "no") missing = dirname(missing);
      keep(["exists", missing, observe("exists", missing)]);
      continue;
    }
    keep(observation);
  }
  return [...kept.values()];
}

/** Why the snapshot described by `manifest` is not what the normal path would run, with blob `blob`; undefined when it is. */
export function staleness(manifest: SnapshotManifest, blob: string): string | undefined {
  if (manifest.format !== 1) return "a snapshot of another format";
  const node = manifest.node;
  if (node.version !== process.version || node.platform !== process.platform || node.arch !== process.arch) {
    return `built by Node.js ${node.version} (${node.platform}-${node.arch}), run by ${process.version} (${process.platform}-${process.arch})`;
  }
  if (node.execPath !== process.execPath) return `built by the Node.js at ${node.execPath}, run by the one at ${process.execPath}`;
  const real = observe("real", blob);
  if (real !== manifest.blob) return `the snapshot ${blob} is not the one built at ${manifest.blob}`;
  for (const [kind, path, expected, sha256] of manifest.observations) {
    const now = observe(kind, path);
    if (now === expected || (sha256 !== undefined && now.startsWith("f:") && fileHash(path) === sha256)) continue;
    return `${path} changed since the snapshot was built (${kind}: ${expected} then, ${now} now)`;
  }
  return undefined;
}

/**
 * Where this Node.js's snapshot of this install lives: one directory per Node.js version and
 * platform, under the package's `dist/hook-snapshot/` (this module is in `dist/enforcement/`).
 */
export function hookSnapshotPaths(): { readonly directory: string; readonly blob: string; readonly bundle: string; readonly manifest: string } {
  const directory = join(dirname(fileURLToPath(import.meta.url)), "..", "hook-snapshot", `node-${process.version}-${process.platform}-${process.arch}`);
  return { directory, blob: join(directory, "hook.blob"), bundle: join(directory, "hook-bundle.cjs"), manifest: join(directory, "manifest.json") };
}

/** This install's snapshot for this Node.js, when there is one and it is up to date; else why not. */
export function usableHookSnapshot(): { readonly blob: string } | { readonly problem: string } {
  const paths = hookSnapshotPaths();
  let manifest: SnapshotManifest;
  try {
    manifest = JSON.parse(readFileSync(paths.manifest, "utf8")) as SnapshotManifest;
  } catch (error) {
    return { problem: `no startup snapshot for Node.js ${process.version} (${(error as NodeJS.ErrnoException).code === "ENOENT" ? `${paths.manifest} does not exist` : (error as Error).message})` };
  }
  if (!existsSync(paths.blob)) return { problem: `${paths.blob} does not exist` };
  const stale = staleness(manifest, paths.blob);
  return stale === undefined ? { blob: paths.blob } : { problem: `the startup snapshot is out of date: ${stale}` };
}

/**
 * The snapshot's place in Node.js's own options (`--snapshot-blob FILE`), for the running process;
 * undefined when it did not start from one.
 */
export function runningSnapshotBlob(execArgv: readonly string[] = process.execArgv): string | undefined {
  for (let index = 0; index < execArgv.length; index++) {
    const option = execArgv[index]!;
    if (option === "--snapshot-blob") return execArgv[index + 1];
    if (option.startsWith("--snapshot-blob=")) return option.slice("--snapshot-blob=".length);
  }
  return undefined;
}
