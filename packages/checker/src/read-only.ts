import { diagnostic, type Diagnostic, type Span } from "@vigil/diagnostics";
import type { RuleDecl } from "@vigil/syntax";
import type { Formula } from "./ir.js";
import { variableAtoms } from "./ir.js";
import type { LowerContext } from "./lower-to-ir.js";
import type { PolicyScope } from "./resolve.js";

/**
 * The pattern that declares a policy's read-only calls: after a `quarantine` rule is broken, only
 * calls it matches may run for the rest of the run. A pattern by a fixed name keeps the language
 * as it is (no new declaration), and the checker makes sure it is there and judges one call alone.
 */
export const READ_ONLY_PATTERN = "read_only";

/** What the help of V1018 shows as a declaration to start from. */
const EXAMPLE = `pattern ${READ_ONLY_PATTERN} = action in {Read, Grep, Glob}`;

/**
 * The policy's `read_only` formula, checked: present when a `quarantine` rule needs it (V1018
 * otherwise, on each such rule), with no variable (V1018: it judges each call alone, and there is
 * nothing to bind a value to). Returns the formula, or undefined when the policy declares none or
 * it has an error (already reported). A declared `read_only` counts as used: enforcement reads it.
 */
export function checkReadOnly(scope: PolicyScope, context: LowerContext): Formula | undefined {
  const declaration = scope.patterns.get(READ_ONLY_PATTERN);
  const quarantines = scope.declaration.items.filter((item): item is RuleDecl => item.kind === "RuleDecl" && item.response?.value === "quarantine");
  if (declaration === undefined) {
    for (const rule of quarantines) context.diagnostics.push(missingReadOnly(scope.declaration.name.text, rule));
    return undefined;
  }
  context.used.add(READ_ONLY_PATTERN);
  const formula = context.resolved.get(READ_ONLY_PATTERN);
  if (formula === undefined) return undefined;
  const variables = variableAtoms(formula);
  if (variables.length === 0) return formula;
  context.diagnostics.push(
    diagnostic("V1018", `the pattern \`${READ_ONLY_PATTERN}\` cannot use a variable (\`$${variables[0]!.variable}\`): it says which calls a quarantined run may make, one call at a time`, {
      span: declaration.body.span,
      help: "name the values with `key in {…}` or a wildcard (`command ~ \"git status*\"`)",
    }),
  );
  return undefined;
}

/** V1018 on a `quarantine` rule of a policy without `read_only`, with a fix that declares one above the rule. */
function missingReadOnly(policy: string, rule: RuleDecl): Diagnostic {
  const span = rule.response?.span ?? rule.span;
  const start = rule.doc?.span ?? rule.span;
  const at: Span = { start: start.start, end: start.start, line: start.line, column: start.column, endLine: start.line, endColumn: start.column };
  const indent = " ".repeat(Math.max(0, start.column - 1));
  return diagnostic("V1018", `the rule \`${rule.name.text}\` quarantines the run, and the policy \`${policy}\` declares no \`${READ_ONLY_PATTERN}\` pattern, so nothing says which calls a quarantined run may still make`, {
    span,
    help: `declare the calls that only read, as a pattern named \`${READ_ONLY_PATTERN}\` with no variable: \`${EXAMPLE}\``,
    fix: { title: `declare \`${READ_ONLY_PATTERN}\``, edits: [{ span: at, newText: `${EXAMPLE}\n${indent}` }] },
  });
}
