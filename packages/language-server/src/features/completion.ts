import { nameText, ruleResponses } from "@vigil/syntax";
import { keyPathId, keyPathNames, valueKey, type JsonValue, type KeyInfo, type PathSegment, type Signature } from "@vigil/trace";
import { CompletionItemKind, InsertTextFormat, type CompletionItem, type CompletionList, type Range } from "vscode-languageserver";
import type { Analysis } from "../analysis.js";
import {
  comparisonOperators,
  comparisonSummary,
  conditionWordDescriptions,
  durationInWords,
  formDescriptions,
  forms,
  keywordDescriptions,
  responseDescriptions,
  scopeDescriptions,
  scopeKinds,
  suggestedDurations,
} from "@vigil/compiler";
import type { TextPositions } from "../positions.js";
import { conditionWordAt, conditionWords, keyPathBefore, quantifiedKeyBefore, segmentName, subjectKeyBefore, type ConditionWord } from "./completion-keys.js";
import { isComment, isKeywordToken, isPunctuation, lastTokenBefore, type Token } from "../tokens.js";
import type { SampleSet } from "../workspace/samples.js";

/**
 * Completion from the tokens before the cursor, so that it works on half-typed text the parser
 * cannot make sense of yet: keywords, forms and scopes as snippets, the policy's pattern names, and the
 * sample signature's actions, keys and values where each can stand. A condition may start with
 * `every(KEY)`, `some(KEY)` or `count(KEY)` (snippets; the keys inside the parentheses), and a key is
 * followed by its operators, the comparisons among them.
 */

export interface CompletionInput {
  readonly positions: TextPositions;
  readonly tokens: readonly Token[];
  readonly offset: number;
  /** The latest analysis of the document (possibly a few keystrokes old): pattern names and the samples. */
  readonly analysis?: Analysis;
  readonly snippets: boolean;
}

/** Where the cursor is, as far as completion cares. */
type Context =
  | { readonly kind: "top-level" }
  | { readonly kind: "declaration" }
  | { readonly kind: "form" }
  | { readonly kind: "after-statement" }
  | { readonly kind: "operand"; readonly temporal: boolean }
  /**
   * After a complete operand (`key` when it may be a key awaiting its operator); `ends`: the
   * declaration it may end; `scope`: in a rule's scope, with the word that may come next (`until`
   * after `after ψ`, `and` after `between ψ`), if any.
   */
  | {
      readonly kind: "after-operand";
      readonly key?: readonly PathSegment[];
      readonly temporal: boolean;
      readonly ends: "rule" | "pattern" | undefined;
      readonly scope?: { readonly next?: "until" | "and" };
    }
  /** Inside `every(`, `some(` or `count(`: the key. */
  | { readonly kind: "condition-key"; readonly word: ConditionWord }
  /** After `every(KEY)`, `some(KEY)` or `count(KEY)`: the condition's operator (for `count`, a comparison). */
  | { readonly kind: "quantified"; readonly word: ConditionWord; readonly key: readonly PathSegment[] }
  | { readonly kind: "actions"; readonly present: ReadonlySet<string> }
  | { readonly kind: "values"; readonly key: readonly PathSegment[]; readonly present: ReadonlySet<string> }
  /** After `KEY.`: the names under the key, and the indexes of the lists it holds. */
  | { readonly kind: "nested-key"; readonly prefix: readonly PathSegment[] }
  | { readonly kind: "status" }
  | { readonly kind: "variable" }
  | { readonly kind: "wildcard"; readonly key?: readonly PathSegment[] }
  /**
   * In the brackets of `bresp[…]`, `limit[…]`, `once[…]` or `eventually[…]`: at the value (a count
   * or a duration), after a limit's value (`of`, `per`), at the key of `of`, after it (`per`), or at
   * the window after `per` (a duration).
   */
  | { readonly kind: "bound"; readonly owner: "bresp" | "limit" | "once" | "eventually"; readonly place: "value" | "after-value" | "key" | "after-key" | "window" }
  | { readonly kind: "none" };

