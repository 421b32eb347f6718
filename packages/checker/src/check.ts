import { diagnostic, type Diagnostic, type Span, type TextEdit } from "@vigil/diagnostics";
import {
  printExpr,
  walkExpressions,
  type Expr,
  type PatternDecl,
  type PolicyDecl,
  type RuleDecl,
  type Scope,
  type SourceFile,
  type Statement,
} from "@vigil/syntax";
import type { Signature } from "@vigil/trace";
import { checkAgainstSignature } from "./check-signature.js";
import type { CheckedPattern, CheckedPolicy, CheckedProgram, CheckedScope, CheckedStatement, Formula, LimitMeasure, Window } from "./ir.js";
import { variableAtoms } from "./ir.js";
import { lowerExpr, place, resolvePatternDecl, type LowerContext } from "./lower-to-ir.js";
import { checkReadOnly } from "./read-only.js";
import { resolveFile, type PolicyScope, type SymbolTable } from "./resolve.js";

export interface CheckOptions {
  /** The signature Σ of a trace. When given, symbols outside it are reported (as warnings). */
  readonly signature?: Signature;
}

export interface CheckResult {
  readonly program: CheckedProgram;
  readonly diagnostics: Diagnostic[];
  /** Every policy, pattern, rule and variable with its declaration and references (for editors). */
  readonly symbols: SymbolTable;
}

/**
 * Checks a parsed file: names, pattern cycles, arities, bounds, wildcards, the variable discipline,
 * and (given a signature) the symbols against Σ. Reports every problem at once and never throws on
 * user input. Only statements without errors enter the returned program.
 */
export function checkSourceFile(file: SourceFile, options: CheckOptions = {}): CheckResult {
  const resolution = resolveFile(file);
  const diagnostics: Diagnostic[] = [...resolution.diagnostics];
  const policies = resolution.scopes.map((scope) => checkPolicy(scope, options, diagnostics));
  checkStrayDocComments(file, diagnostics);
  return { program: { policies }, diagnostics, symbols: resolution.symbols };
}

/**
 * A `///` comment documents the declaration on the next line; one that documents nothing (a blank
 * line or code follows it, or it trails code) is almost always a mistake that would silently drop
 * the requirement text from reports.
 */
function checkStrayDocComments(file: SourceFile, diagnostics: Diagnostic[]): void {
  const documented: Span[] = [];
  for (const policy of file.policies) {
    if (policy.doc) documented.push(policy.doc.span);
    for (const item of policy.items) if (item.doc) documented.push(item.doc.span);
  }
  // Doc spans do not overlap, and comments come in source order: one cursor serves them all.
  documented.sort((a, b) => a.start - b.start);
  let next = 0;
  for (const comment of file.comments) {
    if (comment.kind !== "doc") continue;
    while (next < documented.length && documented[next]!.end <= comment.span.start) next++;
    const span = documented[next];
    if (span !== undefined && span.start <= comment.span.start && comment.span.end <= span.end) continue;
    const slashes = { ...comment.span, end: comment.span.start + 3, endLine: comment.span.line, endColumn: comment.span.column + 3 };
    diagnostics.push(
      diagnostic("V1105", "this doc comment documents nothing: no policy, pattern or rule starts on the next line", {
        span: comment.span,
        help: "put it directly above the declaration it describes, or write `//` for a plain comment",
        fix: { title: "make it a plain `//` comment", edits: [{ span: slashes, newText: "//" }] },
      }),
    );
  }
}

