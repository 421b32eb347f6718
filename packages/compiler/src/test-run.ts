import { dirname, resolve } from "node:path";
import { ruleId, type CheckedStatement } from "@vigil/checker";
import { closestName, diagnostic, formatDateTime, type Diagnostic, type RelatedInformation, type Span } from "@vigil/diagnostics";
import { verdictOf, type CallDecision, type PatternMatchCount, type TriggerCount } from "@vigil/engine";
import type { SmtDecider, SmtDeciderOptions } from "@vigil/smt";
import { formatDuration, parseTestFile, type DecisionExpectation, type Expectation, type RuleReference, type TestCase, type TestFile, type VerdictExpectation } from "@vigil/syntax";
import { readRegularFile, splitRunFile, type JsonValue, type RunFile, type TraceEvent } from "@vigil/trace";
import { reportOf, type CheckReport } from "./check.js";
import { compile, type CompiledPolicy } from "./compile.js";
import { judgeRun, type RunJudgement, type RunSource } from "./judge-run.js";
import { engineNames, engineOf, type DecisionEngine, type EngineName, type MonitorEngineRun } from "./engines.js";

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

/** An expectation that did not hold, on the engines that say the same about it. */
export interface ExpectationFailure {
  readonly expectation: Expectation;
  readonly engines: readonly EngineName[];
  /** The rule it concerns, as `policy.name`. */
  readonly rule?: string;
  /** What the test expects, and what the engines found, in the test file's own words. */
  readonly expected: string;
  readonly actual: string;
  /** The events worth showing beside the difference (expected and actual witnesses, breaking events), ascending. */
  readonly positions: readonly number[];
}

/** Why a rule's verdict on a test's run is what it is. */
export interface RuleWhy {
  readonly rule: string;
  readonly holds: boolean;
  readonly witnesses: readonly number[];
  readonly brokenBy?: readonly number[];
  readonly undecided?: string;
  /** On how many events its trigger held (absent for `always`). */
  readonly triggers?: TriggerCount;
  /** Per pattern of the rule: on which events it matched. */
  readonly patterns: readonly PatternMatchCount[];
}

export interface TestResult {
  readonly name: string;
  readonly doc?: string;
  readonly span: Span;
  /** `error` when the test could not run (its diagnostics say why): bad input, not a failure. */
  readonly outcome: "passed" | "failed" | "error";
  readonly failures: readonly ExpectationFailure[];
  readonly diagnostics: readonly Diagnostic[];
  /** The run's events, for showing the ones a failure names. */
  readonly events: readonly TraceEvent[];
  /** For events written by hand: where each event's line is in the test file, by position (grounded events share their call's line). */
  readonly eventSpans: ReadonlyMap<number, Span>;
  /** The forward engine's verdict on every rule, with its why. */
  readonly rules: readonly RuleWhy[];
  /**
   * What the test's passing expectations cover: the rules it expects violated and are, and those it
   * expects to hold, hold, and whose trigger matched an event (a pass that is not vacuous).
   */
  readonly covers: { readonly violated: readonly string[]; readonly heldNonVacuously: readonly string[] };
  readonly durationMs: number;
}

/** What the tests of a policy cover of one rule. */
export interface RuleCoverage {
  readonly policy: string;
  readonly name: string;
  readonly form: CheckedStatement["form"];
  readonly span: Span;
  /** The tests in which it is expected violated, and is. */
  readonly violatedBy: readonly string[];
  /**
   * The tests in which it is expected to hold, holds, and its trigger matched (a pass that is not
   * vacuous). `undefined` when no such pass can exist: `abs` (its trigger is its violation) and
   * `always` (no trigger).
   */
  readonly heldBy?: readonly string[];
  /** Per pattern: on how many events of all the tests it matched. */
  readonly patterns: readonly { readonly role: PatternMatchCount["role"]; readonly span: Span; readonly matched: number }[];
  /** Violated by a test and, where it can be, held non-vacuously by one. */
  readonly covered: boolean;
}

