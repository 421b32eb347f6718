import type { Diagnostic, ExpectationFailure, RuleCoverage, EngineName, TestFileResult, TestResult, TraceEvent } from "@vigil/compiler";
import { eventLine, ruleId } from "@vigil/compiler";
import type { Colors } from "./render.js";
import { clip, listed, paint, printableLine } from "./render.js";
import { diagnosticJson } from "./outcome.js";

/**
 * The reports of `vigilc test`: the human one (each test passed or failed, and for a failure the
 * expectation, what each engine found, and the events with what was expected and found marked),
 * JSON, JUnit XML, and the coverage table. Every value from a test, a policy or a trace is escaped
 * before it is printed.
 */

const engineNames: Readonly<Record<EngineName, string>> = { eval: "forward engine", smt: "SMT", monitor: "monitor", sql: "SQL" };

/** The totals of a run of test files. */
export interface TestTotals {
  readonly files: number;
  readonly tests: number;
  readonly passed: number;
  readonly failed: number;
  readonly errors: number;
  readonly durationMs: number;
}

export function totalsOf(results: readonly TestFileResult[], durationMs: number): TestTotals {
  const tests = results.flatMap((r) => r.tests);
  return {
    files: results.length,
    tests: tests.length,
    passed: tests.filter((t) => t.outcome === "passed").length,
    failed: tests.filter((t) => t.outcome === "failed").length,
    errors: tests.filter((t) => t.outcome === "error").length + results.filter((r) => r.diagnostics.some((d) => d.severity === "error")).length,
    durationMs,
  };
}

/** Coverage over every test file: one row per rule of each policy under test (files testing one policy are merged). */
export interface CoverageRow extends RuleCoverage {
  readonly policyFile: string;
  readonly missing: readonly string[];
}

export function coverageRows(results: readonly TestFileResult[]): CoverageRow[] {
  const rows = new Map<string, { policyFile: string; coverage: RuleCoverage }>();
  for (const result of results) {
    if (result.policyFile === undefined) continue;
    for (const rule of result.coverage) {
      const key = `${result.policyFile}\u0000${ruleId(rule)}`;
      const seen = rows.get(key);
      rows.set(key, { policyFile: result.policyFile, coverage: seen === undefined ? rule : mergeCoverage(seen.coverage, rule) });
    }
  }
  return [...rows.values()].map(({ policyFile, coverage }) => ({ ...coverage, policyFile, missing: missingOf(coverage) }));
}

function mergeCoverage(a: RuleCoverage, b: RuleCoverage): RuleCoverage {
  const violatedBy = [...a.violatedBy, ...b.violatedBy];
  const heldBy = a.heldBy !== undefined ? [...a.heldBy, ...(b.heldBy ?? [])] : undefined;
  return {
    ...a,
    violatedBy,
    ...(heldBy !== undefined ? { heldBy } : {}),
    patterns: a.patterns.map((pattern, index) => ({ ...pattern, matched: pattern.matched + (b.patterns[index]?.matched ?? 0) })),
    covered: violatedBy.length > 0 && (heldBy === undefined || heldBy.length > 0),
  };
}

/** What a rule's tests lack, in words. */
function missingOf(rule: RuleCoverage): string[] {
  const missing: string[] = [];
  if (rule.violatedBy.length === 0) missing.push("no test violates it");
  if (rule.heldBy !== undefined && rule.heldBy.length === 0) missing.push("no test makes its trigger match while it holds");
  return missing;
}

/** The share of rules fully covered, in percent (100 when there are none). */
export function coveragePercent(rows: readonly CoverageRow[]): number {
  if (rows.length === 0) return 100;
  return (100 * rows.filter((r) => r.covered).length) / rows.length;
}

// ---------------------------------------------------------------------------------------------
// Human

export function renderHuman(results: readonly TestFileResult[], options: { readonly why: boolean; readonly cwd: string }, colors: Colors): string {
  const c = paint(colors);
  const out: string[] = [];
  for (const result of results) {
    const policy = result.policyFile !== undefined ? c.dim(` (${printableLine(relative(options.cwd, result.policyFile))})`) : "";
    out.push(`${c.bold(printableLine(relative(options.cwd, result.file)))}${policy}`);
    if (result.diagnostics.some((d) => d.severity === "error")) out.push(`  ${c.red("!")} not run: the file has errors (below)`);
    for (const test of result.tests) out.push(...renderTest(result, test, options, colors));
    out.push("");
  }
  return out.join("\n");
}

