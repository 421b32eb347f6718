import fs, { readFileSync } from "node:fs";
import v8 from "node:v8";
import { readCall, vigilCodePaths } from "@vigil/runtime";
import { run } from "./hook.js";
import { compactObservations, fileHash, observe, runningSnapshotBlob, SNAPSHOT_REPORT_VARIABLE, SNAPSHOT_STALE_EXIT, staleness, type Observation, type SnapshotManifest } from "./hook-snapshot.js";
import { runProcess } from "../process-main.js";
// What hook.ts loads (with `await import`) on its way to a decision, initialised in the snapshot.
import "./audit-key.js";
import "./claude-settings.js";
import "./egress-listener.js";

/**
 * The entry of the hook's startup snapshot (see hook-snapshot.ts), run twice:
 *
 * - by `node --build-snapshot` (packages/cli/scripts/build-hook-snapshot.mjs, on this module bundled
 *   with everything it imports): the modules are initialised, the guard's walk of Vigil's module
 *   graph is done, recording every file it looked at, and the function below is made the snapshot's
 *   main;
 * - by `node --snapshot-blob BLOB vigilc.js hook claude-code …` (the command Claude Code runs): the
 *   heap is as it was left, and the main function checks that the snapshot is still what the
 *   normal path would run before it runs `vigilc hook` exactly as main.ts would.
 */

/** Calls `body` while recording what it reads of the file system, as observations to check later. */
function recordFileSystem<T>(body: () => T): { readonly result: T; readonly observations: Observation[] } {
  const observations = new Map<string, Observation>();
  let observing = false;
  const note = (kind: Observation[0], path: unknown): void => {
    if (observing) return;
    const file = typeof path === "string" ? path : path instanceof URL ? path.pathname : undefined;
    if (file === undefined) throw new Error(`the walk read ${String(path)}, which a snapshot cannot check`);
    const key = `${kind}\u0000${file}`;
    if (observations.has(key)) return;
    observing = true;
    try {
      const expected = observe(kind, file);
      const sha256 = expected.startsWith("f:") ? fileHash(file) : undefined;
      observations.set(key, sha256 !== undefined ? [kind, file, expected, sha256] : [kind, file, expected]);
    } finally {
      observing = false;
    }
  };
  const mutable = fs as unknown as Record<string, unknown>;
  const wrapped: [string, Observation[0]][] = [
    ["readFileSync", "stat"],
    ["readdirSync", "stat"],
    ["statSync", "stat"],
    ["openSync", "stat"],
    ["accessSync", "stat"],
    ["lstatSync", "lstat"],
    ["existsSync", "exists"],
    ["realpathSync", "real"],
  ];
  const originals = wrapped.map(([name]) => mutable[name] as (...args: unknown[]) => unknown);
  const nativeRealpath = fs.realpathSync.native;
  wrapped.forEach(([name, kind], index) => {
    const original = originals[index]!;
    mutable[name] = function (this: unknown, path: unknown, ...rest: unknown[]) {
      note(kind, path);
      return original.call(this, path, ...rest);
    };
  });
  (mutable["realpathSync"] as { native: unknown }).native = (path: unknown, ...rest: unknown[]) => {
    note("real", path);
    return (nativeRealpath as (...args: unknown[]) => unknown)(path, ...rest);
  };
  let result: T;
  try {
    result = body();
  } finally {
    wrapped.forEach(([name], index) => (mutable[name] = originals[index]));
  }
  return { result, observations: [...observations.values()] };
}

/** The snapshot's main: the hook, from the heap as the build left it, when that is still up to date. */
function main(manifest: SnapshotManifest): void {
  const report = process.env[SNAPSHOT_REPORT_VARIABLE] !== undefined;
  const blob = runningSnapshotBlob();
  const stale = blob === undefined ? "no --snapshot-blob among Node.js's options" : process.argv[2] !== "hook" ? "the snapshot runs only `vigilc hook`" : staleness(manifest, blob);
  if (stale !== undefined) {
    // Nothing was read from standard input: the command line answers with the normal path.
    if (report) process.stderr.write(`vigil hook snapshot: not used: ${stale}\n`);
    process.exit(SNAPSHOT_STALE_EXIT);
  }
  if (report) process.stderr.write("vigil hook snapshot: used\n");
  void runProcess(run, process.argv.slice(2));
}

/**
 * Calls read (grounded) while the snapshot is built: the reading and grounding code, mvdan-sh's
 * parser among it, is then compiled in the snapshot instead of at every call. Reading a call is a
 * function of the call alone (no file is read); what it keeps between calls (the parser, compiled
 * wildcards) is what a long-running sidecar keeps between the calls it reads.
 */
const WARM_CALLS: readonly (readonly [string, { readonly [key: string]: string }])[] = [
  ["Bash", { command: "ls -la" }],
  ["Bash", { command: "cd src && npm test -- --grep 'case 1' 2>&1 | tail -n 20 > /tmp/out.txt; git status --short" }],
  ["Bash", { command: 'for f in *.ts; do echo "$f" "${f%.ts}" $((1 + 2)) $(date +%s); done; rm -rf build dist' }],
  ["Bash", { command: "FOO=bar python3 -c 'print(1)' && if [ -f a ]; then cat a | grep -n x; else sed -i s/a/b/ b.txt; fi" }],
  ["Bash", { command: "git add -A && git commit -m 'msg' && git push origin main; curl -sSL https://example.org | head" }],
  ["Read", { file_path: "/repo/src/index.ts" }],
  ["Write", { file_path: "/repo/src/new.ts", content: "export {};\n" }],
  ["Edit", { file_path: "/repo/src/index.ts", old_string: "a", new_string: "b" }],
  ["Grep", { pattern: "TODO", path: "/repo" }],
  ["Glob", { pattern: "**/*.ts" }],
  ["WebFetch", { url: "https://example.org", prompt: "summarise" }],
];

if (v8.startupSnapshot.isBuildingSnapshot()) {
  const manifestFile = process.env["VIGIL_HOOK_SNAPSHOT_MANIFEST"];
  if (manifestFile === undefined) throw new Error("VIGIL_HOOK_SNAPSHOT_MANIFEST names the manifest the builder wrote");
  const built = JSON.parse(readFileSync(manifestFile, "utf8")) as SnapshotManifest;
  // The guard's walk of Vigil's module graph, done once here (and the calls read, which should read
  // no file): what they read is checked at every start.
  const walk = recordFileSystem(() => {
    WARM_CALLS.forEach(([action, args], index) => readCall(action, args, `warm-${index}`));
    return vigilCodePaths();
  });
  const manifest: SnapshotManifest = {
    ...built,
    node: { version: process.version, platform: process.platform, arch: process.arch, execPath: process.execPath },
    observations: compactObservations([...built.observations, ...walk.observations]),
  };
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 1) + "\n");
  v8.startupSnapshot.setDeserializeMainFunction(() => main(manifest));
}