export interface TestFileResult {
  readonly file: string;
  /** The test file's text, when it was read (for showing expectations). */
  readonly source?: string;
  /** The policy file the tests name, resolved. */
  readonly policyFile?: string;
  /** The policy's text (for showing rules and patterns), when it was read. */
  readonly policySource?: string;
  /** Problems with the file as a whole (its syntax, its policy): none of its tests ran when one is an error. */
  readonly diagnostics: readonly Diagnostic[];
  readonly tests: readonly TestResult[];
  /** Every rule of the policy, with what the tests that ran cover of it. */
  readonly coverage: readonly RuleCoverage[];
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

interface TestContext {
  readonly file: string;
  readonly policy: CompiledPolicy;
  readonly statements: readonly CheckedStatement[];
  readonly engines: readonly EngineName[];
  /** The engines asked for, in the order they judge. */
  readonly judges: readonly DecisionEngine[];
  readonly readText: (file: string, what: string) => Promise<string | Diagnostic>;
  /** The trace files read so far by the file's tests, each text cut into its runs once. */
  readonly traces: Map<string, TraceText>;
  readonly signal?: AbortSignal;
}

/** A trace file's text, and its runs when it holds several. */
interface TraceText {
  readonly text: string;
  readonly runFile?: RunFile;
}

/** What one engine says of each rule on a run: its witnesses, and for `until` the breaking events. */
interface EngineVerdicts {
  readonly engine: EngineName;
  readonly byRule: ReadonlyMap<string, { readonly holds: boolean; readonly witnesses: readonly number[]; readonly brokenBy?: readonly number[]; readonly undecided?: string }>;
}

async function runTest(test: TestCase, context: TestContext): Promise<TestResult> {
  const started = performance.now();
  const located = (d: Diagnostic): Diagnostic => ({ ...d, file: d.file ?? context.file });
  const common = { name: test.name, ...(test.doc !== undefined ? { doc: test.doc } : {}), span: test.span };
  const errorResult = (diagnostics: readonly Diagnostic[], events: readonly TraceEvent[] = [], eventSpans: ReadonlyMap<number, Span> = new Map()): TestResult => ({
    ...common,
    outcome: "error",
    failures: [],
    diagnostics: diagnostics.map(located),
    events,
    eventSpans,
    rules: [],
    covers: { violated: [], heldNonVacuously: [] },
    durationMs: performance.now() - started,
  });

  const setup: Diagnostic[] = [];
  if (test.expectations.length === 0) setup.push(diagnostic("V2108", `the test \`${test.name}\` expects nothing, so it cannot fail`, { span: test.nameSpan, help: "add `expect RULE holds`, `expect RULE violated at N` or `decide N block`" }));
  const rules = resolveRules(test, context.statements, setup);
  if (test.input === undefined) {
    setup.push(diagnostic("V2103", `the test \`${test.name}\` has no run`, { span: test.nameSpan, help: 'give it `events { … }` or `trace "FILE"`' }));
    return errorResult(setup);
  }
  // A rule name that does not resolve does not stop the run being read: every problem of the test
  // is reported at once.
  const run = await readRun(test, context);
  if (run.judgement === undefined || run.judgement.report === undefined) return errorResult([...setup, ...run.diagnostics], run.judgement?.events ?? [], run.eventSpans);
  const events = run.judgement.events ?? [];
  setup.push(...positionProblems(test, events, rules, context.statements));
  if (setup.some((d) => d.severity === "error")) return errorResult([...setup, ...run.diagnostics], events, run.eventSpans);

  const report = run.judgement.report;
  const judged = await judgeWithEngines(context, events, report);
  const verdicts = judged.verdicts;

  const failures: ExpectationFailure[] = [];
  const named = new Set(test.expectations.flatMap((e) => (e.kind === "verdict" && typeof e.rule !== "string" ? [rules.get(e.rule)!] : [])));
  for (const expectation of test.expectations) {
    if (expectation.kind === "verdict") failures.push(...verdictFailures(expectation, rules, named, context.statements, verdicts));
    else failures.push(...decisionFailures(expectation, rules, context.engines, judged.monitor));
  }
  if (judged.monitor?.run !== undefined) failures.push(...judged.monitor.run.disagreements.map((message) => disagreement(test, message)));

  const why: RuleWhy[] = report.statements.map((verdict) => ({
    rule: ruleId(verdict),
    holds: verdict.holds,
    witnesses: verdict.witnesses,
    ...(verdict.brokenBy !== undefined ? { brokenBy: verdict.brokenBy } : {}),
    ...(verdict.undecided !== undefined ? { undecided: verdict.undecided } : {}),
    ...(verdict.triggers !== undefined ? { triggers: verdict.triggers } : {}),
    patterns: verdict.patterns ?? [],
  }));
  const failed = new Set(failures.map((failure) => `${String(test.expectations.indexOf(failure.expectation))} ${failure.rule ?? ""}`));
  const violated = new Set<string>();
  const heldNonVacuously = new Set<string>();
  test.expectations.forEach((expectation, index) => {
    if (expectation.kind !== "verdict") return;
    for (const rule of rulesOf(expectation, rules, named, context.statements)) {
      if (failed.has(`${index} ${rule}`)) continue;
      const verdict = why.find((w) => w.rule === rule)!;
      if (!expectation.holds && !verdict.holds) violated.add(rule);
      if (expectation.holds && verdict.holds && (verdict.triggers?.count ?? 0) > 0) heldNonVacuously.add(rule);
    }
  });
  return {
    ...common,
    outcome: failures.length === 0 ? "passed" : "failed",
    failures,
    diagnostics: [...setup, ...run.diagnostics].map(located),
    events,
    eventSpans: run.eventSpans,
    rules: why,
    covers: { violated: [...violated], heldNonVacuously: [...heldNonVacuously] },
    durationMs: performance.now() - started,
  };
}

/** The monitor's run of a test, or why it could not run. */
interface MonitorResult {
  readonly run?: MonitorEngineRun;
  readonly error?: string;
}

/**
 * Each engine asked for, in the order `eval`, `smt`, `monitor`, `sql`, judges the run. The forward
 * engine's verdicts are the judgement's own (the run was read through it); the others judge the
 * events read. An engine that fails leaves every rule undecided, with its error as the reason: a
 * failure of each expectation, never a pass.
 */
async function judgeWithEngines(context: TestContext, events: readonly TraceEvent[], report: CheckReport): Promise<{ verdicts: EngineVerdicts[]; monitor?: MonitorResult }> {
  const verdicts: EngineVerdicts[] = [];
  let monitor: MonitorResult | undefined;
  const signal = context.signal !== undefined ? { signal: context.signal } : {};
  for (const judge of context.judges) {
    const engine = judge.name;
    try {
      // The forward engine's run is the one the run was read through.
      if (engine === "eval") {
        verdicts.push(verdictsOf("eval", report));
        continue;
      }
      const run = judge.start(context.statements, signal);
      for (const event of events) run.step(event);
      const outcomes = await run.finish();
      // The monitor's run (`createEngine("monitor")`) also holds its decision on each call: what `decide` expects.
      if (engine === "monitor") monitor = { run: run as MonitorEngineRun };
      // The event that broke each `until` witness comes from the forward run each run keeps beside
      // it: without it, a `broken by` expectation would go unchecked on that engine.
      verdicts.push(verdictsOf(engine, reportOf(context.statements, outcomes, engine, run.observations)));
    } catch (error) {
      // A cancelled run is cancelled, not judged.
      if (context.signal?.aborted === true) throw error;
      const reason = `the engine failed while judging: ${error instanceof Error ? error.message : String(error)}`;
      if (engine === "monitor") monitor = { error: reason };
      verdicts.push({ engine, byRule: new Map(context.statements.map((s) => [ruleId(s), { holds: false, witnesses: [], undecided: reason }])) });
    }
  }
  return { verdicts, ...(monitor !== undefined ? { monitor } : {}) };
}

/** The statement each rule reference of a test names (`policy.name` or a name one policy has); problems are V2102. */
function resolveRules(test: TestCase, statements: readonly CheckedStatement[], problems: Diagnostic[]): Map<RuleReference, string> {
  const resolved = new Map<RuleReference, string>();
  const references = test.expectations.flatMap((e) => (e.kind === "verdict" ? (typeof e.rule === "string" ? [] : [e.rule]) : (e.rules ?? [])));
  for (const reference of references) {
    const candidates = statements.filter((s) => s.name === reference.name && (reference.policy === undefined || s.policy === reference.policy));
    if (candidates.length === 1) {
      resolved.set(reference, ruleId(candidates[0]!));
      continue;
    }
    const written = reference.policy === undefined ? reference.name : ruleId({ policy: reference.policy, name: reference.name });
    if (candidates.length > 1) {
      problems.push(diagnostic("V2102", `\`${written}\` names a rule of several policies: ${candidates.map((s) => `\`${ruleId(s)}\``).join(", ")}`, { span: reference.span, help: "write the policy's name before the rule's" }));
      continue;
    }
    const known = statements.map((s) => (reference.policy === undefined ? s.name : ruleId(s)));
    const suggestion = closestName(written, known);
    problems.push(
      diagnostic("V2102", `the policy has no rule \`${written}\``, {
        span: reference.span,
        help: suggestion !== undefined ? `did you mean \`${suggestion}\`?` : `its rules are ${known.map((n) => `\`${n}\``).join(", ") || "none"}`,
        ...(suggestion !== undefined ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span: reference.span, newText: suggestion }] } } : {}),
      }),
    );
  }
  return resolved;
}

/** A test's run read through the one pipeline, and where its hand-written events are in the test file. */
interface ReadRun {
  readonly judgement?: RunJudgement;
  readonly diagnostics: readonly Diagnostic[];
  readonly eventSpans: ReadonlyMap<number, Span>;
}

async function readRun(test: TestCase, context: TestContext): Promise<ReadRun> {
  const input = test.input!;
  const options = { keepEvents: true, ...(context.signal !== undefined ? { signal: context.signal } : {}) } as const;
  if (input.kind === "trace") {
    const traceFile = resolve(dirname(context.file), input.path);
    // Read for every test (an editor's reader lets a newer edit abort the run here); cut into its runs once per text.
    const text = await context.readText(traceFile, "trace");
    const seen = context.traces.get(traceFile);
    let runFile: RunFile | undefined;
    if (typeof text === "string") {
      if (seen !== undefined && seen.text === text) runFile = seen.runFile;
      else {
        runFile = splitRunFile(text);
        context.traces.set(traceFile, { text, ...(runFile !== undefined ? { runFile } : {}) });
      }
    }
    const noRun = (d: Diagnostic): ReadRun => ({ diagnostics: [d], eventSpans: new Map() });
    if (typeof text !== "string") return noRun(diagnostic("V2104", `the trace \`${input.path}\` cannot be read: ${text.message}`, { span: input.pathSpan }));
    const names = runFile?.runs.map((run) => run.name) ?? [];
    if (input.run === undefined && runFile !== undefined) {
      return noRun(
        diagnostic("V2104", `the trace \`${input.path}\` holds ${names.length} run${names.length === 1 ? "" : "s"} (τ-bench); a test reads one`, {
          span: input.pathSpan,
          help: `name it: \`trace ${JSON.stringify(input.path)} run ${JSON.stringify(names[0] ?? "task 0 trial 0")}\` (runs are named by task and trial, as \`vigilc check --run\` names them)`,
        }),
      );
    }
    let source: RunSource = { file: traceFile, text };
    if (input.run !== undefined) {
      const span = input.runSpan ?? input.span;
      if (runFile === undefined) {
        return noRun(diagnostic("V2104", `\`run\` chooses one run of a file holding several (a τ-bench results file); the trace \`${input.path}\` is one run`, { span, help: "drop `run \"…\"`" }));
      }
      const chosen = runFile.runs.find((run) => run.name === input.run);
      if (chosen === undefined) {
        const near = closestName(input.run, names);
        return noRun(
          diagnostic("V2104", `the trace \`${input.path}\` has no run named \`${input.run}\``, {
            span,
            help: near !== undefined ? `did you mean \`${near}\`?` : names.length > 0 ? `its runs are named by task and trial, from \`${names[0]}\` to \`${names.at(-1)}\`` : "it holds no run",
            ...(near !== undefined ? { fix: { title: `replace with \`${near}\``, edits: [{ span, newText: JSON.stringify(near) }] } } : {}),
          }),
        );
      }
      source = { file: traceFile, text: chosen.text, run: chosen.name, origin: chosen.origin };
    }
    const judgement = await judgeRun(context.policy, source, { ...options, ...(input.run !== undefined ? { traceFormat: "tau-bench" as const } : {}), ...(input.messages ? { messages: true } : {}) });
    const problems = judgement.traceDiagnostics.filter((d) => d.severity === "error");
    const where = input.run !== undefined ? `the run \`${input.run}\` of the trace \`${input.path}\`` : `the trace \`${input.path}\``;
    const diagnostics = problems.length > 0 ? [diagnostic("V2104", `${where} has ${problems.length} error${problems.length === 1 ? "" : "s"}`, { span: input.pathSpan, related: problems.slice(0, 5).flatMap(relatedOf) })] : [];
    return { ...(problems.length === 0 ? { judgement } : {}), diagnostics, eventSpans: new Map() };
  }
  // Events written by hand are a canonical trace, one line per event: line k is the k-th event.
  // The arguments go in as the JSON text written, so numbers keep their digits (an integer beyond
  // 2^53 is the reader's error, not a rounding). An event's `at` is its `time`, in epoch
  // milliseconds (an offset from the run's start is one from epoch 0).
  const text = input.events
    .map((event) => {
      const time = event.time !== undefined ? `,"time":${event.time}` : "";
      if (event.kind === "message") return `{"kind":"message","action":${JSON.stringify(event.action)},"args":${event.argsJson}${time}}`;
      const status = event.pending ? `,"status":null` : event.status !== undefined ? `,"status":${JSON.stringify(event.status)}` : "";
      const output = event.output !== undefined ? `,"output":${JSON.stringify(event.output)}` : "";
      return `{"action":${JSON.stringify(event.action)},"args":${event.argsJson}${status}${output}${time}}`;
    })
    .join("\n");
  const judgement = await judgeRun(context.policy, { file: context.file, text }, { ...options, traceFormat: "jsonl", ground: input.ground });
  const spanOfLine = (line: number | undefined): Span | undefined => (line === undefined ? undefined : input.events[line - 1]?.span);
  const eventSpans = new Map<number, Span>();
  for (const event of judgement.events ?? []) {
    const span = spanOfLine(event.source?.line);
    if (span !== undefined) eventSpans.set(event.position, span);
  }
  // The reader's problems are located at the event written by hand that caused them.
  const moved = judgement.traceDiagnostics.map((d) => {
    const span = spanOfLine(d.span?.line);
    const { file: _file, ...rest } = d;
    return span !== undefined ? { ...rest, span } : { ...rest, span: input.span };
  });
  const errors = moved.filter((d) => d.severity === "error");
  const diagnostics = errors.length > 0 ? moved.map((d) => (d.severity === "error" ? { ...d, code: "V2104" as const, message: `this event cannot be read: ${d.message}` } : d)) : moved.filter((d) => d.severity !== "info");
  return { ...(errors.length === 0 ? { judgement } : {}), diagnostics, eventSpans };
}

