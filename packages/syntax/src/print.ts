import { hasErrors, type Diagnostic } from "@vigil/diagnostics";
import {
  keyPathText,
  symbolText,
  type Bound,
  type Comment,
  type Expr,
  type Item,
  type KeyPath,
  type PolicyDecl,
  type Quantifier,
  type RuleDecl,
  type SourceFile,
  type Scope,
  type Statement,
} from "./ast.js";
import { concat, concatAll, group, groupAll, hardline, ifBreak, indent, indentAll, join, line, render, softline, type Layout } from "./layout.js";
import { pushAll } from "./arrays.js";
import { parse } from "./parse.js";

/**
 * The canonical printer behind `vigilc fmt`. Formatting is a function of the AST and the comments:
 * ASCII keywords, two-space indentation, one declaration per line, operand lists and sets broken
 * one element per line (with a trailing comma) only when they do not fit in `lineWidth` columns,
 * and at most one blank line where the source had one or more. Every comment is kept; a comment
 * inside an expression, where no line break can hold it, moves to the line before its declaration.
 * Formatting a formatted file changes nothing.
 */

export const lineWidth = 100;

export interface FormatResult {
  /** The formatted text; absent when the file has syntax errors (a file is never half-formatted). */
  readonly text?: string;
  readonly diagnostics: readonly Diagnostic[];
}

export function format(text: string): FormatResult {
  const parsed = parse(text);
  if (hasErrors(parsed.diagnostics)) return { diagnostics: parsed.diagnostics };
  return { text: printSourceFile(parsed.file), diagnostics: parsed.diagnostics };
}

/** An expression on one line, as the canonical printer writes it (used in messages and hovers). */
export function printExpr(expr: Expr): string {
  return render(exprLayout(expr), Number.POSITIVE_INFINITY);
}

/** A statement on one line. */
export function printStatement(statement: Statement): string {
  return render(statementLayout(statement, []), Number.POSITIVE_INFINITY);
}

export function printSourceFile(file: SourceFile): string {
  const printer = new FilePrinter(file.comments);
  const text = render(printer.file(file.policies), lineWidth);
  return text.length === 0 ? "" : `${text}\n`;
}

// Expressions. Binding strength, loosest first: implies < or < and < prefix operators < atoms.

const precedence = { Implies: 1, Or: 2, And: 3, Prefix: 4, Atom: 5 } as const;

function precedenceOf(expr: Expr): number {
  switch (expr.kind) {
    case "Implies":
      return precedence.Implies;
    case "Or":
      return precedence.Or;
    case "And":
      return precedence.And;
    case "Not":
    case "Once":
    case "Eventually":
      return precedence.Prefix;
    default:
      return precedence.Atom;
  }
}

/** `expr`, parenthesized when it binds more loosely than its position requires. */
function operand(expr: Expr, required: number): Layout {
  const inner = exprLayout(expr);
  return precedenceOf(expr) >= required ? inner : parenthesized(expr);
}

/**
 * An n-ary `and`/`or`: flat, or one operand per line at the indentation of the first (the context
 * indents). An `and` under an `or` keeps its parentheses: precedence makes them redundant, but
 * people read mixed chains with them.
 */
function chain(operands: readonly Expr[], keyword: "and" | "or"): Layout {
  const required = keyword === "or" ? precedence.Or : precedence.And;
  // A nested chain of the same kind came from parentheses in the source: keep them, so that the
  // formatted text parses back to the same tree.
  const keep = (expr: Expr) => expr.kind === (keyword === "or" ? "Or" : "And") || (keyword === "or" && expr.kind === "And");
  const parts: Layout[] = [];
  operands.forEach((expr, index) => {
    const part = keep(expr) ? parenthesized(expr) : operand(expr, required);
    parts.push(index === 0 ? part : concat(line, `${keyword} `, part));
  });
  return groupAll(parts);
}

function parenthesized(expr: Expr): Layout {
  return group("(", indent(softline, exprLayout(expr)), softline, ")");
}

