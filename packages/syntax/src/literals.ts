/**
 * Decoding of string and number literals. Both follow JSON, so that a value written in a policy
 * means exactly what the same text means in a trace.
 */

export interface DecodedString {
  /** The decoded value; best effort when `problem` is set. */
  readonly value: string;
  /** Why the literal is not a valid JSON string, as a message fragment; absent when it is valid. */
  readonly problem?: string;
  readonly help?: string;
}

const validEscapes = new Set(['"', "\\", "/", "b", "f", "n", "r", "t", "u"]);

/**
 * Decodes the text of a string token, quotes included. `closed` is false for a string the line
 * ended before closing; its value is what was written up to the end of the line.
 */
export function decodeString(raw: string, closed: boolean): DecodedString {
  const source = closed ? raw : `${raw}"`;
  try {
    const value: unknown = JSON.parse(source);
    if (typeof value === "string") return { value };
  } catch {
    // Fall through to find out why.
  }
  return { value: lenientDecode(source), ...describeProblem(source) };
}

function describeProblem(source: string): { problem: string; help: string } {
  for (let index = 1; index < source.length - 1; index++) {
    const character = source[index]!;
    if (character === "\\") {
      const next = source[index + 1] ?? "";
      if (!validEscapes.has(next) || index + 1 === source.length - 1) {
        return {
          problem: `invalid escape \`\\${next}\` in string`,
          help: "the valid escapes are `\\\"`, `\\\\`, `\\/`, `\\b`, `\\f`, `\\n`, `\\r`, `\\t` and `\\uXXXX`; write `\\\\` for a backslash",
        };
      }
      if (next === "u" && !/^[0-9A-Fa-f]{4}$/.test(source.slice(index + 2, index + 6))) {
        return { problem: "invalid escape `\\u` in string: it needs four hexadecimal digits", help: "write a code unit as `\\u00e9`" };
      }
      index++;
    } else if (character.charCodeAt(0) < 0x20) {
      const code = character.charCodeAt(0).toString(16).padStart(4, "0");
      return {
        problem: `a string cannot contain the control character U+${code.toUpperCase()} as is`,
        help: character === "\t" ? "write a tab as `\\t`" : `write it as \`\\u${code}\``,
      };
    }
  }
  return { problem: "invalid string", help: "strings are written as in JSON" };
}

/** Decodes what can be decoded, keeping any malformed escape as written. */
function lenientDecode(source: string): string {
  const body = source.slice(1, -1);
  return body.replace(/\\(u[0-9A-Fa-f]{4}|.)/g, (whole: string, escape: string) => {
    try {
      const decoded: unknown = JSON.parse(`"\\${escape}"`);
      return typeof decoded === "string" ? decoded : whole;
    } catch {
      return whole;
    }
  });
}

const jsonNumber = /^-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?$/;

/** Whether a number token's text is a valid JSON number. */
export function isJsonNumber(text: string): boolean {
  return jsonNumber.test(text);
}

/** Advice for a malformed number (V0005). */
export function numberHelp(text: string): string {
  const withoutExponent = text.replace(/[eE][+-]?[0-9]*$/, "");
  if (/[A-Za-z_]/.test(withoutExponent)) {
    return "a number cannot run into a name; separate them with a space, or write text as a string such as `\"6fps\"`";
  }
  if (/^-?0[0-9]/.test(text)) return "numbers are written as in JSON, without leading zeros";
  return "numbers are written as in JSON, e.g. `6`, `-1.5` or `2e3`";
}
