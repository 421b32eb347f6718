/**
 * Whole-string wildcard matching, the `~` of the language: `*` matches any sequence of characters
 * (slashes included), `?` exactly one character, `[…]` one character of a class (`[a-z]`,
 * negated by a leading `!` or `^`), and `\` makes the next character literal. Matching is
 * case-sensitive and anchored at both ends. Wildcards are evaluated outside the solver: the
 * decision procedures see only each event's ground outcome.
 */
export type CompiledWildcard =
  | { readonly ok: true; readonly regex: RegExp; readonly source: string }
  | { readonly ok: false; readonly message: string; /** Offset into the wildcard text. */ readonly offset: number };

const cache = new Map<string, CompiledWildcard>();

export function compileWildcard(pattern: string): CompiledWildcard {
  const cached = cache.get(pattern);
  if (cached !== undefined) return cached;
  const compiled = compileUncached(pattern);
  if (cache.size > 10_000) cache.clear();
  cache.set(pattern, compiled);
  return compiled;
}

/** A literal character outside a class (only syntax characters may be escaped in a `u` regex). */
function escapeRegex(char: string): string {
  return /[\\^$.*+?()[\]{}|/]/.test(char) ? `\\${char}` : char;
}

/** A literal character inside a class. */
function escapeClassChar(char: string): string {
  return /[\\\]^-]/.test(char) ? `\\${char}` : char;
}

function compileUncached(pattern: string): CompiledWildcard {
  let regex = "^";
  // Iterate by code point so that `?` matches one character, not half a surrogate pair.
  const chars = Array.from(pattern);
  let offset = 0;
  for (let i = 0; i < chars.length; i++) {
    const char = chars[i]!;
    const charOffset = offset;
    offset += char.length;
    if (char === "*") {
      // Collapse runs of stars: they mean the same and would otherwise backtrack needlessly.
      while (chars[i + 1] === "*") {
        i++;
        offset += 1;
      }
      regex += "[\\s\\S]*";
    } else if (char === "?") {
      regex += "[\\s\\S]";
    } else if (char === "\\") {
      const next = chars[i + 1];
      if (next === undefined) return { ok: false, message: "a `\\` at the end of a wildcard escapes nothing", offset: charOffset };
      regex += escapeRegex(next);
      i++;
      offset += next.length;
    } else if (char === "[") {
      let j = i + 1;
      let classBody = "";
      if (chars[j] === "!" || chars[j] === "^") {
        classBody += "^";
        j++;
      }
      let first = true;
      let closed = false;
      for (; j < chars.length; j++) {
        const c = chars[j]!;
        if (c === "]" && !first) {
          closed = true;
          break;
        }
        first = false;
        if (c === "\\") {
          const next = chars[j + 1];
          if (next === undefined) break;
          classBody += escapeClassChar(next);
          j++;
        } else if (c === "-" && classBody !== "" && classBody !== "^" && chars[j + 1] !== "]" && chars[j + 1] !== undefined) {
          const low = chars[j - 1]!;
          const high = chars[j + 1]!;
          if (high.codePointAt(0)! < low.codePointAt(0)!) {
            return { ok: false, message: `the range \`${low}-${high}\` in a wildcard class runs backwards`, offset: charOffset };
          }
          classBody += "-";
        } else {
          classBody += escapeClassChar(c);
        }
      }
      if (!closed) return { ok: false, message: "a `[` in a wildcard is not closed by `]`", offset: charOffset };
      regex += `[${classBody}]`;
      for (let k = i + 1; k <= j; k++) offset += chars[k]!.length;
      i = j;
    } else {
      regex += escapeRegex(char);
    }
  }
  regex += "$";
  try {
    return { ok: true, regex: new RegExp(regex, "u"), source: pattern };
  } catch (error) {
    return { ok: false, message: `the wildcard cannot be compiled: ${(error as Error).message}`, offset: 0 };
  }
}

/**
 * Whether a value matches a wildcard. Strings match on their text; numbers and booleans on their
 * JSON text (`6`, `true`); `null`, objects and lists never match. A malformed wildcard matches
 * nothing (the checker reports it before any trace is judged).
 */
export function wildcardMatches(pattern: string, value: unknown): boolean {
  let text: string;
  if (typeof value === "string") text = value;
  else if (typeof value === "number" || typeof value === "boolean") text = JSON.stringify(value);
  else return false;
  const compiled = compileWildcard(pattern);
  return compiled.ok && compiled.regex.test(text);
}
