import { keyPathText, printExpr, type ComparisonOperator } from "@vigil/syntax";
import type { KeyCondition } from "./positions.js";

/**
 * Conditions on a key in words: a comparison (`amount > 100`), a count (`count(passengers) <= 5`),
 * and a condition with `every(KEY)` or `some(KEY)`. The meaning said here is the one the engines
 * decide (packages/engine/src/atoms.ts): the values under a key path are every value it reaches,
 * each element of a list counted; a comparison reads a number, or a string spelling one exactly, and
 * compares it with the written number as exact decimals; any other value never compares; `every`
 * needs the key to have a value. The editor's hover shows these texts, and the command line's
 * explanations can reuse them.
 */

/** Each comparison operator in words, as it reads after "is": `> 100` is "greater than 100". */
export const comparisonWords: Readonly<Record<ComparisonOperator, string>> = {
  "<": "less than",
  "<=": "at most",
  ">": "greater than",
  ">=": "at least",
  "=": "equal to",
  "!=": "different from",
};

/** The comparison operators, in the order completion offers them. */
export const comparisonOperators: readonly ComparisonOperator[] = ["<", "<=", ">", ">=", "=", "!="];

/** What `every`, `some` and `count` mean, said generally (where no condition is at hand: completion, a half-typed line). */
export const conditionWordDescriptions: Readonly<Record<"every" | "some" | "count", string>> = {
  every:
    "`every(KEY) COND`: the key has a value and every value under it (each element of a list) meets COND — `in {…}`, `~ \"…\"`, `matches /…/`, `contains $x` or a comparison; on an event without the key, it does not hold. `every` is not reserved: it is a word only before `(KEY)`.",
  some: "`some(KEY) COND`: some value under the key (an element of a list) meets COND, as when the condition is written without a word. `some` is not reserved: it is a word only before `(KEY)`.",
  count:
    "`count(KEY) OP N`: the number of values under the key — a list's elements, 1 for a single value, 0 when it is missing — compares with the number N (`<`, `<=`, `>`, `>=`, `=`, `!=`). `count` is not reserved: it is a word only before `(KEY)`.",
};

/**
 * A comparison said generally, for completion and for an operator the tree has no condition for:
 * `KEY > N` (some value), `every(KEY) > N` (every value), `count(KEY) > N` (the number of values).
 */
export function comparisonSummary(operator: ComparisonOperator, subject: "some" | "every" | "count" = "some"): string {
  const compared = `${comparisonWords[operator]} N`;
  if (subject === "count") return `the number of values under the key is ${compared}`;
  return `${subject === "every" ? "every value of the argument (and it has one)" : "some value of the argument"} is a number (or a string spelling one) ${compared}`;
}

/**
 * What one condition on a key means, as markdown: the condition as written, when it holds on an
 * event, and what it says of values that are not numbers, of a missing key and of lists. The hover
 * on `every`, `some`, `count` or a comparison's operator shows it.
 */
export function describeCondition(condition: KeyCondition): string {
  const written = code(printExpr(condition));
  if (condition.kind === "KeyCount") return joinParagraphs([`${written} holds on an event when ${countClause(condition)}.`, countNote(condition), outputNote(condition)]);
  const key = code(keyPathText(condition.key));
  const test = valueTest(condition);
  const quantifier = condition.quantifier?.kind;
  const holds =
    quantifier === "every"
      ? `${written} holds on an event when ${key} has a value and every value under it (each element of a list) ${test}; on an event without ${key}, or with an empty list there, it does not hold.`
      : `${written} holds on an event when some value under ${key} (an element of a list counts) ${test}; on an event without ${key}, it does not hold.`;
  return joinParagraphs([holds, valueNote(condition), quantifierNote(condition), outputNote(condition)]);
}

