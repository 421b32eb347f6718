import { basename } from "node:path";
import { comparisonOperators, comparisonSummary, conditionWordDescriptions, describeCondition, describeRule, durationInWords, formDescriptions, keywordDescriptions, responseDescriptions, scopeDescriptions, termAt, type PolicySymbol, type TermAt } from "@vigil/compiler";
import { declarationExpressions, keyPathSegments, keyPathText, nameText, printExpr, walkExpressions, type Item, type KeyPath, type PolicyDecl, type RuleDecl, type ScopeKind } from "@vigil/syntax";
import { keyPathId, keyPathNames, valueKey, type JsonValue, type PathSegment } from "@vigil/trace";
import type { Hover } from "vscode-languageserver";
import type { Analysis } from "../analysis.js";
import { isComment, isKeywordToken, isPunctuation, lastTokenBefore, type Token } from "../tokens.js";
import type { SampleSet } from "../workspace/samples.js";

/**
 * Hovers: on a rule, its `///` text, its form in words and its Figure 5 requirement; on a pattern,
 * its doc and body; on a variable, where it is bound and used; on an action, key or value, how many
 * events of the sample traces carry it; on a keyword, what it means (on a scope's word, where the
 * rule is judged); on `every`, `some`, `count` or a comparison's operator, the condition in words.
 */
export function hover(analysis: Analysis, offset: number, options: { readonly markdown: boolean }): Hover | null {
  const term = termAt(analysis.compiled, offset);
  const found = term !== undefined ? describeTerm(analysis, term) : (describeBoundKey(analysis, offset) ?? describeKeyword(analysis, offset));
  if (found === undefined) return null;
  return {
    contents: { kind: options.markdown ? "markdown" : "plaintext", value: found.text },
    range: analysis.positions.range(found.start, found.end),
  };
}

interface Described {
  readonly text: string;
  readonly start: number;
  readonly end: number;
}

function describeTerm(analysis: Analysis, term: TermAt): Described | undefined {
  const at = (text: string): Described => ({ text, start: term.span.start, end: term.span.end });
  const samples = analysis.context.samples;
  switch (term.kind) {
    case "symbol":
      return at(describeSymbol(analysis, term.symbol));
    case "form":
      return at(describeRule(term.rule, policyOfItem(analysis, term.rule)));
    case "action":
      return at(`**action** \`${nameText(term.name)}\`\n\n${describeOccurrence(samples, actionCounts(samples, term.name), "carry this action")}`);
    case "key":
      return at(describeKey(samples, term.path));
    case "value":
      return at(describeValue(samples, term.key, term.value));
    case "condition":
      return at(describeCondition(term.condition));
  }
}

function describeSymbol(analysis: Analysis, symbol: PolicySymbol): string {
  const policy = analysis.compiled.syntax.policies.find((p) => p.name.text === symbol.policy);
  switch (symbol.kind) {
    case "policy": {
      const patterns = policy?.items.filter((i) => i.kind === "PatternDecl").length ?? 0;
      const rules = policy?.items.filter((i) => i.kind === "RuleDecl").length ?? 0;
      return joinParagraphs([`**policy** \`${symbol.name}\``, symbol.doc, `${plural(rules, "rule")}, ${plural(patterns, "pattern")}`]);
    }
    case "pattern": {
      const declaration = policy?.items.find((i): i is Extract<Item, { kind: "PatternDecl" }> => i.kind === "PatternDecl" && i.name.span.start === symbol.nameSpan.start);
      const body = declaration !== undefined ? `\`\`\`vigil\npattern ${symbol.name} = ${printExpr(declaration.body)}\n\`\`\`` : undefined;
      const uses = symbol.references.length === 0 ? "never used" : `used ${symbol.references.length === 1 ? "once" : `${symbol.references.length} times`}`;
      return joinParagraphs([`**pattern** \`${symbol.name}\` — a condition on one event, ${uses}`, symbol.doc, body]);
    }
    case "rule": {
      const rule = policy?.items.find((i): i is RuleDecl => i.kind === "RuleDecl" && i.name.span.start === symbol.nameSpan.start);
      return rule !== undefined ? describeRule(rule, policy) : `**rule** \`${symbol.name}\``;
    }
    case "variable":
      return describeVariable(analysis, symbol, policy);
  }
}