function renderTest(file: TestFileResult, test: TestResult, options: { readonly why: boolean; readonly cwd: string }, colors: Colors): string[] {
  const c = paint(colors);
  const time = c.dim(` (${formatMs(test.durationMs)})`);
  const name = printableLine(test.name);
  if (test.outcome === "passed") return [`  ${c.green("✓")} ${name}${time}`, ...(options.why ? renderWhy(test, colors) : [])];
  if (test.outcome === "error") return [`  ${c.red("!")} ${name}: could not run (below)`];
  const lines = [`  ${c.red("✗")} ${name}${time}`];
  for (const failure of test.failures) lines.push(...renderFailure(file, test, failure, options.cwd, colors));
  if (options.why) lines.push(...renderWhy(test, colors));
  return lines;
}

function renderFailure(file: TestFileResult, test: TestResult, failure: ExpectationFailure, cwd: string, colors: Colors): string[] {
  const c = paint(colors);
  const span = failure.expectation.span;
  const written = file.source !== undefined ? file.source.slice(span.start, span.end) : failure.expected;
  const where = `${relative(cwd, file.file)}:${span.line}:${span.column}`;
  const rule = failure.rule !== undefined && !written.includes(failure.rule) && (failure.expectation.kind !== "verdict" || typeof failure.expectation.rule === "string") ? ` ${c.dim(`(${printableLine(failure.rule)})`)}` : "";
  const lines = [`      ${c.bold(printableLine(clip(written.replace(/\s+/g, " "), 200)))}${rule}  ${c.dim(printableLine(where))}`];
  lines.push(`        ${c.green("expected:")} ${printableLine(failure.expected)}`);
  lines.push(`        ${c.red("found:")}    ${printableLine(clip(failure.actual, 400))}  ${c.dim(`(${failure.engines.map((e) => engineNames[e]).join(", ")})`)}`);
  const decided = failure.expectation.kind === "decision" ? failure.expectation.position : undefined;
  const expected = new Set(expectedPositions(failure));
  const found = new Set(foundPositions(failure));
  let marked = false;
  for (const position of failure.positions) {
    const event = test.events[position - 1];
    if (event === undefined) continue;
    // A decision marks the call decided (`>`); the other events are the witnesses of the rules that decided it.
    const mark =
      decided !== undefined
        ? position === decided
          ? ">"
          : " "
        : expected.has(position) && !found.has(position)
          ? c.green("-")
          : found.has(position) && !expected.has(position)
            ? c.red("+")
            : " ";
    if (mark !== " " && mark !== ">") marked = true;
    const at = test.eventSpans.get(position);
    const line = at !== undefined ? c.dim(`  line ${at.line}`) : event.source?.line !== undefined ? c.dim(`  ${printableLine(relative(cwd, event.source.file ?? file.file))}:${event.source.line}`) : "";
    lines.push(`        ${mark} ${String(position).padStart(4)}  ${printableLine(clip(eventLine(event), 160))}${line}`);
  }
  if (decided !== undefined && failure.positions.length > 1) lines.push(c.dim("          (> the call decided; the others are the witnesses of the rules that decided it)"));
  else if (marked) lines.push(c.dim("          (- expected, not found; + found, not expected)"));
  return lines;
}

/** The positions the expectation names (witnesses, breaking events, the decided call). */
function expectedPositions(failure: ExpectationFailure): number[] {
  const e = failure.expectation;
  if (e.kind === "decision") return [e.position];
  return (e.witnesses ?? []).flatMap((w) => [w.position, ...(w.brokenBy !== undefined ? [w.brokenBy] : [])]);
}

/** The positions the engines found, read back from the words of `actual` (`violated at 2 broken by 4, 7`). */
function foundPositions(failure: ExpectationFailure): number[] {
  if (failure.expectation.kind === "decision") return failure.positions.filter((p) => p !== (failure.expectation as { position: number }).position);
  const match = /^violated at (.*)$/.exec(failure.actual);
  return match === null ? [] : [...match[1]!.matchAll(/\d+/g)].map((m) => Number(m[0]));
}

/** For each rule: its verdict, on how many events its trigger and each of its patterns matched, and where. */
function renderWhy(test: TestResult, colors: Colors): string[] {
  const c = paint(colors);
  return test.rules.map((rule) => {
    const verdict = rule.holds ? "holds" : rule.undecided !== undefined ? "undecided" : `violated at ${listed(rule.witnesses)}`;
    const trigger = rule.triggers === undefined ? "" : rule.triggers.count === 0 ? "; its trigger matched no event" : `; its trigger matched ${rule.triggers.count} (${listed(rule.triggers.first, rule.triggers.count)})`;
    const patterns = rule.patterns.map((p) => `${p.role} ${p.count === 0 ? "none" : `${p.count} (${listed(p.first, p.count)})`}`).join(", ");
    return c.dim(`      why ${printableLine(rule.rule)}: ${verdict}${trigger}${patterns !== "" ? `; patterns matched: ${patterns}` : ""}`);
  });
}


