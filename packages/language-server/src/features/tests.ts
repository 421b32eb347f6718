import { eventLine, runTestSource, type Diagnostic, type ExpectationFailure, type RelatedInformation, type Span, type EngineName, type TestFileResult, type TestResult } from "@vigil/compiler";
import { diagnostic } from "@vigil/diagnostics";
import { CodeActionKind, DiagnosticSeverity, type CodeAction, type CodeLens, type Diagnostic as LspDiagnostic } from "vscode-languageserver";
import type { TextPositions } from "../positions.js";
import { runTestCommand, type RunTestArguments, type RunTestResult } from "../protocol.js";
import { isDiagnosticData, renderDiagnostic } from "./diagnostics.js";
import type { Standing, Standings, TestView } from "./test-results.js";

/**
 * Test files (`*.vigiltest`) in the editor: their tests run by the compiler's test runner with the
 * forward engine and the monitor (fast; decisions are always the monitor's), each failing
 * expectation a diagnostic at the expectation (V2201), and a lens above each test with its outcome
 * that runs it again.
 */

/** The language of test files, as the editor names it. */
export const testLanguageId = "vigil-test";

/** The engines that judge a test's verdicts in the editor: never the solver, so a run takes milliseconds. */
export const editorEngines: readonly EngineName[] = ["eval", "monitor"];

