import { keyPathText, printExpr, type Bound, type Expr, type PolicyDecl, type RuleDecl, type Scope } from "@vigil/syntax";
import { durationInWords } from "./durations.js";
import { formDescriptions, responseDescriptions, scopeDescriptions } from "./forms.js";

/**
 * A rule's meaning in words, as markdown paragraphs: its name and policy, its `///` text, when its
 * form holds and its Figure 5 requirement, its bound and scope in words, and its response. The
 * editor's hover on a rule shows it; `vigilc draft --explain` prints it beside the requirement.
 */
export function describeRule(rule: RuleDecl, policy: PolicyDecl | undefined): string {
  const form = formDescriptions[rule.statement.form];
  const response = rule.response?.value ?? "block";
  const responseLine = `**response** \`${response}\`${rule.response === undefined ? " (the default)" : ""}: ${responseDescriptions[response]}${rule.remediation !== undefined ? ` — “${rule.remediation.value}”` : ""}`;
  return joinParagraphs([
    `**rule** \`${rule.name.text}\`${policy !== undefined ? ` in \`${policy.name.text}\`` : ""}`,
    rule.doc?.text,
    `\`${form.form}\` holds when ${form.holdsWhen}.`,
    `Figure 5 (${form.figureName}): R_φ(e) = ${form.requirement} — ${form.reading}.`,
    describeRuleBound(rule),
    rule.statement.scope !== undefined ? describeScope(rule.statement.scope) : undefined,
    responseLine,
  ]);
}

/**
 * The bound of `limit[…]` or `bresp[…]`, as written and in words with its numbers (`**bound**
 * \`[3 per 1d]\`: at most 3 events match ψ in any window of one day (86,400,000 ms).`). The
 * checker says what is wrong with one that is not well-formed; this line only reads what is there.
 */
function describeRuleBound(rule: RuleDecl): string | undefined {
  const { form, bound } = rule.statement;
  if (bound === undefined || (form !== "limit" && form !== "bresp")) return undefined;
  const written = `**bound** \`${boundText(bound)}\``;
  const window = bound.per !== undefined ? durationInWords(bound.per.text) : undefined;
  if (form === "limit") {
    if (bound.value.value === undefined) return written;
    const what = bound.of !== undefined ? `the numbers at \`${keyPathText(bound.of)}\` of the events matching ψ add up to at most ${bound.value.text}` : `at most ${bound.value.text} ${bound.value.value === 1 ? "event matches" : "events match"} ψ`;
    const where = bound.per === undefined ? " in the whole run" : window !== undefined ? ` in any window of ${window}` : "";
    return `${written}: ${what}${where}.`;
  }
  const within = durationInWords(bound.value.text);
  if (within !== undefined) return `${written}: each ψ-event is answered by a ψ′-event at most ${within} after it (at the same instant counts).`;
  return bound.value.value !== undefined ? `${written}: each ψ-event is answered by a ψ′-event among the next ${bound.value.text} ${bound.value.value === 1 ? "event" : "events"}.` : written;
}

function boundText(bound: Bound): string {
  return `[${bound.value.text}${bound.of !== undefined ? ` of ${keyPathText(bound.of)}` : ""}${bound.per !== undefined ? ` per ${bound.per.text}` : ""}]`;
}

/** A rule's scope: as written, and where the rule is judged, said with its patterns. */
function describeScope(scope: Scope): string {
  const description = scopeDescriptions[scope.kind];
  const open = `\`${printExpr(scope.open)}\``;
  const close = scope.close !== undefined ? `\`${printExpr(scope.close)}\`` : "";
  return `**scope** \`${scopeText(scope)}\`: ${description.judged(open, close)}.`;
}

function scopeText(scope: Scope): string {
  const open = printExpr(scope.open);
  switch (scope.kind) {
    case "after":
    case "before":
      return `${scope.kind} ${open}`;
    case "between":
      return `between ${needsParentheses(scope.open) ? `(${open})` : open} and ${printExpr(scope.close!)}`;
    case "afterUntil":
      return `after ${open} until ${printExpr(scope.close!)}`;
  }
}

function needsParentheses(expr: Expr): boolean {
  return expr.kind === "And" || expr.kind === "Or" || expr.kind === "Implies";
}

function joinParagraphs(parts: readonly (string | undefined)[]): string {
  return parts.filter((part): part is string => part !== undefined && part.length > 0).join("\n\n");
}