function relatedOf(d: Diagnostic): RelatedInformation[] {
  return d.span === undefined ? [] : [{ message: `${d.code} ${d.message}`, span: d.span, ...(d.file !== undefined ? { file: d.file } : {}) }];
}

/** Positions beyond the run, `broken by` on a rule that is not `until`, `decide` on an event that is not a call. */
function positionProblems(test: TestCase, events: readonly TraceEvent[], rules: ReadonlyMap<RuleReference, string>, statements: readonly CheckedStatement[]): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const beyond = (position: number, span: Span): void => {
    if (position > events.length) problems.push(diagnostic("V2105", `the run has ${events.length} event${events.length === 1 ? "" : "s"}; there is no event ${position}`, { span }));
  };
  for (const expectation of test.expectations) {
    if (expectation.kind === "decision") {
      beyond(expectation.position, expectation.positionSpan);
      const event = events[expectation.position - 1];
      if (event !== undefined && isMessage(event)) problems.push(diagnostic("V2105", `event ${expectation.position} is a message (\`${event.action}\`), not a call: the monitor decides calls only`, { span: expectation.positionSpan }));
      const from = event?.source?.groundedFrom;
      if (from !== undefined) {
        problems.push(
          diagnostic("V2105", `event ${expectation.position} is a command of the shell call at event ${from}: the call is decided as a whole, before any of its commands runs`, {
            span: expectation.positionSpan,
            fix: { title: `decide the call at event ${from}`, edits: [{ span: expectation.positionSpan, newText: String(from) }] },
          }),
        );
      }
      continue;
    }
    for (const witness of expectation.witnesses ?? []) {
      beyond(witness.position, witness.span);
      if (witness.brokenBy !== undefined) beyond(witness.brokenBy, witness.brokenBySpan ?? witness.span);
    }
    const rule = typeof expectation.rule === "string" ? undefined : rules.get(expectation.rule);
    const form = statements.find((s) => ruleId(s) === rule)?.form;
    if (form !== undefined && form !== "until" && expectation.witnesses?.some((w) => w.brokenBy !== undefined)) {
      problems.push(diagnostic("V2107", `\`${rule}\` is ${/^[aeiou]/.test(form) ? "an" : "a"} \`${form}\` rule: only an \`until\` has a breaking event`, { span: expectation.span, help: "drop `broken by N`" }));
    }
  }
  return problems;
}

