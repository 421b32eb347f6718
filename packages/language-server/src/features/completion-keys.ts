import type { PathSegment } from "@vigil/trace";
import { isPunctuation, type Token } from "../tokens.js";

/**
 * Key paths read off the tokens before the cursor, for completion: a plain path (`a.b`, `argv.0`),
 * and the one in `every(KEY)`, `some(KEY)` or `count(KEY)`.
 */

/** The words that take a key in parentheses at the start of a condition. */
export type ConditionWord = "every" | "some" | "count";
export const conditionWords: readonly ConditionWord[] = ["every", "some", "count"];

/** The word `every`, `some` or `count` at `index`, when it is one (a keyword there: it comes before `(`, see `scanTokens`). */
export function conditionWordAt(tokens: readonly Token[], index: number): ConditionWord | undefined {
  const token = tokens[index];
  return token?.kind === "keyword" && conditionWords.includes(token.keyword as ConditionWord) ? (token.keyword as ConditionWord) : undefined;
}

/** `every(KEY)`, `some(KEY)` or `count(KEY)` ending just before `end`: the word and the key. */
export function quantifiedKeyBefore(tokens: readonly Token[], end: number): { word: ConditionWord; key: PathSegment[] } | undefined {
  if (!isPunctuation(tokens[end - 1], ")")) return undefined;
  const key = keyPathBefore(tokens, end - 1);
  if (key === undefined) return undefined;
  const open = end - 1 - (2 * key.length - 1) - 1;
  const word = isPunctuation(tokens[open], "(") ? conditionWordAt(tokens, open - 1) : undefined;
  return word !== undefined ? { word, key } : undefined;
}

/** The key of a condition ending just before `end`: a key path, or the one in `every(KEY)` or `some(KEY)`. */
export function subjectKeyBefore(tokens: readonly Token[], end: number): PathSegment[] | undefined {
  const quantified = quantifiedKeyBefore(tokens, end);
  if (quantified !== undefined) return quantified.word === "count" ? undefined : quantified.key;
  return keyPathBefore(tokens, end);
}

/**
 * The key path whose last segment ends just before `end` (`a.b` in `a.b in`, `argv.0` in `argv.0
 * in`), if the tokens form one: names, and list indexes after a `.` (never first).
 */
export function keyPathBefore(tokens: readonly Token[], end: number): PathSegment[] | undefined {
  const segments: PathSegment[] = [];
  let index = end - 1;
  for (;;) {
    const dotted = isPunctuation(tokens[index - 1], ".");
    const segment = segmentName(tokens[index]) ?? (dotted ? listIndex(tokens[index]) : undefined);
    if (segment === undefined) return segments.length > 0 && typeof segments[segments.length - 1] === "string" ? segments.reverse() : undefined;
    segments.push(segment);
    if (!dotted) return typeof segment === "string" ? segments.reverse() : undefined;
    index -= 2;
  }
}

/** A list index of a key path (`0` in `argv.0`): a number token of digits without leading zeros. */
function listIndex(token: Token | undefined): number | undefined {
  if (token === undefined || token.kind !== "number" || !/^(?:0|[1-9][0-9]{0,8})$/.test(token.text)) return undefined;
  return Number(token.text);
}

/** A key segment or a name in a set: an identifier, or a string's decoded text. */
export function segmentName(token: Token | undefined): string | undefined {
  if (token === undefined) return undefined;
  if (token.kind === "identifier") return token.text;
  if (token.kind === "string") {
    try {
      return JSON.parse(token.text) as string;
    } catch {
      return undefined;
    }
  }
  return undefined;
}