export function renderSummary(totals: TestTotals, colors: Colors): string {
  const c = paint(colors);
  const parts = [`${totals.passed} passed`];
  if (totals.failed > 0) parts.push(c.red(`${totals.failed} failed`));
  if (totals.errors > 0) parts.push(c.red(`${totals.errors} could not run`));
  return `${totals.tests} test${totals.tests === 1 ? "" : "s"} in ${totals.files} file${totals.files === 1 ? "" : "s"}: ${parts.join(", ")} (${formatMs(totals.durationMs)})\n`;
}

export function renderCoverage(rows: readonly CoverageRow[], policySources: ReadonlyMap<string, string>, cwd: string, colors: Colors): string {
  const c = paint(colors);
  const out = ["coverage: each rule violated by a test, and held by one whose run matches its trigger"];
  const width = Math.min(60, Math.max(4, ...rows.map((r) => ruleId(r).length)));
  for (const row of rows) {
    const name = printableLine(ruleId(row)).padEnd(width);
    const violated = row.violatedBy.length > 0 ? c.green(`violated by ${row.violatedBy.length}`) : c.red("never violated");
    const held = row.heldBy === undefined ? c.dim(`(${row.form}: no trigger to hold on)`) : row.heldBy.length > 0 ? c.green(`held by ${row.heldBy.length}`) : c.red("never held non-vacuously");
    out.push(`  ${row.covered ? c.green("✓") : c.red("✗")} ${name}  ${violated}, ${held}  ${c.dim(printableLine(relative(cwd, row.policyFile)))}`);
    const source = policySources.get(row.policyFile);
    for (const pattern of row.patterns) {
      if (pattern.matched > 0) continue;
      const text = source !== undefined ? source.slice(pattern.span.start, pattern.span.end).replace(/\s+/g, " ") : pattern.role;
      out.push(`      ${c.yellow("warning:")} its ${pattern.role} pattern \`${printableLine(clip(text, 120))}\` matched no event in any test (line ${pattern.span.line})`);
    }
  }
  const percent = coveragePercent(rows);
  out.push(`${rows.filter((r) => r.covered).length} of ${rows.length} rules covered (${percent.toFixed(1)}%)`);
  return out.join("\n") + "\n";
}

// ---------------------------------------------------------------------------------------------
// JSON

export function testReportJson(results: readonly TestFileResult[], totals: TestTotals, coverage: readonly CoverageRow[] | undefined, cwd: string): unknown {
  return {
    summary: totals,
    files: results.map((result) => ({
      file: relative(cwd, result.file),
      ...(result.policyFile !== undefined ? { policy: relative(cwd, result.policyFile) } : {}),
      diagnostics: result.diagnostics.map((d) => diagnosticJson(d)),
      tests: result.tests.map((test) => ({
        name: test.name,
        ...(test.doc !== undefined ? { doc: test.doc } : {}),
        line: test.span.line,
        outcome: test.outcome,
        durationMs: Math.round(test.durationMs * 10) / 10,
        failures: test.failures.map((failure) => ({
          line: failure.expectation.span.line,
          column: failure.expectation.span.column,
          ...(failure.rule !== undefined ? { rule: failure.rule } : {}),
          engines: failure.engines,
          expected: failure.expected,
          actual: failure.actual,
          events: failure.positions.flatMap((position) => {
            const event = test.events[position - 1];
            return event === undefined ? [] : [eventJson(event)];
          }),
        })),
        diagnostics: test.diagnostics.map((d) => diagnosticJson(d)),
        rules: test.rules,
      })),
    })),
    ...(coverage !== undefined
      ? {
          coverage: {
            percent: Math.round(coveragePercent(coverage) * 10) / 10,
            rules: coverage.map((row) => ({
              policy: row.policy,
              name: row.name,
              form: row.form,
              file: relative(cwd, row.policyFile),
              line: row.span.line,
              covered: row.covered,
              violatedBy: row.violatedBy,
              ...(row.heldBy !== undefined ? { heldBy: row.heldBy } : {}),
              missing: row.missing,
              patterns: row.patterns.map((p) => ({ role: p.role, line: p.span.line, column: p.span.column, matched: p.matched })),
            })),
          },
        }
      : {}),
  };
}

function eventJson(event: TraceEvent): unknown {
  return {
    position: event.position,
    action: event.action,
    args: event.args,
    ...(event.status !== undefined ? { status: event.status } : {}),
    ...(event.output !== undefined ? { output: event.output } : {}),
    ...(event.time !== undefined ? { time: event.time } : {}),
    ...(event.source?.line !== undefined ? { line: event.source.line } : {}),
  };
}

