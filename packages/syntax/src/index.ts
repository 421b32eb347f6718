export type * from "./ast.js";
export { isPlainIdentifier, keyPathSegments, keyPathText, keySegmentValue, nameText, ruleResponses, symbolText } from "./ast.js";
export { parse, type ParseOptions, type ParseResult } from "./parse.js";
export { format, lineWidth, printExpr, printSourceFile, printStatement, type FormatResult } from "./print.js";
export { allTokens, isKeyword, keywords, maximumListIndex, tokenize } from "./tokens.js";
export { maximumNestingDepth } from "./nesting.js";
export { grammarRuleNames } from "./text-to-cst.js";
export { declarationExpressions, walkExpressions } from "./walk.js";
export { scanTokens, type ScannedToken, type ScannedTokenKind } from "./scan.js";
export {
  parseTestFile,
  testFileKeywords,
  type DecisionExpectation,
  type EventsInput,
  type Expectation,
  type ExpectedDecision,
  type ExpectedWitness,
  type HandEvent,
  type RuleReference,
  type TestCase,
  type TestFile,
  type TestInput,
  type TraceInput,
  type VerdictExpectation,
} from "./test-file.js";
export { formatDuration, looksLikeDuration, maximumDuration, parseDuration } from "./duration.js";