/** Where a variable is bound (its first occurrence) and used, with the key and the operand of each. */
function describeVariable(analysis: Analysis, symbol: PolicySymbol, policy: PolicyDecl | undefined): string {
  const item = policy?.items.find((i) => i.name.text === symbol.scope && i.span.start <= symbol.nameSpan.start && symbol.nameSpan.end <= i.span.end);
  const lines: string[] = [];
  if (item !== undefined) {
    const operands = declarationExpressions(item);
    const labels = item.kind === "RuleDecl" ? operandLabels(item) : [`the pattern \`${item.name.text}\``];
    operands.forEach((operand, index) => {
      walkExpressions([operand], (expr) => {
        if ((expr.kind !== "KeyBind" && expr.kind !== "KeyContains") || expr.variable.name !== symbol.name) return;
        const line = analysis.positions.positionAt(expr.variable.span.start).line + 1;
        const role = expr.variable.span.start === symbol.nameSpan.start ? "bound" : "used";
        const how = expr.kind === "KeyContains" ? "tested by `contains` " : "";
        lines.push(`- ${role} ${how}at \`${keyPathText(expr.key)}\` in ${labels[index] ?? `operand ${index + 1}`} (line ${line})`);
      });
    });
  }
  const where = symbol.scope !== undefined ? ` in ${item?.kind === "PatternDecl" ? "pattern" : "rule"} \`${symbol.scope}\`` : "";
  return joinParagraphs([
    `**variable** \`$${symbol.name}\`${where}`,
    lines.join("\n"),
    "The first pattern's event binds the value under its key; the other pattern must carry the same value under its own key.",
  ]);
}

function operandLabels(rule: RuleDecl): string[] {
  const parameters = formDescriptions[rule.statement.form].parameters;
  return rule.statement.operands.map((_, index) => {
    const parameter = parameters[index]?.label;
    return parameter !== undefined ? `\`${parameter.split(" ")[0]}\` (${parameter.split(" ").slice(1).join(" ")})` : `operand ${index + 1}`;
  });
}

function policyOfItem(analysis: Analysis, item: Item): PolicyDecl | undefined {
  return analysis.compiled.syntax.policies.find((policy) => policy.items.includes(item));
}

/** A keyword that is not a form: what it means. A rule's response word too. */
function describeKeyword(analysis: Analysis, offset: number): Described | undefined {
  const tokens = analysis.tokens;
  const index = lastTokenBefore(tokens, offset);
  const token = tokens[index];
  if (token === undefined || offset > token.end) return undefined;
  if (token.scopeWord === true) {
    const kind = scopeKindOf(analysis, token.start, token.keyword);
    const description = scopeDescriptions[kind];
    const text = `**${description.label}**: ${description.judged("ψ", "ψ'")}.${token.keyword === "and" || token.keyword === "until" ? "" : `\n\n\`${token.keyword}\` is not reserved: it starts a scope only right after a statement.`}`;
    return { text, start: token.start, end: token.end };
  }
  if (token.kind === "keyword" && isConditionWord(token.keyword)) {
    // A word the tree has no condition for (the line is still being written): what it means.
    return { text: conditionWordDescriptions[token.keyword], start: token.start, end: token.end };
  }
  if (token.kind === "punctuation" && isComparisonOperator(token.text)) {
    return { text: `\`KEY ${token.text} N\`: ${comparisonSummary(token.text)}, compared exactly; any other value, and a missing key, never is.`, start: token.start, end: token.end };
  }
  if (token.kind === "keyword" && token.keyword !== undefined) {
    const form = formDescriptions[token.keyword as keyof typeof formDescriptions];
    // `limit` is a contextual word (a form only at the start of a statement), as `of` and `per` are in its brackets.
    const contextual = form?.form === "limit" ? "\n\n`limit` is not reserved: it is a form only at the start of a statement, before `[`." : "";
    const text = form !== undefined ? `**${form.form}**: holds when ${form.holdsWhen}.\n\nFigure 5 (${form.figureName}): R_φ(e) = ${form.requirement}${contextual}` : keywordDescriptions[token.keyword];
    return text === undefined ? undefined : { text, start: token.start, end: token.end };
  }
  if (token.kind === "number") {
    const text = describeDuration(tokens, index);
    return text === undefined ? undefined : { text, start: token.start, end: token.end };
  }
  const item = analysis.itemAt(offset);
  if (item?.kind === "RuleDecl" && item.response !== undefined && item.response.span.start <= offset && offset <= item.response.span.end) {
    const response = item.response.value;
    return { text: `**${response}**: a violation ${responseDescriptions[response]}.`, start: item.response.span.start, end: item.response.span.end };
  }
  return undefined;
}