// ---------------------------------------------------------------------------------------------
// JUnit XML

/**
 * The JUnit XML that CI systems read (Jenkins, GitLab, GitHub's test reporters): one `testsuite`
 * per test file, one `testcase` per test, a `failure` per failed test with the differences as
 * text, an `error` for a test that could not run. Text is escaped for XML 1.0, and characters it
 * cannot hold at all (most C0 controls) are written as visible escapes.
 */
export function renderJunit(results: readonly TestFileResult[], totals: TestTotals, cwd: string): string {
  const out = ['<?xml version="1.0" encoding="UTF-8"?>'];
  out.push(`<testsuites name="vigilc test" tests="${totals.tests}" failures="${totals.failed}" errors="${totals.errors}" time="${seconds(totals.durationMs)}">`);
  for (const result of results) {
    const file = relative(cwd, result.file);
    const fileErrors = result.diagnostics.filter((d) => d.severity === "error");
    const tests = result.tests;
    const failures = tests.filter((t) => t.outcome === "failed").length;
    const errors = tests.filter((t) => t.outcome === "error").length + (fileErrors.length > 0 ? 1 : 0);
    const time = tests.reduce((sum, t) => sum + t.durationMs, 0);
    out.push(`  <testsuite name="${xml(file)}" tests="${tests.length + (fileErrors.length > 0 ? 1 : 0)}" failures="${failures}" errors="${errors}" skipped="0" time="${seconds(time)}" file="${xml(file)}">`);
    if (fileErrors.length > 0) {
      out.push(`    <testcase name="${xml(file)}" classname="${xml(file)}" file="${xml(file)}" time="0">`);
      out.push(`      <error type="input" message="${xml(fileErrors[0]!.message)}">${xml(fileErrors.map(diagnosticLine).join("\n"), true)}</error>`);
      out.push("    </testcase>");
    }
    for (const test of tests) {
      out.push(`    <testcase name="${xml(test.name)}" classname="${xml(file)}" file="${xml(file)}" line="${test.span.line}" time="${seconds(test.durationMs)}">`);
      if (test.outcome === "failed") {
        const first = test.failures[0]!;
        const message = `${first.rule !== undefined ? `${first.rule}: ` : ""}expected ${first.expected}, found ${first.actual}`;
        out.push(`      <failure type="expectation" message="${xml(clip(message, 400))}">${xml(test.failures.map((f) => failureText(result, test, f)).join("\n\n"), true)}</failure>`);
      } else if (test.outcome === "error") {
        const errors = test.diagnostics.filter((d) => d.severity === "error");
        out.push(`      <error type="input" message="${xml(errors[0]?.message ?? "the test could not run")}">${xml(errors.map(diagnosticLine).join("\n"), true)}</error>`);
      }
      out.push("    </testcase>");
    }
    out.push("  </testsuite>");
  }
  out.push("</testsuites>");
  return out.join("\n") + "\n";
}

function failureText(file: TestFileResult, test: TestResult, failure: ExpectationFailure): string {
  const span = failure.expectation.span;
  const written = file.source !== undefined ? file.source.slice(span.start, span.end).replace(/\s+/g, " ") : failure.expected;
  const lines = [`${written} (line ${span.line})`, `expected: ${failure.expected}`, `found: ${failure.actual} (${failure.engines.map((e) => engineNames[e]).join(", ")})`];
  for (const position of failure.positions) {
    const event = test.events[position - 1];
    if (event !== undefined) lines.push(`  ${position}  ${clip(eventLine(event), 160)}`);
  }
  return lines.join("\n");
}

function diagnosticLine(d: Diagnostic): string {
  return `${d.code} ${d.span !== undefined ? `line ${d.span.line}:${d.span.column}: ` : ""}${d.message}${d.help !== undefined ? ` (help: ${d.help})` : ""}`;
}

/**
 * Text escaped for XML 1.0: an attribute value (line breaks and tabs as character references, so
 * they survive attribute normalisation) or, with `element`, element content. Characters XML cannot
 * hold become `\uXXXX`.
 */
export function xml(text: string, element = false): string {
  const escaped = text
    .replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/\r/g, "&#13;");
  return element ? escaped : escaped.replace(/\t/g, "&#9;").replace(/\n/g, "&#10;");
}

function seconds(ms: number): string {
  return (ms / 1000).toFixed(3);
}

function formatMs(ms: number): string {
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(2)} s`;
}

function relative(cwd: string, file: string): string {
  return file.startsWith(`${cwd}/`) ? file.slice(cwd.length + 1) : file;
}