function checkPolicy(scope: PolicyScope, options: CheckOptions, diagnostics: Diagnostic[]): CheckedPolicy {
  const { declaration: policy, patterns, rules } = scope;
  const context: LowerContext = {
    patterns,
    diagnostics,
    resolved: new Map(),
    resolving: new Set(),
    used: new Set(),
    tooDeep: new Set(),
  };
  // Resolve every pattern declaration once, so that cycles and errors inside unused patterns are
  // reported too, each exactly once.
  for (const pattern of patterns.values()) resolvePatternDecl(pattern, context);
  const readOnly = checkReadOnly(scope, context);

  for (const item of policy.items) if (item.kind === "RuleDecl") checkRemediation(item, diagnostics);
  for (const item of policy.items) if (item.kind === "RuleDecl" && item.statement.scope !== undefined && item.statement.recovered !== true) checkScopeChains(item.statement.scope, diagnostics);

  const statements: CheckedStatement[] = [];
  for (const item of policy.items) {
    if (item.kind !== "RuleDecl" || rules.get(item.name.text) !== item) continue;
    const before = diagnostics.length;
    const statement = checkStatement(policy, item, context);
    const hasErrors = diagnostics.slice(before).some((d) => d.severity === "error");
    if (statement === undefined || hasErrors || item.statement.recovered === true) continue;
    // A `quarantine` rule carries the calls the run it quarantines may make; without them (V1018) it is left out.
    if (statement.response !== "quarantine") statements.push(statement);
    else if (readOnly !== undefined) statements.push({ ...statement, readOnly });
  }

  for (const pattern of patterns.values()) {
    if (!context.used.has(pattern.name.text)) {
      diagnostics.push(
        diagnostic("V1104", `the pattern \`${pattern.name.text}\` is never used`, {
          span: pattern.name.span,
          help: "use it in a rule or remove it",
        }),
      );
    }
  }

  if (options.signature !== undefined) checkAgainstSignature(policy, options.signature, diagnostics);

  return {
    name: policy.name.text,
    ...(policy.doc !== undefined ? { doc: policy.doc.text } : {}),
    span: policy.span,
    statements,
    ...(readOnly !== undefined ? { readOnly } : {}),
  };
}


/**
 * A remediation is read by an agent that has just been stopped, to learn how to comply; an empty
 * one tells it nothing, and is most likely a message not written yet.
 */
function checkRemediation(rule: RuleDecl, diagnostics: Diagnostic[]): void {
  const remediation = rule.remediation;
  if (remediation === undefined || !isBlank(remediation.value)) return;
  // Remove the message and the space before it, back to the end of the response word.
  const word = rule.response?.span;
  const removal = word === undefined ? remediation.span : { ...remediation.span, start: word.end, line: word.endLine, column: word.endColumn };
  diagnostics.push(
    diagnostic("V1106", `the remediation message of the rule \`${rule.name.text}\` is empty`, {
      span: remediation.span,
      help: "say what the agent should do instead, in words it can act on, or remove the message",
      fix: { title: "remove the empty message", edits: [{ span: removal, newText: "" }] },
    }),
  );
}

/**
 * Two traps of a scope's patterns, where precedence reads otherwise than most people do (V1108):
 * `between A and B and C`, whose first pattern ends at the first `and`, so that it reads as
 * `between A and (B and C)` (likely meant: `between (A and B) and C`); and a pattern mixing `and`
 * and `or` without parentheses (`after A or B and C` reads as `after A or (B and C)`). A rule's own
 * patterns are left alone: there the reading is the usual one, and `vigilc fmt` adds the
 * parentheses. The fix writes the parentheses of the reading the parser made, which changes nothing.
 */
function checkScopeChains(scope: Scope, diagnostics: Diagnostic[]): void {
  const close = scope.close;
  if (scope.kind === "between" && close !== undefined && close.kind === "And" && close.parenthesized !== true) {
    const open = operandText(scope.open);
    const [second, ...rest] = close.operands.map(operandText);
    const written = `${second} and ${rest.join(" and ")}`;
    diagnostics.push(
      diagnostic("V1108", `\`between ${open} and ${written}\` reads as \`between ${open} and (${written})\`: the first pattern ends at the first \`and\``, {
        span: scope.span,
        help: `each stretch opens at an event matching \`${open}\` and closes at one matching all of \`${written}\`; if the stretch is to open at an event matching \`${open} and ${second}\`, write \`between (${open} and ${second}) and ${rest.join(" and ")}\``,
        fix: { title: `parenthesize as it reads: \`between ${open} and (${written})\``, edits: parenthesize(close.span) },
      }),
    );
  }
  for (const root of [scope.open, ...(close !== undefined ? [close] : [])]) {
    walkExpressions([root], (expr) => {
      if (expr.kind !== "Or") return;
      const bare = expr.operands.filter((operand) => operand.kind === "And" && operand.parenthesized !== true);
      if (bare.length === 0) return;
      const reading = expr.operands.map(operandText).join(" or ");
      diagnostics.push(
        diagnostic("V1108", `this scope pattern mixes \`and\` and \`or\` without parentheses: it reads as \`${reading}\``, {
          span: expr.span,
          help: "`and` binds more tightly than `or`; write the parentheses of the reading you mean (`(A or B) and C` is another pattern than `A or (B and C)`)",
          fix: { title: `parenthesize as it reads: \`${reading}\``, edits: bare.flatMap((operand) => parenthesize(operand.span)) },
        }),
      );
    });
  }
}