function verdictsOf(engine: EngineName, report: CheckReport): EngineVerdicts {
  const byRule = new Map<string, { holds: boolean; witnesses: readonly number[]; brokenBy?: readonly number[]; undecided?: string }>();
  for (const verdict of report.statements) {
    byRule.set(ruleId(verdict), {
      holds: verdict.holds,
      witnesses: verdict.witnesses,
      ...(verdict.brokenBy !== undefined ? { brokenBy: verdict.brokenBy } : {}),
      ...(verdict.undecided !== undefined ? { undecided: verdict.undecided } : {}),
    });
  }
  return { engine, byRule };
}

/** A message of the conversation: an event the monitor observes, never decides. */
function isMessage(event: TraceEvent): boolean {
  return event.kind === "message";
}

function disagreement(test: TestCase, message: string): ExpectationFailure {
  return { expectation: { kind: "verdict", rule: "all", holds: true, span: test.nameSpan }, engines: ["monitor"], expected: "the monitor agrees with the finished run", actual: message, positions: [] };
}

/** The rules a verdict expectation speaks of. */
function rulesOf(expectation: VerdictExpectation, rules: ReadonlyMap<RuleReference, string>, named: ReadonlySet<string>, statements: readonly CheckedStatement[]): string[] {
  if (typeof expectation.rule !== "string") return [rules.get(expectation.rule)!];
  const all = statements.map(ruleId);
  return expectation.rule === "all" ? all : all.filter((rule) => !named.has(rule));
}

