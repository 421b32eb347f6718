export type * from "./ast.js";
export { isPlainIdentifier, keyPathSegments, keyPathText, keySegmentValue, nameText, ruleResponses, symbolText } from "./ast.js";
export { parse, type ParseOptions, type ParseResult } from "./parse.js";
export { format, lineWidth, printExpr, printSourceFile, printStatement, type FormatResult } from "./print.js";
export { allTokens, isKeyword, keywords, maximumListIndex, tokenize } from "./tokens.js";
export { maximumNestingDepth } from "./nesting.js";
export { grammarRuleNames } from "./text-to-cst.js";
export { declarationExpressions, walkExpressions } from "./walk.js";
export { scanTokens, type ScannedToken, type ScannedTokenKind } from "./scan.js";
export { parseTestFile } from "./test-file/parse.js";
export { testFileKeywords } from "./test-file/tokens.js";
export type {
  DecisionExpectation,
  EventsInput,
  Expectation,
  ExpectedDecision,
  ExpectedWitness,
  HandEvent,
  RuleReference,
  TestCase,
  TestFile,
  TestInput,
  TraceInput,
  VerdictExpectation,
} from "./test-file/ast.js";
export { formatDuration, looksLikeDuration, maximumDuration, parseDuration } from "./duration.js";
