export type { StatementOutcome } from "@vigil/checker";
export { isTemporal, ruleId } from "@vigil/checker/ir";
export type { Atom, BindingPattern, EventPredicate } from "./atoms.js";
export { atomHolds, boundValueKeys, compareValue, comparisonHolds, compileAtom, compilePattern, containsText, countHolds, isAtom, matchesPattern, PatternBinder } from "./atoms.js";
export { Truth } from "./truth.js";
export type { MachineObserver, StatementMachine } from "./machines/statement-machine.js";
export type { MachineState, ScopedState, StateOf } from "./machine-state.js";
export { createMachine } from "./machines.js";
export { sortedUnique } from "./machines/shared.js";
export type { Answer, AnswerCount, EvaluationBudget, RunObservations, RunObserver, ScopeCount, ScopeStretch, TimeError, TriggerCount } from "./eval.js";
export { breakingEvents, DEFAULT_OPEN_OBLIGATIONS, evaluateStatement, TraceRun } from "./eval.js";
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
  StandingVerdict,
  StatementStanding,
  Violation,
} from "./monitor.js";
export { DECISION_BUDGET, Monitor, violationOf } from "./monitor.js";
export type { Containment } from "./containment.js";
export { containsRun } from "./containment.js";
export type { PatternMatchCount, PatternRole } from "./pattern-matches.js";
export { PatternMatches } from "./pattern-matches.js";
export type { CallDecision, CallEvent, CallRecord, CallVerdict } from "./call-decision.js";
export { callEventOf, decideCall, mergeViolations, recordCall, verdictOf } from "./call-decision.js";
export type { Stretch } from "./scoped.js";
export { scopeStretches } from "./scoped.js";
export type { Decimal } from "@vigil/trace";
export { addDecimal, compareDecimal, decimalOf, formatDecimal } from "@vigil/trace";
export { eventAmount } from "./atoms.js";
export { describeEvent, EventTimes } from "./time.js";