function verdictFailures(
  expectation: VerdictExpectation,
  rules: ReadonlyMap<RuleReference, string>,
  named: ReadonlySet<string>,
  statements: readonly CheckedStatement[],
  verdicts: readonly EngineVerdicts[],
): ExpectationFailure[] {
  const failures: ExpectationFailure[] = [];
  for (const rule of rulesOf(expectation, rules, named, statements)) {
    // Engines that found the same are reported together.
    const groups = new Map<string, { engines: EngineName[]; positions: number[] }>();
    for (const { engine, byRule } of verdicts) {
      // An engine that says nothing of the rule has not decided it.
      const actual = byRule.get(rule) ?? { holds: false, witnesses: [], undecided: "the engine gave no verdict on this rule" };
      const problem = verdictProblem(expectation, actual, engine);
      if (problem === undefined) continue;
      const group = groups.get(problem) ?? { engines: [], positions: [...actual.witnesses, ...(actual.brokenBy ?? []).filter((p) => p > 0)] };
      group.engines.push(engine);
      groups.set(problem, group);
    }
    // With no engine to judge it, nothing decided the expectation.
    if (verdicts.length === 0) groups.set("undecided: no engine was asked to judge it", { engines: [], positions: [] });
    for (const [actual, group] of groups) {
      const expectedPositions = (expectation.witnesses ?? []).flatMap((w) => [w.position, ...(w.brokenBy !== undefined ? [w.brokenBy] : [])]);
      failures.push({
        expectation,
        engines: group.engines,
        rule,
        expected: expectedText(expectation),
        actual,
        positions: [...new Set([...group.positions, ...expectedPositions])].sort((a, b) => a - b),
      });
    }
  }
  return failures;
}