export function completions(input: CompletionInput): CompletionList {
  const { tokens, offset } = input;
  // The token being typed (the cursor inside it or at its end) is replaced by the completion.
  const lastIndex = lastTokenBefore(tokens, offset);
  const last = tokens[lastIndex];
  let typing: Token | undefined;
  if (last !== undefined && offset <= last.end) {
    if (isComment(last)) return { isIncomplete: false, items: [] };
    if (last.kind === "identifier" || last.kind === "keyword" || last.kind === "string" || last.kind === "unterminated-string" || last.kind === "number" || last.kind === "variable") {
      // A closed string is being typed only while the cursor is inside its quotes.
      if (!(last.kind === "string" && offset === last.end)) typing = last;
    }
  }
  const before = typing !== undefined ? lastIndex - 1 : lastIndex;
  const context = contextAt(tokens, before);
  const replace = input.positions.range(typing?.start ?? offset, typing !== undefined ? Math.max(offset, typing.end) : offset);
  const samples = input.analysis?.context.samples;
  const items = itemsFor(context, { ...input, samples, policyName: policyNameAt(tokens, before), replace });
  return { isIncomplete: false, items };
}

// Reading the context off the tokens.

interface Frame {
  readonly kind: "block" | "set" | "paren" | "bracket";
  readonly index: number;
  /** For a parenthesis: whether it opens a form's operands. */
  readonly form?: boolean;
}

function contextAt(all: readonly Token[], lastIndex: number): Context {
  // The code tokens up to the cursor, comments set aside.
  const tokens: Token[] = [];
  for (let index = 0; index <= lastIndex; index++) if (!isComment(all[index]!)) tokens.push(all[index]!);
  // The brackets still open at the cursor, and where the current declaration starts.
  const stack: Frame[] = [];
  let declaration = -1;
  tokens.forEach((token, index) => {
    if (token.kind === "keyword" && (token.keyword === "policy" || token.keyword === "pattern" || token.keyword === "rule")) {
      declaration = index;
      // A declaration keyword closes whatever the previous declaration left open, but not its policy.
      while (stack.length > 0 && stack[stack.length - 1]!.kind !== "block") stack.pop();
      if (token.keyword === "policy") stack.length = 0;
      return;
    }
    if (token.kind !== "punctuation") return;
    const previous = tokens[index - 1];
    switch (token.text) {
      case "{":
        stack.push({ kind: isKeywordToken(previous, "in") ? "set" : "block", index });
        break;
      case "(":
        stack.push({ kind: "paren", index, form: formKeywordBefore(tokens, index) });
        break;
      case "[":
        stack.push({ kind: "bracket", index });
        break;
      case "}":
      case ")":
      case "]": {
        const wanted = token.text === "}" ? ["block", "set"] : token.text === ")" ? ["paren"] : ["bracket"];
        const at = findLastIndex(stack, (frame) => wanted.includes(frame.kind));
        if (at >= 0) stack.length = at;
        break;
      }
      default:
        break;
    }
  });

  const policyBlock = stack.find((frame) => frame.kind === "block");
  const previous = tokens[tokens.length - 1];
  const declarationKeyword = tokens[declaration]?.keyword;
  if (policyBlock === undefined) {
    // Outside every policy; right after `policy` a name is being written.
    return declarationKeyword === "policy" && declaration === tokens.length - 1 ? { kind: "none" } : { kind: "top-level" };
  }
  // In a policy's block before any of its declarations.
  if (declaration < policyBlock.index) return { kind: "declaration" };
  const top = stack[stack.length - 1]!;
  if (top.kind === "set") return setContext(tokens, top.index, tokens.length);
  if (top.kind === "bracket") return boundContext(tokens, top.index);
  const nested = top.kind === "paren";

  // Inside a pattern or a rule: `pattern NAME = ψ`, `rule NAME: FORM(…)` or `rule NAME: always Θ`.
  const afterKeyword = tokens.slice(declaration + 1);
  if (declarationKeyword === "pattern") {
    if (afterKeyword.length < 2 || !isPunctuation(afterKeyword[1], "=")) return { kind: "none" };
    if (afterKeyword.length === 2) return { kind: "operand", temporal: false };
    return expressionContext(tokens, false, nested ? undefined : "pattern");
  }
  if (declarationKeyword !== "rule" || afterKeyword.length < 2 || !isPunctuation(afterKeyword[1], ":")) return { kind: "none" };
  if (afterKeyword.length === 2) return { kind: "form" };
  // In the rule's scope (its words are keywords where the parser reads a scope; see `scanTokens`).
  const scopeWord = afterKeyword.findIndex((token) => token.scopeWord === true);
  if (scopeWord >= 0) return scopeContext(tokens, declaration + 1 + scopeWord, nested);
  if (isKeywordToken(afterKeyword[2], "always")) {
    if (afterKeyword.length === 3) return { kind: "operand", temporal: true };
    return expressionContext(tokens, true, nested ? undefined : "rule");
  }
  // A form's operands: inside its parentheses, or after them at the rule's level (where a response,
  // then its remediation, then the next declaration may come).
  if (!nested) {
    if (isPunctuation(previous, ")")) return { kind: "after-statement" };
    return afterKeyword.slice(3).some((token) => isPunctuation(token, "(")) ? { kind: "declaration" } : { kind: "none" };
  }
  return expressionContext(tokens, false, undefined);
}

