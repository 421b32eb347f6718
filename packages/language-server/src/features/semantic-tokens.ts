import { SemanticTokensBuilder, type SemanticTokens, type SemanticTokensLegend } from "vscode-languageserver";
import { declarationExpressions, walkExpressions, type Bound } from "@vigil/syntax";
import type { Analysis } from "../analysis.js";

/**
 * Semantic highlighting: the tokens say what is a keyword, a string, a number or a comment; the
 * tree says what each name is (a policy, a pattern, a rule, an action, an argument key, a
 * variable), which no grammar of regular expressions can know. `every`, `some` and `count` are
 * keywords where the parser reads them (before `(KEY)`: their tokens say so), names elsewhere.
 */

export const semanticTokenTypes = ["namespace", "type", "function", "variable", "property", "enumMember", "string", "number", "keyword", "operator", "comment", "regexp"] as const;
export const semanticTokenModifiers = ["declaration", "documentation"] as const;

type TokenType = (typeof semanticTokenTypes)[number];
type TokenModifier = (typeof semanticTokenModifiers)[number];

export const semanticTokensLegend: SemanticTokensLegend = { tokenTypes: [...semanticTokenTypes], tokenModifiers: [...semanticTokenModifiers] };

/** The punctuation that is an operator: `~`, `=` and the comparisons. */
const operators = new Set(["~", "=", "<", "<=", ">", ">=", "!="]);

interface Classification {
  readonly type: TokenType;
  readonly modifiers?: readonly TokenModifier[];
}

export function semanticTokens(analysis: Analysis): SemanticTokens {
  const names = classifyNames(analysis);
  const builder = new SemanticTokensBuilder();
  const { positions } = analysis;
  for (const token of analysis.tokens) {
    let classification: Classification | undefined;
    switch (token.kind) {
      case "comment":
        classification = { type: "comment" };
        break;
      case "doc-comment":
        classification = { type: "comment", modifiers: ["documentation"] };
        break;
      case "keyword":
        classification = names.get(token.start) ?? { type: "keyword" };
        break;
      case "identifier":
      case "variable":
        classification = names.get(token.start) ?? (token.kind === "variable" ? { type: "variable" } : undefined);
        break;
      case "string":
      case "unterminated-string":
        classification = names.get(token.start) ?? { type: "string" };
        break;
      case "number":
        classification = { type: "number" };
        break;
      case "regex":
        classification = { type: "regexp" };
        break;
      case "punctuation":
        classification = operators.has(token.text) ? { type: "operator" } : undefined;
        break;
      default:
        break;
    }
    if (classification === undefined) continue;
    const start = positions.positionAt(token.start);
    builder.push(start.line, start.character, token.end - token.start, semanticTokenTypes.indexOf(classification.type), modifierBits(classification.modifiers));
  }
  return builder.build();
}

function modifierBits(modifiers: readonly TokenModifier[] | undefined): number {
  let bits = 0;
  for (const modifier of modifiers ?? []) bits |= 1 << semanticTokenModifiers.indexOf(modifier);
  return bits;
}

/** What each name of the tree is, by the offset where it starts. */
function classifyNames(analysis: Analysis): Map<number, Classification> {
  const names = new Map<number, Classification>();
  const declared = (type: TokenType): Classification => ({ type, modifiers: ["declaration"] });
  for (const policy of analysis.compiled.syntax.policies) {
    if (policy.name.recovered !== true) names.set(policy.name.span.start, declared("namespace"));
    for (const item of policy.items) {
      if (item.name.recovered !== true) names.set(item.name.span.start, declared(item.kind === "PatternDecl" ? "type" : "function"));
      if (item.kind === "RuleDecl" && item.response !== undefined) names.set(item.response.span.start, { type: "keyword" });
      // The key a limit sums (`limit[500 of amount per 1d]`); `limit`, `of` and `per` are keywords by their tokens.
      const boundKey = (bound: Bound | undefined): void => {
        for (const segment of bound?.of?.segments ?? []) if (!("index" in segment)) names.set(segment.span.start, { type: "property" });
      };
      if (item.kind === "RuleDecl") boundKey(item.statement.bound);
      const variables = new Set<string>();
      walkExpressions(declarationExpressions(item), (expr) => {
        switch (expr.kind) {
          case "Once":
          case "Eventually":
            boundKey(expr.window);
            break;
          case "PatternRef":
            if (expr.name.recovered !== true) names.set(expr.name.span.start, { type: "type" });
            break;
          case "ActionIn":
            for (const action of expr.actions) names.set(action.span.start, { type: "enumMember" });
            break;
          case "KeyIn":
          case "KeyMatch":
          case "KeyBind":
          case "KeyRegex":
          case "KeyContains":
          case "KeyCompare":
          case "KeyCount":
            // A list index (`argv.0`) stays a number.
            for (const segment of expr.key.segments) if (!("index" in segment)) names.set(segment.span.start, { type: "property" });
            if (expr.kind === "KeyBind" || expr.kind === "KeyContains") {
              const first = !variables.has(expr.variable.name);
              variables.add(expr.variable.name);
              names.set(expr.variable.span.start, first ? declared("variable") : { type: "variable" });
            }
            break;
          default:
            break;
        }
      });
    }
  }
  return names;
}
