import type { Expr, Item } from "./ast.js";

/** The expressions of a declaration: a pattern's body, or a rule's operands and its scope's patterns. */
export function declarationExpressions(item: Item): readonly Expr[] {
  if (item.kind === "PatternDecl") return [item.body];
  const scope = item.statement.scope;
  if (scope === undefined) return item.statement.operands;
  return [...item.statement.operands, scope.open, ...(scope.close !== undefined ? [scope.close] : [])];
}

/**
 * Calls `visit` on every expression under the roots, in source order, parents before children.
 * Iterative: the parser bounds an expression's depth, but no walk over user input rests on that.
 * Every pass over expressions (resolution, the signature check, an editor's features) walks with it.
 */
export function walkExpressions(roots: readonly Expr[], visit: (expr: Expr) => void): void {
  const stack: Expr[] = [];
  for (let index = roots.length - 1; index >= 0; index--) stack.push(roots[index]!);
  while (stack.length > 0) {
    const expr = stack.pop()!;
    visit(expr);
    switch (expr.kind) {
      case "And":
      case "Or":
        for (let index = expr.operands.length - 1; index >= 0; index--) stack.push(expr.operands[index]!);
        break;
      case "Not":
      case "Once":
      case "Eventually":
        stack.push(expr.operand);
        break;
      case "Implies":
        stack.push(expr.right, expr.left);
        break;
      default:
        break;
    }
  }
}
