import type { Span } from "@vigil/diagnostics";
import { resolveFile, type PolicySymbol, type SymbolTable } from "@vigil/checker";
import { declarationExpressions, keyPathSegments, type Expr, type Form, type KeyPath, type RuleDecl, type SourceFile } from "@vigil/syntax";
import type { PathSegment } from "@vigil/trace";
import type { CompiledPolicy } from "./compile.js";

/**
 * What the text at an offset is, for an editor's hover, completion and navigation: a declared name
 * or a reference to one (from the symbol table: one resolver serves the checker and the editor),
 * a rule's form keyword, or a symbol of the trace's signature (an action, a key, a value).
 */
export type TermAt =
  | { readonly kind: "symbol"; readonly symbol: PolicySymbol; readonly span: Span; readonly declaration: boolean }
  | { readonly kind: "form"; readonly form: Form; readonly rule: RuleDecl; readonly span: Span }
  | { readonly kind: "action"; readonly name: string; readonly span: Span }
  /** A key path: names, and list indexes (`argv.0` is `["argv", 0]`). */
  | { readonly kind: "key"; readonly path: readonly PathSegment[]; readonly span: Span }
  | { readonly kind: "value"; readonly key: readonly PathSegment[]; readonly value: string | number | boolean | null; readonly span: Span }
  /** The word of `every(KEY)`, `some(KEY)` or `count(KEY)`, or a comparison's operator: the condition it makes. */
  | { readonly kind: "condition"; readonly condition: KeyCondition; readonly span: Span };

/** A condition on a key that a word or an operator shapes: a comparison, a count, or one with `every` or `some`. */
export type KeyCondition = Extract<Expr, { kind: "KeyIn" | "KeyMatch" | "KeyRegex" | "KeyContains" | "KeyCompare" | "KeyCount" }>;

/**
 * The term at `offset` (a cursor just after a name is on it), or undefined on whitespace,
 * punctuation, comments and keywords other than a form. Given a compiled policy, its symbol table is
 * reused; given only a tree, names are resolved first.
 */
export function termAt(source: CompiledPolicy | SourceFile, offset: number): TermAt | undefined {
  const file = "syntax" in source ? source.syntax : source;
  const symbols: SymbolTable = "syntax" in source ? source.symbols : resolveFile(file).symbols;
  const occurrence = symbols.symbolAt(offset);
  if (occurrence !== undefined) return { kind: "symbol", ...occurrence };

  const policy = file.policies.find((p) => covers(p.span, offset));
  const item = policy?.items.find((i) => covers(i.span, offset));
  if (item === undefined) return undefined;
  if (item.kind === "RuleDecl" && covers(item.statement.formSpan, offset)) {
    return { kind: "form", form: item.statement.form, rule: item, span: item.statement.formSpan };
  }
  return atomTermAt(declarationExpressions(item), offset);
}

/** Descends to the atom under the offset: at each level only the one operand that covers it. */
function atomTermAt(roots: readonly Expr[], offset: number): TermAt | undefined {
  let candidates: readonly Expr[] = roots;
  for (;;) {
    const expr = candidates.find((e) => covers(e.span, offset));
    if (expr === undefined) return undefined;
    switch (expr.kind) {
      case "And":
      case "Or":
        candidates = expr.operands;
        continue;
      case "Not":
      case "Once":
      case "Eventually":
        candidates = [expr.operand];
        continue;
      case "Implies":
        candidates = [expr.left, expr.right];
        continue;
      case "ActionIn": {
        const action = expr.actions.find((a) => covers(a.span, offset));
        return action === undefined ? undefined : { kind: "action", name: action.value, span: action.span };
      }
      case "KeyIn": {
        const word = conditionWordAt(expr, offset);
        if (word !== undefined) return word;
        // A path into the output names no argument of the signature.
        if (expr.key.output !== undefined) return undefined;
        if (covers(expr.key.span, offset)) return keyTerm(expr.key);
        const value = expr.values.find((v) => covers(v.span, offset));
        return value === undefined ? undefined : { kind: "value", key: pathOf(expr.key), value: value.value, span: value.span };
      }
      case "KeyMatch":
      case "KeyRegex":
      case "KeyContains":
      case "KeyCompare":
      case "KeyCount":
        return conditionWordAt(expr, offset) ?? (expr.key.output === undefined && covers(expr.key.span, offset) ? keyTerm(expr.key) : undefined);
      case "KeyBind":
        return expr.key.output === undefined && covers(expr.key.span, offset) ? keyTerm(expr.key) : undefined;
      default:
        return undefined;
    }
  }
}

/** The condition, when the offset is on its `every`, `some` or `count`, or on its comparison's operator. */
function conditionWordAt(expr: KeyCondition, offset: number): TermAt | undefined {
  const word = expr.kind === "KeyCount" ? expr.countSpan : expr.quantifier?.span;
  if (word !== undefined && covers(word, offset)) return { kind: "condition", condition: expr, span: word };
  if ((expr.kind === "KeyCompare" || expr.kind === "KeyCount") && covers(expr.operatorSpan, offset)) return { kind: "condition", condition: expr, span: expr.operatorSpan };
  return undefined;
}

function keyTerm(key: KeyPath): TermAt {
  return { kind: "key", path: pathOf(key), span: key.span };
}

function pathOf(key: KeyPath): readonly PathSegment[] {
  return keyPathSegments(key);
}

function covers(span: Span, offset: number): boolean {
  return span.start <= offset && offset <= span.end;
}

/** The symbol table of a parsed file (a compiled policy already carries its own: `symbols`). */
export function resolveSymbols(file: SourceFile): SymbolTable {
  return resolveFile(file).symbols;
}
