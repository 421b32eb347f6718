import { createRequire } from "node:module";
import type MvdanSh from "mvdan-sh";

/**
 * Shell command lines as data, parsed with mvdan/sh (a complete POSIX/Bash parser): every simple
 * command of a line — through pipelines, `&&`/`||`/`;`, subshells, command substitutions — with
 * its words (quotes removed, ANSI-C quotes `$'…'` decoded; expansions kept as written, since their
 * values are not known), its variable assignments and its redirections.
 */
export interface SimpleCommand {
  readonly words: readonly string[];
  /**
   * Per word, whether the shell turns it into text that the command line does not show: it holds
   * a parameter expansion, a command, arithmetic or process substitution, a pathname pattern or a
   * brace expansion. Absent, no word is expanded (an argument vector).
   */
  readonly expanded?: readonly boolean[];
  readonly assignments: readonly { readonly name: string; readonly value: string }[];
  readonly redirections: readonly Redirection[];
  /** Offset of the command in the command line. */
  readonly offset: number;
  /** In a pipeline (`a | b`), the index (in the parsed line's commands) of the command whose output this one reads. */
  readonly pipedFrom?: number;
  /** Whether the command reads a pipe, whether or not a single command writes into it. */
  readonly readsPipe?: boolean;
}

export interface Redirection {
  /** The operator as written, without a file descriptor number: `>`, `>>`, `<`, `&>`, `>&`, `<<<`, … */
  readonly operator: string;
  readonly target: string;
  /** For a here-document (`<<EOF`, `<<-EOF`): its body, as written. */
  readonly body?: string;
  /** Whether the shell expands something in the target or the here-document's body (`<<EOF` with `$X` in it). */
  readonly expanded?: boolean;
}

export type ParsedCommandLine =
  | { readonly ok: true; readonly commands: readonly SimpleCommand[] }
  /** `tooComplex`: the line may be valid, but it nests or chains beyond what is parsed (see {@link lineComplexity}). */
  | { readonly ok: false; readonly message: string; readonly tooComplex?: true };

/**
 * How deeply a command line may nest parentheses, substitutions and the like, and how many
 * control operators (`|`, `&&`, `||`, `;`, `&`) it may chain, to be parsed. The shell parser and
 * its tree walk recurse on both, and an agent writes the line: past these bounds the line is not
 * parsed, and grounding says so with an event a policy can forbid, instead of overflowing the stack
 * or spending seconds on it.
 */
export const maximumLineNesting = 32;
export const maximumLineOperators = 256;

/** The deepest nesting and the number of control operators of a line, quotes respected, in one pass. */
function lineComplexity(source: string): { nesting: number; operators: number } {
  let depth = 0;
  let nesting = 0;
  let operators = 0;
  let quote: "'" | '"' | undefined;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\" && quote !== "'") {
      i++;
      continue;
    }
    if (quote !== undefined) {
      if (c === quote) quote = undefined;
      else if (quote === '"' && c === "$" && source[i + 1] === "(") {
        depth++;
        nesting = Math.max(nesting, depth);
      }
      continue;
    }
    if (c === "'" || c === '"') quote = c;
    else if (c === "(" || c === "{" || c === "`") {
      depth++;
      nesting = Math.max(nesting, depth);
    } else if (c === ")" || c === "}") depth = Math.max(0, depth - 1);
    else if (c === "|" || c === ";" || c === "&") {
      operators++;
      if (source[i + 1] === c) i++;
    }
  }
  return { nesting, operators };
}

function isStackOverflow(error: unknown): boolean {
  return error instanceof RangeError && /call stack/i.test(error.message);
}

/**
 * mvdan/sh (a Go program compiled to 1.5 MB of JavaScript) is loaded when the first command line
 * is parsed, not when this module is imported: loading it takes a few hundred milliseconds, which a
 * process that never grounds a shell call (a hook deciding a file read) should not pay.
 */
let loaded: typeof MvdanSh.syntax | undefined;
function shellSyntax(): typeof MvdanSh.syntax {
  loaded ??= (createRequire(import.meta.url)("mvdan-sh") as typeof MvdanSh).syntax;
  return loaded;
}
let parser: ReturnType<typeof MvdanSh.syntax.NewParser> | undefined;

