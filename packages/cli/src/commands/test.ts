import { watch, type FSWatcher } from "node:fs";
import { stat } from "node:fs/promises";
import { dirname, isAbsolute, relative, resolve } from "node:path";
import type { Diagnostic, EngineName, TestFileResult } from "@vigil/compiler";
import { InvalidArgumentError, Option, type Command } from "commander";
import { renderDiagnostic } from "../reports/render.js";
import { coveragePercent, coverageRows, renderCoverage, renderHuman, renderJunit, renderSummary, testReportJson, totalsOf } from "../reports/test-report.js";
import type { CommandContext } from "./context.js";
import { EXIT_INPUT_ERROR, EXIT_SAFE, EXIT_UNSAFE, InputError, loadCompiler } from "./shared.js";

/**
 * `vigilc test [PATH…]`: runs the policy tests (`*.vigiltest`) found under the paths, every
 * expectation judged by each engine `--engine` names (all four by default); what an engine named
 * cannot decide fails as undecided, never passes. Exit 0 when all pass, 1 when one fails (or
 * coverage is below `--threshold`), 2 when a test file, its policy or a run cannot be read.
 */
export function registerTest(program: Command, context: CommandContext): void {
  program
    .command("test")
    .description("run the policy tests (*.vigiltest) under the paths: expected verdicts, witnesses and monitor decisions, on every engine")
    .argument("[paths...]", "test files, or directories to search for *.vigiltest files", ["."])
    .addOption(new Option("--engine <engines>", "the engines that judge every expectation, comma-separated: eval, smt, monitor, sql, or all (decide lines need monitor; what an engine cannot decide fails as undecided)").default("all"))
    .option("--filter <regex>", "run only the tests whose name matches this regular expression")
    .addOption(new Option("--format <format>", "report format").choices(["human", "json", "junit"]).default("human"))
    .option("--coverage", "print each rule's coverage: violated by a test, held non-vacuously by one, patterns that matched nothing")
    .option("--threshold <percent>", "fail (exit 1) when fewer than this percentage of rules are fully covered", parsePercent)
    .option("--why", "for each test, each rule's verdict and on which events its trigger and patterns matched")
    .option("-w, --watch", "run again whenever a test file, a policy or a trace under test changes")
    .action((paths: string[], options: TestOptions) => test(context, paths, options));
}

interface TestOptions {
  engine: string;
  filter?: string;
  format: "human" | "json" | "junit";
  coverage?: boolean;
  threshold?: number;
  why?: boolean;
  watch?: boolean;
}

function parsePercent(text: string): number {
  const value = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text.trim()) || value > 100) throw new InvalidArgumentError("a percentage from 0 to 100");
  return value;
}

async function test(context: CommandContext, paths: readonly string[], options: TestOptions): Promise<void> {
  const engines = parseEngines(context, options.engine);
  const filter = parseFilter(context, options.filter);
  const files = await findTestFiles(context, paths);
  if (!options.watch) {
    context.exitCode = (await runOnce(context, files, options, engines, filter)).code;
    return;
  }
  await watchAndRun(context, paths, files, options, engines, filter);
}

function parseEngines(context: CommandContext, text: string): readonly EngineName[] {
  const known: readonly EngineName[] = ["eval", "smt", "monitor", "sql"];
  const words = text.split(",").map((word) => word.trim()).filter((word) => word !== "");
  if (words.includes("all")) return known;
  const unknown = words.filter((word) => !(known as readonly string[]).includes(word));
  if (unknown.length > 0 || words.length === 0) {
    context.io.stderr(`error: --engine takes eval, smt, monitor, sql or all (comma-separated), not \`${text}\`\n`);
    throw new InputError();
  }
  return words as EngineName[];
}

function parseFilter(context: CommandContext, text: string | undefined): ((name: string) => boolean) | undefined {
  if (text === undefined) return undefined;
  try {
    const pattern = new RegExp(text, "u");
    return (name) => pattern.test(name);
  } catch (error) {
    context.io.stderr(`error: --filter is not a valid regular expression: ${(error as Error).message}\n`);
    throw new InputError();
  }
}