/**
 * In a scope's patterns (one-event patterns: no `once` or `eventually`): a pattern after the scope's
 * word and after its `until` or `and`; after a complete pattern, the word that ends the first one,
 * the connectives, a response and the next declaration.
 */
function scopeContext(tokens: readonly Token[], word: number, nested: boolean): Context {
  if (nested) return expressionContext(tokens, false, undefined);
  const previous = tokens[tokens.length - 1];
  if (previous?.scopeWord === true) return { kind: "operand", temporal: false };
  const context = expressionContext(tokens, false, "rule");
  if (context.kind !== "after-operand") return context;
  const first = tokens[word]!.keyword;
  const rest = tokens.slice(word + 1);
  const has = (keyword: string) => rest.some((token) => token.scopeWord === true && token.keyword === keyword);
  const next = first === "after" && !has("until") ? "until" : first === "between" && !has("and") ? "and" : undefined;
  return { ...context, scope: next !== undefined ? { next } : {} };
}

/**
 * In a bound's brackets, read as the parser's `bound` reads them: `[` VALUE (`of` KEY)? (`per`
 * DURATION)? `]`. `of` and `per` are keywords in their places (see `scanTokens`), and only a limit
 * takes them.
 */
function boundContext(tokens: readonly Token[], open: number): Context {
  const ownerToken = tokens[open - 1];
  const owner = ownerToken?.kind === "keyword" ? ownerToken.keyword : undefined;
  if (owner !== "bresp" && owner !== "limit" && owner !== "once" && owner !== "eventually") return { kind: "none" };
  const inside = tokens.slice(open + 1);
  const last = inside[inside.length - 1];
  if (last === undefined) return { kind: "bound", owner, place: "value" };
  if (isKeywordToken(last, "per")) return { kind: "bound", owner, place: "window" };
  if (isKeywordToken(last, "of")) return { kind: "bound", owner, place: "key" };
  if (isPunctuation(last, ".")) {
    const prefix = keyPathBefore(tokens, tokens.length - 1);
    return prefix !== undefined ? { kind: "nested-key", prefix } : { kind: "none" };
  }
  if (owner !== "limit" || inside.some((token) => isKeywordToken(token, "per"))) return { kind: "none" };
  if (inside.length === 1) return { kind: "bound", owner, place: "after-value" };
  return inside.some((token) => isKeywordToken(token, "of")) ? { kind: "bound", owner, place: "after-key" } : { kind: "none" };
}

function setContext(tokens: readonly Token[], open: number, end: number): Context {
  const present = new Set<string>();
  for (let index = open + 1; index < end; index++) {
    const token = tokens[index]!;
    const name = segmentName(token);
    if (name !== undefined) present.add(name);
    else if (token.kind === "number" || token.kind === "keyword") present.add(token.text);
  }
  // `action in {` or `KEY in {`.
  const inIndex = open - 1;
  if (isKeywordToken(tokens[inIndex - 1], "action")) return { kind: "actions", present };
  const key = subjectKeyBefore(tokens, inIndex);
  return key !== undefined ? { kind: "values", key, present } : { kind: "none" };
}

/**
 * What may come at the cursor inside an expression, from the token before it. `ends` says which
 * declaration a completed operand may end (at its top level, outside any parentheses).
 */
