import type { CstNode, IToken } from "chevrotain";
import { diagnostic, type Span } from "@vigil/diagnostics";
import type { Atom, ComparisonOperator, Expr, KeyPath, MissingExpr, SymbolLiteral, ValueLiteral } from "./ast.js";
import { childNode, childNodes, childToken, childTokens, extentOf, tokenEnd } from "./cst-access.js";
import { maximumNestingDepth } from "./nesting.js";
import { LiteralBuilder } from "./cst-to-ast-literals.js";
import { isJsonNumber } from "./literals.js";

const prefixKindsByTokenName: Readonly<Record<string, "Not" | "Once" | "Eventually">> = {
  NotKeyword: "Not",
  OnceKeyword: "Once",
  EventuallyKeyword: "Eventually",
};

/**
 * Formulas: `implies`, `or`, `and` and the prefix operators folded from their CST chains, and the
 * atoms at their leaves. Every expression built records how deeply it nests; one nested beyond
 * `maximumNestingDepth` becomes a `Missing` hole, reported once per declaration.
 */
export class FormulaBuilder extends LiteralBuilder {
  /** How deeply each built expression nests, to stop runaway `not not …` / `implies` chains. */
  private readonly depths = new WeakMap<Expr, number>();
  /** Whether the current declaration already has a "nested too deeply" diagnostic. */
  protected reportedTooDeep = false;

  protected operandList(node: CstNode | undefined, fallback: number): Expr[] {
    const open = childToken(node, "LeftParen");
    const exprNodes = childNodes(node, "expr");
    const commas = childTokens(node, "Comma");
    const operands = exprNodes.map((exprNode, index) => {
      const before = index === 0 ? open : commas[index - 1];
      return this.expr(exprNode, before ? tokenEnd(before) : fallback);
    });
    // A comma (or the opening parenthesis) with no operand after it: the operand is missing.
    if (operands.length <= commas.length || operands.length === 0) {
      const last = commas[commas.length - 1] ?? open;
      operands.push(this.missing(last ? tokenEnd(last) : fallback));
    }
    return operands;
  }

  /** `expr := orExpr ('implies' orExpr)*`, folded to the right. */
  protected expr(node: CstNode | undefined, fallback: number): Expr {
    const parts = childNodes(node, "orExpr");
    const arrows = childTokens(node, "ImpliesKeyword");
    const operands = parts.map((part, index) => {
      const arrow = arrows[index - 1];
      return this.orExpr(part, arrow ? tokenEnd(arrow) : fallback);
    });
    if (operands.length <= arrows.length) {
      const lastArrow = arrows[arrows.length - 1];
      operands.push(this.missing(lastArrow ? tokenEnd(lastArrow) : fallback));
    }
    const end = extentOf(node)?.end ?? fallback;
    let result = operands[operands.length - 1]!;
    for (let index = operands.length - 2; index >= 0; index--) {
      const left = operands[index]!;
      const start = extentOf(parts[index])?.start ?? left.span.start;
      result = this.nested({ kind: "Implies", left, right: result, span: this.span(start, Math.max(end, result.span.end)) }, [left, result]);
    }
    return result;
  }

  private orExpr(node: CstNode, fallback: number): Expr {
    const parts = childNodes(node, "andExpr");
    const operators = childTokens(node, "OrKeyword");
    const operands = this.operandsOf(parts, operators, fallback, (part, at) => this.andExpr(part, at));
    if (operands.length === 1) return operands[0]!;
    const extent = extentOf(node);
    const span = this.span(extent?.start ?? fallback, extent?.end ?? fallback);
    return this.nested({ kind: "Or", operands, span }, operands);
  }

  private andExpr(node: CstNode, fallback: number): Expr {
    const parts = childNodes(node, "unary");
    const operators = childTokens(node, "AndKeyword");
    const operands = this.operandsOf(parts, operators, fallback, (part, at) => this.unary(part, at));
    if (operands.length === 1) return operands[0]!;
    const extent = extentOf(node);
    const span = this.span(extent?.start ?? fallback, extent?.end ?? fallback);
    return this.nested({ kind: "And", operands, span }, operands);
  }

