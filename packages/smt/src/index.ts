export type { Encoding, LowerOptions, SmtQuery } from "./lower-smt.js";
export { lowerStatement, QueryTooLarge, renderSmtLib } from "./lower-smt.js";
export type { SmtDeciderOptions } from "./solve.js";
export { maximumQueryLength, SmtDecider } from "./solve.js";
export type { EventChoice, Gap, Place, Root, Universe, UniverseOptions } from "./symbolic.js";
export { eventOf, SymbolicRun, universeOf } from "./symbolic.js";
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
