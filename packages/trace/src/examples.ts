import { RegExpParser, type AST } from "@eslint-community/regexpp";
import { compileRegex, isRegexProblem } from "./regex.js";
import { wildcardMatches } from "./wildcard.js";

/**
 * Texts that a wildcard or a regular expression matches, for analyses that need concrete values
 * (a counterexample run must hold real arguments). Each is produced from the pattern's syntax by a
 * simple reading (a `*` or a repetition taken zero times and once, the first character a class
 * allows) and kept only if the real matcher (`wildcardMatches`, `compileRegex`) says it matches: an
 * example is always right, though a pattern may have matches these miss.
 */
export function wildcardExamples(pattern: string): string[] {
  const variants = [0, 1].map((repeat) => {
    let text = "";
    const chars = Array.from(pattern);
    for (let i = 0; i < chars.length; i++) {
      const c = chars[i]!;
      if (c === "*") text += repeat === 0 ? "" : "x";
      else if (c === "?") text += "x";
      else if (c === "\\" && i + 1 < chars.length) text += chars[++i]!;
      else if (c === "[") {
        const end = chars.indexOf("]", i + 2);
        if (end < 0) {
          text += c;
          continue;
        }
        const body = chars.slice(i + 1, end);
        const negated = body[0] === "!" || body[0] === "^";
        const allowed = negated ? undefined : body[0];
        text += allowed ?? firstOutside(body.slice(1).join(""));
        i = end;
      } else text += c;
    }
    return text;
  });
  return unique(variants.filter((text) => wildcardMatches(pattern, text)));
}

/** Texts a regular expression (ECMAScript source and flags, as a `keyRegex` atom holds them) finds a match in. */
export function regexExamples(source: string, flags: string): string[] {
  const regex = compileRegex(source, flags);
  if (isRegexProblem(regex)) return [];
  let pattern: AST.Pattern;
  try {
    pattern = new RegExpParser({ strict: false, ecmaVersion: 2025 }).parsePattern(source, 0, source.length, { unicode: false, unicodeSets: false });
  } catch {
    return [];
  }
  const variants = [0, 1].map((extra) => alternatives(pattern.alternatives, extra));
  return unique(variants.filter((text) => regex.test(text)));
}

function alternatives(list: readonly AST.Alternative[], extra: number): string {
  return list.length === 0 ? "" : sequence(list[0]!, extra);
}

function sequence(alternative: AST.Alternative, extra: number): string {
  return alternative.elements.map((element) => elementText(element, extra)).join("");
}

function elementText(element: AST.Element, extra: number): string {
  switch (element.type) {
    case "Character":
      return String.fromCharCode(element.value);
    case "CharacterSet":
      return setText(element);
    case "CharacterClass":
      return classText(element);
    case "Group":
    case "CapturingGroup":
      return alternatives(element.alternatives, extra);
    case "Quantifier": {
      const times = Math.min(Math.max(element.min, element.min === 0 ? extra : element.min), element.max, 64);
      return elementText(element.element, extra).repeat(times);
    }
    default:
      // Assertions and backreferences add no text.
      return "";
  }
}

function setText(set: AST.CharacterSet): string {
  switch (set.kind) {
    case "digit":
      return set.negate ? "a" : "0";
    case "space":
      return set.negate ? "a" : " ";
    case "word":
      return set.negate ? " " : "a";
    default:
      return "a";
  }
}

function classText(element: AST.Node): string {
  if (element.type !== "CharacterClass") return "a";
  if (element.negate) {
    const taken = element.elements.map((e) => (e.type === "Character" ? String.fromCharCode(e.value) : e.type === "CharacterClassRange" ? `${String.fromCharCode(e.min.value)}-${String.fromCharCode(e.max.value)}` : "")).join("");
    return firstOutside(taken);
  }
  const first = element.elements[0];
  if (first === undefined) return "";
  if (first.type === "Character") return String.fromCharCode(first.value);
  if (first.type === "CharacterClassRange") return String.fromCharCode(first.min.value);
  if (first.type === "CharacterSet") return setText(first as AST.CharacterSet);
  return "a";
}

/** A character that is not among the characters (or `a-z` ranges) of a class body. */
function firstOutside(body: string): string {
  for (const candidate of ["x", "a", "z", "0", "_", " ", "Q"]) {
    let inside = false;
    for (let i = 0; i < body.length; i++) {
      if (body[i + 1] === "-" && i + 2 < body.length) {
        if (candidate >= body[i]! && candidate <= body[i + 2]!) inside = true;
        i += 2;
      } else if (body[i] === candidate) inside = true;
    }
    if (!inside) return candidate;
  }
  return "\u00a7";
}

function unique(texts: readonly string[]): string[] {
  return [...new Set(texts)];
}