  /** The operands of an n-ary chain, with a `Missing` after a trailing operator. */
  private operandsOf(parts: CstNode[], operators: IToken[], fallback: number, build: (part: CstNode, at: number) => Expr): Expr[] {
    const operands = parts.map((part, index) => {
      const operator = operators[index - 1];
      return build(part, operator ? tokenEnd(operator) : fallback);
    });
    if (operands.length <= operators.length) {
      const lastOperator = operators[operators.length - 1];
      operands.push(this.missing(lastOperator ? tokenEnd(lastOperator) : fallback));
    }
    return operands;
  }

  /** `unary := ('not' | 'once' | 'eventually')* primary`, folded to the right. */
  private unary(node: CstNode, fallback: number): Expr {
    const operators = childTokens(node, "prefixOperator");
    const lastOperator = operators[operators.length - 1];
    let result = this.primary(childNode(node, "primary"), lastOperator ? tokenEnd(lastOperator) : fallback);
    const end = Math.max(extentOf(node)?.end ?? fallback, result.span.end);
    // A window belongs to the operator right before it (`once[5m]`).
    const windows = childNodes(node, "window");
    for (let index = operators.length - 1; index >= 0; index--) {
      const operator = operators[index]!;
      const kind = prefixKindsByTokenName[operator.tokenType.name] ?? "Not";
      const next = operators[index + 1]?.startOffset ?? Infinity;
      const windowNode = kind === "Not" ? undefined : windows.find((window) => {
        const at = extentOf(window)?.start ?? -1;
        return at > operator.startOffset && at < next;
      });
      const window = windowNode === undefined ? undefined : this.bound(windowNode);
      const span = this.span(operator.startOffset, end);
      result =
        kind === "Not"
          ? this.nested({ kind, operand: result, span }, [result])
          : this.nested({ kind, ...(window !== undefined ? { window } : {}), operand: result, span }, [result]);
    }
    return result;
  }

  private primary(node: CstNode | undefined, fallback: number): Expr {
    if (node === undefined) return this.missing(fallback);
    const open = childToken(node, "LeftParen");
    if (open !== undefined) {
      const inner = this.expr(childNode(node, "expr"), tokenEnd(open));
      if (inner.kind !== "And" && inner.kind !== "Or") return inner;
      // Kept, so that a chain of `and` and `or` can be told apart from one written without them (V1108).
      const marked = { ...inner, parenthesized: true as const };
      this.depths.set(marked, this.depths.get(inner) ?? 1);
      return marked;
    }
    const atom =
      this.actionIn(childNode(node, "actionIn")) ??
      this.statusIs(childNode(node, "statusIs")) ??
      this.keyAtom(childNode(node, "keyAtom"));
    if (atom !== undefined) return atom;
    const patternName = childToken(node, "patternName");
    if (patternName !== undefined) {
      const name = this.identifier(patternName, patternName.startOffset);
      return { kind: "PatternRef", name, span: name.span };
    }
    const placeholder = childToken(node, "NestingLimit");
    if (placeholder !== undefined) return this.missing(placeholder.startOffset, tokenEnd(placeholder));
    const extent = extentOf(node);
    return extent ? this.missing(extent.start, extent.end) : this.missing(fallback);
  }

  private actionIn(node: CstNode | undefined): Atom | MissingExpr | undefined {
    if (node === undefined) return undefined;
    const extent = extentOf(node);
    if (extent === undefined) return undefined;
    const actions: SymbolLiteral[] = [];
    for (const symbolNode of childNodes(node, "symbol")) {
      const token = childToken(symbolNode, "name");
      if (token === undefined) continue;
      const quoted = token.tokenType.name !== "Identifier";
      actions.push({ value: quoted ? this.stringValue(token) : token.image, quoted, span: this.tokenSpan(token) });
    }
    return { kind: "ActionIn", actions, span: this.span(extent.start, extent.end) };
  }

