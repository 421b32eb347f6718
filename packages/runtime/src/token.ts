/**
 * What a sidecar token is: one line of at least 32 visible ASCII characters (a generated one has
 * 64 hex digits). The sidecar checks the tokens it is given, and `vigilc` the token files it reads,
 * with this one definition; it imports nothing, so that the hook's fast path can load it alone
 * (`@vigil/runtime/token`).
 */

/** The shortest token accepted. */
export const MIN_TOKEN_LENGTH = 32;

/** Why `token` cannot be a token, or undefined when it can. */
export function tokenProblem(token: unknown): string | undefined {
  if (typeof token !== "string" || token === "") return "it is empty";
  if (token.length < MIN_TOKEN_LENGTH) return `it has ${token.length} characters; a token has at least ${MIN_TOKEN_LENGTH} (a generated one has 64 hex digits)`;
  // A token travels in an HTTP header: visible ASCII only, no spaces.
  if (!/^[\x21-\x7e]+$/.test(token)) return "it holds a space or a character other than visible ASCII, which an HTTP header cannot carry";
  return undefined;
}