/** `every`, `some` and `count`: keyword tokens only right before `(` (see `scanTokens`). */
function isConditionWord(word: string | undefined): word is keyof typeof conditionWordDescriptions {
  return word === "every" || word === "some" || word === "count";
}

/** `<`, `<=`, `>`, `>=` and `!=`; not `=`, which as often binds a variable (`= $x`) or tests a status. */
function isComparisonOperator(text: string): text is Exclude<(typeof comparisonOperators)[number], "="> {
  return text !== "=" && (comparisonOperators as readonly string[]).includes(text);
}

/**
 * A duration where one is read (right after `[` or `per`): its meaning in words, and what it bounds
 * there. Elsewhere a duration's shape is a malformed number (V0005), and has no hover.
 */
function describeDuration(tokens: readonly Token[], index: number): string | undefined {
  const token = tokens[index]!;
  const words = durationInWords(token.text);
  if (words === undefined) return undefined;
  const previous = previousCode(tokens, index);
  let role: string | undefined;
  if (isKeywordToken(previous.token, "per")) role = "The window of the limit: an event is a witness when, with the events matching ψ less than this long before it, it makes more than the maximum.";
  else if (isPunctuation(previous.token, "[")) {
    const owner = previousCode(tokens, previous.index).token;
    if (isKeywordToken(owner, "bresp")) role = "A window of time: each ψ-event is answered by a ψ′-event at most this long after it (at the same instant counts).";
    else if (isKeywordToken(owner, "once")) role = "`once[…] Θ`: Θ held at an earlier event at most this long before.";
    else if (isKeywordToken(owner, "eventually")) role = "`eventually[…] Θ`: Θ holds at a later event at most this long after.";
    else role = "";
  } else return undefined;
  return `**${token.text}**: ${words}${role.length > 0 ? `\n\n${role}` : ""}`;
}

/** The code token before `index` (comments skipped) and its index; `token` undefined at the start. */
function previousCode(tokens: readonly Token[], index: number): { token: Token | undefined; index: number } {
  let at = index - 1;
  while (at >= 0 && isComment(tokens[at]!)) at--;
  return { token: tokens[at], index: at };
}

/** The key a limit sums (`of amount`): what the samples say of it, as for any key. */
function describeBoundKey(analysis: Analysis, offset: number): Described | undefined {
  const item = analysis.itemAt(offset);
  if (item === undefined) return undefined;
  const keys: KeyPath[] = [];
  if (item.kind === "RuleDecl" && item.statement.bound?.of !== undefined) keys.push(item.statement.bound.of);
  walkExpressions(declarationExpressions(item), (expr) => {
    if ((expr.kind === "Once" || expr.kind === "Eventually") && expr.window?.of !== undefined) keys.push(expr.window.of);
  });
  const key = keys.find((path) => path.span.start <= offset && offset <= path.span.end);
  if (key === undefined || key.output !== undefined) return undefined;
  return { text: describeKey(analysis.context.samples, keyPathSegments(key)), start: key.span.start, end: key.span.end };
}

/** The kind of the scope a scope word belongs to: from the tree, or from the word while the scope is unfinished. */
function scopeKindOf(analysis: Analysis, offset: number, word: string | undefined): ScopeKind {
  const item = analysis.itemAt(offset);
  const scope = item?.kind === "RuleDecl" ? item.statement.scope : undefined;
  if (scope !== undefined && scope.span.start <= offset && offset <= scope.span.end) return scope.kind;
  if (word === "until") return "afterUntil";
  if (word === "and" || word === "between") return "between";
  if (word === "before") return "before";
  // A bare `after`: `after ψ until ψ'` when an `until` of the scope follows in the same rule.
  const tokens = analysis.tokens;
  const end = item?.span.end ?? offset;
  const until = tokens.some((token) => token.start > offset && token.start <= end && token.scopeWord === true && token.keyword === "until");
  return until ? "afterUntil" : "after";
}

// Counting events of the sample traces.

interface Occurrence {
  readonly total: number;
  readonly perTrace: readonly { readonly file: string; readonly events: number }[];
}

function actionCounts(samples: SampleSet | undefined, action: string): Occurrence {
  return occurrence(samples, (trace) => trace.statistics.actions.get(action) ?? 0);
}

/** A key path as the policy spells it: names bare or quoted, indexes as digits. */
function pathText(path: readonly PathSegment[]): string {
  return path.map((segment) => (typeof segment === "number" ? String(segment) : nameText(segment))).join(".");
}

