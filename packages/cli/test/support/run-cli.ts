import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { run as runFromSources, type CliIo } from "../../src/cli.js";
import { cli, fixtures } from "./paths.js";

/**
 * `vigilc` run in this process through its `run(argv, io)` seam, judged as the spawned executable
 * was: exit code, standard output, standard error. A test that is about the process itself
 * (signals, a closed pipe, start-up, a server it must stop) spawns it instead: process.test.ts.
 *
 * What the executable takes from its process is given the same way here (see process-main.ts):
 *
 * - Working directory. `io.cwd` is the directory given, but most commands open the files they are
 *   given as they are written, against the process's working directory, and a glob of runs is
 *   expanded there too. So the process changes to that directory for the run, and back after.
 * - Environment. Given as `io.env` (what `draft` reads), and set on `process.env` for the run,
 *   which the hook, the guard (`HOME`, `PATH`, `CDPATH`), the audit key (`VIGIL_AUDIT_KEY`) and
 *   `VIGIL_DEBUG` read directly: the test's own environment, with `NO_COLOR=1`, no `FORCE_COLOR`
 *   and no `VIGIL_DEBUG` unless the test sets it, then the test's variables.
 * - Standard input: the text given (nothing when none is), read by a trace given as `-` and by
 *   the hook.
 * - Colours and the progress bar: off, as with a pipe for stdout and stderr.
 * - Output: what the command writes through `io`, and anything written to `process.stdout` or
 *   `process.stderr` directly during the run (the solver's own messages), as the process would
 *   have printed it.
 * - Worker threads of the built CLI: started with the executable's Node.js options, none, instead
 *   of inheriting the test runner's. The runner runs tests with `--conditions @vigil/source`, under
 *   which a worker of the built CLI would load the packages' TypeScript sources, which Node.js
 *   cannot run.
 *
 * Since the working directory and the environment belong to the whole process, runs take turns:
 * one at a time per test file, in the order they were asked for.
 */

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface CliRunOptions {
  /** The working directory of the run; the fixtures directory when not given. */
  readonly cwd?: string;
  /** Standard input; empty when not given. */
  readonly stdin?: string;
  /** Variables set for the run, over the test's own environment. */
  readonly env?: Readonly<Record<string, string>>;
  /**
   * Run the built CLI (packages/cli/dist/cli.js) instead of its sources. A corpus checked by the
   * eval, smt or monitor engine is judged run by run in worker threads, which load
   * `corpus-worker.js` from beside the module that starts them: the build has it, the sources
   * (TypeScript, which a worker thread cannot load) do not.
   */
  readonly built?: boolean;
}

/** What a crash looks like on stderr: a JavaScript stack frame, an uncaught error, a stack overflow. */
export const crashPattern = /^\s+at .+:\d+:\d+\)?$|Maximum call stack|RangeError|TypeError|Unhandled 'error' event|internal error|node:internal/m;

/** Runs `vigilc ARGS` in this process and returns its exit code and output. */
export function runCli(args: readonly string[], options: CliRunOptions = {}): Promise<CliRun> {
  return oneAtATime(async () => {
    if (options.built === true) startWorkersWithoutNodeOptions();
    const run = options.built === true ? (await loadBuiltCli()).run : runFromSources;
    let stdout = "";
    let stderr = "";
    const output = { stdout: (text: string) => void (stdout += text), stderr: (text: string) => void (stderr += text) };
    const env = environmentOfRun(options.env);
    const io: CliIo = { ...output, colors: false, progress: false, cwd: options.cwd ?? fixtures, env, stdin: async () => options.stdin ?? "" };
    const code = await asTheProcessOf(io, env, output, () => run(args, io));
    return { code, stdout, stderr };
  });
}

/** The environment the executable was spawned with: the test's, without colours or debugging switches, then `extra`. */
function environmentOfRun(extra: Readonly<Record<string, string>> = {}): Record<string, string | undefined> {
  const env: Record<string, string | undefined> = { ...process.env, NO_COLOR: "1", ...extra };
  if (extra["VIGIL_DEBUG"] === undefined) delete env["VIGIL_DEBUG"];
  delete env["FORCE_COLOR"];
  return env;
}

