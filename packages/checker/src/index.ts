export type { CheckOptions, CheckResult } from "./check.js";
export { checkSourceFile } from "./check.js";
export { checkSignature, keysComparedWithSets } from "./check-signature.js";
export type {
  ActionAtom,
  CheckedPattern,
  CheckedPolicy,
  CheckedProgram,
  CheckedScope,
  CheckedStatement,
  Formula,
  KeyBindAtom,
  KeyInAtom,
  KeyMatchAtom,
  KeyRegexAtom,
  KeyContainsAtom,
  LimitMeasure,
  Subject,
  TemporalFormula,
  Window,
  VariableAtom,
  StatusAtom,
} from "./ir.js";
export { bindsVariable, hasTimeWindow, isTemporal, needsTime, ruleId, statementPatterns, usesContains, usesEventually, usesVariables, variableAtoms, walkFormula } from "./ir.js";
export type { StatementOutcome } from "./outcome.js";
export type { PolicyScope, PolicySymbol, PolicySymbolKind, Resolution, SymbolOccurrence, SymbolTable } from "./resolve.js";
export { resolveFile } from "./resolve.js";