  private statusIs(node: CstNode | undefined): Atom | MissingExpr | undefined {
    if (node === undefined) return undefined;
    const extent = extentOf(node);
    if (extent === undefined) return undefined;
    const status = childToken(node, "status");
    if (status === undefined) return this.missing(extent.start, extent.end);
    return { kind: "StatusIs", status: status.image === "ok" ? "ok" : "error", span: this.span(extent.start, extent.end) };
  }

  private keyAtom(node: CstNode | undefined): Atom | MissingExpr | undefined {
    if (node === undefined) return undefined;
    const extent = extentOf(node);
    if (extent === undefined) return undefined;
    const span = this.span(extent.start, extent.end);
    const key = this.keyPath(childNode(node, "keyPath"));
    if (key === undefined) return this.missing(extent.start, extent.end);
    const word = childToken(node, "quantifier");
    const atom = this.keyCondition(node, key, span, word?.image === "count");
    if (atom === undefined) return this.missing(extent.start, extent.end);
    if (word === undefined) return atom;
    return this.quantified(atom, word) ?? this.missing(extent.start, extent.end);
  }

  /** The condition after a key path: `in {…}`, `~ "…"`, `= $x`, a comparison, `matches /…/`, `contains $x`. */
  private keyCondition(node: CstNode, key: KeyPath, span: Span, counted: boolean): Atom | undefined {
    const valueSet = childNode(node, "valueSet");
    if (childToken(node, "InKeyword") !== undefined && valueSet !== undefined && childToken(valueSet, "LeftBrace") !== undefined) {
      const values = childNodes(valueSet, "value")
        .map((valueNode) => {
          const literal = childToken(valueNode, "literal");
          if (literal !== undefined) return this.valueLiteral(literal);
          const bare = childToken(valueNode, "bareWord");
          return bare === undefined ? undefined : this.bareWord(bare);
        })
        .filter((value): value is ValueLiteral => value !== undefined);
      return { kind: "KeyIn", key, values, span };
    }
    const patternToken = childToken(node, "StringToken");
    if (childToken(node, "Tilde") !== undefined && patternToken !== undefined) {
      // `output ~ "p"` keeps its own node: the paper's o(e) ≈ p.
      if (key.output !== undefined && key.segments.length === 0 && childToken(node, "quantifier") === undefined) return { kind: "OutputMatch", pattern: this.stringLiteral(patternToken), span };
      return { kind: "KeyMatch", key, pattern: this.stringLiteral(patternToken), span };
    }
    const numberToken = childToken(node, "number");
    const operatorToken = childToken(node, "comparison") ?? childToken(node, "Equals");
    if (numberToken !== undefined && operatorToken !== undefined) {
      const number = { text: numberToken.image, valid: isJsonNumber(numberToken.image), span: this.tokenSpan(numberToken) };
      const operator = operatorToken.image as ComparisonOperator;
      const operatorSpan = this.tokenSpan(operatorToken);
      if (counted) return { kind: "KeyCount", key, countSpan: this.tokenSpan(childToken(node, "quantifier")!), operator, operatorSpan, number, span };
      return { kind: "KeyCompare", key, operator, operatorSpan, number, span };
    }
    const variableToken = childToken(node, "Variable");
    if (childToken(node, "Equals") !== undefined && variableToken !== undefined) {
      return { kind: "KeyBind", key, variable: { name: variableToken.image.slice(1), span: this.tokenSpan(variableToken) }, span };
    }
    const word = childToken(node, "operatorWord");
    if (word !== undefined) return this.wordAtom(key, word, childToken(node, "RegexToken"), variableToken, span);
    return undefined;
  }