/** `[N]`, `[5m]`, `[N of KEY per 1d]` as written (the literals keep their spelling); empty without one. */
function boundText(bound: Bound | undefined): string {
  if (bound === undefined) return "";
  const of = bound.of !== undefined ? ` of ${keyPathText(bound.of)}` : "";
  const per = bound.per !== undefined ? ` per ${bound.per.text}` : "";
  return `[${bound.value.text}${of}${per}]`;
}

function setLayout(items: readonly string[]): Layout {
  if (items.length === 0) return "{}";
  return group("{", indent(softline, join(concat(",", line), items), ifBreak(",")), softline, "}");
}

function exprLayout(expr: Expr): Layout {
  switch (expr.kind) {
    case "Implies":
      return group(operand(expr.left, precedence.Or), indent(line, "implies ", operand(expr.right, precedence.Implies)));
    case "Or":
      return chain(expr.operands, "or");
    case "And":
      return chain(expr.operands, "and");
    case "Not":
      return concat("not ", operand(expr.operand, precedence.Prefix));
    case "Once":
      return concat(`once${boundText(expr.window)} `, operand(expr.operand, precedence.Prefix));
    case "Eventually":
      return concat(`eventually${boundText(expr.window)} `, operand(expr.operand, precedence.Prefix));
    case "PatternRef":
      return expr.name.text;
    case "ActionIn":
      return concat("action in ", setLayout(expr.actions.map(symbolText)));
    case "KeyIn":
      return concat(subjectText(expr), " in ", setLayout(expr.values.map((value) => value.raw)));
    case "KeyMatch":
      return `${subjectText(expr)} ~ ${expr.pattern.raw}`;
    case "KeyBind":
      return `${keyPathText(expr.key)} = $${expr.variable.name}`;
    case "KeyRegex":
      return `${subjectText(expr)} matches ${expr.regex.raw}`;
    case "KeyContains":
      return `${subjectText(expr)} contains $${expr.variable.name}`;
    case "KeyCompare":
      return `${subjectText(expr)} ${expr.operator} ${expr.number.text}`;
    case "KeyCount":
      return `count(${keyPathText(expr.key)}) ${expr.operator} ${expr.number.text}`;
    case "StatusIs":
      return `status = ${expr.status}`;
    case "OutputMatch":
      return `output ~ ${expr.pattern.raw}`;
    case "Missing":
      return "<missing>";
  }
}

/** A condition's key path, inside its `every(…)` or `some(…)` when it has one. */
function subjectText(atom: { readonly key: KeyPath; readonly quantifier?: Quantifier }): string {
  return atom.quantifier === undefined ? keyPathText(atom.key) : `${atom.quantifier.kind}(${keyPathText(atom.key)})`;
}

/**
 * A statement. `operandComments[i]` are the comments written just before operand i (index
 * `operands.length`: after the last one); any comment forces the list to break.
 */
function statementLayout(statement: Statement, operandComments: readonly (readonly Comment[])[]): Layout {
  const form = formLayout(statement, operandComments);
  // The scope stays on the statement's line when it fits, else goes to the next, indented.
  return statement.scope === undefined ? form : group(form, indent(line, scopeLayout(statement.scope)));
}

/**
 * A scope after its statement: `after ψ`, `before ψ`, `between ψ and ψ'` (ψ parenthesized when it
 * has an operator looser than `not`, since the first top-level `and` ends it), `after ψ until ψ'`.
 */
function scopeLayout(scope: Scope): Layout {
  switch (scope.kind) {
    case "after":
    case "before":
      return concat(`${scope.kind} `, group(exprLayout(scope.open)));
    case "between":
      return concat("between ", group(operand(scope.open, precedence.Prefix)), " and ", group(exprLayout(scope.close!)));
    case "afterUntil":
      return concat("after ", group(exprLayout(scope.open)), " until ", group(exprLayout(scope.close!)));
  }
}

