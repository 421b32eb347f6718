import type { CstNode, IToken } from "chevrotain";
import { closestName, diagnostic, type Diagnostic, type LineIndex, type Span } from "@vigil/diagnostics";
import type {
  Atom,
  Bound,
  BoundLiteral,
  Comment,
  DocText,
  Expr,
  Form,
  Identifier,
  Item,
  KeyPath,
  KeySegment,
  MissingExpr,
  PolicyDecl,
  RegexLiteral,
  ResponseWord,
  RuleResponse,
  Scope,
  SourceFile,
  Statement,
  StringLiteral,
  SymbolLiteral,
  ValueLiteral,
} from "./ast.js";
import { ruleResponses } from "./ast.js";
import { scopeWords } from "./text-to-cst.js";
import { childNode, childNodes, childToken, childTokens, containsRecovery, extentOf, tokenEnd } from "./cst-access.js";
import { decodeString, isJsonNumber } from "./literals.js";
import { parseDuration } from "./duration.js";
import { maximumNestingDepth } from "./nesting.js";
import { listIndexValue } from "./tokens.js";

/**
 * Builds the AST of `ast.ts` from the parser's CST. Total by design: wherever recovery left a hole,
 * it produces a `Missing` expression, a `recovered` identifier or a `recovered` statement instead
 * of failing, so that later stages always get a complete tree.
 */

export interface AstBuildInput {
  readonly text: string;
  readonly lines: LineIndex;
  /** Doc comments, keyed by the offset of the `policy`/`pattern`/`rule` keyword they document. */
  readonly docs: ReadonlyMap<number, DocText>;
  readonly comments: readonly Comment[];
  /** Offsets of the tokens at which the parser reported errors. */
  readonly errorOffsets: readonly number[];
}

const formsByTokenName: Readonly<Record<string, Form>> = {
  AbsKeyword: "abs",
  PrecKeyword: "prec",
  RespKeyword: "resp",
  BrespKeyword: "bresp",
  RslvKeyword: "rslv",
  UntilKeyword: "until",
  AlwaysKeyword: "always",
};

/**
 * Words people write for a response, by the response they mean (`deny` is `block`): the suggestion
 * when a word is not a response and is not a misspelling of one.
 */
const responseSynonyms: ReadonlyMap<string, RuleResponse> = new Map(
  (
    [
      ["block", ["deny", "reject", "refuse", "forbid", "disallow", "prevent", "stop", "halt", "abort", "fail", "veto"]],
      ["warn", ["warning", "log", "report", "notify", "alert", "audit", "flag", "allow", "permit"]],
      ["ask", ["confirm", "prompt", "approve", "approval", "escalate", "review", "human"]],
    ] as const
  ).flatMap(([response, words]) => words.map((word) => [word, response] as const)),
);

/**
 * The response a word most likely means: a near spelling (`blok`), the same letters in another
 * order (`wran`: the words are short, so one swap is already two edits), or a synonym (`deny`).
 */
function suggestResponse(word: string): RuleResponse | undefined {
  const near = closestName(word, ruleResponses);
  if (near !== undefined) return near as RuleResponse;
  const letters = (text: string) => [...text.toLowerCase()].sort().join("");
  return ruleResponses.find((response) => letters(response) === letters(word)) ?? responseSynonyms.get(word.toLowerCase());
}

function isRuleResponse(word: string): word is RuleResponse {
  return (ruleResponses as readonly string[]).includes(word);
}

const prefixKindsByTokenName: Readonly<Record<string, "Not" | "Once" | "Eventually">> = {
  NotKeyword: "Not",
  OnceKeyword: "Once",
  EventuallyKeyword: "Eventually",
};

/**
 * One declaration: its CST, and for a rule the tokens of its response (see `splitResponse`); or a
 * declaration whose text did not change since an earlier parse, reused as built then.
 */
export type DeclarationCst =
  | { readonly cst: CstNode | undefined; readonly response: readonly IToken[]; readonly scope?: CstNode }
  | { readonly reused: BuiltDeclaration };

/** A declaration as built, with the diagnostics building it produced. */
export interface BuiltDeclaration {
  readonly item: Item | undefined;
  readonly diagnostics: readonly Diagnostic[];
}

/** A policy as the outline found it, with the CST of each of its declarations. */
export interface PolicyCst {
  readonly keyword: IToken;
  readonly name?: IToken;
  readonly items: readonly DeclarationCst[];
  readonly start: number;
  readonly end: number;
}

export interface AstBuildResult {
  readonly file: SourceFile;
  readonly diagnostics: Diagnostic[];
  /** Each policy's declarations as built (in the order of `PolicyCst.items`), for reuse by a later parse. */
  readonly declarations: readonly (readonly BuiltDeclaration[])[];
}

