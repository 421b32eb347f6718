import { shellSyntax, type Part, type Word } from "./shell-syntax.js";

/**
 * The words of a parsed line as text: quotes removed, ANSI-C quotes (`$'…'`) decoded, a variable
 * the line set to text it shows put in, and every other expansion kept as written, marked as
 * expanded (its value is not known from the line).
 */

/**
 * A word with its quotes removed (parameter expansions and substitutions kept as written), and
 * whether the shell expands it into text the line does not show (see `SimpleCommand.expanded`).
 */
export function readWord(word: Word, source: string, variables: ShellVariables): { text: string; expanded: boolean } {
  const state = { expanded: false, unquoted: "", variables };
  const text = word.Parts.map((part) => partText(part, source, false, state)).join("");
  // Patterns and brace expansions apply to the word's unquoted text only: `'*'` is a star.
  if (/[*?]|\[[^\]]+\]|\{[^{}]*(,|\.\.)[^{}]*\}/.test(state.unquoted)) state.expanded = true;
  return { text, expanded: state.expanded };
}

const expansionParts = new Set(["ParamExp", "CmdSubst", "ArithmExp", "ProcSubst", "ExtGlob"]);

/**
 * The text of one part of a word. `state.unquoted` collects the unquoted literal text (escaped
 * characters and quoted parts stand in as a plain `x`), where the shell looks for patterns and
 * brace expansions; `state.expanded` is set when the part is an expansion.
 */
function partText(part: Part, source: string, inDoubleQuotes: boolean, state: WordState): string {
  const type = shellSyntax().NodeType(part as never);
  switch (type) {
    case "Lit": {
      const value = part.Value ?? "";
      state.unquoted += inDoubleQuotes ? "x" : value.replace(/\\[\s\S]/g, "x");
      return unescape(value, inDoubleQuotes);
    }
    case "SglQuoted":
      state.unquoted += "x";
      return part.Dollar === true ? ansiCText(part.Value ?? "") : (part.Value ?? "");
    case "DblQuoted":
      state.unquoted += "x";
      return (part.Parts ?? []).map((inner) => partText(inner, source, true, state)).join("");
    default: {
      const written = source.slice(part.Pos().Offset(), part.End().Offset());
      const known = type === "ParamExp" ? knownValue(written, inDoubleQuotes, state.variables) : undefined;
      if (known !== undefined) {
        state.unquoted += "x";
        return known;
      }
      if (expansionParts.has(type)) state.expanded = true;
      state.unquoted += "x";
      return written;
    }
  }
}

interface WordState {
  expanded: boolean;
  unquoted: string;
  readonly variables: ShellVariables;
}

/**
 * The shell variables a line sets to text it shows (`F=.env; cat $F`), in the order the line runs:
 * a name holds its literal value, or `undefined` once it is set twice or to an expansion (which
 * value a later use sees then depends on control flow or on the run, so it stays unknown).
 */
export type ShellVariables = Map<string, string | undefined>;

/** A variable the line sets: its value, or not known once it is set a second time. */
export function assign(variables: ShellVariables, name: string, value: string | undefined): void {
  variables.set(name, variables.has(name) ? undefined : value);
}

/**
 * The value of a plain `$NAME` or `${NAME}` whose value the line set, or undefined. Unquoted, the
 * shell splits and globs the value: one with spaces or pattern characters stays an expansion.
 */
function knownValue(written: string, inDoubleQuotes: boolean, variables: ShellVariables): string | undefined {
  const match = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))$/.exec(written);
  if (match === null) return undefined;
  const value = variables.get(match[1] ?? match[2]!);
  if (value === undefined) return undefined;
  if (!inDoubleQuotes && (value === "" || /[\s*?[\]{}]/.test(value))) return undefined;
  return value;
}

const simpleEscapes: Readonly<Record<string, string>> = {
  a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?",
};

/**
 * The text of an ANSI-C quoted string (`$'\x63at'` is `cat`), with Bash's escapes: the letter
 * escapes, octal `\nnn`, hexadecimal `\xHH`, `\uHHHH` and `\UHHHHHHHH`, and control characters
 * `\cX`. An unknown escape keeps its backslash, as Bash does.
 */
function ansiCText(text: string): string {
  return text.replace(/\\(?:([abeEfnrtv\\'"?])|([0-7]{1,3})|x([0-9A-Fa-f]{1,2})|u([0-9A-Fa-f]{1,4})|U([0-9A-Fa-f]{1,8})|c([\s\S]))/g, (whole, simple: string | undefined, octal: string | undefined, hex: string | undefined, u4: string | undefined, u8: string | undefined, control: string | undefined) => {
    if (simple !== undefined) return simpleEscapes[simple]!;
    if (octal !== undefined) return String.fromCharCode(parseInt(octal, 8) & 0xff);
    if (hex !== undefined) return String.fromCharCode(parseInt(hex, 16));
    const code = u4 ?? u8;
    if (code !== undefined) {
      const value = parseInt(code, 16);
      return value <= 0x10ffff ? String.fromCodePoint(value) : whole;
    }
    return String.fromCharCode(control!.charCodeAt(0) & 0x1f);
  });
}

/** Backslash escapes of unquoted (or double-quoted) literal text. */
function unescape(text: string, inDoubleQuotes: boolean): string {
  if (!text.includes("\\")) return text;
  return inDoubleQuotes ? text.replace(/\\([$`"\\\n])/g, "$1") : text.replace(/\\\n/g, "").replace(/\\(.)/g, "$1");
}
