import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { run } from "@vigil/cli";
import fc from "fast-check";

/**
 * The fuzzing harness shared by the suites of test/fuzz: its seed and time budget, an in-process
 * `vigilc`, the properties every run must have whatever its input, and a record of failing inputs
 * on disk so that a failure in CI can be replayed by hand.
 */

const here = dirname(fileURLToPath(import.meta.url));

/** The repository root, the shipped examples and the recordings shared beside the checkout. */
export const root = resolve(here, "../../..");
export const examplesDir = join(root, "examples");
export const sharedData = resolve(root, "../shared/data");
export const builtCli = join(root, "packages/cli/dist/main.js");

/**
 * The seed of every suite. A fixed one by default, so that CI is deterministic and a failure seen
 * there is seen again locally; `VIGIL_FUZZ_SEED=random` explores, and `VIGIL_FUZZ_SEED=N` replays.
 */
export function fuzzSeed(): number {
  chosenSeed ??= seedFromEnvironment();
  return chosenSeed;
}

/** Drawn once per process, so that a random seed is the same in the titles, the runs and the reports. */
let chosenSeed: number | undefined;

function seedFromEnvironment(): number {
  const setting = process.env["VIGIL_FUZZ_SEED"];
  if (setting === undefined || setting === "") return 20_240_611;
  if (setting === "random") return (Math.random() * 2 ** 31) | 0;
  const seed = Number(setting);
  if (!Number.isSafeInteger(seed)) throw new Error(`VIGIL_FUZZ_SEED must be an integer or "random", not ${JSON.stringify(setting)}`);
  return seed;
}

/**
 * The wall-clock budget of one time-bounded suite, in milliseconds. The default keeps the whole
 * harness within about a minute and a quarter on a two-core machine, where vitest runs the files
 * one after the other: three suites of 15 s, the spawned cases (about 20 s) and loading the stages.
 * `VIGIL_FUZZ_SECONDS` raises it for a longer campaign or lowers it while developing.
 */
export function suiteBudgetMs(): number {
  const setting = process.env["VIGIL_FUZZ_SECONDS"];
  const seconds = setting === undefined || setting === "" ? 15 : Number(setting);
  if (!(seconds > 0)) throw new Error(`VIGIL_FUZZ_SECONDS must be a positive number, not ${JSON.stringify(setting)}`);
  return seconds * 1000;
}

/**
 * An input still running after this long has hung: a bound on a hang (an input that takes
 * milliseconds here), not a speed target. How fast `vigilc` is, is measured by the benchmarks
 * (`npm run bench`); a test's verdict does not depend on the machine's load.
 */
export const PER_INPUT_MS = 60_000;

/** The vitest time limit of a fuzzing test: its budget, and room for shrinking a failure and for a slow machine. */
export function testTimeoutMs(budgetMs: number): number {
  return budgetMs + 90_000;
}

export interface CliResult {
  readonly argv: readonly string[];
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** Wall-clock time of the run, in milliseconds. */
  readonly ms: number;
}

/** Runs one `vigilc` command line in this process; `stdin` is what `--trace -` reads. */
export async function vigilcInProcess(argv: readonly string[], options: { cwd: string; stdin?: string }): Promise<CliResult> {
  let stdout = "";
  let stderr = "";
  const started = performance.now();
  const code = await run(argv, {
    stdout: (text) => {
      stdout += text;
    },
    stderr: (text) => {
      stderr += text;
    },
    colors: false,
    cwd: options.cwd,
    stdin: async () => options.stdin ?? "",
  });
  return { argv, code, stdout, stderr, ms: performance.now() - started };
}

/**
 * Counts of the exit codes a fuzzing test saw, printed at its end: a campaign where every input is
 * refused (exit 2) never reaches the checker or the engines, and this says so.
 */
export class ExitTally {
  private readonly counts = new Map<string, number>();
  add(label: string, result: CliResult): void {
    const key = `${label} ${result.code}`;
    this.counts.set(key, (this.counts.get(key) ?? 0) + 1);
  }
  count(label: string, code: number): number {
    return this.counts.get(`${label} ${code}`) ?? 0;
  }
  report(title: string, cases: number): void {
    const parts = [...this.counts].sort(([a], [b]) => a.localeCompare(b)).map(([key, n]) => `${key}: ${n}`);
    console.info(`${title}: ${cases} cases (seed ${fuzzSeed()}); exit codes ${parts.join(", ")}`);
  }
}

/** A JavaScript stack frame as Node prints it: a line of four spaces, `at`, and a location. */
const stackFrame = /^ {4}at /m;

