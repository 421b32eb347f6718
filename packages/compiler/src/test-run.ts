import { dirname, resolve } from "node:path";
import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import type { SmtDecider, SmtDeciderOptions } from "@vigil/smt";
import { parseTestFile, type TestCase, type TestFile } from "@vigil/syntax";
import { readRegularFile } from "@vigil/trace";
import { compile } from "./compile.js";
import { engineNames, engineOf, type DecisionEngine, type EngineName } from "./engines.js";
import { runTest } from "./test-case.js";
import type { TraceText } from "./test-context.js";
import { coverageOf } from "./test-coverage.js";
import type { TestFileResult, TestResult } from "./test-results.js";

/**
 * The test runner of policies (`vigilc test`, the editor's test lenses): reads a test file, compiles
 * the policy it names, builds each test's run through the one pipeline (`judgeRun`: events written
 * by hand are read as a canonical trace, a trace file in any format), and holds every expectation
 * against each engine asked for: the forward engine, Z3 over the Figure 5 lowering, the online
 * monitor fed the run call by call (deciding each call before it runs, every prefix), and the SQL
 * engine in embedded DuckDB. Everything comes back as data; nothing is printed.
 *
 * Never a false pass: an expectation passes only when an engine asked for decided it. A verdict
 * an engine leaves undecided (a solver time-out, an amount SQL cannot hold exactly), an engine that
 * fails while judging, and a `decide` expectation when the monitor (the only engine that decides a
 * call before it runs) is not among the engines, each fail as "undecided on engine E: the reason".
 *
 * This file runs a test file; one test is run by `test-case.ts` (its run read by `test-input.ts`,
 * judged per engine by `test-engines.ts`, its expectations held by `test-expectations.ts`), and
 * `test-coverage.ts` sums what the tests cover of each rule.
 */

export interface TestRunOptions {
  /**
   * The engines that judge the expectations (default: all four), by name or made by the caller
   * (`createEngine`) to be kept across test files. Each judges every verdict expectation; `decide`
   * expectations are judged by the monitor, and fail as undecided on each engine asked for when the
   * monitor is not one of them.
   */
  readonly engines?: readonly (EngineName | DecisionEngine)[];
  /** Only the tests whose name this accepts. */
  readonly filter?: (name: string) => boolean;
  /** For `smt`: a decider to reuse (one solver call at a time); without one, one is made and disposed. */
  readonly decider?: SmtDecider;
  readonly smt?: SmtDeciderOptions;
  /**
   * How to read a file the tests name (the policy, trace files): an editor gives its unsaved
   * documents here. Default: the file on disk, regular files only.
   */
  readonly readText?: (file: string, what: string) => Promise<string | Diagnostic>;
  readonly signal?: AbortSignal;
}

/** The file name test files end with. */
export const TEST_FILE_EXTENSION = ".vigiltest";

/** Reads and runs a test file. Never throws on bad input; a test that cannot run is an `error`. */
export async function runTestFile(file: string, options: TestRunOptions = {}): Promise<TestFileResult> {
  const readText = options.readText ?? readRegularFile;
  const text = await readText(file, "test file");
  if (typeof text !== "string") return { file, diagnostics: [{ ...text, file }], tests: [], coverage: [] };
  return runTestSource(text, file, options);
}

/** Runs a test file's text (an editor's unsaved document); `file` locates the files it names. */
export async function runTestSource(text: string, file: string, options: TestRunOptions = {}): Promise<TestFileResult> {
  const parsed = parseTestFile(text);
  const base = { file, source: text };
  const located = (d: Diagnostic): Diagnostic => ({ ...d, file });
  const diagnostics = parsed.diagnostics.map(located);
  diagnostics.push(...duplicateNames(parsed).map(located));
  if (parsed.policy === undefined) {
    diagnostics.push(located(diagnostic("V2101", "the test file does not name its policy", { span: startSpan(), help: 'begin it with `policy "FILE.vigil"`, the policy beside it' })));
  }
  if (parsed.policy === undefined || diagnostics.some((d) => d.severity === "error")) return { ...base, diagnostics, tests: [], coverage: [] };

  const policyFile = resolve(dirname(file), parsed.policy.path);
  const readText = options.readText ?? readRegularFile;
  const source = await readText(policyFile, "policy");
  if (typeof source !== "string") {
    diagnostics.push(located(diagnostic("V2101", `the policy \`${parsed.policy.path}\` cannot be read: ${source.message}`, { span: parsed.policy.span })));
    return { ...base, policyFile, diagnostics, tests: [], coverage: [] };
  }
  const policy = compile(source, { file: policyFile });
  if (!policy.ok) {
    const errors = policy.diagnostics.filter((d) => d.severity === "error");
    diagnostics.push(
      located(
        diagnostic("V2101", `the policy \`${parsed.policy.path}\` has ${errors.length} error${errors.length === 1 ? "" : "s"}; fix ${errors.length === 1 ? "it" : "them"} first`, {
          span: parsed.policy.span,
          related: errors.slice(0, 5).flatMap((error) => (error.span !== undefined ? [{ message: `${error.code} ${error.message}`, file: policyFile, span: error.span }] : [])),
        }),
      ),
    );
    return { ...base, policyFile, policySource: source, diagnostics, tests: [], coverage: [] };
  }

  const statements = policy.program.policies.flatMap((p) => p.statements);
  // Each engine asked for, in the order `eval`, `smt`, `monitor`, `sql`: one the caller made is used
  // as it is; one named is made once for the file's tests (the solver's decider, when none is given,
  // on first use) and released at the end.
  const asked = options.engines ?? engineNames;
  const choice = { ...(options.decider !== undefined ? { decider: options.decider } : {}), ...(options.smt !== undefined ? { smt: options.smt } : {}) };
  const chosen = engineNames.flatMap((name) => {
    const engine = asked.find((each) => (typeof each === "string" ? each : each.name) === name);
    return engine === undefined ? [] : [engineOf({ ...choice, engine })];
  });
  const judges = chosen.map(({ engine }) => engine);
  const engines = judges.map((judge) => judge.name);
  const tests: TestResult[] = [];
  const traces = new Map<string, TraceText>();
  try {
    for (const test of parsed.tests) {
      if (options.filter !== undefined && !options.filter(test.name)) continue;
      // Between tests the event loop gets a turn: an editor's newer edit can abort a long run.
      await new Promise((resolve) => setImmediate(resolve));
      options.signal?.throwIfAborted();
      tests.push(await runTest(test, { file, policy, statements, engines, judges, readText, traces, ...(options.signal !== undefined ? { signal: options.signal } : {}) }));
    }
  } finally {
    for (const { engine, owned } of chosen) if (owned) await engine.dispose();
  }
  return { ...base, policyFile, policySource: source, diagnostics, tests, coverage: coverageOf(statements, tests) };
}

/** Two tests of a file with one name (V2106): a report could not tell them apart. */
function duplicateNames(file: TestFile): Diagnostic[] {
  const seen = new Map<string, TestCase>();
  const problems: Diagnostic[] = [];
  for (const test of file.tests) {
    const first = seen.get(test.name);
    if (first === undefined) seen.set(test.name, test);
    else problems.push(diagnostic("V2106", `a test named \`${test.name}\` is already in this file`, { span: test.nameSpan, related: [{ message: "the first test of that name", span: first.nameSpan }] }));
  }
  return problems;
}

function startSpan(): Span {
  return { start: 0, end: 0, line: 1, column: 1, endLine: 1, endColumn: 1 };
}
