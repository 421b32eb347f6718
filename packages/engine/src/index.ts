export type { StatementOutcome } from "@vigil/checker";
export { evaluateStatement } from "./eval.js";
export { bindingsOf, matchesPattern } from "./match-event.js";
