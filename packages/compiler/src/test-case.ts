import { ruleId } from "@vigil/checker";
import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import type { TestCase } from "@vigil/syntax";
import type { TraceEvent } from "@vigil/trace";
import type { TestContext } from "./test-context.js";
import { judgeWithEngines } from "./test-engines.js";
import { decisionFailures, disagreement, positionProblems, resolveRules, rulesOf, verdictFailures } from "./test-expectations.js";
import { readRun } from "./test-input.js";
import type { ExpectationFailure, RuleWhy, TestResult } from "./test-results.js";

/**
 * One test of a test file: its run read, judged by every engine asked for, each expectation held
 * against the verdicts, and what its passing expectations cover. A test that cannot run (no run, a
 * run that cannot be read, an expectation naming what is not there) is an `error`, not a failure.
 */

export async function runTest(test: TestCase, context: TestContext): Promise<TestResult> {
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