// The AST nodes are GopherJS objects; these are the fields used here.
interface Word {
  Parts: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
interface Part {
  Value?: string;
  /** `$'…'` (ANSI-C quoting) for a single-quoted part. */
  Dollar?: boolean;
  Parts?: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
interface CallExpr {
  Args: Word[];
  Assigns: { Name: { Value: string } | null; Value: Word | null; Append?: boolean; Pos(): { Offset(): number }; End(): { Offset(): number } }[];
  Pos(): { Offset(): number };
}
interface BinaryCmd {
  OpPos: { Offset(): number };
  X: Stmt;
  Y: Stmt;
}
interface Stmt {
  Cmd: unknown;
  Pos(): { Offset(): number };
  End(): { Offset(): number };
  Redirs: { Word: Word | null; Hdoc: (Word & { End(): { Offset(): number } }) | null; Pos(): { Offset(): number } }[];
}

export function parseCommandLine(source: string): ParsedCommandLine {
  const { nesting, operators } = lineComplexity(source);
  if (nesting > maximumLineNesting || operators > maximumLineOperators) {
    return {
      ok: false,
      tooComplex: true,
      message: nesting > maximumLineNesting ? `it nests more than ${maximumLineNesting} levels deep` : `it chains more than ${maximumLineOperators} commands`,
    };
  }
  try {
    return parseWithinBounds(source);
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    return { ok: false, tooComplex: true, message: "it is too complex to parse" };
  }
}

function parseWithinBounds(source: string): ParsedCommandLine {
  const syntax = shellSyntax();
  parser ??= syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash));
  let file;
  try {
    file = parser.Parse(source, "command");
  } catch (error) {
    if (isStackOverflow(error)) throw error;
    // GopherJS wraps Go errors: the text is behind `Error()`.
    const wrapped = error as { Error?: () => string; message?: string };
    const text = typeof wrapped.Error === "function" ? wrapped.Error() : (wrapped.message ?? String(error));
    const message = text.replace(/^command:/, "");
    return { ok: false, message };
  }
  const commands: SimpleCommand[] = [];
  // Commands by their offset: the parser's node objects are made anew on each access, so an
  // offset (unique per command) is what identifies one.
  const indexAt = new Map<number, number>();
  const pipes: BinaryCmd[] = [];
  const variables: ShellVariables = new Map();
  syntax.Walk(file, (node) => {
    if (node === null) return true;
    // NodeType is a costly call through the library's wrappers: once per node.
    const type = syntax.NodeType(node);
    if (type === "BinaryCmd") {
      const binary = node as unknown as BinaryCmd;
      // The operator is read at its own position: the text between the two sides also holds a
      // here-document's body when the left side has one (`cat <<EOF | sh`).
      const operator = source.slice(binary.OpPos.Offset(), binary.OpPos.Offset() + 2);
      if (operator[0] === "|" && operator !== "||") pipes.push(binary);
      return true;
    }
    if (type !== "Stmt") return true;
    const statement = node as unknown as Stmt;
    const redirections = statement.Redirs.filter((r) => r.Word !== null).map((r): Redirection => {
      const target = readWord(r.Word!, source, variables);
      const expanded = target.expanded || (r.Hdoc !== null && readWord(r.Hdoc, source, variables).expanded);
      return {
        operator: source.slice(r.Pos().Offset(), r.Word!.Pos().Offset()).replace(/^[0-9]+/, "").trim(),
        target: target.text,
        ...(r.Hdoc !== null ? { body: hereDocumentBody(source.slice(r.Hdoc.Pos().Offset(), r.Hdoc.End().Offset()), target.text) } : {}),
        ...(expanded ? { expanded } : {}),
      };
    });
    const command = statement.Cmd as CallExpr | null;
    if (command !== null && syntax.NodeType(command as never) === "DeclClause") {
      // `export F=.env`, `local F=x`: assignments for what runs after them.
      for (const a of (command as unknown as { Args: CallExpr["Assigns"] }).Args) {
        if (a.Name === null) continue;
        const value = a.Value ? readWord(a.Value, source, variables) : undefined;
        assign(variables, a.Name.Value, value === undefined || value.expanded || a.Append === true ? undefined : value.text);
      }
    }
    if (command !== null && syntax.NodeType(command as never) === "CallExpr") {
      indexAt.set(command.Pos().Offset(), commands.length);
      const words = command.Args.map((word) => readWord(word, source, variables));
      const assignments = command.Assigns.filter((a) => a.Name !== null).map((a) => {
        const value = a.Value ? readWord(a.Value, source, variables) : { text: "", expanded: false };
        const plain = a.Append !== true && !source.slice(a.Pos().Offset(), a.End().Offset()).startsWith(`${a.Name!.Value}+=`) && (a.Value !== null || source.slice(a.Pos().Offset(), a.End().Offset()) === `${a.Name!.Value}=`);
        return { name: a.Name!.Value, value: value.text, known: plain && !value.expanded };
      });
      if (words.length === 0) for (const assignment of assignments) assign(variables, assignment.name, assignment.known ? assignment.value : undefined);
      commands.push({
        words: words.map((word) => word.text),
        ...(words.some((word) => word.expanded) ? { expanded: words.map((word) => word.expanded) } : {}),
        assignments: assignments.map(({ name, value }) => ({ name, value })),
        redirections,
        offset: command.Pos().Offset(),
      });
    } else if (redirections.length > 0) {
      // A compound command with redirections (`(a; b) > f`): the redirections still happen.
      commands.push({ words: [], assignments: [], redirections, offset: (node as unknown as CallExpr).Pos().Offset() });
    }
    return true;
  });
  // `a | b`: b reads what a writes. In `a | b | c` (parsed as `(a | b) | c`), c reads b's output.
  const edgeCommand = (statement: Stmt, side: "X" | "Y"): number | undefined => {
    const command = statement.Cmd;
    if (command === null || command === undefined) return undefined;
    const type = syntax.NodeType(command as never);
    if (type === "CallExpr") return indexAt.get((command as CallExpr).Pos().Offset());
    if (type === "BinaryCmd") return edgeCommand((command as BinaryCmd)[side], side);
    return undefined;
  };
  for (const pipe of pipes) {
    const producer = edgeCommand(pipe.X, "Y");
    const consumer = edgeCommand(pipe.Y, "X");
    if (consumer === undefined) continue;
    commands[consumer] = { ...commands[consumer]!, readsPipe: true, ...(producer !== undefined ? { pipedFrom: producer } : {}) };
  }
  return { ok: true, commands };
}

/** A here-document's text without its closing delimiter line (which the parser's span includes). */
function hereDocumentBody(text: string, delimiter: string): string {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1]!.trim() === delimiter) lines.pop();
  return lines.join("\n");
}

/**
 * A word with its quotes removed (parameter expansions and substitutions kept as written), and
 * whether the shell expands it into text the line does not show (see {@link SimpleCommand}).
 */
function readWord(word: Word, source: string, variables: ShellVariables): { text: string; expanded: boolean } {
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
type ShellVariables = Map<string, string | undefined>;

function assign(variables: ShellVariables, name: string, value: string | undefined): void {
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