function expressionContext(tokens: readonly Token[], temporal: boolean, ends: "rule" | "pattern" | undefined): Context {
  const previous = tokens[tokens.length - 1];
  if (previous === undefined) return { kind: "operand", temporal };
  if (previous.kind === "punctuation") {
    switch (previous.text) {
      case "(": {
        const word = conditionWordAt(tokens, tokens.length - 2);
        return word !== undefined ? { kind: "condition-key", word } : { kind: "operand", temporal };
      }
      case ",":
        return { kind: "operand", temporal };
      case "=": {
        if (isKeywordToken(tokens[tokens.length - 2], "status")) return { kind: "status" };
        return { kind: "variable" };
      }
      case "~": {
        const key = subjectKeyBefore(tokens, tokens.length - 1);
        return key !== undefined ? { kind: "wildcard", key } : { kind: "wildcard" };
      }
      case ".": {
        const prefix = keyPathBefore(tokens, tokens.length - 1);
        return prefix !== undefined ? { kind: "nested-key", prefix } : { kind: "none" };
      }
      case ")": {
        const quantified = quantifiedKeyBefore(tokens, tokens.length);
        return quantified !== undefined ? { kind: "quantified", ...quantified } : { kind: "after-operand", temporal, ends };
      }
      case "}":
        return { kind: "after-operand", temporal, ends };
      case "]":
        // `once[1h] ` and `eventually[30s] `: an operand comes next.
        return closesTemporalWindow(tokens, tokens.length - 1) ? { kind: "operand", temporal } : { kind: "none" };
      default:
        return { kind: "none" };
    }
  }
  if (previous.kind === "keyword") {
    switch (previous.keyword) {
      case "and":
      case "or":
      case "not":
      case "implies":
      case "once":
      case "eventually":
      case "always":
        return { kind: "operand", temporal };
      case "ok":
      case "error":
      case "true":
      case "false":
      case "null":
        return { kind: "after-operand", temporal, ends };
      default:
        return { kind: "none" };
    }
  }
  if (previous.kind === "identifier" || previous.kind === "string" || (previous.kind === "number" && isPunctuation(tokens[tokens.length - 2], "."))) {
    // A name right after an operand start may be a key (or a pattern name); a string after `~` ends an atom.
    const key = keyPathBefore(tokens, tokens.length);
    if (key !== undefined) {
      const beforeKey = tokens.length - (2 * key.length - 1) - 1;
      // In `every(KEY`, the parenthesis closes next.
      if (isPunctuation(tokens[beforeKey], "(") && conditionWordAt(tokens, beforeKey - 1) !== undefined) return { kind: "none" };
      if (beforeKey < 0 || isOperandStart(tokens[beforeKey]!) || closesTemporalWindow(tokens, beforeKey)) return { kind: "after-operand", key, temporal, ends };
    }
    return { kind: "after-operand", temporal, ends };
  }
  if (previous.kind === "number" || previous.kind === "variable") return { kind: "after-operand", temporal, ends };
  return { kind: "none" };
}

function isOperandStart(token: Token): boolean {
  if (token.scopeWord === true) return true;
  if (token.kind === "punctuation") return token.text === "(" || token.text === "," || token.text === "=";
  return token.kind === "keyword" && ["and", "or", "not", "implies", "once", "eventually", "always"].includes(token.keyword ?? "");
}

/** Whether the token at `index` is the `]` of `once[…]` or `eventually[…]` (an operand follows it). */
function closesTemporalWindow(tokens: readonly Token[], index: number): boolean {
  if (!isPunctuation(tokens[index], "]")) return false;
  let open = index - 1;
  while (open >= 0 && !isPunctuation(tokens[open], "[")) open--;
  return isKeywordToken(tokens[open - 1], "once") || isKeywordToken(tokens[open - 1], "eventually");
}

function formKeywordBefore(tokens: readonly Token[], open: number): boolean {
  let previous = tokens[open - 1];
  if (isPunctuation(previous, "]")) {
    let index = open - 1;
    while (index >= 0 && !isPunctuation(tokens[index], "[")) index--;
    previous = tokens[index - 1];
  }
  return previous?.kind === "keyword" && forms.includes(previous.keyword as never) && previous.keyword !== "always";
}