function formLayout(statement: Statement, operandComments: readonly (readonly Comment[])[]): Layout {
  if (statement.form === "always") {
    const body = statement.operands[0] ?? { kind: "Missing", span: statement.span, recovered: true };
    // A bare chain continues one level in; a parenthesized body closes at the rule's own level.
    const chained = body.kind === "And" || body.kind === "Or" || body.kind === "Implies";
    return concat("always ", chained ? indent(group(exprLayout(body))) : group(exprLayout(body)));
  }
  const head = `${statement.form}${boundText(statement.bound)}`;
  const commentLines = (index: number): Layout[] => (operandComments[index] ?? []).map((comment) => concat(commentText(comment), hardline));
  const parts: Layout[] = [softline];
  statement.operands.forEach((expr, index) => {
    if (index > 0) parts.push(",", line);
    pushAll(parts, commentLines(index));
    parts.push(group(exprLayout(expr)));
  });
  parts.push(ifBreak(","));
  for (const comment of operandComments[statement.operands.length] ?? []) parts.push(concat(hardline, commentText(comment)));
  return concat(head, group("(", indentAll(parts), softline, ")"));
}

/**
 * A rule: its statement, then its response on the same line when the whole rule fits, else on the
 * next line, indented. The statement is laid out as if the response were not there, so that a long
 * response moves to its own line rather than breaking a statement that fits.
 */
function ruleLayout(rule: RuleDecl, operandComments: readonly (readonly Comment[])[]): Layout {
  const declaration = concat(`rule ${rule.name.text}: `, statementLayout(rule.statement, operandComments));
  if (rule.response === undefined) return declaration;
  const response = rule.remediation === undefined ? rule.response.value : `${rule.response.value} ${rule.remediation.raw}`;
  return group(declaration, indent(line, response));
}

function commentText(comment: Comment): string {
  return comment.text.trimEnd();
}

/** Lays out declarations with the comments of the file, consuming the comments in source order. */
class FilePrinter {
  private next = 0;

  constructor(private readonly comments: readonly Comment[]) {}

  file(policies: readonly PolicyDecl[]): Layout {
    const parts: Layout[] = [];
    policies.forEach((policy, index) => {
      if (index > 0) parts.push(hardline, hardline);
      pushAll(parts, this.commentRun(this.takeBefore(policy.span.start), policy.span.line));
      parts.push(this.policy(policy, policies[index + 1]?.span.start));
    });
    const rest = this.takeBefore(Number.POSITIVE_INFINITY);
    if (rest.length > 0) {
      if (parts.length > 0) parts.push(hardline, hardline);
      pushAll(parts, this.commentRun(rest, undefined));
      parts.pop(); // the caller adds the file's final newline
    }
    return concatAll(parts);
  }

  private policy(policy: PolicyDecl, nextStart: number | undefined): Layout {
    const header: Layout[] = [`policy ${policy.name.text} {`];
    const firstItemStart = policy.items[0]?.span.start ?? policy.span.end;
    for (const comment of this.takeWhile((c) => c.span.line === policy.span.line && c.span.start < firstItemStart)) {
      header.push(` ${commentText(comment)}`);
    }
    const body: Layout[] = [];
    let previousLine: number | undefined;
    policy.items.forEach((item, index) => {
      const leading = this.takeBefore(item.span.start);
      body.push(hardline);
      pushAll(body, blankLine(previousLine, leading[0]?.span.line ?? item.span.line));
      // Comments moved out of the declaration go above its doc comment, which must stay attached.
      const docStart = item.doc?.span.start ?? item.span.start;
      const beforeDoc = leading.filter((comment) => comment.span.start < docStart);
      const docRun = leading.filter((comment) => comment.span.start >= docStart);
      const printed = this.item(item, policy.items[index + 1]?.span.start ?? policy.span.end);
      pushAll(body, this.commentRun(beforeDoc, docRun[0]?.span.line ?? item.span.line));
      for (const comment of printed.hoisted) body.push(concat(commentText(comment), hardline));
      pushAll(body, this.commentRun(docRun, item.span.line));
      body.push(printed.layout);
      previousLine = printed.lastLine;
    });
    // Comments after the last item, before the closing brace.
    const closing = this.takeBefore(policy.span.end - 1);
    if (closing.length > 0) {
      body.push(hardline);
      pushAll(body, blankLine(previousLine, closing[0]!.span.line));
      pushAll(body, this.commentRun(closing, undefined));
      body.pop();
    }
    const trailing = this.takeWhile((c) => c.span.line === policy.span.endLine && c.span.start < (nextStart ?? Number.POSITIVE_INFINITY));
    const parts: Layout[] = header;
    parts.push(indentAll(body), hardline, "}");
    for (const comment of trailing) parts.push(` ${commentText(comment)}`);
    return concatAll(parts);
  }