/** The edits that put a span in parentheses. */
function parenthesize(span: Span): TextEdit[] {
  const at = (offset: number, line: number, column: number): Span => ({ start: offset, end: offset, line, column, endLine: line, endColumn: column });
  return [
    { span: at(span.start, span.line, span.column), newText: "(" },
    { span: at(span.end, span.endLine, span.endColumn), newText: ")" },
  ];
}

/** An operand of a chain quoted in a message: in parentheses when it is a chain itself, cut when long. */
function operandText(expr: Expr): string {
  return expr.kind === "And" || expr.kind === "Or" || expr.kind === "Implies" ? `(${clip(printExpr(expr))})` : clip(printExpr(expr));
}

/** A pattern quoted in a message, cut when long. */
function clip(text: string): string {
  return text.length <= 60 ? text : `${text.slice(0, 59)}…`;
}

function isBlank(text: string): boolean {
  return text.trim() === "";
}

const arity: Record<Statement["form"], number> = { abs: 1, prec: 2, resp: 2, bresp: 2, rslv: 2, until: 3, always: 1, limit: 1 };

function checkStatement(policy: PolicyDecl, rule: RuleDecl, context: LowerContext): CheckedStatement | undefined {
  const statement = rule.statement;
  const { diagnostics } = context;
  const expected = arity[statement.form];
  if (statement.operands.length !== expected) {
    const noun = expected === 1 ? "one pattern" : expected === 2 ? "two patterns" : "three patterns (trigger, resolution, bad)";
    diagnostics.push(
      diagnostic("V1011", `\`${statement.form}\` takes ${noun}, but ${statement.operands.length} ${statement.operands.length === 1 ? "is" : "are"} given`, {
        span: statement.span,
      }),
    );
    return undefined;
  }

  const window = statement.form === "bresp" ? brespWindow(statement, diagnostics) : undefined;
  const limit = statement.form === "limit" ? limitOf(statement, diagnostics) : undefined;
  if ((statement.form === "bresp" && window === undefined) || (statement.form === "limit" && limit === undefined)) return undefined;
  if (statement.form !== "bresp" && statement.form !== "limit" && statement.bound !== undefined) {
    diagnostics.push(
      diagnostic("V1009", `\`${statement.form}\` takes no bound in brackets`, {
        span: statement.bound.span,
        help: "only `bresp[…]` and `limit[…]` take one (and `once[…]`, `eventually[…]` in an `always` body)",
        fix: { title: "remove the brackets", edits: [{ span: statement.bound.span, newText: "" }] },
      }),
    );
    return undefined;
  }

  const scope = statement.scope === undefined ? undefined : checkScope(statement.scope, context);
  if (scope === null) return undefined;

  const remediation = rule.remediation?.value;
  const common = {
    ...(scope !== undefined ? { scope } : {}),
    policy: policy.name.text,
    name: rule.name.text,
    ...(rule.doc !== undefined ? { doc: rule.doc.text } : {}),
    response: rule.response?.value ?? "block",
    ...(remediation !== undefined && !isBlank(remediation) ? { remediation } : {}),
    span: rule.span,
  } as const;

  if (statement.form === "always") {
    const body = lowerExpr(statement.operands[0]!, context, { temporal: true });
    if (body === undefined || checkVariables(body, statement.operands[0]!, "always", diagnostics) === undefined) return undefined;
    return { ...common, form: "always", variables: [], body };
  }

  const operands: (CheckedPattern | undefined)[] = statement.operands.map((operand) => {
    const formula = lowerExpr(operand, context, { temporal: false });
    if (formula === undefined) return undefined;
    const variables = checkVariables(formula, operand, statement.form, diagnostics);
    return variables === undefined ? undefined : { formula, variables, span: operand.span };
  });
  if (operands.some((p) => p === undefined)) return undefined;
  const patterns = operands as CheckedPattern[];

  if (statement.form === "abs") {
    return { ...common, form: "abs", variables: [], pattern: patterns[0]! };
  }
  // The first pattern (the trigger of `until`) says which values to check: it must bind them.
  if (!checkBinds(patterns[0]!, statement.form, diagnostics)) return undefined;
  if (statement.form === "limit") {
    const pattern = patterns[0]!;
    return { ...common, form: "limit", variables: pattern.variables, pattern, measure: limit!.measure, ...(limit!.per !== undefined ? { per: limit!.per } : {}) };
  }

  const variables = [...new Set(patterns.flatMap((p) => p.variables))].sort();
  const uses = (pattern: CheckedPattern, variable: string) => pattern.variables.includes(variable);
  if (statement.form === "until") {
    const [trigger, resolve, bad] = patterns as [CheckedPattern, CheckedPattern, CheckedPattern];
    for (const variable of variables) {
      if (!uses(trigger, variable)) {
        diagnostics.push(
          diagnostic("V1012", `the variable \`$${variable}\` of \`until\` is not bound by its trigger (the first pattern)`, {
            span: trigger.span,
            help: "the trigger binds the values that the resolution and the bad pattern refer to",
          }),
        );
      }
    }
    for (const [label, pattern] of [["resolution", resolve], ["bad pattern", bad]] as const) {
      const used = variables.filter((v) => uses(pattern, v));
      if (used.length > 0 && used.length < variables.length) {
        diagnostics.push(
          diagnostic("V1012", `the ${label} of \`until\` uses ${used.map((v) => `\`$${v}\``).join(", ")} but not every variable of the trigger`, {
            span: pattern.span,
            help: "a pattern of `until` uses either all of the trigger's variables or none",
          }),
        );
      }
    }
    if (variables.length > 0 && resolve.variables.length === 0 && bad.variables.length === 0) {
      diagnostics.push(
        diagnostic("V1012", "the variables of the trigger of `until` are used by neither the resolution nor the bad pattern", {
          span: trigger.span,
        }),
      );
    }
    return { ...common, form: "until", variables, trigger, resolve, bad };
  }

  const [first, second] = patterns as [CheckedPattern, CheckedPattern];
  for (const variable of variables) {
    const inFirst = uses(first, variable);
    const inSecond = uses(second, variable);
    if (!inFirst || !inSecond) {
      const missing = inFirst ? statement.operands[1]! : statement.operands[0]!;
      diagnostics.push(
        diagnostic("V1006", `the variable \`$${variable}\` must be used once in each of the two patterns of \`${statement.form}\`, but the ${inFirst ? "second" : "first"} pattern does not use it`, {
          span: missing.span,
          help: `a variable ties a value of one pattern to a value of the other; bind it in the first (\`key = $${variable}\`) and use it in the second (\`key = $${variable}\` or \`key contains $${variable}\`)`,
        }),
      );
    }
  }
  if (statement.form === "bresp") {
    return { ...common, form: "bresp", window: window!, variables, first, second };
  }
  return { ...common, form: statement.form, variables, first, second };
}

