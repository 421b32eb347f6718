import type MvdanSh from "mvdan-sh";
import { EvaluationCollector } from "./evaluation-collector.js";
import { LineWalk } from "./line-walk.js";
import type { LineOptions, ParsedCommandLine, Redirection, SimpleCommand } from "./parsed-line.js";
import { shellSyntax, type BinaryCmd, type CallExpr, type Stmt } from "./shell-syntax.js";
import { assign, readWord, type ShellVariables } from "./shell-words.js";

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

/** The one parser of command lines, made when the first line is parsed (see `shellSyntax`). */
let parser: ReturnType<typeof MvdanSh.syntax.NewParser> | undefined;

/**
 * Parses a command line into its simple commands (see {@link ParsedCommandLine}); a line beyond the
 * bounds above, or one that would overflow the parser's stack, is refused as too complex.
 */
export function parseCommandLine(source: string, options: LineOptions = {}): ParsedCommandLine {
  const { nesting, operators } = lineComplexity(source);
  if (nesting > maximumLineNesting || operators > maximumLineOperators) {
    return {
      ok: false,
      tooComplex: true,
      message: nesting > maximumLineNesting ? `it nests more than ${maximumLineNesting} levels deep` : `it chains more than ${maximumLineOperators} commands`,
    };
  }
  try {
    let parsed = parseWithinBounds(source, options);
    // A here-document with no delimiter line runs to the end of the line's text, as Bash reads it
    // (with a warning): the delimiter is added, once per here-document left open.
    let text = source;
    for (let attempt = 0; attempt < 8 && !parsed.ok; attempt++) {
      const open = /unclosed here-document '([^']*)'/.exec(parsed.message);
      if (open === null) break;
      text = `${text}${text.endsWith("\n") ? "" : "\n"}${open[1]}`;
      parsed = parseWithinBounds(text, options);
    }
    return parsed;
  } catch (error) {
    if (!isStackOverflow(error)) throw error;
    return { ok: false, tooComplex: true, message: "it is too complex to parse" };
  }
}

/**
 * One parse of a line within the bounds: a walk over the parser's tree collects the simple commands
 * with their words, assignments and redirections, the pipes between them and the text the line
 * evaluates as code; a second walk, in the order the shell runs the line, gives each command its
 * directory and the line its structure.
 */
function parseWithinBounds(source: string, options: LineOptions): ParsedCommandLine {
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
  // The redirections of compound commands (`(a; b) > f`), by their statement's offset.
  const compoundAt = new Map<number, number>();
  const pipes: BinaryCmd[] = [];
  const variables: ShellVariables = new Map();
  const evaluations = new EvaluationCollector(source, syntax);
  syntax.Walk(file, (node) => {
    if (node === null) return true;
    // NodeType is a costly call through the library's wrappers: once per node.
    const type = syntax.NodeType(node);
    evaluations.visit(node, type);
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
        ...(r.Hdoc !== null ? { body: hereDocumentBody(source.slice(r.Hdoc.Pos().Offset(), r.Hdoc.End().Offset()), target.text, source.slice(r.Pos().Offset(), r.Word!.Pos().Offset()).includes("<<-")) } : {}),
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
      compoundAt.set(statement.Pos().Offset(), commands.length);
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
  // A command the walk does not reach keeps a directory not known.
  for (let index = 0; index < commands.length; index++) commands[index] = { ...commands[index]!, directoryUnknown: true };
  const walk = new LineWalk(source, commands, indexAt, compoundAt, options.cdpath === true);
  const structure = walk.file(file as unknown as { Stmts: Stmt[] });
  const evaluated = evaluations.results();
  return {
    ok: true,
    commands,
    structure,
    ...(evaluated.length > 0 ? { evaluated } : {}),
    ...(/pipefail/.test(source) ? { pipefail: true as const } : {}),
    ...(walk.changesDirectory ? { changesDirectory: true as const } : {}),
    ...(walk.cdpath ? { cdpath: true as const } : {}),
  };
}

/**
 * A here-document's text without its closing delimiter line (which the parser's span includes);
 * with `<<-`, without the tabs that start its lines, as the shell reads it.
 */
function hereDocumentBody(text: string, delimiter: string, stripTabs: boolean): string {
  const lines = text.split("\n");
  if (lines.length > 0 && lines[lines.length - 1]!.trim() === delimiter) lines.pop();
  return (stripTabs ? lines.map((line) => line.replace(/^\t+/, "")) : lines).join("\n");
}
