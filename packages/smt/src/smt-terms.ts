/**
 * Small builders of SMT-LIB terms as text. They fold the constants `true`/`false` (which never
 * consults the facts, so the solver still decides every condition) and keep the emitted query
 * readable.
 */

export function and(...terms: string[]): string {
  return andAll(terms);
}

/** The conjunction of a list of any length (never spread into arguments: a trace can be long). */
export function andAll(terms: readonly string[]): string {
  const kept: string[] = [];
  for (const term of terms) {
    if (term === "false") return "false";
    if (term !== "true") kept.push(term);
  }
  if (kept.length === 0) return "true";
  return kept.length === 1 ? kept[0]! : `(and ${kept.join(" ")})`;
}

export function or(...terms: string[]): string {
  return orAll(terms);
}

/** The disjunction of a list of any length. */
export function orAll(terms: readonly string[]): string {
  const kept: string[] = [];
  for (const term of terms) {
    if (term === "true") return "true";
    if (term !== "false") kept.push(term);
  }
  if (kept.length === 0) return "false";
  return kept.length === 1 ? kept[0]! : `(or ${kept.join(" ")})`;
}

export function not(term: string): string {
  if (term === "true") return "false";
  if (term === "false") return "true";
  return `(not ${term})`;
}

export function implies(premise: string, conclusion: string): string {
  if (premise === "false" || conclusion === "true") return "true";
  if (premise === "true") return conclusion;
  if (conclusion === "false") return not(premise);
  return `(=> ${premise} ${conclusion})`;
}

export function ite(condition: string, then: string, otherwise: string): string {
  if (condition === "true" || then === otherwise) return then;
  if (condition === "false") return otherwise;
  return `(ite ${condition} ${then} ${otherwise})`;
}

export function eq(left: string, right: string): string {
  return `(= ${left} ${right})`;
}

/**
 * A symbol for arbitrary text: a quoted symbol `|…|` when the text allows it (SMT-LIB forbids `|`
 * and `\` inside), otherwise a numbered fallback.
 */
export function quotedSymbol(prefix: string, text: string, fallbackIndex: number): string {
  // Control and bidirectional-override characters are not written into the script, like `|` and `\`.
  return /^[^|\\\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]*$/.test(text) && text.length <= 200 ? `|${prefix}:${text}|` : `|${prefix}#${fallbackIndex}|`;
}

/** One line of a `;` comment, with line breaks flattened so it cannot end the comment early. */
export function comment(text: string): string {
  // A comment quotes the policy and the trace: line breaks would end it, and other control
  // characters would reach whatever terminal shows the script, so they are written as escapes.
  return `; ${text.replace(/[\r\n]+/g, " ").replace(/[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)}`;
}
