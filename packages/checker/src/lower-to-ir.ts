import { closestName, diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { Span } from "@vigil/diagnostics";
import { keyPathSegments, type Bound, type Expr, type KeyCompare, type KeyCount, type KeyPath, type PatternDecl, type Quantifier, type RegexLiteral, type StringLiteral } from "@vigil/syntax";
import { compileRegex, compileWildcard, decimalOf, formatDecimal, isRegexProblem, valueKey, type PathSegment } from "@vigil/trace";
import type { Formula, Subject } from "./ir.js";

/** What lowering needs to know about the policy it is in. */
export interface LowerContext {
  readonly patterns: ReadonlyMap<string, PatternDecl>;
  readonly diagnostics: Diagnostic[];
  /** Pattern name → its lowered body (undefined when the body has errors). */
  readonly resolved: Map<string, Formula | undefined>;
  /** Patterns being lowered right now: meeting one again is a cycle. */
  readonly resolving: Set<string>;
  /** Patterns referenced from somewhere. */
  readonly used: Set<string>;
  /** Expressions already reported as nested too deeply (V1107), so each is reported once. */
  readonly tooDeep: Set<Expr>;
}

export interface LowerOptions {
  /** Whether `once` and `eventually` are allowed (only in the body of `always`). */
  readonly temporal: boolean;
}

/** Lowers a pattern declaration's body once; later references reuse the result. */
export function resolvePatternDecl(pattern: PatternDecl, context: LowerContext): Formula | undefined {
  const name = pattern.name.text;
  if (context.resolved.has(name)) return context.resolved.get(name);
  context.resolving.add(name);
  const formula = lowerExpr(pattern.body, context, { temporal: false });
  context.resolving.delete(name);
  context.resolved.set(name, formula);
  return formula;
}

/**
 * Lowers an expression to a formula: resolves pattern references (inlining them), desugars
 * `implies`, and checks wildcards. Returns undefined when the expression has an error (already
 * reported) so that nothing downstream reports about it again.
 */
export function lowerExpr(expr: Expr, context: LowerContext, options: LowerOptions): Formula | undefined {
  const formula = lowerExprUnbounded(expr, context, options);
  if (formula === undefined || depthOf(formula) <= MAXIMUM_FORMULA_DEPTH) return formula;
  if (!context.tooDeep.has(expr)) {
    context.tooDeep.add(expr);
    context.diagnostics.push(
      diagnostic("V1107", `this expression nests more than ${MAXIMUM_FORMULA_DEPTH} levels deep once the patterns it refers to are expanded`, {
        span: expr.span,
        help: "patterns that refer to patterns that refer to patterns … are expanded in place; flatten the chain (an `and` of many atoms has one level)",
      }),
    );
  }
  return undefined;
}

/**
 * How deep a checked formula may nest, counting the patterns it refers to as expanded. The parser
 * bounds the nesting of each declaration; references chain declarations, and every later stage
 * walks formulas recursively, so the whole depth is bounded here, where the chain is built.
 */
export const MAXIMUM_FORMULA_DEPTH = 500;

const depths = new WeakMap<Formula, number>();

/** A formula's depth, from its operands' (already known: formulas are built bottom-up). */
function depthOf(formula: Formula): number {
  const known = depths.get(formula);
  if (known !== undefined) return known;
  let depth = 1;
  switch (formula.kind) {
    case "and":
    case "or":
      for (const operand of formula.operands) depth = Math.max(depth, 1 + (depths.get(operand) ?? depthOf(operand)));
      break;
    case "not":
    case "once":
    case "eventually":
      depth = 1 + (depths.get(formula.operand) ?? depthOf(formula.operand));
      break;
    default:
      break;
  }
  depths.set(formula, depth);
  return depth;
}

function lowerExprUnbounded(expr: Expr, context: LowerContext, options: LowerOptions): Formula | undefined {
  const { diagnostics } = context;
  switch (expr.kind) {
    case "Missing":
      return undefined;
    case "And":
    case "Or": {
      const operands = expr.operands.map((operand) => lowerExpr(operand, context, options));
      if (operands.some((o) => o === undefined)) return undefined;
      return { kind: expr.kind === "And" ? "and" : "or", operands: operands as Formula[], span: expr.span };
    }
    case "Not": {
      const operand = lowerExpr(expr.operand, context, options);
      return operand === undefined ? undefined : { kind: "not", operand, span: expr.span };
    }
    case "Implies": {
      const left = lowerExpr(expr.left, context, options);
      const right = lowerExpr(expr.right, context, options);
      if (left === undefined || right === undefined) return undefined;
      const span = expr.span;
      return { kind: "not", operand: { kind: "and", operands: [left, { kind: "not", operand: right, span: expr.right.span }], span }, span };
    }
    case "Once":
    case "Eventually": {
      const keyword = expr.kind === "Once" ? "once" : "eventually";
      if (!options.temporal) {
        diagnostics.push(
          diagnostic("V1008", `\`${keyword}\` is a temporal operator and cannot appear inside a pattern`, {
            span: expr.span,
            help: "a pattern describes one event; state temporal conditions with a form or with `always Θ`",
          }),
        );
        lowerExpr(expr.operand, context, options);
        return undefined;
      }
      const within = expr.window === undefined ? undefined : temporalWindow(keyword, expr.window, diagnostics);
      const operand = lowerExpr(expr.operand, context, options);
      if (operand === undefined || within === null) return undefined;
      return { kind: keyword, operand, ...(within !== undefined ? { within } : {}), span: expr.span };
    }
    case "PatternRef": {
      const name = expr.name.text;
      if (expr.name.recovered === true) return undefined;
      const declaration = context.patterns.get(name);
      if (declaration === undefined) {
        const suggestion = closestName(name, context.patterns.keys());
        diagnostics.push(
          diagnostic("V1001", `no pattern named \`${name}\` is declared in this policy`, {
            span: expr.name.span,
            help:
              suggestion !== undefined
                ? `did you mean \`${suggestion}\`?`
                : "declare it with `pattern " + name + " = …`, or write an atom such as `action in {" + name + "}`",
            ...(suggestion !== undefined
              ? { fix: { title: `replace with \`${suggestion}\``, edits: [{ span: expr.name.span, newText: suggestion }] } }
              : {}),
          }),
        );
        return undefined;
      }
      context.used.add(name);
      if (context.resolving.size >= MAXIMUM_FORMULA_DEPTH) {
        // A chain of references this long would overflow the stack before its depth is known.
        if (!context.tooDeep.has(expr)) {
          context.tooDeep.add(expr);
          diagnostics.push(
            diagnostic("V1107", `the pattern \`${name}\` is reached through more than ${MAXIMUM_FORMULA_DEPTH} patterns that refer to each other`, {
              span: expr.name.span,
              help: "flatten the chain of pattern references",
            }),
          );
        }
        return undefined;
      }
      if (context.resolving.has(name)) {
        const cycle = [...context.resolving];
        const from = cycle.indexOf(name);
        diagnostics.push(
          diagnostic("V1004", `the pattern \`${name}\` refers to itself through ${[...cycle.slice(from), name].map((n) => `\`${n}\``).join(" → ")}`, {
            span: expr.name.span,
            help: "a pattern must be expressible without referring to itself",
          }),
        );
        return undefined;
      }
      return resolvePatternDecl(declaration, context);
    }
    case "ActionIn":
      return { kind: "action", actions: [...new Set(expr.actions.map((a) => a.value))], span: expr.span };
    case "KeyCompare":
    case "KeyCount": {
      const value = comparedNumber(expr, diagnostics);
      if (value === undefined) return undefined;
      if (expr.kind === "KeyCount") return { kind: "keyCount", ...place(expr.key), op: expr.operator, value, span: expr.span };
      return { kind: "keyCompare", ...place(expr.key), op: expr.operator, value, ...every(expr), span: expr.span };
    }
    case "KeyIn": {
      const seen = new Set<string>();
      const values = [];
      for (const literal of expr.values) {
        const key = valueKey(literal.value);
        if (seen.has(key)) continue;
        seen.add(key);
        values.push({ key, value: literal.value });
      }
      return { kind: "keyIn", ...place(expr.key), values, ...every(expr), span: expr.span };
    }
    case "KeyMatch":
      return checkWildcard(expr.pattern, diagnostics) ? { kind: "keyMatch", ...place(expr.key), pattern: expr.pattern.value, ...every(expr), span: expr.span } : undefined;
    case "OutputMatch":
      // o(e) ≈ p: the output's text, the empty path into the output.
      return checkWildcard(expr.pattern, diagnostics) ? { kind: "keyMatch", subject: "output", key: [], pattern: expr.pattern.value, span: expr.span } : undefined;
    case "KeyBind":
      return { kind: "keyBind", ...place(expr.key), variable: expr.variable.name, span: expr.span };
    case "KeyContains":
      return { kind: "keyContains", ...place(expr.key), variable: expr.variable.name, ...every(expr), span: expr.span };
    case "KeyRegex":
      return checkRegex(expr.regex, diagnostics) ? { kind: "keyRegex", ...place(expr.key), source: expr.regex.source, flags: expr.regex.flags, ...every(expr), span: expr.span } : undefined;
    case "StatusIs":
      return { kind: "status", status: expr.status, span: expr.span };
  }
}

/**
 * The window of `once[D]` or `eventually[D]`: a duration, in milliseconds. Null after reporting
 * (V1009): a count (the forms count events, these operators look at time), `of` or `per`.
 */
function temporalWindow(keyword: string, bound: Bound, diagnostics: Diagnostic[]): number | null {
  const extra = bound.of ?? bound.per;
  if (extra !== undefined) {
    diagnostics.push(
      diagnostic("V1009", `the window of \`${keyword}\` is a duration alone; \`of\` and \`per\` belong to \`limit\``, {
        span: bound.span,
        help: `write \`${keyword}[5m] Θ\` for Θ ${keyword === "once" ? "at most five minutes before" : "at most five minutes after"}`,
      }),
    );
    return null;
  }
  if (bound.value.duration !== undefined && bound.value.duration > 0) return bound.value.duration;
  diagnostics.push(
    diagnostic("V1009", `the window of \`${keyword}\` must be a positive duration, not \`${bound.value.text}\``, {
      span: bound.value.span,
      help: "a duration is a whole number and a unit: `500ms`, `30s`, `5m`, `2h`, `1d`",
    }),
  );
  return null;
}

/** `every(KEY)` as the IR has it; `some(KEY)` is the condition without a word. */
function every(atom: { readonly quantifier?: Quantifier }): { every?: true } {
  return atom.quantifier?.kind === "every" ? { every: true } : {};
}

/**
 * The number of a comparison as the IR has it, its canonical decimal text; undefined when it is not
 * a JSON number (reported by the parser, V0005) or beyond the exact decimals' range (V1017).
 */
function comparedNumber(atom: KeyCompare | KeyCount, diagnostics: Diagnostic[]): string | undefined {
  if (!atom.number.valid) return undefined;
  const decimal = decimalOf(atom.number.text);
  if (decimal !== undefined) return formatDecimal(decimal);
  diagnostics.push(
    diagnostic("V1017", `the number \`${shorten(atom.number.text)}\` is beyond the numbers Vigil compares exactly`, {
      span: atom.number.span,
      help: "numbers are compared as exact decimals with an exponent of at most 400",
    }),
  );
  return undefined;
}

/** A key path as the IR has it: the subject it leads into, and the segments' names. */
export function place(path: KeyPath): { subject: Subject; key: PathSegment[] } {
  return { subject: path.output !== undefined ? "output" : "args", key: keyPathSegments(path) };
}

/**
 * A regular expression must compile to the linear-time engine: ECMAScript syntax, flags `i` and
 * `s`, no construct that needs backtracking. A problem is reported where it is in the literal.
 */
function checkRegex(literal: RegexLiteral, diagnostics: Diagnostic[]): boolean {
  if (!literal.closed) return false; // Reported by the parser (V0002).
  const compiled = compileRegex(literal.source, literal.flags);
  if (!isRegexProblem(compiled)) return true;
  // The literal is on one line: offsets into the source are columns after the opening `/`.
  const start = literal.span.start + 1 + compiled.offset;
  const end = Math.min(literal.span.end, start + Math.max(1, compiled.length));
  diagnostics.push(
    diagnostic("V1013", `the regular expression ${shorten(literal.raw)} cannot be used: ${compiled.message}`, {
      span: withinLine(literal.span, start, end),
      help: compiled.help ?? "regular expressions use ECMAScript syntax with the flags `i` and `s`, and run in linear time: no back-references or lookaround",
    }),
  );
  return false;
}

function shorten(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The part [start, end) of a span that lies on one line. */
function withinLine(span: Span, start: number, end: number): Span {
  const from = Math.max(span.start, Math.min(start, span.end));
  const to = Math.max(from, Math.min(end, span.end));
  return { start: from, end: to, line: span.line, column: span.column + (from - span.start), endLine: span.line, endColumn: span.column + (to - span.start) };
}

function checkWildcard(literal: StringLiteral, diagnostics: Diagnostic[]): boolean {
  const compiled = compileWildcard(literal.value);
  if (compiled.ok) return true;
  diagnostics.push(
    diagnostic("V1010", `the wildcard ${literal.raw} is malformed: ${compiled.message}`, {
      span: literal.span,
      help: "`*` matches any text, `?` one character, `[a-z]` one character of a class; `\\\\` makes the next character literal",
    }),
  );
  return false;
}

