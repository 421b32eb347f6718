import type { CstNode, IToken } from "chevrotain";
import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { Bound, Expr, Form, Item, PolicyDecl, ResponseWord, RuleResponse, Scope, SourceFile, Statement, StringLiteral } from "./ast.js";
import { ruleResponses } from "./ast.js";
import { scopeWords } from "./text-to-cst.js";
import { childNode, childToken, containsRecovery, extentOf, tokenEnd } from "./cst-access.js";
import { FormulaBuilder } from "./cst-to-ast-formulas.js";
import type { AstBuildInput } from "./cst-to-ast-base.js";

/**
 * Builds the AST of `ast.ts` from the parser's CST. Total by design: wherever recovery left a hole,
 * it produces a `Missing` expression, a `recovered` identifier or a `recovered` statement instead
 * of failing, so that later stages always get a complete tree. This file builds the declarations;
 * the formulas and literals in them are built by the layers below (`cst-to-ast-formulas.ts`,
 * `cst-to-ast-literals.ts`, on `cst-to-ast-base.ts`).
 */

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
      ["block", ["deny", "reject", "refuse", "forbid", "disallow", "prevent", "fail", "veto"]],
      ["warn", ["warning", "log", "report", "notify", "alert", "audit", "flag", "allow", "permit"]],
      ["ask", ["confirm", "prompt", "approve", "approval", "escalate", "review", "human"]],
      ["halt", ["stop", "abort", "kill", "terminate", "shutdown"]],
      ["quarantine", ["isolate", "contain", "lockdown", "freeze", "readonly"]],
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

/**
 * The top layer of the builder (below it: formulas, literals, and what they share, in the
 * `cst-to-ast-*.ts` files): policies, patterns and rules, with a rule's statement, its scope and its
 * response.
 */
class AstBuilder extends FormulaBuilder {
  readonly declarations: BuiltDeclaration[][] = [];

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
          diagnostic("V0008", "expected `block`, `warn`, `ask`, `halt` or `quarantine` before the remediation message", {
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
    const meaning =
      "`block` stops the call (the default), `warn` lets it through and reports it, `ask` lets a person decide, `halt` stops the run, `quarantine` lets only read-only calls through for the rest of the run";
    this.diagnostics.push(
      diagnostic("V0008", `\`${word.image}\` is not a response; a rule's response is \`block\`, \`warn\`, \`ask\`, \`halt\` or \`quarantine\``, {
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
}
