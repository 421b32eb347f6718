export type { Encoding, LowerOptions, SmtQuery } from "./smt-query.js";
export { QueryTooLarge } from "./smt-query.js";
export { lowerStatement } from "./lower-smt.js";
export { renderSmtLib } from "./render-smt-lib.js";
export type { SmtDeciderOptions } from "./solve.js";
export { maximumQueryLength, SmtDecider } from "./solve.js";
export type { Gap, Place, Root, Universe } from "./symbolic.js";
export type { UniverseOptions } from "./candidate-values.js";
export { universeOf } from "./candidate-values.js";
export type { EventChoice } from "./symbolic-events.js";
export { eventOf } from "./symbolic-events.js";
export { SymbolicRun } from "./symbolic-run.js";
export type { TextClass, TextClasses, TextCondition } from "./text-classes.js";
export { textClasses } from "./text-classes.js";
export type { Counterexample, Difference, Finding, Relation, SearchResult, SymbolicSearchOptions } from "./analysis.js";
export {
  analyzeStatements,
  compareStatements,
  defaultSearchRlimit,
  eventsNeeded,
  LONGEST_SEARCH,
  maximumSearchQueryLength,
  meaningOf,
  searchDepth,
  SymbolicSearch,
  triggerOf,
} from "./analysis.js";