/** The name of the policy whose block holds the cursor: the last `policy NAME` before it. */
function policyNameAt(tokens: readonly Token[], lastIndex: number): string | undefined {
  for (let index = lastIndex; index >= 0; index--) {
    if (isKeywordToken(tokens[index], "policy")) {
      const name = tokens[index + 1];
      return name?.kind === "identifier" ? name.text : undefined;
    }
  }
  return undefined;
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index]!)) return index;
  return -1;
}

// The items of each context.

interface ItemOptions extends CompletionInput {
  readonly samples: SampleSet | undefined;
  readonly policyName: string | undefined;
  readonly replace: Range;
}

function itemsFor(context: Context, options: ItemOptions): CompletionItem[] {
  const items = new ItemList(options);
  const signature = options.samples?.signature;
  switch (context.kind) {
    case "top-level":
      items.snippet("policy", "policy ${1:name} {\n\t$0\n}", "a policy: patterns and rules", CompletionItemKind.Module);
      break;
    case "declaration":
      items.snippet("pattern", "pattern ${1:name} = ${0}", "a named condition on one event", CompletionItemKind.Keyword);
      items.snippet("rule", "rule ${1:name}: ${0}", "a statement with its own verdict", CompletionItemKind.Keyword);
      break;
    case "form":
      for (const form of forms) {
        const description = formDescriptions[form];
        items.snippet(form, description.snippet, `holds when ${description.holdsWhen}`, CompletionItemKind.Function, description.label);
      }
      break;
    case "after-statement":
      scopeItems(items);
      for (const response of ruleResponses) {
        items.snippet(response, `${response} "\${1:how to comply}"`, `a violation ${responseDescriptions[response]}`, CompletionItemKind.Keyword, `${response} "…"`);
        items.plain(response, `a violation ${responseDescriptions[response]}`, CompletionItemKind.Keyword);
      }
      items.snippet("rule", "rule ${1:name}: ${0}", "the next rule", CompletionItemKind.Keyword);
      items.snippet("pattern", "pattern ${1:name} = ${0}", "a named condition on one event", CompletionItemKind.Keyword);
      break;
    case "operand":
      operandItems(items, options, signature, context.temporal);
      break;
    case "after-operand":
      if (context.key !== undefined) {
        items.snippet("in", "in {${1}}", "the argument has one of the values", CompletionItemKind.Operator, "in {…}");
        items.snippet("~", '~ "${1:*}"', "the argument matches the wildcard", CompletionItemKind.Operator, '~ "…"');
        items.snippet("=", "= \\$${1:x}", "binds the argument's value to a variable", CompletionItemKind.Operator, "= $x");
        items.snippet("matches", "matches /${1}/${2:i}", "the argument's text contains a match of the regular expression", CompletionItemKind.Operator, "matches /…/");
        items.snippet("contains", "contains \\$${1:x}", "the argument's text contains the value bound to the variable", CompletionItemKind.Operator, "contains $x");
        comparisonItems(items, "some");
      }
      if (context.scope?.next === "until") items.plain("until", "ends the first pattern: each stretch closes at the next event matching ψ'", CompletionItemKind.Keyword);
      // In `between ψ and ψ'`, the first `and` ends ψ.
      if (context.scope?.next === "and") items.plain("and", "ends the first pattern: each stretch closes at the next event matching ψ'", CompletionItemKind.Keyword);
      for (const connective of context.scope !== undefined ? ["and", "or"] : ["and", "or", "implies"]) items.plain(connective, keywordDescriptions[connective]!, CompletionItemKind.Keyword);
      if (context.ends === "rule" && context.scope === undefined) scopeItems(items);
      if (context.ends === "rule") {
        for (const response of ruleResponses) items.plain(response, `a violation ${responseDescriptions[response]}`, CompletionItemKind.Keyword);
      }
      if (context.ends !== undefined) {
        items.snippet("rule", "rule ${1:name}: ${0}", "the next rule", CompletionItemKind.Keyword);
        items.snippet("pattern", "pattern ${1:name} = ${0}", "a named condition on one event", CompletionItemKind.Keyword);
      }
      break;
    case "condition-key":
      conditionKeyItems(items, options, signature, context.word);
      break;
    case "quantified":
      quantifiedItems(items, context.word);
      break;
    case "actions":
      if (signature !== undefined) {
        for (const action of sortedByEvents(signature.actions, (a) => actionEvents(options.samples, a))) {
          if (context.present.has(action)) continue;
          items.value(nameText(action), "action", eventsDetail(actionEvents(options.samples, action)), CompletionItemKind.EnumMember);
        }
      }
      break;
    case "values":
      if (signature !== undefined) {
        const info = signature.keys.get(keyPathId(keyPathNames(context.key)));
        for (const value of info?.values.values() ?? []) {
          const text = literalText(value);
          if (text === undefined || context.present.has(text) || (typeof value === "string" && context.present.has(value))) continue;
          items.value(text, `value of ${keyText(context.key)}`, eventsDetail(valueEvents(options.samples, context.key, value)), CompletionItemKind.Value);
        }
      }
      break;
    case "nested-key":
      if (signature !== undefined) {
        // Σ keeps a list's elements under the list's own name: the names under `items.0.` are those under `items.`.
        const prefix = keyPathNames(context.prefix);
        const seen = new Set<string>();
        for (const info of signature.keys.values()) {
          const { segments } = info;
          if (segments.length <= prefix.length || !prefix.every((segment, index) => segments[index] === segment)) continue;
          const next = segments[prefix.length]!;
          if (seen.has(next)) continue;
          seen.add(next);
          items.value(nameText(next), "argument", `under ${keyText(context.prefix)}`, CompletionItemKind.Property);
        }
        // A list: its first elements by index (`argv.0`, `argv.1`, …), as many as the longest list has, up to a few.
        const listLength = signature.keys.get(keyPathId(prefix))?.listLength ?? 0;
        for (let index = 0; index < Math.min(listLength, LISTED_INDEXES); index++) {
          items.value(String(index), "list element", `element ${index} of the lists under ${keyText(context.prefix)}`, CompletionItemKind.Property);
        }
      }
      break;
    case "bound":
      boundItems(items, options, signature, context);
      break;
    case "status":
      items.plain("ok", "the call succeeded", CompletionItemKind.EnumMember);
      items.plain("error", "the call failed", CompletionItemKind.EnumMember);
      break;
    case "variable":
      items.snippet("$x", "\\$${1:x}", "a variable: ties this value to the other pattern's", CompletionItemKind.Variable);
      break;
    case "wildcard":
      items.snippet('"*"', '"${1:*}"', "a wildcard: * any text, ? one character, [a-z] a class", CompletionItemKind.Text);
      if (signature !== undefined && context.key !== undefined) {
        for (const value of signature.keys.get(keyPathId(keyPathNames(context.key)))?.values.values() ?? []) {
          if (typeof value === "string") items.value(JSON.stringify(value), `value of ${keyText(context.key)}`, "matches exactly this value", CompletionItemKind.Value);
        }
      }
      break;
    case "none":
      break;
  }
  return items.items;
}