/** The window of `bresp[…]`: a positive number of events, or a positive duration. Undefined after reporting (V1009). */
function brespWindow(statement: Statement, diagnostics: Diagnostic[]): Window | undefined {
  const bound = statement.bound;
  if (bound === undefined) {
    diagnostics.push(
      diagnostic("V1009", "`bresp` needs a bound: the number of events, or the time, within which the response must come", {
        span: statement.formSpan,
        help: "write it in brackets, e.g. `bresp[3](ψ, ψ')` (within the next three events) or `bresp[5m](ψ, ψ')` (within five minutes)",
        fix: { title: "add a bound of 1", edits: [{ span: emptySpanAtEnd(statement.formSpan), newText: "[1]" }] },
      }),
    );
    return undefined;
  }
  const extra = bound.of ?? bound.per;
  if (extra !== undefined) {
    diagnostics.push(
      diagnostic("V1009", "the bound of `bresp` is a number of events or a duration alone; `of` and `per` belong to `limit`", {
        span: bound.span,
        help: "`bresp[3](ψ, ψ')`: within the next three events; `bresp[5m](ψ, ψ')`: within five minutes",
      }),
    );
    return undefined;
  }
  const literal = bound.value;
  if (literal.duration !== undefined && literal.duration > 0) return { unit: "time", size: literal.duration };
  if (literal.value !== undefined && Number.isSafeInteger(literal.value) && literal.value >= 1) return { unit: "events", size: literal.value };
  diagnostics.push(
    diagnostic("V1009", `the bound of \`bresp\` must be a positive integer or a positive duration, not \`${literal.text}\``, {
      span: literal.span,
      help: "`bresp[ℓ]` requires the response within the next ℓ events, ℓ ≥ 1; `bresp[5m]` within five minutes (units `ms`, `s`, `m`, `h`, `d`)",
    }),
  );
  return undefined;
}

