
/**
 * Names of a draft against the specification and the runs: whether the cited lines name a name
 * (`namedIn`). The known name a name is likely a slip of is the compiler's `closestName`.
 */

/**
 * The words of a name: split at anything but letters and digits (`_`, `-`, `.`, spaces) and at
 * camelCase, lower-cased (`bookReservation`, `book_reservation`: `book`, `reservation`).
 */
export function wordsOf(name: string): string[] {
  return name
    .replace(/([\p{Ll}\p{N}])(\p{Lu})/gu, "$1 $2")
    .replace(/(\p{Lu}+)(\p{Lu}\p{Ll})/gu, "$1 $2")
    .split(/[^\p{L}\p{N}]+/u)
    .map((word) => word.toLowerCase())
    .filter((word) => word !== "");
}

/** A word with a plural `s` taken off (`passengers`, `passenger`: one word). */
function stem(word: string): string {
  return word.length > 3 && word.endsWith("s") ? word.slice(0, -1) : word;
}

/**
 * Whether a text names a name: it holds the name whole, case-insensitively, or it holds each of the
 * name's words ({@link wordsOf}) as a word, case-insensitively, a plural `s` aside. So the line
 * "Each reservation can have at most five passengers" names `passengers` and `passenger`, and a
 * line about sending a certificate names `send_certificate`, while one about "a certificate" alone
 * does not. A name without a word (`""`, `_`) is named by nothing.
 */
export function namedIn(name: string, text: string): boolean {
  const words = wordsOf(name);
  if (words.length === 0) return false;
  if (text.toLowerCase().includes(name.toLowerCase())) return true;
  const said = new Set(wordsOf(text).map(stem));
  return words.every((word) => said.has(stem(word)));
}