/** What one value under the key must be for the condition to hold on it. */
function valueTest(condition: Exclude<KeyCondition, { kind: "KeyCount" }>): string {
  switch (condition.kind) {
    case "KeyIn": {
      const values = condition.values.map((value) => code(value.raw));
      return values.length === 0 ? "is in the empty set, which no value is" : values.length === 1 ? `is ${values[0]}` : `is one of ${values.join(", ")}`;
    }
    case "KeyMatch":
      return `matches ${code(condition.pattern.value)}`;
    case "KeyRegex":
      return `contains a match of ${code(condition.regex.raw)}`;
    case "KeyContains":
      return `contains, as text, the value bound to ${code(`$${condition.variable.name}`)}`;
    case "KeyCompare":
      return `is a number (or a string spelling one, such as "150.00") ${comparisonWords[condition.operator]} ${condition.number.text}, compared exactly`;
  }
}

/**
 * Which values the test can hold on at all: a comparison reads numbers only, the text conditions
 * read strings, and numbers and booleans by their JSON text.
 */
function valueNote(condition: Exclude<KeyCondition, { kind: "KeyCount" }>): string | undefined {
  const every = condition.quantifier?.kind === "every";
  switch (condition.kind) {
    case "KeyCompare": {
      const others = "Any other value — other text, `true`, `false`, `null`, an object — never compares, not even with `!=`";
      return every ? `${others}: one such value under the key makes the condition false.` : `${others}; a text or a missing key never satisfies it.`;
    }
    case "KeyMatch":
    case "KeyRegex":
    case "KeyContains": {
      const text = "A string is read as it is, a number or a boolean by its JSON text; `null` and an object are no text";
      return every ? `${text}, and one such value makes the condition false.` : `${text}.`;
    }
    case "KeyIn":
      return undefined;
  }
}

/** How the word (or its absence) decides between some value and every value. */
function quantifierNote(condition: Exclude<KeyCondition, { kind: "KeyCount" }>): string {
  const key = keyPathText(condition.key);
  switch (condition.quantifier?.kind) {
    case "every":
      return `\`every(${key})\`: every value must meet it, and there must be one. Without \`every\` (or with \`some(${key})\`), one value meeting it is enough.`;
    case "some":
      return `\`some(${key})\` is the same as the condition written without a word: one value meeting it is enough. With \`every(${key})\`, every value must.`;
    default:
      return `With \`every(${key})\`, every value must meet it (and there must be one).`;
  }
}

/** `count(KEY) OP N`: the number of values, and how it compares. */
function countClause(condition: Extract<KeyCondition, { kind: "KeyCount" }>): string {
  const key = code(keyPathText(condition.key));
  return `the number of values under ${key} — a list's elements, 0 when it is missing — is ${comparisonWords[condition.operator]} ${condition.number.text}`;
}

function countNote(condition: Extract<KeyCondition, { kind: "KeyCount" }>): string {
  const throughLists = condition.key.segments.length > 1 ? "; a path through lists counts the values it reaches in every element" : "";
  return `A single value counts 1 (\`null\` too), an empty list 0${throughLists}. The count is compared exactly with ${condition.number.text}.`;
}

/** A path into the output reads the call's output as a JSON object. */
function outputNote(condition: KeyCondition): string | undefined {
  if (condition.key.output === undefined) return undefined;
  if (condition.key.segments.length === 0) return "`output` is the call's output text; a call without a result has none.";
  return "A path from `output` reads the call's output as a JSON object: a call without a result, or whose output is not an object, has no value there.";
}

/** Text as a markdown code span, fenced with more backticks than it holds in a row. */
function code(text: string): string {
  const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((run) => run[0].length));
  const fence = "`".repeat(longest + 1);
  const padding = longest > 0 ? " " : "";
  return `${fence}${padding}${text}${padding}${fence}`;
}

function joinParagraphs(parts: readonly (string | undefined)[]): string {
  return parts.filter((part): part is string => part !== undefined && part.length > 0).join("\n\n");
}
