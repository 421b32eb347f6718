export type { Encoding, LowerOptions, SmtQuery } from "./lower-smt.js";
export { lowerStatement, QueryTooLarge, renderSmtLib } from "./lower-smt.js";
export type { SmtDeciderOptions } from "./solve.js";
export { maximumQueryLength, SmtDecider } from "./solve.js";
export type { EventChoice, Place, Root, Universe } from "./symbolic.js";
export { eventOf, SymbolicRun, universeOf } from "./symbolic.js";
export type { Counterexample, Difference, Finding, Relation, SearchResult } from "./analysis.js";
export { analyzeStatements, compareStatements, meaningOf, SymbolicSearch, triggerOf } from "./analysis.js";