/**
 * What the samples say of a path with list indexes: it is counted under its names (a list's
 * elements live under the list's own name), so the counts are of every element, not only this one.
 */
function listNote(samples: SampleSet | undefined, path: readonly PathSegment[]): string | undefined {
  const names = keyPathNames(path);
  const info = samples?.signature?.keys.get(keyPathId(names));
  const longest = info?.listLength !== undefined && Number.isFinite(info.listLength) ? info.listLength : undefined;
  if (names.length === path.length) {
    if (longest === undefined) return undefined;
    return longest === 0 ? "A list in the samples, always empty." : `A list in the samples, of up to ${plural(longest, "element")}: \`${pathText([...path, 0])}\` is its first.`;
  }
  const index = path.findLast((segment) => typeof segment === "number")!;
  return `An element of a list (index ${index}, counted from 0); the counts below are of \`${pathText(names)}\`, any element.`;
}

function describeKey(samples: SampleSet | undefined, path: readonly PathSegment[]): string {
  const id = keyPathId(keyPathNames(path));
  const counts = occurrence(samples, (trace) => trace.statistics.keys.get(id)?.events ?? 0);
  const values = new Map<string, { value: JsonValue; events: number }>();
  for (const trace of samples?.traces ?? []) {
    if (!trace.usable) continue;
    for (const [key, entry] of trace.statistics.keys.get(id)?.values ?? []) {
      const known = values.get(key);
      values.set(key, { value: entry.value, events: (known?.events ?? 0) + entry.events });
    }
  }
  const common = [...values.values()].sort((a, b) => b.events - a.events).slice(0, 5);
  const valuesLine = common.length > 0 ? `most frequent values: ${common.map((v) => `\`${displayJson(v.value)}\` (${v.events})`).join(", ")}${values.size > common.length ? `, … ${values.size} distinct` : ""}` : undefined;
  const schemaNote = samples?.schemas.some((s) => s.usable && s.signature.keys.has(id)) === true ? "an argument of the tool schemas" : undefined;
  return joinParagraphs([`**argument** \`${pathText(path)}\``, listNote(samples, path), describeOccurrence(samples, counts, "carry this argument"), schemaNote, valuesLine]);
}

function describeValue(samples: SampleSet | undefined, path: readonly PathSegment[], value: JsonValue): string {
  const id = keyPathId(keyPathNames(path));
  const key = valueKey(value);
  const counts = occurrence(samples, (trace) => trace.statistics.keys.get(id)?.values.get(key)?.events ?? 0);
  return joinParagraphs([`**value** \`${displayJson(value)}\` under \`${pathText(path)}\``, describeOccurrence(samples, counts, "carry this value under the argument")]);
}

function occurrence(samples: SampleSet | undefined, count: (trace: SampleSet["traces"][number]) => number): Occurrence {
  const perTrace: { file: string; events: number }[] = [];
  let total = 0;
  for (const trace of samples?.traces ?? []) {
    if (!trace.usable) continue;
    const events = count(trace);
    total += events;
    perTrace.push({ file: trace.file, events });
  }
  return { total, perTrace };
}

function describeOccurrence(samples: SampleSet | undefined, counts: Occurrence, what: string): string {
  if (samples === undefined) return "No sample traces are configured (`vigil.config.json`), so nothing is known about how often it occurs.";
  if (counts.perTrace.length === 0) return "No sample trace could be read.";
  const events = counts.perTrace.reduce((sum, trace) => sum + (samples.traces.find((t) => t.file === trace.file)?.eventCount ?? 0), 0);
  if (counts.total === 0) {
    return `No event of the ${plural(counts.perTrace.length, "sample trace")} (${plural(events, "event")}) ${what.replace(/^carry/, "carries")}: under the closed world it matches nothing.`;
  }
  const breakdown = counts.perTrace
    .filter((trace) => trace.events > 0)
    .sort((a, b) => b.events - a.events)
    .slice(0, 5)
    .map((trace) => `${basename(trace.file)}: ${trace.events}`)
    .join(", ");
  return `${plural(counts.total, "event")} of ${events} in ${plural(counts.perTrace.length, "sample trace")} ${what} (${breakdown}).`;
}

function displayJson(value: JsonValue): string {
  return JSON.stringify(value);
}

function plural(count: number, noun: string): string {
  return `${count} ${count === 1 ? noun : `${noun}s`}`;
}

function joinParagraphs(parts: readonly (string | undefined)[]): string {
  return parts.filter((part): part is string => part !== undefined && part.length > 0).join("\n\n");
}
