export type * from "./ast.js";
export { isPlainIdentifier, keyPathText, nameText, ruleResponses, symbolText } from "./ast.js";
export { parse, type ParseOptions, type ParseResult } from "./parse.js";
export { format, lineWidth, printExpr, printSourceFile, printStatement, type FormatResult } from "./print.js";
export { allTokens, isKeyword, keywords, tokenize } from "./tokens.js";
export { maximumNestingDepth } from "./nesting.js";
export { grammarRuleNames } from "./text-to-cst.js";
export { declarationExpressions, walkExpressions } from "./walk.js";
export { scanTokens, type ScannedToken, type ScannedTokenKind } from "./scan.js";