  private item(item: Item, boundary: number): { layout: Layout; hoisted: readonly Comment[]; lastLine: number } {
    const inside = this.takeBefore(item.span.end);
    let hoisted: Comment[] = inside;
    let operandComments: Comment[][] = [];
    if (item.kind === "RuleDecl" && item.statement.form !== "always") {
      ({ hoisted, operandComments } = placeBetweenOperands(item.statement, inside));
    }
    const declaration =
      item.kind === "PatternDecl"
        ? group(`pattern ${item.name.text} =`, indent(line, exprLayout(item.body)))
        : ruleLayout(item, operandComments);
    const trailing = this.takeWhile((comment) => comment.span.line === item.span.endLine && comment.span.start < boundary);
    const parts: Layout[] = [declaration];
    for (const comment of trailing) parts.push(` ${commentText(comment)}`);
    const layout = concatAll(parts);
    return { layout, hoisted, lastLine: trailing[trailing.length - 1]?.span.endLine ?? item.span.endLine };
  }

  /**
   * Comments each on its own line, each followed by a line break, keeping one blank line between
   * them (and before `nextLine`, the line of what follows) where the source had one or more: a blank
   * line after a `///` run detaches it from the declaration, so it must survive formatting.
   */
  private commentRun(comments: readonly Comment[], nextLine: number | undefined): Layout[] {
    const parts: Layout[] = [];
    let previousLine: number | undefined;
    for (const comment of comments) {
      pushAll(parts, blankLine(previousLine, comment.span.line));
      parts.push(commentText(comment), hardline);
      previousLine = comment.span.endLine;
    }
    if (nextLine !== undefined) pushAll(parts, blankLine(previousLine, nextLine));
    return parts;
  }

  private takeBefore(offset: number): Comment[] {
    return this.takeWhile((comment) => comment.span.start < offset);
  }

  private takeWhile(predicate: (comment: Comment) => boolean): Comment[] {
    const taken: Comment[] = [];
    while (this.next < this.comments.length && predicate(this.comments[this.next]!)) taken.push(this.comments[this.next++]!);
    return taken;
  }
}

/** One blank line when the source had at least one between the two lines. */
function blankLine(previousLine: number | undefined, nextLine: number): Layout[] {
  return previousLine !== undefined && nextLine > previousLine + 1 ? [hardline] : [];
}

/**
 * Splits the comments inside a statement into those that sit between its operands (kept there, one
 * per line) and those inside an operand's expression (moved before the declaration).
 */
function placeBetweenOperands(statement: Statement, comments: readonly Comment[]): { hoisted: Comment[]; operandComments: Comment[][] } {
  const hoisted: Comment[] = [];
  const operandComments: Comment[][] = statement.operands.map(() => []);
  operandComments.push([]);
  const afterHead = statement.bound?.span.end ?? statement.formSpan.end;
  const operands = statement.operands;
  // Comments and operands are both in source order, so one cursor over the operands serves all the
  // comments: a comment that starts after operand k ends can only sit in a later gap.
  let index = 0;
  for (const comment of comments) {
    while (index < operands.length && comment.span.start >= operands[index]!.span.end) index++;
    const previousEnd = index === 0 ? afterHead : operands[index - 1]!.span.end;
    const nextStart = operands[index]?.span.start ?? statement.span.end;
    if (comment.span.start >= previousEnd && comment.span.end <= nextStart) operandComments[index]!.push(comment);
    else hoisted.push(comment);
  }
  return { hoisted, operandComments };
}
