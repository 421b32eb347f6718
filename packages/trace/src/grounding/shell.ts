import sh from "mvdan-sh";

/**
 * Shell command lines as data, parsed with mvdan/sh (a complete POSIX/Bash parser): every simple
 * command of a line — through pipelines, `&&`/`||`/`;`, subshells, command substitutions — with
 * its words (quotes removed; expansions kept as written, since their values are not known), its
 * variable assignments and its redirections.
 */
export interface SimpleCommand {
  readonly words: readonly string[];
  readonly assignments: readonly { readonly name: string; readonly value: string }[];
  readonly redirections: readonly Redirection[];
  /** Offset of the command in the command line. */
  readonly offset: number;
  /** In a pipeline (`a | b`), the index (in the parsed line's commands) of the command whose output this one reads. */
  readonly pipedFrom?: number;
}

export interface Redirection {
  /** The operator as written, without a file descriptor number: `>`, `>>`, `<`, `&>`, `>&`, `<<<`, … */
  readonly operator: string;
  readonly target: string;
  /** For a here-document (`<<EOF`, `<<-EOF`): its body, as written. */
  readonly body?: string;
}

export type ParsedCommandLine = { readonly ok: true; readonly commands: readonly SimpleCommand[] } | { readonly ok: false; readonly message: string };

const { syntax } = sh;
let parser: ReturnType<typeof syntax.NewParser> | undefined;

// The AST nodes are GopherJS objects; these are the fields used here.
interface Word {
  Parts: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
interface Part {
  Value?: string;
  Parts?: Part[];
  Pos(): { Offset(): number };
  End(): { Offset(): number };
}
interface CallExpr {
  Args: Word[];
  Assigns: { Name: { Value: string } | null; Value: Word | null }[];
  Pos(): { Offset(): number };
}
interface BinaryCmd {
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
  parser ??= syntax.NewParser(syntax.KeepComments(false), syntax.Variant(syntax.LangBash));
  let file;
  try {
    file = parser.Parse(source, "command");
  } catch (error) {
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
  syntax.Walk(file, (node) => {
    if (node === null) return true;
    // NodeType is a costly call through the library's wrappers: once per node.
    const type = syntax.NodeType(node);
    if (type === "BinaryCmd") {
      const binary = node as unknown as BinaryCmd;
      const operator = source.slice(binary.X.End().Offset(), binary.Y.Pos().Offset()).trim();
      if (operator === "|" || operator === "|&") pipes.push(binary);
      return true;
    }
    if (type !== "Stmt") return true;
    const statement = node as unknown as Stmt;
    const redirections = statement.Redirs.filter((r) => r.Word !== null).map((r) => ({
      operator: source.slice(r.Pos().Offset(), r.Word!.Pos().Offset()).replace(/^[0-9]+/, "").trim(),
      target: wordText(r.Word!, source),
      ...(r.Hdoc !== null ? { body: hereDocumentBody(source.slice(r.Hdoc.Pos().Offset(), r.Hdoc.End().Offset()), wordText(r.Word!, source)) } : {}),
    }));
    const command = statement.Cmd as CallExpr | null;
    if (command !== null && syntax.NodeType(command as never) === "CallExpr") {
      indexAt.set(command.Pos().Offset(), commands.length);
      commands.push({
        words: command.Args.map((word) => wordText(word, source)),
        assignments: command.Assigns.filter((a) => a.Name !== null).map((a) => ({ name: a.Name!.Value, value: a.Value ? wordText(a.Value, source) : "" })),
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
    if (producer !== undefined && consumer !== undefined) commands[consumer] = { ...commands[consumer]!, pipedFrom: producer };
  }
  return { ok: true, commands };
}

/** A here-document's text without its closing delimiter line (which the parser's span includes). */
function hereDocumentBody(text: string, delimiter: string): string {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1]!.trim() === delimiter) lines.pop();
  return lines.join("\n");
}

/** A word with its quotes removed; parameter expansions and substitutions are kept as written. */
function wordText(word: Word, source: string): string {
  return word.Parts.map((part) => partText(part, source, false)).join("");
}

function partText(part: Part, source: string, inDoubleQuotes: boolean): string {
  const type = syntax.NodeType(part as never);
  switch (type) {
    case "Lit":
      return unescape(part.Value ?? "", inDoubleQuotes);
    case "SglQuoted":
      return part.Value ?? "";
    case "DblQuoted":
      return (part.Parts ?? []).map((inner) => partText(inner, source, true)).join("");
    default:
      return source.slice(part.Pos().Offset(), part.End().Offset());
  }
}

/** Backslash escapes of unquoted (or double-quoted) literal text. */
function unescape(text: string, inDoubleQuotes: boolean): string {
  if (!text.includes("\\")) return text;
  return inDoubleQuotes ? text.replace(/\\([$`"\\\n])/g, "$1") : text.replace(/\\\n/g, "").replace(/\\(.)/g, "$1");
}
