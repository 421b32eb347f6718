import { ruleId, type CheckedStatement } from "@vigil/checker";
import { closestName, diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import { verdictOf } from "@vigil/engine";
import type { DecisionExpectation, RuleReference, TestCase, VerdictExpectation } from "@vigil/syntax";
import type { TraceEvent } from "@vigil/trace";
import type { EngineName } from "./engines.js";
import type { EngineVerdicts, MonitorResult } from "./test-engines.js";
import type { ExpectationFailure } from "./test-results.js";

/**
 * A test's expectations: the rules they name (V2102), the positions they name checked against the
 * run (V2105, V2107), and each held against what every engine found, engines that found the same
 * reported together. An expectation no engine decided fails as undecided, never passes.
 */

/** The statement each rule reference of a test names (`policy.name` or a name one policy has); problems are V2102. */
export function resolveRules(test: TestCase, statements: readonly CheckedStatement[], problems: Diagnostic[]): Map<RuleReference, string> {
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

/** Positions beyond the run, `broken by` on a rule that is not `until`, `decide` on an event that is not a call. */
export function positionProblems(test: TestCase, events: readonly TraceEvent[], rules: ReadonlyMap<RuleReference, string>, statements: readonly CheckedStatement[]): Diagnostic[] {
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

/** A message of the conversation: an event the monitor observes, never decides. */
function isMessage(event: TraceEvent): boolean {
  return event.kind === "message";
}

export function disagreement(test: TestCase, message: string): ExpectationFailure {
  return { expectation: { kind: "verdict", rule: "all", holds: true, span: test.nameSpan }, engines: ["monitor"], expected: "the monitor agrees with the finished run", actual: message, positions: [] };
}

/** The rules a verdict expectation speaks of. */
export function rulesOf(expectation: VerdictExpectation, rules: ReadonlyMap<RuleReference, string>, named: ReadonlySet<string>, statements: readonly CheckedStatement[]): string[] {
  if (typeof expectation.rule !== "string") return [rules.get(expectation.rule)!];
  const all = statements.map(ruleId);
  return expectation.rule === "all" ? all : all.filter((rule) => !named.has(rule));
}

export function verdictFailures(
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

export function decisionFailures(expectation: DecisionExpectation, rules: ReadonlyMap<RuleReference, string>, engines: readonly EngineName[], monitor: MonitorResult | undefined): ExpectationFailure[] {
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