/** The scopes a statement may end with, as snippets. */
function scopeItems(items: ItemList): void {
  for (const kind of scopeKinds) {
    const description = scopeDescriptions[kind];
    items.snippet(kind === "afterUntil" ? "after" : kind, description.snippet, description.summary, CompletionItemKind.Keyword, description.label);
  }
}

/**
 * In a bound's brackets: durations where one is read (the window of `bresp`, `once`, `eventually`,
 * and after `per`), a limit's `per` and `of` after its maximum, and after `of` the samples' keys,
 * those that hold numbers first.
 */
function boundItems(items: ItemList, options: ItemOptions, signature: Signature | undefined, context: Extract<Context, { kind: "bound" }>): void {
  const perSnippet = () => items.snippet("per", "per ${1:1m}", "at most N in any window of length D (a duration)", CompletionItemKind.Keyword, "per D");
  switch (context.place) {
    case "value":
      if (context.owner === "limit") break;
      for (const duration of suggestedDurations) {
        const within = context.owner === "bresp" ? "a window of time (a number counts events)" : context.owner === "once" ? "at most this long before" : "at most this long after";
        items.value(duration, "duration", `${durationInWords(duration)!}: ${within}`, CompletionItemKind.Constant);
      }
      break;
    case "window":
      for (const duration of suggestedDurations) items.value(duration, "duration", `${durationInWords(duration)!}: the window of the limit`, CompletionItemKind.Constant);
      break;
    case "after-value":
      perSnippet();
      items.plain("of", "limits the sum of the numbers at KEY instead of a count", CompletionItemKind.Keyword);
      break;
    case "after-key":
      perSnippet();
      break;
    case "key":
      if (signature !== undefined) {
        const numeric = (info: KeyInfo) => [...info.values.values()].some((value) => typeof value === "number");
        const keys = [...signature.keys.values()].sort((a, b) => Number(numeric(b)) - Number(numeric(a)));
        for (const info of keys) {
          const events = eventsDetail(keyEvents(options.samples, info.segments));
          items.value(info.segments.map(nameText).join("."), numeric(info) ? "argument with numbers" : "argument", events, CompletionItemKind.Property);
        }
      }
      break;
  }
}