/**
 * What `limit[…]` allows: `[N]` (at most N matching events in the run), `[N per D]` (in any window
 * of length D), `[X of KEY …]` (the sum of the numbers at KEY at most X). Undefined after reporting (V1016).
 */
function limitOf(statement: Statement, diagnostics: Diagnostic[]): { measure: LimitMeasure; per?: number } | undefined {
  const bound = statement.bound;
  const problem = (message: string, span: Span, help: string): undefined => {
    diagnostics.push(diagnostic("V1016", message, { span, help }));
    return undefined;
  };
  if (bound === undefined) {
    return problem("`limit` needs its maximum in brackets", statement.formSpan, "`limit[3](ψ)`: at most three events match ψ; `limit[3 per 1m](ψ)`: at most three in any minute");
  }
  let per: number | undefined;
  if (bound.per !== undefined) {
    if (bound.per.duration === undefined || bound.per.duration <= 0) {
      return problem(`the window of \`limit\` must be a positive duration, not \`${bound.per.text}\``, bound.per.span, "a duration is a whole number and a unit: `500ms`, `30s`, `5m`, `2h`, `1d`");
    }
    per = bound.per.duration;
  }
  const literal = bound.value;
  if (bound.of !== undefined) {
    if (literal.value === undefined || literal.value < 0 || !Number.isFinite(literal.value)) {
      return problem(`the maximum sum of \`limit\` must be a number, zero or more, not \`${literal.text}\``, literal.span, "`limit[500 of amount per 1d](ψ)`: the amounts of the events matching ψ in any day add up to 500 at most");
    }
    const { subject, key } = place(bound.of);
    return { measure: { kind: "sum", subject, key, maximum: literal.text, span: bound.of.span }, ...(per !== undefined ? { per } : {}) };
  }
  if (literal.value === undefined || !Number.isSafeInteger(literal.value) || literal.value < 0) {
    const help = literal.duration !== undefined ? `the count comes first and the window after \`per\`: \`limit[3 per ${literal.text}](ψ)\`` : "`limit[N](ψ)` allows at most N events matching ψ, N a whole number";
    return problem(`the maximum of \`limit\` must be a whole number of events, not \`${literal.text}\``, literal.span, help);
  }
  return { measure: { kind: "count", maximum: literal.value }, ...(per !== undefined ? { per } : {}) };
}

/**
 * A statement's scope: its patterns are one-event patterns (no `once` or `eventually`, reported by
 * the lowering) with no variable (V1015: a scope bounds the whole statement, it binds nothing).
 * Null after reporting a problem.
 */
function checkScope(scope: Scope, context: LowerContext): CheckedScope | null {
  const lower = (expr: Expr): Formula | null => {
    const formula = lowerExpr(expr, context, { temporal: false });
    if (formula === undefined) return null;
    const variables = variableAtoms(formula);
    if (variables.length === 0) return formula;
    context.diagnostics.push(
      diagnostic("V1015", `a scope's pattern cannot use a variable (\`$${variables[0]!.variable}\`): the scope bounds the whole statement and binds nothing`, {
        span: expr.span,
        help: "name the values with `key in {…}`; a variable relates the statement's own patterns",
      }),
    );
    return null;
  };
  const open = lower(scope.open);
  const close = scope.close === undefined ? undefined : lower(scope.close);
  if (open === null || close === null) return null;
  return { kind: scope.kind, open, ...(close !== undefined ? { close } : {}), span: scope.span };
}