/** What an engine found, in the words of an expectation, when it is not what the expectation says; undefined when it is. */
function verdictProblem(expectation: VerdictExpectation, actual: { holds: boolean; witnesses: readonly number[]; brokenBy?: readonly number[]; undecided?: string }, engine: EngineName): string | undefined {
  if (actual.undecided !== undefined) return `undecided on engine ${engine}: ${actual.undecided}`;
  const found = actual.holds ? "holds" : `violated at ${witnessList(actual.witnesses, actual.brokenBy)}`;
  if (expectation.holds) return actual.holds ? undefined : found;
  if (actual.holds) return found;
  if (expectation.witnesses === undefined) return undefined;
  const expected = [...expectation.witnesses].sort((a, b) => a.position - b.position);
  const same = expected.length === actual.witnesses.length && expected.every((w, i) => w.position === actual.witnesses[i]);
  if (!same) return found;
  // The breaking events are compared where the test gives them and the engine reports them.
  const broken = actual.brokenBy !== undefined && expected.some((w, i) => w.brokenBy !== undefined && w.brokenBy !== actual.brokenBy![i]);
  return broken ? found : undefined;
}

function expectedText(expectation: VerdictExpectation): string {
  if (expectation.holds) return "holds";
  if (expectation.witnesses === undefined) return "violated";
  const sorted = [...expectation.witnesses].sort((a, b) => a.position - b.position);
  return `violated at ${sorted.map((w) => (w.brokenBy !== undefined ? `${w.position} broken by ${w.brokenBy}` : `${w.position}`)).join(", ")}`;
}