function operandItems(items: ItemList, options: ItemOptions, signature: Signature | undefined, temporal: boolean): void {
  items.snippet("action in", "action in {${1}}", "the event's action is one of the names", CompletionItemKind.Keyword, "action in {…}");
  items.plain("status = ok", "the call succeeded", CompletionItemKind.Keyword);
  items.plain("status = error", "the call failed", CompletionItemKind.Keyword);
  items.snippet("output ~", 'output ~ "${1:*}"', "the call's output matches the wildcard", CompletionItemKind.Keyword, 'output ~ "…"');
  items.snippet("output matches", "output matches /${1}/${2:i}", "the call's output contains a match of the regular expression", CompletionItemKind.Keyword, "output matches /…/");
  items.plain("not", keywordDescriptions["not"]!, CompletionItemKind.Keyword);
  for (const word of conditionWords) items.snippet(word, `${word}(\${1:key}) \${2}`, conditionWordDescriptions[word], CompletionItemKind.Keyword, `${word}(…)`);
  if (temporal) {
    items.plain("once", keywordDescriptions["once"]!, CompletionItemKind.Keyword);
    items.plain("eventually", keywordDescriptions["eventually"]!, CompletionItemKind.Keyword);
  }
  for (const pattern of patternNames(options)) items.value(pattern.name, "pattern", pattern.detail, CompletionItemKind.Interface);
  if (signature !== undefined) {
    for (const info of signature.keys.values()) {
      items.value(info.segments.map(nameText).join("."), "argument", eventsDetail(keyEvents(options.samples, info.segments)), CompletionItemKind.Property);
    }
  }
}

/** The comparisons after a key, `every(KEY)`, `some(KEY)` or `count(KEY)`: `> N` and the others. */
function comparisonItems(items: ItemList, subject: "some" | "every" | "count"): void {
  for (const operator of comparisonOperators) items.snippet(operator, `${operator} \${1:0}`, comparisonSummary(operator, subject), CompletionItemKind.Operator, `${operator} N`);
}

/** After `every(KEY)` or `some(KEY)`, a condition's operators but `= $x`; after `count(KEY)`, the comparisons. */
function quantifiedItems(items: ItemList, word: ConditionWord): void {
  if (word !== "count") {
    const each = word === "every" ? "every value" : "some value";
    items.snippet("in", "in {${1}}", `${each} of the argument is one of the set`, CompletionItemKind.Operator, "in {…}");
    items.snippet("~", '~ "${1:*}"', `${each} of the argument matches the wildcard`, CompletionItemKind.Operator, '~ "…"');
    items.snippet("matches", "matches /${1}/${2:i}", `${each} of the argument contains a match of the regular expression`, CompletionItemKind.Operator, "matches /…/");
    items.snippet("contains", "contains \\$${1:x}", `${each} of the argument contains the value bound to the variable`, CompletionItemKind.Operator, "contains $x");
  }
  comparisonItems(items, word);
}

/**
 * Inside `every(`, `some(` or `count(`: the samples' keys, as for a plain key, those that hold lists
 * first (what the words are for).
 */
function conditionKeyItems(items: ItemList, options: ItemOptions, signature: Signature | undefined, word: ConditionWord): void {
  if (signature === undefined) return;
  const list = (info: KeyInfo) => info.listLength !== undefined;
  const keys = [...signature.keys.values()].sort((a, b) => Number(list(b)) - Number(list(a)));
  for (const info of keys) {
    const events = eventsDetail(keyEvents(options.samples, info.segments));
    items.value(info.segments.map(nameText).join("."), list(info) ? `argument holding lists (${word})` : "argument", events, CompletionItemKind.Property);
  }
}

