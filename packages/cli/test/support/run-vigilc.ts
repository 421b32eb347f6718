import { execFile, spawn } from "node:child_process";
import { cli, fixtures, root } from "./paths.js";

/**
 * `vigilc` spawned as a process (node packages/cli/dist/main.js, built by `tsc -b`), for the tests
 * that are about the process itself (process.test.ts) and the hook's. A test of what a command does
 * runs it in process instead (run-cli.ts).
 */

export { cli, examples, fixtures, root } from "./paths.js";

export interface RunResult {
  /** The exit code; null when the process was killed (by the time limit, say). */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall-clock time from spawn to exit, in milliseconds. */
  readonly ms: number;
}

export interface RunOptions {
  readonly cwd?: string;
  /** Kill the process after this long; every spawn has a limit, so a hang fails the test. */
  readonly timeoutMs?: number;
  readonly env?: Readonly<Record<string, string>>;
  /** Written to the process's standard input, which is then closed (closed at once without it). */
  readonly input?: string;
}

/** The environment of every spawn: no colours, no debugging switches of the caller's shell. */
function childEnv(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, NO_COLOR: "1", ...extra };
  if (extra["VIGIL_DEBUG"] === undefined) delete env["VIGIL_DEBUG"];
  delete env["FORCE_COLOR"];
  return env;
}

/** Runs the built `vigilc` (node packages/cli/dist/main.js) with `args`. */
export function vigilc(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise) => {
    const child = execFile(
      process.execPath,
      [cli, ...args],
      { cwd: options.cwd ?? fixtures, timeout: options.timeoutMs ?? 60_000, killSignal: "SIGKILL", maxBuffer: 256 * 2 ** 20, env: childEnv(options.env), encoding: "utf8" },
      (error, stdout, stderr) => {
        const failure = error as (Error & { code?: unknown; signal?: NodeJS.Signals | null }) | null;
        resolvePromise({
          code: failure === null ? 0 : typeof failure.code === "number" ? failure.code : null,
          signal: failure?.signal ?? null,
          stdout,
          stderr,
          ms: performance.now() - started,
        });
      },
    );
    child.stdin?.end(options.input ?? "");
  });
}

/** Runs `node script` with `input` on stdin. */
export function nodeWithInput(script: string, input: string, timeoutMs = 60_000): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [script], { cwd: root, env: childEnv(), stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
    child.stdin.end(input);
  });
}

/**
 * Runs `vigilc` and closes the reading end of its stdout after the first chunk, as `vigilc … | head
 * -c 1` would.
 */
export function vigilcWithClosedStdout(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd: options.cwd ?? fixtures, env: childEnv(options.env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").once("data", (chunk: string) => {
      stdout += chunk;
      child.stdout.destroy();
    });
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}