/** The test files the paths name: files as given, directories searched (not `node_modules`, not hidden directories). */
async function findTestFiles(context: CommandContext, paths: readonly string[]): Promise<string[]> {
  const { TEST_FILE_EXTENSION } = await loadCompiler();
  const found: string[] = [];
  for (const path of paths) {
    const absolute = resolve(context.io.cwd, path);
    const info = await stat(absolute).catch(() => undefined);
    if (info === undefined) {
      context.io.stderr(`error: \`${path}\` does not exist\n  help: give test files (*${TEST_FILE_EXTENSION}) or directories holding them\n`);
      throw new InputError();
    }
    if (info.isFile()) {
      found.push(absolute);
      continue;
    }
    const { glob } = await import("tinyglobby");
    const matches = await glob(`**/*${TEST_FILE_EXTENSION}`, { cwd: absolute, absolute: true, onlyFiles: true, ignore: ["**/node_modules/**", "**/.*/**"] });
    found.push(...matches.sort());
  }
  const unique = [...new Set(found)];
  if (unique.length === 0) {
    context.io.stderr(`error: no test files (*${TEST_FILE_EXTENSION}) under ${paths.map((p) => `\`${p}\``).join(", ")}\n  help: see docs/testing.md for how to write one beside a policy\n`);
    throw new InputError();
  }
  return unique;
}

/** Runs every file once and prints the report; returns the exit code and the results. */
async function runOnce(
  context: CommandContext,
  files: readonly string[],
  options: TestOptions,
  engines: readonly EngineName[],
  filter: ((name: string) => boolean) | undefined,
): Promise<{ code: number; results: readonly TestFileResult[] }> {
  const { createEngine, runTestFile } = await loadCompiler();
  const started = performance.now();
  // One engine of each kind for every file: the solver's decider is made once, on first use.
  const judges = engines.map((name) => createEngine(name, { smt: { timeoutMs: 30_000 } }));
  const results: TestFileResult[] = [];
  try {
    for (const file of files) results.push(await runTestFile(file, { engines: judges, ...(filter !== undefined ? { filter } : {}) }));
  } finally {
    if (context.io.exitsAfterRun !== true) for (const judge of judges) await judge.dispose();
  }
  const totals = totalsOf(results, performance.now() - started);
  const wantsCoverage = options.coverage === true || options.threshold !== undefined;
  const rows = wantsCoverage ? coverageRows(results) : undefined;
  const { io, colors } = context;
  const cwd = io.cwd;
  if (options.format === "json") io.stdout(JSON.stringify(testReportJson(results, totals, rows, cwd), null, 2) + "\n");
  else if (options.format === "junit") io.stdout(renderJunit(results, totals, cwd));
  else {
    io.stdout(renderHuman(results, { why: options.why === true, cwd }, colors));
    if (rows !== undefined) io.stdout(renderCoverage(rows, policySources(results), cwd, colors));
    io.stdout(renderSummary(totals, colors));
  }
  printProblems(context, results);
  return { code: exitCodeOf(context, totals, options.threshold, rows), results };
}

function exitCodeOf(context: CommandContext, totals: ReturnType<typeof totalsOf>, threshold: number | undefined, rows: ReturnType<typeof coverageRows> | undefined): number {
  if (totals.errors > 0) return EXIT_INPUT_ERROR;
  if (totals.failed > 0) return EXIT_UNSAFE;
  if (threshold !== undefined && rows !== undefined && coveragePercent(rows) < threshold) {
    context.io.stderr(`error: ${coveragePercent(rows).toFixed(1)}% of the rules are covered, below the threshold of ${threshold}%\n`);
    return EXIT_UNSAFE;
  }
  return EXIT_SAFE;
}

function policySources(results: readonly TestFileResult[]): Map<string, string> {
  const sources = new Map<string, string>();
  for (const result of results) if (result.policyFile !== undefined && result.policySource !== undefined) sources.set(result.policyFile, result.policySource);
  return sources;
}

/** The diagnostics of the files and of the tests that could not run, with code frames, on standard error. */
function printProblems(context: CommandContext, results: readonly TestFileResult[]): void {
  const sources = policySources(results);
  for (const result of results) if (result.source !== undefined) sources.set(result.file, result.source);
  const shown = (d: Diagnostic): Diagnostic => (d.file !== undefined ? { ...d, file: displayName(context.io.cwd, d.file) } : d);
  const displaySources = new Map([...sources].map(([file, text]) => [displayName(context.io.cwd, file), text]));
  for (const result of results) {
    const diagnostics = [...result.diagnostics, ...result.tests.flatMap((t) => t.diagnostics)];
    for (const d of diagnostics) context.io.stderr(renderDiagnostic(shown(d), displaySources, context.colors) + "\n\n");
  }
}

function displayName(cwd: string, file: string): string {
  const path = relative(cwd, file);
  return path.startsWith("..") || isAbsolute(path) ? file : path;
}

/**
 * Runs the tests, then again whenever a file they read changes (the test files, their policies,
 * their traces, and new test files under the directories given), until interrupted.
 */
async function watchAndRun(context: CommandContext, paths: readonly string[], initial: readonly string[], options: TestOptions, engines: readonly EngineName[], filter: ((name: string) => boolean) | undefined): Promise<void> {
  const { io } = context;
  let files = [...initial];
  let watchers: FSWatcher[] = [];
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const rewatch = (results: readonly TestFileResult[]): void => {
    for (const watcher of watchers) watcher.close();
    const directories = new Set<string>();
    for (const path of paths) directories.add(resolve(io.cwd, path));
    for (const result of results) {
      directories.add(dirname(result.file));
      if (result.policyFile !== undefined) directories.add(dirname(result.policyFile));
    }
    watchers = [...directories].flatMap((directory) => {
      try {
        return [watch(directory, { recursive: true }, () => schedule())];
      } catch {
        return [];
      }
    });
  };
  const round = async (): Promise<void> => {
    try {
      files = await findTestFiles(context, paths);
    } catch (error) {
      if (!(error instanceof InputError)) throw error;
    }
    const { code, results } = await runOnce(context, files, options, engines, filter);
    // Stopped, the command exits with the last round's status.
    context.exitCode = code;
    rewatch(results);
    io.stderr(`[watch] ${code === EXIT_SAFE ? "all passed" : code === EXIT_UNSAFE ? "some failed" : "some could not run"}; waiting for changes (Ctrl-C to stop)\n`);
  };
  const schedule = (): void => {
    if (timer !== undefined) clearTimeout(timer);
    timer = setTimeout(() => {
      running = running.then(async () => {
        io.stdout("\n[watch] a file changed; running again\n\n");
        await round();
      });
    }, 150);
  };
  await round();
  await new Promise<void>((resolveStop) => {
    const stop = (): void => {
      for (const watcher of watchers) watcher.close();
      if (timer !== undefined) clearTimeout(timer);
      resolveStop();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  await running;
}