/**
 * What is wrong with a run whatever its input, or undefined: an exit code outside {0, 1, 2}, a stack
 * trace or an internal error on stderr, or more time than one input may take.
 */
export function insanity(result: CliResult): string | undefined {
  if (![0, 1, 2].includes(result.code)) return `exit code ${result.code} is not 0, 1 or 2`;
  if (stackFrame.test(result.stderr)) return "stderr holds a stack trace";
  if (result.stderr.includes("internal error")) return "stderr reports an internal error";
  if (result.ms > PER_INPUT_MS) return `the run took ${Math.round(result.ms)} ms, past the ${PER_INPUT_MS} ms after which an input is taken to hang`;
  return undefined;
}

/** One fuzzing case on disk: a directory the case's files are written to, removed afterwards. */
export class CaseDir {
  readonly path: string;
  constructor(suite: string) {
    this.path = mkdtempSync(join(tmpdir(), `vigil-fuzz-${suite}-`));
  }
  write(name: string, content: string | Uint8Array): string {
    const file = join(this.path, name);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, content);
    return file;
  }
  remove(): void {
    rmSync(this.path, { recursive: true, force: true });
  }
}

let savedCases = 0;
/** Failing cases kept on disk per process: shrinking a failure calls the property many times. */
const MAX_SAVED_CASES = 200;

/**
 * Keeps the files of a failing case in a directory of its own under the system's temporary
 * directory and returns its path; the failure's message names it, so that the exact bytes can be
 * replayed with the built `vigilc` even when they do not print well.
 */
export function saveFailingCase(suite: string, files: Readonly<Record<string, string | Uint8Array>>, note: string): string {
  const base = join(tmpdir(), "vigil-fuzz-failures");
  mkdirSync(base, { recursive: true });
  if (savedCases >= MAX_SAVED_CASES) return `${base} (no more cases saved in this run)`;
  savedCases++;
  const dir = mkdtempSync(join(base, `${suite}-`));
  for (const [name, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), content);
  }
  writeFileSync(join(dir, "README.txt"), note + "\n");
  return dir;
}

/** A shell-quoted argument vector, for a command line a person can paste. */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, `'\\''`)}'`)).join(" ");
}

/**
 * Checks a run against {@link insanity}; on a failure, saves the case's files and throws an error
 * naming the command line, what went wrong, the directory of the saved case, and the start of stderr.
 */
export function expectSane(suite: string, result: CliResult, files: Readonly<Record<string, string | Uint8Array>>, stdin?: string): void {
  const problem = insanity(result);
  if (problem === undefined) return;
  failCase(suite, result, files, problem, stdin);
}

/** Saves a failing case and throws the error that reports it. */
export function failCase(suite: string, result: CliResult, files: Readonly<Record<string, string | Uint8Array>>, problem: string, stdin?: string): never {
  const command = `vigilc ${shellLine(result.argv)}${stdin !== undefined ? " < stdin.txt" : ""}`;
  const note =
    `${command}\n${problem} (exit ${result.code}, ${Math.round(result.ms)} ms)\n` +
    `The files of the case are in this directory under the names used by the command line.\n--- stderr ---\n${result.stderr.slice(0, 4000)}`;
  const saved = saveFailingCase(suite, { ...files, ...(stdin !== undefined ? { "stdin.txt": stdin } : {}) }, note);
  throw new Error(`${problem}\n  command: ${command}\n  exit: ${result.code}, ${Math.round(result.ms)} ms\n  case saved in: ${saved}\n  stderr: ${result.stderr.slice(0, 600)}`);
}

/**
 * Runs an asynchronous property for the given time (not for a number of runs), from the suite's
 * seed. fast-check's report of a failure carries the seed and the path that replay it
 * (`VIGIL_FUZZ_SEED=<seed>`, and the path in fc.assert's `path` option).
 */
export async function fuzzFor<T>(budgetMs: number, arbitrary: fc.Arbitrary<T>, property: (value: T) => Promise<void>): Promise<number> {
  let runs = 0;
  // The run in flight when the time is up is abandoned by fast-check, not awaited: it is awaited
  // here, so that it cleans up its files before the test ends.
  let inFlight: Promise<void> = Promise.resolve();
  const seed = fuzzSeed();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (value) => {
      runs++;
      inFlight = property(value);
      await inFlight;
    }),
    {
      seed,
      numRuns: 1_000_000,
      // Reported values can be megabytes of text; the saved case holds them in full.
      maxSkipsPerRun: 100,
      plugins: [fc.interruptAfterTimeLimit(budgetMs)],
    },
  );
  await inFlight.catch(() => undefined);
  return runs;
}