/** Whether a document is a test file: by its language, or by its name. */
export function isTestDocument(uri: string, languageId: string | undefined): boolean {
  return languageId === testLanguageId || /\.vigiltest$/i.test(uri.split(/[?#]/)[0]!);
}

export interface RunTestsOptions {
  /** Reads a file the tests name: the editor's document when it is open, else the file on disk. */
  readonly readText: (file: string, what: string) => Promise<string | Diagnostic>;
  /** Only the tests with these names; all when absent. */
  readonly names?: ReadonlySet<string>;
  readonly signal?: AbortSignal;
}

/** Runs the tests of a test file's text with the editor's engines. */
export function runTests(text: string, file: string, options: RunTestsOptions): Promise<TestFileResult> {
  const { names } = options;
  return runTestSource(text, file, {
    engines: editorEngines,
    readText: options.readText,
    ...(names !== undefined ? { filter: (name: string) => names.has(name) } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
}

/** How the editor names an engine in a failure's message. */
const engineNames: Readonly<Record<EngineName, string>> = { eval: "forward engine", smt: "SMT", monitor: "monitor", sql: "SQL" };

/**
 * A failing expectation as a diagnostic at the expectation (V2201): what it expects and what the
 * engines found ("expected violated at 2; found holds (forward engine, monitor)"), the rule first
 * when the line names no single rule (`expect all hold`), and the events involved as related places
 * (their lines in the test file, or in the trace).
 */
export function failureDiagnostic(failure: ExpectationFailure, result: TestResult, file: string): Diagnostic {
  const expectation = failure.expectation;
  const subject = expectation.kind === "verdict" && typeof expectation.rule === "string" && failure.rule !== undefined ? `\`${failure.rule}\`: ` : "";
  const engines = failure.engines.map((engine) => engineNames[engine]).join(", ");
  const related: RelatedInformation[] = [];
  for (const position of failure.positions.slice(0, relatedEventsShown)) {
    const event = result.events[position - 1];
    if (event === undefined) continue;
    const message = `event ${position}: ${eventLine(event)}`;
    const written = result.eventSpans.get(position);
    const line = event.source?.line;
    if (written !== undefined) related.push({ message, span: written });
    else if (event.source?.file !== undefined && event.source.file !== file && line !== undefined) related.push({ message, file: event.source.file, span: event.source.span ?? lineSpan(line) });
  }
  return diagnostic("V2201", `${subject}expected ${failure.expected}; found ${failure.actual} (${engines})`, { span: expectation.span, ...(related.length > 0 ? { related } : {}) });
}

/** At most this many events of a failure are listed as its related places. */
const relatedEventsShown = 10;

function lineSpan(line: number): Span {
  return { start: 0, end: 0, line, column: 1, endLine: line, endColumn: 1 };
}

/** Whether the file's tests cannot run as it is: the reader's errors, or the runner's about the file as a whole (its policy). */
export function blocked(view: TestView, standings: Standings): boolean {
  return [...view.parsed.diagnostics, ...standings.fileDiagnostics].some((d) => d.severity === "error");
}

export interface TestRenderOptions {
  readonly uri: string;
  readonly version: number;
  readonly positions: TextPositions;
  readonly codeLink?: (code: string) => string | undefined;
}

/**
 * The diagnostics of a test document: the reader's of the current text, then the runner's that are
 * still current (about the file, and each test's own and its failing expectations).
 */
export function testDiagnostics(view: TestView, standings: Standings, options: TestRenderOptions): LspDiagnostic[] {
  const diagnostics: Diagnostic[] = [...view.parsed.diagnostics, ...standings.fileDiagnostics];
  if (!blocked(view, standings)) {
    for (const { result, shift } of standings.tests.values()) {
      const own = [...result.diagnostics.filter((d) => d.file === undefined || d.file === view.file), ...result.failures.map((failure) => failureDiagnostic(failure, result, view.file))];
      for (const d of own) {
        const moved = shift.diagnostic(d, view.file);
        if (moved !== undefined) diagnostics.push(moved);
      }
    }
  }
  return diagnostics
    .sort((a, b) => (a.span?.start ?? -1) - (b.span?.start ?? -1))
    .map((d) => renderDiagnostic({ ...d, file: view.file }, { uri: options.uri, version: options.version, positions: options.positions, ...(options.codeLink !== undefined ? { codeLink: options.codeLink } : {}) }));
}

/** A test's lens title: "▶ run test" before it ran, then its outcome. */
export function lensTitle(standing: Standing | undefined, fileBlocked: boolean): string {
  if (fileBlocked) return "! could not run";
  if (standing === undefined) return "▶ run test";
  const { result } = standing;
  if (result.outcome === "passed") return `✓ passed (${Math.round(result.durationMs)} ms)`;
  if (result.outcome === "error") return "! could not run";
  const count = failedExpectations(result);
  return `✗ failed: ${count} ${count === 1 ? "expectation" : "expectations"}`;
}

/** How many expectations of a test do not hold (an expectation may fail on several rules or engines). */
export function failedExpectations(result: TestResult): number {
  return new Set(result.failures.map((failure) => failure.expectation)).size;
}

/** A lens above each test with its outcome; clicking it runs the test (`vigil.runTest`). */
export function testLenses(view: TestView, standings: Standings, uri: string, positions: TextPositions): CodeLens[] {
  const fileBlocked = blocked(view, standings);
  return view.parsed.tests.map((test) => {
    const target: RunTestArguments = { uri, name: test.name };
    return {
      range: positions.rangeOf(test.nameSpan),
      command: { title: lensTitle(standings.tests.get(test), fileBlocked), command: runTestCommand, arguments: [target] },
    };
  });
}

/** The answer to `vigil.runTest`: what ran, and why nothing did. */
export function runTestResult(uri: string, result: TestFileResult): RunTestResult {
  return {
    uri,
    tests: result.tests.map((test) => ({ name: test.name, outcome: test.outcome, failedExpectations: failedExpectations(test), durationMs: test.durationMs })),
    errors: result.diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.span !== undefined ? `line ${d.span.line}:${d.span.column}: ` : ""}${d.code}: ${d.message}`),
  };
}

/** A run that failed inside the server (a bug, not the file's fault), said once on the file. */
export function internalFailure(message: string): LspDiagnostic {
  return {
    range: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    severity: DiagnosticSeverity.Error,
    source: "vigil",
    message: `the tests could not be run: ${message}`,
  };
}

/** Quick fixes of a test document: the fixes its diagnostics carry (a rule name the policy has), when published for this version. */
export function testQuickFixes(uri: string, version: number, diagnostics: readonly LspDiagnostic[], supportsVersionedEdits: boolean): CodeAction[] {
  const actions: CodeAction[] = [];
  for (const published of diagnostics) {
    const data: unknown = published.data;
    if (published.source !== "vigil" || !isDiagnosticData(data) || data.version !== version || data.fix === undefined) continue;
    const edits = [...data.fix.edits];
    actions.push({
      title: data.fix.title,
      kind: CodeActionKind.QuickFix,
      diagnostics: [published],
      isPreferred: true,
      edit: supportsVersionedEdits ? { documentChanges: [{ textDocument: { uri, version }, edits }] } : { changes: { [uri]: edits } },
    });
  }
  return actions;
}