/**
 * The variable discipline of one pattern, which makes the bindings of an event well defined: a
 * variable is used (`k = $x` or `k contains $x`) at most once in a conjunction, in every branch of
 * an `or` or in none, and never under `not` (nor `implies`, which is a `not`), nor in `abs` or
 * `always`, which have no second pattern to tie a value to. Returns the variables used, sorted, or
 * undefined after reporting a breach.
 */
function checkVariables(formula: Formula, operand: Expr, form: Statement["form"], diagnostics: Diagnostic[]): string[] | undefined {
  const before = diagnostics.length;
  const unary = form === "abs" || form === "always";
  const reported = new Set<string>();
  const report = (variable: string, made: () => Diagnostic) => {
    if (reported.has(variable)) return;
    reported.add(variable);
    diagnostics.push(made());
  };
  /** The variables a node uses. */
  const visit = (node: Formula, negated: boolean): Set<string> => {
    switch (node.kind) {
      case "keyBind":
      case "keyContains":
        if (unary) {
          report(node.variable, () =>
            diagnostic("V1007", `the variable \`$${node.variable}\` cannot be used in \`${form}\`: it has no second pattern to tie the value to`, {
              span: operand.span,
              help: "variables relate the patterns of `prec`, `resp`, `bresp`, `rslv` or `until`; use `key in {…}` to name a value",
            }),
          );
        } else if (negated) {
          report(node.variable, () =>
            diagnostic("V1007", `the variable \`$${node.variable}\` is used under \`not\` or \`implies\`, where it binds no value`, {
              span: operand.span,
              help: "use variables outside `not`: `… and key = $x`",
            }),
          );
        }
        return new Set([node.variable]);
      case "and": {
        const used = new Set<string>();
        for (const child of node.operands) {
          for (const variable of visit(child, negated)) {
            if (used.has(variable)) {
              report(variable, () =>
                diagnostic("V1006", `the variable \`$${variable}\` is used more than once in the pattern \`${printExpr(operand)}\``, {
                  span: operand.span,
                  help: "a variable is used exactly once in each of the two patterns of a binary form (once in each branch of an `or`)",
                }),
              );
            }
            used.add(variable);
          }
        }
        return used;
      }
      case "or": {
        const branches = node.operands.map((child) => visit(child, negated));
        const used = new Set(branches.flatMap((branch) => [...branch]));
        for (const variable of used) {
          if (branches.every((branch) => branch.has(variable))) continue;
          report(variable, () =>
            diagnostic("V1007", `the variable \`$${variable}\` is used in some branches of this \`or\` but not in all`, {
              span: node.span,
              help: "every branch of an `or` uses each of its variables exactly once, so that whichever branch holds gives the variable a value",
            }),
          );
        }
        return used;
      }
      case "not":
      case "once":
      case "eventually":
        return visit(node.operand, true);
      default:
        return new Set();
    }
  };
  const used = visit(formula, false);
  return diagnostics.length > before ? undefined : [...used].sort();
}

/**
 * In the first pattern of a binary form (the trigger of `until`), every use of a variable binds it
 * (`k = $x`): those values are the ones the statement checks. `k contains $x` only tests a value,
 * so it belongs in the other patterns.
 */
function checkBinds(pattern: CheckedPattern, form: Statement["form"], diagnostics: Diagnostic[]): boolean {
  const tests = variableAtoms(pattern.formula).filter((atom) => atom.kind === "keyContains");
  for (const atom of tests) {
    const message =
      form === "limit"
        ? `\`contains $${atom.variable}\` tests a value, but the pattern of \`limit\` must bind \`$${atom.variable}\`: a limit counts per value of its variables`
        : `\`contains $${atom.variable}\` tests a value, but the ${form === "until" ? "trigger" : "first pattern"} of \`${form}\` must bind \`$${atom.variable}\``;
    const help =
      form === "limit"
        ? `bind the variable with \`key = $${atom.variable}\`: the limit then applies to each value apart`
        : `bind the variable in the ${form === "until" ? "trigger" : "first pattern"} with \`key = $${atom.variable}\`, and test it with \`contains\` in the other pattern`;
    diagnostics.push(diagnostic("V1014", message, { span: atom.span, help }));
  }
  return tests.length === 0;
}

function emptySpanAtEnd(span: Span): Span {
  return { start: span.end, end: span.end, line: span.endLine, column: span.endColumn, endLine: span.endLine, endColumn: span.endColumn };
}