function witnessList(witnesses: readonly number[], brokenBy: readonly number[] | undefined): string {
  return witnesses.map((w, i) => (brokenBy !== undefined && (brokenBy[i] ?? 0) > 0 ? `${w} broken by ${brokenBy[i]}` : `${w}`)).join(", ");
}

function decisionFailures(expectation: DecisionExpectation, rules: ReadonlyMap<RuleReference, string>, engines: readonly EngineName[], monitor: MonitorResult | undefined): ExpectationFailure[] {
  const expectedRules = expectation.rules?.map((r) => rules.get(r)!).sort();
  const describe = (w: string, list: readonly string[] | undefined) => `${w}${list !== undefined && list.length > 0 ? ` by ${list.join(", ")}` : ""}`;
  const expected = `decide ${expectation.position} ${describe(expectation.decision, expectedRules)}`;
  const undecided = (engine: EngineName | undefined, reason: string): ExpectationFailure => ({
    expectation,
    engines: engine !== undefined ? [engine] : [],
    expected,
    actual: engine !== undefined ? `undecided on engine ${engine}: ${reason}` : `undecided: ${reason}`,
    positions: [expectation.position],
  });
  // Only the online monitor decides a call before it runs: without it, no engine asked for decides this.
  if (!engines.includes("monitor")) {
    const reason = "a decision before a call is the online monitor's; this engine judges the finished run only (add `--engine monitor`)";
    return engines.length > 0 ? engines.map((engine) => undecided(engine, reason)) : [undecided(undefined, "no engine was asked to judge it")];
  }
  if (monitor?.run === undefined) return [undecided("monitor", monitor?.error ?? "the monitor did not run")];
  const decided = monitor.run.decisions.get(expectation.position);
  if (decided === undefined) return [undecided("monitor", `the monitor made no decision at event ${expectation.position}`)];
  // The words a test uses are the audit log's: `warn` is a call let through with a warning.
  const word = verdictOf(decided.decision, decided.violations);
  const reported = [...new Set(decided.violations.map(ruleId))].sort();
  const sameRules = expectedRules === undefined || (expectedRules.length === reported.length && expectedRules.every((r, i) => r === reported[i]));
  if (word === expectation.decision && sameRules) return [];
  return [
    {
      expectation,
      engines: ["monitor"],
      expected,
      actual: `decide ${expectation.position} ${describe(word, reported)}${decided.error !== undefined ? ` (${decided.error})` : ""}`,
      positions: [...new Set([expectation.position, ...decided.violations.flatMap((v) => v.witnesses)])].sort((a, b) => a - b),
    },
  ];
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

/**
 * What the tests that ran cover of each rule: violated as expected, held non-vacuously as expected,
 * and the patterns that matched some event. Only expectations that passed count.
 */
function coverageOf(statements: readonly CheckedStatement[], results: readonly TestResult[]): RuleCoverage[] {
  return statements.map((statement, index) => {
    const rule = ruleId(statement);
    const violatedBy = results.filter((result) => result.covers.violated.includes(rule)).map((result) => result.name);
    const heldBy = results.filter((result) => result.covers.heldNonVacuously.includes(rule)).map((result) => result.name);
    const holdApplies = statement.form !== "abs" && statement.form !== "always";
    return {
      policy: statement.policy,
      name: statement.name,
      form: statement.form,
      span: statement.span,
      violatedBy,
      ...(holdApplies ? { heldBy } : {}),
      patterns: statementPatternsMatched(results, index),
      covered: violatedBy.length > 0 && (!holdApplies || heldBy.length > 0),
    };
  });
}

function statementPatternsMatched(results: readonly TestResult[], index: number): RuleCoverage["patterns"] {
  const totals: { role: PatternMatchCount["role"]; span: Span; matched: number }[] = [];
  for (const result of results) {
    const why = result.rules[index];
    if (why === undefined) continue;
    why.patterns.forEach((pattern, i) => {
      totals[i] ??= { role: pattern.role, span: pattern.span, matched: 0 };
      totals[i]!.matched += pattern.count;
    });
  }
  return totals;
}

/**
 * An event as a test file writes it by hand (`action {key: value} status output "…" at T`): what a
 * failing test shows, ready to be pasted into an `events { … }` block.
 */
export function eventLine(event: Pick<TraceEvent, "kind" | "action" | "args" | "status" | "output" | "time">): string {
  const text = event.args["text"];
  const time = event.time !== undefined ? ` at ${timeText(event.time)}` : "";
  if (event.kind === "message" && typeof text === "string" && (event.action === "user_message" || event.action === "agent_message")) {
    return `${event.action === "user_message" ? "user" : "agent"} ${JSON.stringify(text)}${time}`;
  }
  const action = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(event.action) && !statusWords.has(event.action) ? event.action : JSON.stringify(event.action);
  const args = Object.keys(event.args).length > 0 ? ` ${valueText(event.args)}` : "";
  const status = event.status ?? "pending";
  const output = event.output !== undefined ? ` output ${JSON.stringify(event.output)}` : "";
  return `${action}${args} ${status}${output}${time}`;
}

/**
 * An event's time as `at` takes it: in the first year after epoch 0 (where a test's offsets from
 * the run's start fall), a duration (`90s`); otherwise the date-time (`"2026-11-27T10:00:00.000Z"`).
 */
function timeText(time: number): string {
  if (time === 0) return "0s";
  return time > 0 && time < OFFSETS_BELOW ? formatDuration(time) : JSON.stringify(formatDateTime(time));
}

const OFFSETS_BELOW = 365 * 86_400_000;

const statusWords = new Set(["ok", "error", "pending", "output"]);

function valueText(value: JsonValue): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(valueText).join(", ")}]`;
  const object = value as { readonly [key: string]: JsonValue };
  const members = Object.keys(object).map((key) => `${/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key)}: ${valueText(object[key]!)}`);
  return `{${members.join(", ")}}`;
}
