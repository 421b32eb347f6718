/**
 * The embeddable Vigil compiler: `compile(source, { signature })` turns a `.vigil` file into a
 * checked program with diagnostics, and `check(policy, trace)` judges a trace with either
 * decision procedure.
 */
export type { CompileOptions, CompiledPolicy } from "./compile.js";
export { checkAgainstSignature, compile, CompileCache } from "./compile.js";
export type { KeyCondition, TermAt } from "./positions.js";
export { resolveSymbols, termAt } from "./positions.js";
export type { PolicySymbol, PolicySymbolKind, SymbolOccurrence, SymbolTable } from "@vigil/checker";
export { resolveFile, ruleId } from "@vigil/checker";
export type { CheckReport, CheckTraceOptions, EngineName, StatementVerdict } from "./check.js";
export { breakingObservations, check, reportOf, reportToJson } from "./check.js";
export { uncountedAmount } from "./amounts.js";
export { createMonitor } from "./monitor.js";
export type { JudgeRunOptions, RunEventsRead, RunJudgement, RunSignature, RunSource } from "./judge-run.js";
export { judgeRun, readEventsAt, readRunEvents, readRunSignature, runSignatureBuilder } from "./judge-run.js";
export type {
  CallResult,
  Decision,
  FinalVerdict,
  MonitorDecision,
  MonitorOptions,
  MonitorSnapshot,
  PendingCall,
  RecordOutcome,
  Response,
  StatementStanding,
  TriggerCount,
  Violation,
} from "@vigil/engine";
export { Monitor } from "@vigil/engine";

export type { Diagnostic, DiagnosticCode, Fix, RelatedInformation, Severity, Span, TextEdit } from "@vigil/diagnostics";
export { closestName, diagnosticCodes, formatDateTime, hasErrors, isEventTime, LineIndex, parseDateTime } from "@vigil/diagnostics";
export type { CheckedPolicy, CheckedProgram, CheckedStatement, Formula, StatementOutcome } from "@vigil/checker";
export type { Counterexample, Difference, Encoding, Relation, SmtDeciderOptions } from "@vigil/smt";
export { renderSmtLib, SmtDecider } from "@vigil/smt";
export type { DiffOptions, PolicyDiff, RuleDiff } from "./diff-policies.js";
export { defaultDiffDepth, diffPolicies } from "./diff-policies.js";
export type { Citation, RulePair, RulePairing } from "./diff-pairing.js";
export { automaticPairing, citationsOf, citesSources, pairBySource } from "./diff-pairing.js";
export type { FileAtRevision } from "./revision.js";
export { readFileAtRevision } from "./revision.js";
export { canonicalEvent, noDifferenceFound, policyDiffMarkdown, policyDiffText, policyDiffToJson, relationText, unconfirmedRuns } from "./diff-report.js";
export type { AnalyzeOptions } from "./analyze-policy.js";
export { analyzePolicy, defaultAnalysisDepth } from "./analyze-policy.js";
export { describeRule } from "./describe-rule.js";
export { comparisonOperators, comparisonSummary, comparisonWords, conditionWordDescriptions, describeCondition } from "./condition-descriptions.js";
export { durationInWords, suggestedDurations } from "./durations.js";
export type { FormDescription, ScopeDescription } from "./forms.js";
export { formDescriptions, forms, isForm, keywordDescriptions, responseDescriptions, scopeDescriptions, scopeKinds } from "./forms.js";
export { breakingEvents, evaluateStatement, TraceRun } from "@vigil/engine";
export { format, parse, printExpr } from "@vigil/syntax";
export type { SourceFile } from "@vigil/syntax";
export type { JsonValue, ReadRecordingOptions, ReadRecordingResult, ReadRunFileResult, RecordingRun, RunFile, Signature, TextOrigin, Trace, TraceEvent, TraceFormat } from "@vigil/trace";
export {
  readRecording,
  readRegularFile,
  readRunFile,
  readTrace,
  mergeSignatures,
  signatureFromToolSchemas,
  signatureOf,
  signatureToJson,
  splitRunFile,
  traceFormats,
  OUTPUT_OBSERVATION_CAP,
  numberOf,
  compareDecimal,
} from "@vigil/trace";
export type { TestRunOptions } from "./test-run.js";
export { runTestFile, runTestSource, TEST_FILE_EXTENSION } from "./test-run.js";
export type { ExpectationFailure, RuleCoverage, RuleWhy, TestFileResult, TestResult } from "./test-results.js";
export { eventLine } from "./test-event-line.js";
export type { DecisionEngine, EngineChoice, EngineOptions, EngineRun, EngineRunOptions, MonitorEngine, MonitorEngineRun } from "./engines.js";
export { createEngine, engineNames, startMonitorRun } from "./engines.js";
export type { Expectation, TestCase, TestFile } from "@vigil/syntax";
export { parseTestFile } from "@vigil/syntax";
export type { Decimal, EventRow, ValueRow } from "@vigil/trace";
export { eventColumns, eventRow, eventValueRows, runName, valueColumns } from "@vigil/trace";
