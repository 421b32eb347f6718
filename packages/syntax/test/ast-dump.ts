import type { Expr, KeyPath, Quantifier, SourceFile, Statement } from "@vigil/syntax";
import { keyPathText, symbolText } from "@vigil/syntax";

/** A compact S-expression of a syntax tree, for golden files: structure, names and literals, no spans. */
export function dumpSourceFile(file: SourceFile): string {
  const lines: string[] = [];
  for (const policy of file.policies) {
    lines.push(`(policy ${name(policy.name)}${policy.doc ? ` doc=${JSON.stringify(policy.doc.text)}` : ""}`);
    for (const item of policy.items) {
      const doc = item.doc ? ` doc=${JSON.stringify(item.doc.text)}` : "";
      if (item.kind === "PatternDecl") lines.push(`  (pattern ${name(item.name)}${doc} ${dumpExpr(item.body)})`);
      else {
        const response = item.response ? ` ${item.response.value}` : "";
        const remediation = item.remediation ? ` ${JSON.stringify(item.remediation.value)}` : "";
        lines.push(`  (rule ${name(item.name)}${doc} ${dumpStatement(item.statement)}${response}${remediation})`);
      }
    }
    lines.push(")");
  }
  if (file.comments.length > 0) lines.push(`comments: ${file.comments.map((c) => `${c.kind}@${c.span.line}`).join(" ")}`);
  return lines.join("\n") + "\n";
}

function name(identifier: { text: string; recovered?: boolean }): string {
  return identifier.recovered ? "<recovered>" : identifier.text;
}

function dumpStatement(statement: Statement): string {
  const bound = statement.bound ? `[${statement.bound.value.text}${statement.bound.value.value === undefined && statement.bound.value.duration === undefined ? "?" : ""}${statement.bound.of ? ` of ${keyPathText(statement.bound.of)}` : ""}${statement.bound.per ? ` per ${statement.bound.per.text}` : ""}]` : "";
  const recovered = statement.recovered ? " !recovered" : "";
  const scope = statement.scope === undefined ? "" : ` (${statement.scope.kind} ${dumpExpr(statement.scope.open)}${statement.scope.close !== undefined ? ` ${dumpExpr(statement.scope.close)}` : ""})`;
  return `(${statement.form}${bound}${recovered} ${statement.operands.map(dumpExpr).join(" ")}${scope})`;
}

/** A condition's key, with its `every` or `some` when written. */
function subject(atom: { readonly key: KeyPath; readonly quantifier?: Quantifier }): string {
  return atom.quantifier === undefined ? keyPathText(atom.key) : `(${atom.quantifier.kind} ${keyPathText(atom.key)})`;
}

export function dumpExpr(expr: Expr): string {
  switch (expr.kind) {
    case "And":
    case "Or":
      return `(${expr.kind.toLowerCase()} ${expr.operands.map(dumpExpr).join(" ")})`;
    case "Not":
      return `(not ${dumpExpr(expr.operand)})`;
    case "Once":
    case "Eventually":
      return `(${expr.kind.toLowerCase()}${expr.window ? `[${expr.window.value.text}]` : ""} ${dumpExpr(expr.operand)})`;
    case "Implies":
      return `(implies ${dumpExpr(expr.left)} ${dumpExpr(expr.right)})`;
    case "PatternRef":
      return `@${name(expr.name)}`;
    case "ActionIn":
      return `(action ${expr.actions.map(symbolText).join(" ")})`;
    case "KeyIn":
      return `(in ${subject(expr)} ${expr.values.map((v) => JSON.stringify(v.value)).join(" ")})`;
    case "KeyMatch":
      return `(~ ${subject(expr)} ${JSON.stringify(expr.pattern.value)})`;
    case "KeyBind":
      return `(= ${keyPathText(expr.key)} $${expr.variable.name})`;
    case "KeyRegex":
      return `(matches ${subject(expr)} ${JSON.stringify(expr.regex.source)} ${JSON.stringify(expr.regex.flags)})`;
    case "KeyContains":
      return `(contains ${subject(expr)} $${expr.variable.name})`;
    case "KeyCompare":
      return `(${expr.operator} ${subject(expr)} ${expr.number.text}${expr.number.valid ? "" : " !invalid"})`;
    case "KeyCount":
      return `(${expr.operator} (count ${keyPathText(expr.key)}) ${expr.number.text}${expr.number.valid ? "" : " !invalid"})`;
    case "StatusIs":
      return `(status ${expr.status})`;
    case "OutputMatch":
      return `(output ${JSON.stringify(expr.pattern.value)})`;
    case "Missing":
      return "<missing>";
  }
}