/**
 * Runs `body` with the process's working directory, its environment and what is written to its
 * standard streams made those of the run, and puts them back afterwards, whatever happens.
 */
async function asTheProcessOf<T>(io: CliIo, env: Readonly<Record<string, string | undefined>>, output: { readonly stdout: (text: string) => void; readonly stderr: (text: string) => void }, body: () => Promise<T>): Promise<T> {
  const directory = process.cwd();
  const before = new Map<string, string | undefined>();
  for (const name of new Set([...Object.keys(process.env), ...Object.keys(env)])) {
    if (process.env[name] === env[name]) continue;
    before.set(name, process.env[name]);
    setVariable(name, env[name]);
  }
  const restoreStdout = divert(process.stdout, output.stdout);
  const restoreStderr = divert(process.stderr, output.stderr);
  try {
    process.chdir(io.cwd);
    return await body();
  } finally {
    process.chdir(directory);
    restoreStderr();
    restoreStdout();
    for (const [name, value] of before) setVariable(name, value);
  }
}

function setVariable(name: string, value: string | undefined): void {
  if (value === undefined) delete process.env[name];
  else process.env[name] = value;
}

/** Sends what is written to `stream` to `sink` until the returned function is called. */
function divert(stream: NodeJS.WriteStream, sink: (text: string) => void): () => void {
  const original = Object.getOwnPropertyDescriptor(stream, "write");
  const write = (chunk: string | Uint8Array, encoding?: BufferEncoding | ((error?: Error | null) => void), callback?: (error?: Error | null) => void): boolean => {
    sink(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString(typeof encoding === "string" ? encoding : "utf8"));
    const done = typeof encoding === "function" ? encoding : callback;
    if (done !== undefined) queueMicrotask(() => done());
    return true;
  };
  Object.defineProperty(stream, "write", { value: write, configurable: true, writable: true });
  return () => {
    if (original !== undefined) Object.defineProperty(stream, "write", original);
    else delete (stream as { write?: unknown }).write;
  };
}

/**
 * From now on, a worker thread started without Node.js options of its own (`execArgv`) starts with
 * none, as in the `vigilc` executable. It stays so after the run: a worker pool may still start a
 * worker once its run has returned (piscina, after the pool was destroyed, replaces a worker whose
 * exit it takes for a failure), which the executable's exit would have ended. Worker pools look
 * `Worker` up on the module each time they start one, so the replacement is seen.
 */
function startWorkersWithoutNodeOptions(): void {
  if (workersStartWithoutNodeOptions) return;
  workersStartWithoutNodeOptions = true;
  const workerThreads = createRequire(import.meta.url)("node:worker_threads") as typeof import("node:worker_threads");
  const original = workerThreads.Worker;
  class WorkerOfTheExecutable extends original {
    constructor(filename: string | URL, options: import("node:worker_threads").WorkerOptions = {}) {
      super(filename, options.execArgv === undefined ? { ...options, execArgv: [] } : options);
    }
  }
  workerThreads.Worker = WorkerOfTheExecutable;
}

let workersStartWithoutNodeOptions = false;

/** The end of the queue of runs: each run starts once the one before it has ended. */
let previous: Promise<unknown> = Promise.resolve();

function oneAtATime<T>(task: () => Promise<T>): Promise<T> {
  const result = previous.then(task);
  previous = result.catch(() => undefined);
  return result;
}

/** The built CLI's `run`, loaded once. */
let built: Promise<{ readonly run: typeof runFromSources }> | undefined;

function loadBuiltCli(): Promise<{ readonly run: typeof runFromSources }> {
  const module = join(dirname(cli), "cli.js");
  if (!existsSync(module)) throw new Error(`${module} is missing: run \`npx tsc -b\` before the CLI tests`);
  built ??= import(module) as Promise<{ readonly run: typeof runFromSources }>;
  return built;
}