export function cstToAst(policies: readonly PolicyCst[], input: AstBuildInput): AstBuildResult {
  const builder = new AstBuilder(input);
  const file = builder.file(policies);
  return { file, diagnostics: builder.diagnostics, declarations: builder.declarations };
}

class AstBuilder {
  readonly diagnostics: Diagnostic[] = [];
  readonly declarations: BuiltDeclaration[][] = [];
  /** How deeply each built expression nests, to stop runaway `not not …` / `implies` chains. */
  private readonly depths = new WeakMap<Expr, number>();
  /** Whether the current declaration already has a "nested too deeply" diagnostic. */
  private reportedTooDeep = false;

  /** The offsets of the parser's errors, ascending. */
  private readonly errorOffsets: readonly number[];

  constructor(private readonly input: AstBuildInput) {
    this.errorOffsets = [...input.errorOffsets].sort((a, b) => a - b);
  }

  file(policies: readonly PolicyCst[]): SourceFile {
    return {
      kind: "SourceFile",
      policies: policies.map((policy) => this.policy(policy)),
      comments: this.input.comments,
      span: this.span(0, this.input.text.length),
    };
  }

  private policy(policy: PolicyCst): PolicyDecl {
    const name = this.identifier(policy.name, tokenEnd(policy.keyword));
    const items: Item[] = [];
    const built: BuiltDeclaration[] = [];
    for (const declaration of policy.items) {
      if ("reused" in declaration) {
        built.push(declaration.reused);
        for (const d of declaration.reused.diagnostics) this.diagnostics.push(d);
        if (declaration.reused.item !== undefined) items.push(declaration.reused.item);
        continue;
      }
      const before = this.diagnostics.length;
      const item = declaration.cst === undefined ? undefined : this.item(declaration.cst, declaration.response, declaration.scope);
      built.push({ item, diagnostics: this.diagnostics.slice(before) });
      if (item !== undefined) items.push(item);
    }
    this.declarations.push(built);
    const doc = this.input.docs.get(policy.keyword.startOffset);
    return { kind: "PolicyDecl", name, ...(doc ? { doc } : {}), items, span: this.span(policy.start, policy.end) };
  }

  private item(node: CstNode, responseTokens: readonly IToken[], scopeNode?: CstNode): Item | undefined {
    this.reportedTooDeep = false;
    const patternNode = childNode(node, "patternDecl");
    if (patternNode !== undefined) {
      const keyword = childToken(patternNode, "PatternKeyword");
      const extent = extentOf(patternNode);
      if (keyword === undefined || extent === undefined) return undefined;
      const nameToken = childToken(patternNode, "Identifier");
      const name = this.identifier(nameToken, tokenEnd(keyword));
      const equals = childToken(patternNode, "Equals");
      const body = this.expr(childNode(patternNode, "expr"), equals ? tokenEnd(equals) : name.span.end);
      const doc = this.input.docs.get(keyword.startOffset);
      return { kind: "PatternDecl", name, body, ...(doc ? { doc } : {}), span: this.span(extent.start, extent.end) };
    }
    const ruleNode = childNode(node, "ruleDecl");
    if (ruleNode !== undefined) {
      const keyword = childToken(ruleNode, "RuleKeyword");
      const extent = extentOf(ruleNode);
      if (keyword === undefined || extent === undefined) return undefined;
      const name = this.identifier(childToken(ruleNode, "Identifier"), tokenEnd(keyword));
      const colon = childToken(ruleNode, "Colon");
      const statement = this.statement(childNode(ruleNode, "statement"), colon ? tokenEnd(colon) : name.span.end, scopeNode);
      const { response, remediation } = this.response(responseTokens);
      const lastResponseToken = responseTokens[responseTokens.length - 1];
      // The rule runs to the end of its response, or of its scope.
      const scopeEnd = extentOf(scopeNode)?.end ?? extent.end;
      const end = lastResponseToken === undefined ? Math.max(extent.end, scopeEnd) : Math.max(extent.end, scopeEnd, tokenEnd(lastResponseToken));
      const doc = this.input.docs.get(keyword.startOffset);
      return {
        kind: "RuleDecl",
        name,
        statement,
        ...(response ? { response } : {}),
        ...(remediation ? { remediation } : {}),
        ...(doc ? { doc } : {}),
        span: this.span(extent.start, end),
      };
    }
    return undefined;
  }