  /**
   * A condition with its word before `(KEY)`: `every` or `some` on any condition but a binding,
   * `count` only before a comparison (built as a `KeyCount`). A wrong word, or a word with an
   * operator it does not take, is reported here (V0010), with the fix where it is plain.
   */
  private quantified(atom: Atom, word: IToken): Atom | undefined {
    const wordSpan = this.tokenSpan(word);
    const kind = word.image;
    if (atom.kind === "KeyCount") return atom;
    if (kind === "count") {
      this.diagnostics.push(
        diagnostic("V0010", "`count(KEY)` is compared with a number: `count(KEY) <= 5`", {
          span: wordSpan,
          help: "`count(KEY)` is the number of values under the key (a list's elements); compare it with `<`, `<=`, `>`, `>=`, `=` or `!=` and a number",
        }),
      );
      return undefined;
    }
    if (kind !== "every" && kind !== "some") {
      const near = ["every", "some", "count"].find((known) => known.startsWith(kind.slice(0, 2).toLowerCase()));
      this.diagnostics.push(
        diagnostic("V0010", `\`${kind}(…)\` is not a condition; before \`(KEY)\`, write \`every\`, \`some\` or \`count\``, {
          span: wordSpan,
          help: "`every(KEY) …` holds when every value under the key satisfies the condition, `some(KEY) …` when one does, and `count(KEY) <= N` counts the values",
          ...(near !== undefined ? { fix: { title: `replace with \`${near}\``, edits: [{ span: wordSpan, newText: near }] } } : {}),
        }),
      );
      return undefined;
    }
    if (atom.kind === "KeyBind" || atom.kind === "OutputMatch" || atom.kind === "ActionIn" || atom.kind === "StatusIs") {
      this.diagnostics.push(
        diagnostic("V0010", `\`${kind}(KEY) = $variable\` is not a condition: a variable is bound to each value under the key`, {
          span: wordSpan,
          help: "`KEY = $x` already binds `$x` to every value under the key; `every` and `some` go before `in`, `~`, `matches`, `contains` and comparisons",
        }),
      );
      return undefined;
    }
    return { ...atom, quantifier: { kind, span: wordSpan } };
  }

  /**
   * `KEY matches /…/` or `KEY contains $x`. The words are contextual (not reserved), so a wrong word
   * or a word with the other's operand is reported here, with the fix where it is plain.
   */
  private wordAtom(key: KeyPath, word: IToken, regexToken: IToken | undefined, variableToken: IToken | undefined, span: Span): Atom | undefined {
    // Without an operand the parser has already reported what is missing.
    if (regexToken === undefined && variableToken === undefined) return undefined;
    const wordSpan = this.tokenSpan(word);
    const wanted = regexToken !== undefined ? "matches" : "contains";
    if (word.image === wanted) {
      if (regexToken !== undefined) return { kind: "KeyRegex", key, regex: this.regexLiteral(regexToken), span };
      if (variableToken !== undefined) return { kind: "KeyContains", key, variable: { name: variableToken.image.slice(1), span: this.tokenSpan(variableToken) }, span };
      return undefined;
    }
    const operand = regexToken !== undefined ? "a regular expression" : "a variable";
    const known = word.image === "matches" || word.image === "contains";
    this.diagnostics.push(
      diagnostic("V0008", known ? `\`${word.image}\` does not take ${operand}` : `\`${word.image}\` is not an operator; after a key, write \`in\`, \`~\`, \`=\`, a comparison, \`matches\` or \`contains\``, {
        span: wordSpan,
        help:
          regexToken !== undefined
            ? "`KEY matches /regex/flags` holds when the value contains a match of the regular expression"
            : "`KEY contains $x` holds when the value contains the value bound to `$x`, as text",
        fix: { title: `replace with \`${wanted}\``, edits: [{ span: wordSpan, newText: wanted }] },
      }),
    );
    return undefined;
  }

  /**
   * Records the nesting depth of a freshly built expression. One nested more deeply than
   * `maximumNestingDepth` is replaced by a `Missing` node (reported once per declaration), so that
   * no later stage has to recurse through it.
   */
  private nested(expr: Expr, children: readonly Expr[]): Expr {
    let depth = 0;
    for (const child of children) depth = Math.max(depth, this.depths.get(child) ?? 1);
    depth += 1;
    if (depth <= maximumNestingDepth) {
      this.depths.set(expr, depth);
      return expr;
    }
    if (!this.reportedTooDeep) {
      this.reportedTooDeep = true;
      this.diagnostics.push(
        diagnostic("V0006", `expression nested too deeply: more than ${maximumNestingDepth} levels of operators`, {
          span: expr.span,
          help: "split the expression into named `pattern`s",
        }),
      );
    }
    return this.missing(expr.span.start, expr.span.end);
  }
}
