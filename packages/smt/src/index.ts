export type { Encoding, LowerOptions, SmtQuery } from "./lower-smt.js";
export { lowerStatement, QueryTooLarge, renderSmtLib } from "./lower-smt.js";
export type { SmtDeciderOptions } from "./solve.js";
export { maximumQueryLength, SmtDecider } from "./solve.js";