  /**
   * The response after a rule's statement, from the tokens the outline set aside for it. Any
   * identifier in that place is taken (the words are contextual), so a word that is not a response
   * is reported here, with the response it most likely means; so is a remediation written without
   * a response before it.
   */
  private response(tokens: readonly IToken[]): { response?: ResponseWord; remediation?: StringLiteral } {
    const word = tokens.find((token) => token.tokenType.name === "Identifier");
    const messages = tokens.filter((token) => token.tokenType.name !== "Identifier");
    const remediation = messages[0] === undefined ? undefined : this.stringLiteral(messages[0]);
    const extra = messages[1];
    if (extra !== undefined) {
      this.diagnostics.push(
        diagnostic("V0008", "a rule has one remediation message", {
          span: this.span(extra.startOffset, tokenEnd(messages[messages.length - 1]!)),
          help: "join the messages into one string",
        }),
      );
    }
    const withRemediation = remediation === undefined ? {} : { remediation };
    if (word === undefined) {
      if (remediation !== undefined) {
        const at = this.span(remediation.span.start, remediation.span.start);
        this.diagnostics.push(
          diagnostic("V0008", "expected `block`, `warn` or `ask` before the remediation message", {
            span: remediation.span,
            help: "a remediation follows the rule's response: `block \"…\"`, `warn \"…\"` or `ask \"…\"`",
            fix: { title: "insert `block`", edits: [{ span: at, newText: "block " }] },
          }),
        );
      }
      return withRemediation;
    }
    const span = this.tokenSpan(word);
    if (isRuleResponse(word.image)) return { response: { value: word.image, span }, ...withRemediation };
    if (scopeWords.includes(word.image) && tokens.length === 1) {
      // A scope's word with nothing after it.
      this.diagnostics.push(diagnostic("V0009", `\`${word.image}\` needs its pattern: \`${word.image === "between" ? "between ψ and ψ'" : `${word.image} ψ`}\``, { span, help: "a scope bounds where in the run the rule is judged; see the language reference's scopes" }));
      return withRemediation;
    }
    const suggestion = suggestResponse(word.image);
    const meaning = "`block` stops the call (the default), `warn` lets it through and reports it, `ask` lets a person decide";
    this.diagnostics.push(
      diagnostic("V0008", `\`${word.image}\` is not a response; a rule's response is \`block\`, \`warn\` or \`ask\``, {
        span,
        help:
          suggestion !== undefined
            ? `did you mean \`${suggestion}\`? ${meaning}`
            : `${meaning}; if \`${word.image}\` belongs to the statement, an operator such as \`and\` is missing before it`,
        ...(suggestion !== undefined ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span, newText: suggestion }] } } : {}),
      }),
    );
    return withRemediation;
  }

  private statement(node: CstNode | undefined, fallback: number, scopeNode?: CstNode): Statement {
    const formToken = childToken(node, "form");
    const extent = extentOf(node);
    if (node === undefined || formToken === undefined || extent === undefined) {
      return {
        kind: "Statement",
        form: "always",
        formSpan: this.span(fallback, fallback),
        operands: [this.missing(fallback)],
        span: this.span(fallback, fallback),
        recovered: true,
      };
    }
    const formSpan = this.tokenSpan(formToken);
    const word = formToken.tokenType.name === "Identifier" ? this.formWord(formToken) : undefined;
    const form = word?.form ?? formsByTokenName[formToken.tokenType.name] ?? "always";
    let operands: Expr[];
    let bound: Bound | undefined;
    if (form === "always") {
      operands = [this.expr(childNode(node, "expr"), tokenEnd(formToken))];
    } else {
      const boundNode = childNode(node, "bound");
      if (boundNode !== undefined) bound = this.bound(boundNode);
      operands = this.operandList(childNode(node, "operandList"), extentOf(boundNode)?.end ?? tokenEnd(formToken));
    }
    const recovered = word?.known === false || containsRecovery(node) || this.hasErrorWithin(extent.start, extent.end);
    const scope = scopeNode === undefined ? undefined : this.scope(scopeNode);
    return {
      kind: "Statement",
      form,
      formSpan,
      ...(bound ? { bound } : {}),
      operands,
      ...(scope !== undefined ? { scope } : {}),
      span: this.span(extent.start, extent.end),
      ...(recovered ? { recovered: true } : {}),
    };
  }

  /**
   * A statement's scope. `between`'s two patterns come as one expression, split at its first
   * top-level `and`; a scope that does not read as one of the four is reported (V0009) and left out
   * of the tree (the statement is then judged over the whole run, but the file has an error).
   */
  private scope(node: CstNode): Scope | undefined {
    const wordToken = childToken(node, "scopeWord")!;
    const word = wordToken.image;
    const wordSpan = this.tokenSpan(wordToken);
    const open = this.expr(childNode(node, "open"), tokenEnd(wordToken));
    const closeNode = childNode(node, "close");
    const close = closeNode === undefined ? undefined : this.expr(closeNode, extentOf(childNode(node, "open"))?.end ?? tokenEnd(wordToken));
    const extent = extentOf(node)!;
    const span = this.span(extent.start, extent.end);
    const problem = (message: string, help: string): undefined => {
      this.diagnostics.push(diagnostic("V0009", message, { span, help }));
      return undefined;
    };
    if (word === "after") return { kind: close === undefined ? "after" : "afterUntil", wordSpan, open, ...(close !== undefined ? { close } : {}), span };
    if (close !== undefined) return problem(`\`until\` closes the stretches of \`after ψ\` only, not of \`${word}\``, word === "between" ? "`between ψ and ψ'` closes each stretch at ψ'; `after ψ until ψ'` also judges a stretch still open at the end" : "write `after ψ until ψ'` for the stretch from ψ to ψ'");
    if (word === "before") return { kind: "before", wordSpan, open, span };
    // between ψ and ψ'
    if (open.kind !== "And" || open.operands.length < 2) {
      return problem("`between` takes two patterns: `between ψ and ψ'`", "the first pattern ends at the first `and`: parenthesize a first pattern that has `and` in it, or name it");
    }
    const [first, ...rest] = open.operands;
    const closing: Expr = rest.length === 1 ? rest[0]! : { kind: "And", operands: rest, span: this.span(rest[0]!.span.start, rest[rest.length - 1]!.span.end) };
    return { kind: "between", wordSpan, open: first!, close: closing, span };
  }

  /**
   * A form written as a word (`limit`, a contextual word): the form it is, or, for another word, an
   * error naming the form it most likely means (the statement is then recovered).
   */
  private formWord(token: IToken): { form: Form; known: boolean } {
    if (token.image === "limit") return { form: "limit", known: true };
    const forms = [...Object.values(formsByTokenName), "limit"];
    const suggestion = closestName(token.image, forms);
    this.diagnostics.push(
      diagnostic("V0001", `\`${token.image}\` is not a form`, {
        span: this.tokenSpan(token),
        help: `a statement is one of ${forms.map((form) => `\`${form}\``).join(", ")}`,
        ...(suggestion !== undefined ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span: this.tokenSpan(token), newText: suggestion }] } } : {}),
      }),
    );
    return { form: "limit", known: false };
  }

  private bound(node: CstNode): Bound {
    const extent = extentOf(node)!;
    const valueToken = childToken(node, "value");
    let value: BoundLiteral;
    if (valueToken === undefined) {
      const bracket = childToken(node, "LeftBracket");
      const at = bracket ? tokenEnd(bracket) : extent.start;
      value = { text: "", span: this.span(at, at) };
    } else value = this.boundLiteral(valueToken);
    const of = this.keyPath(childNode(node, "of"));
    const perToken = childToken(node, "per");
    return {
      value,
      ...(of !== undefined ? { of } : {}),
      ...(perToken !== undefined ? { per: this.boundLiteral(perToken) } : {}),
      span: this.span(extent.start, extent.end),
    };
  }

  private boundLiteral(token: IToken): BoundLiteral {
    const text = token.image;
    const isNumberToken = token.tokenType.name === "NumberLiteral";
    const isNumber = isNumberToken && isJsonNumber(text);
    const duration = isNumberToken ? parseDuration(text) : undefined;
    return { text, ...(isNumber ? { value: Number(text) } : {}), ...(duration !== undefined ? { duration } : {}), span: this.tokenSpan(token) };
  }

  private operandList(node: CstNode | undefined, fallback: number): Expr[] {
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
  private expr(node: CstNode | undefined, fallback: number): Expr {
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
      if (key.output !== undefined && key.segments.length === 0) return { kind: "OutputMatch", pattern: this.stringLiteral(patternToken), span };
      return { kind: "KeyMatch", key, pattern: this.stringLiteral(patternToken), span };
    }
    const variableToken = childToken(node, "Variable");
    if (childToken(node, "Equals") !== undefined && variableToken !== undefined) {
      return { kind: "KeyBind", key, variable: { name: variableToken.image.slice(1), span: this.tokenSpan(variableToken) }, span };
    }
    const word = childToken(node, "operatorWord");
    if (word !== undefined) return this.wordAtom(key, word, childToken(node, "RegexToken"), variableToken, span) ?? this.missing(extent.start, extent.end);
    return this.missing(extent.start, extent.end);
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
      diagnostic("V0008", known ? `\`${word.image}\` does not take ${operand}` : `\`${word.image}\` is not an operator; after a key, write \`in\`, \`~\`, \`=\`, \`matches\` or \`contains\``, {
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

  private regexLiteral(token: IToken): RegexLiteral {
    const raw = token.image;
    const closed = token.tokenType.name === "RegexLiteral";
    const close = closed ? raw.lastIndexOf("/") : raw.length;
    return { source: raw.slice(1, close), flags: closed ? raw.slice(close + 1) : "", raw, closed, span: this.tokenSpan(token) };
  }

  private keyPath(node: CstNode | undefined): KeyPath | undefined {
    const extent = extentOf(node);
    if (node === undefined || extent === undefined) return undefined;
    const output = childToken(node, "OutputKeyword");
    const segments: KeySegment[] = [];
    for (const segmentNode of childNodes(node, "keySegment")) {
      const indexToken = childToken(segmentNode, "index");
      if (indexToken !== undefined) {
        // A malformed index was reported with the tokens (V0005): the atom is a hole.
        const index = listIndexValue(indexToken.image);
        if (index === undefined) return undefined;
        if (segments.length === 0) {
          // Only `output.0` gets here (an index is lexed only after a dot): a path starts at an object.
          this.diagnostics.push(
            diagnostic("V0001", `expected a field name after \`output.\`, found the list index \`${indexToken.image}\``, {
              span: this.tokenSpan(indexToken),
              help: "a path into the output reads the JSON object the output holds, so it starts with a field's name (`output.items.0`); an index picks an element of a list the path has reached",
            }),
          );
          return undefined;
        }
        segments.push({ index, span: this.tokenSpan(indexToken) });
        continue;
      }
      const token = childToken(segmentNode, "name");
      if (token === undefined) continue;
      const quoted = token.tokenType.name !== "Identifier";
      segments.push({ name: quoted ? this.stringValue(token) : token.image, quoted, span: this.tokenSpan(token) });
    }
    if (output !== undefined) return { output: this.tokenSpan(output), segments, span: this.span(extent.start, extent.end) };
    if (segments.length === 0) return undefined;
    return { segments, span: this.span(extent.start, extent.end) };
  }

  private valueLiteral(token: IToken): ValueLiteral {
    const span = this.tokenSpan(token);
    const raw = token.image;
    switch (token.tokenType.name) {
      case "NumberLiteral":
        return { value: Number(raw), raw, span };
      case "TrueKeyword":
        return { value: true, raw, span };
      case "FalseKeyword":
        return { value: false, raw, span };
      case "NullKeyword":
        return { value: null, raw, span };
      default:
        return { value: this.stringValue(token), raw, span };
    }
  }

  /**
   * A bare word where a value belongs (`module in {pytest}`): only action names are written bare.
   * Reported with a fix that quotes it; the tree keeps it as the string it was meant to be.
   */
  private bareWord(token: IToken): ValueLiteral {
    const span = this.tokenSpan(token);
    const quoted = JSON.stringify(token.image);
    this.diagnostics.push(
      diagnostic("V0007", `the value \`${token.image}\` is a bare word; an argument's values are JSON values`, {
        span,
        help: `write the string \`${quoted}\` (only action names, in \`action in {…}\`, are written without quotes)`,
        fix: { title: `write \`${quoted}\``, edits: [{ span, newText: quoted }] },
      }),
    );
    return { value: token.image, raw: token.image, span };
  }

  private stringLiteral(token: IToken): StringLiteral {
    return { value: this.stringValue(token), raw: token.image, span: this.tokenSpan(token) };
  }

  private stringValue(token: IToken): string {
    return decodeString(token.image, token.tokenType.name !== "UnterminatedString").value;
  }

  private identifier(token: IToken | undefined, fallback: number): Identifier {
    if (token === undefined) return { text: "", span: this.span(fallback, fallback), recovered: true };
    return { text: token.image, span: this.tokenSpan(token) };
  }

  private missing(start: number, end: number = start): MissingExpr {
    return { kind: "Missing", span: this.span(start, end), recovered: true };
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

  /** Whether the parser reported an error at an offset in `[start, end)`: a binary search, per statement. */
  private hasErrorWithin(start: number, end: number): boolean {
    const offsets = this.errorOffsets;
    let low = 0;
    let high = offsets.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (offsets[middle]! < start) low = middle + 1;
      else high = middle;
    }
    return low < offsets.length && offsets[low]! < end;
  }

  private tokenSpan(token: IToken): Span {
    return this.span(token.startOffset, tokenEnd(token));
  }

  private span(start: number, end: number): Span {
    return this.input.lines.span(start, end);
  }
}