/** The patterns of the policy at the cursor, from the latest analysis. */
function patternNames(options: ItemOptions): { name: string; detail: string }[] {
  const policy = options.analysis?.compiled.syntax.policies.find((p) => p.name.text === options.policyName);
  if (policy === undefined) return [];
  return policy.items
    .filter((item) => item.kind === "PatternDecl" && item.name.recovered !== true)
    .map((item) => ({ name: item.name.text, detail: item.doc?.text.split("\n")[0] ?? "a pattern of this policy" }));
}

function literalText(value: JsonValue): string | undefined {
  if (value === null || typeof value === "boolean" || typeof value === "string") return JSON.stringify(value);
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : undefined;
  return undefined;
}

/** How many indexes of a list completion offers after `KEY.`: the first few (an index of any size can be written). */
const LISTED_INDEXES = 10;

function keyText(segments: readonly PathSegment[]): string {
  return segments.map((segment) => (typeof segment === "number" ? String(segment) : nameText(segment))).join(".");
}

function sortedByEvents<T>(values: Iterable<T>, events: (value: T) => number): T[] {
  return [...values].sort((a, b) => events(b) - events(a) || String(a).localeCompare(String(b)));
}

function eventsDetail(events: number): string {
  return events === 0 ? "" : `in ${events} ${events === 1 ? "event" : "events"} of the samples`;
}

function sum(samples: SampleSet | undefined, count: (trace: SampleSet["traces"][number]) => number): number {
  let total = 0;
  for (const trace of samples?.traces ?? []) if (trace.usable) total += count(trace);
  return total;
}

function actionEvents(samples: SampleSet | undefined, action: string): number {
  return sum(samples, (trace) => trace.statistics.actions.get(action) ?? 0);
}

function keyEvents(samples: SampleSet | undefined, segments: readonly string[]): number {
  return sum(samples, (trace) => trace.statistics.keys.get(keyPathId(segments))?.events ?? 0);
}

function valueEvents(samples: SampleSet | undefined, segments: readonly PathSegment[], value: JsonValue): number {
  // Counted under the names: a value of `argv.0` is counted as one of `argv`'s.
  const id = keyPathId(keyPathNames(segments));
  const key = valueKey(value);
  return sum(samples, (trace) => trace.statistics.keys.get(id)?.values.get(key)?.events ?? 0);
}

/** Completion items in the order they are added (the client filters them by what is typed). */
class ItemList {
  readonly items: CompletionItem[] = [];
  private readonly labels = new Set<string>();

  constructor(private readonly options: ItemOptions) {}

  /** A snippet (plain text when the client takes no snippets: the placeholders' defaults, no tab stops). */
  snippet(label: string, snippet: string, documentation: string, kind: CompletionItemKind, shown = label): void {
    if (this.options.snippets) this.add({ label: shown, kind, detail: documentation, textEdit: { range: this.options.replace, newText: snippet }, insertTextFormat: InsertTextFormat.Snippet, filterText: label });
    else this.add({ label: shown, kind, detail: documentation, textEdit: { range: this.options.replace, newText: plainText(snippet) }, filterText: label });
  }

  plain(label: string, documentation: string, kind: CompletionItemKind): void {
    this.add({ label, kind, detail: documentation, textEdit: { range: this.options.replace, newText: label } });
  }

  /** A name or value from the policy or the samples, inserted as written. */
  value(text: string, what: string, detail: string, kind: CompletionItemKind): void {
    this.add({ label: text, kind, detail: detail.length > 0 ? `${what} · ${detail}` : what, textEdit: { range: this.options.replace, newText: text }, filterText: text });
  }

  private add(item: CompletionItem): void {
    const key = `${item.label}\u0000${item.kind}`;
    if (this.labels.has(key)) return;
    this.labels.add(key);
    this.items.push({ ...item, sortText: String(this.items.length).padStart(5, "0") });
  }
}

/** A snippet's text without its tab stops: `${1:x}` becomes `x`, `$0` nothing, `\$` a dollar. */
function plainText(snippet: string): string {
  return snippet
    .replace(/\$\{\d+:([^}]*)\}/g, "$1")
    .replace(/\$\{\d+\}|\$\d+/g, "")
    .replace(/\\\$/g, "$");
}

