import { createRequire } from "node:module";
import type MvdanSh from "mvdan-sh";
import { EvaluationCollector, type EvaluatedText } from "./evaluated.js";

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
  /**
   * The `cd`s that run before the command, in the same shell, from the line's start: its working
   * directory is the line's, changed by each in turn. Absent, none (it runs where the line starts).
   */
  readonly cd?: readonly DirectoryStep[];
  /** The command's working directory is not known from the line (a `cd -`, a `cd` that may have failed, `eval`, …). */
  readonly directoryUnknown?: true;
}

/** A `cd` to `path`: logical (`..` climbs the path as written, as `cd` does by default) or physical (`cd -P`). */
export interface DirectoryStep {
  readonly path: string;
  readonly physical: boolean;
}

/**
 * How the line's exit status follows from its commands': a command (by its index in the line's
 * commands), `a && b`, `a || b`, `a | b`, a list (`a; b`, lines), `! a`, a group (`( … )`, `{ …; }`,
 * `time …`), a command run in the background (`a &`), and anything else (`if`, loops, `case`,
 * function definitions, `[[ … ]]`), whose commands' statuses do not follow from the line's.
 */
export type LineNode =
  | { readonly kind: "command"; readonly index: number }
  | { readonly kind: "and" | "or" | "pipe"; readonly left: LineNode; readonly right: LineNode }
  | { readonly kind: "list"; readonly items: readonly LineNode[] }
  | { readonly kind: "not" | "group" | "background"; readonly inner: LineNode }
  | { readonly kind: "other" };

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
  | {
      readonly ok: true;
      readonly commands: readonly SimpleCommand[];
      /** How the line's exit status follows from its commands' (see {@link LineNode}). */
      readonly structure?: LineNode;
      /** The line mentions `pipefail`: a pipeline may fail by any of its commands. */
      readonly pipefail?: true;
      /** The line may leave its shell in another directory than it started in (a `cd` outside a subshell, `eval`, …). */
      readonly changesDirectory?: true;
      /** `cd NAME` may search CDPATH (the line mentions it, or the shell's environment has it). */
      readonly cdpath?: true;
      /**
       * Where the line has Bash evaluate text as code (an arithmetic expression, a prompt string, a
       * variable's name, a callback) that is not known from the line to be harmless (see evaluated.ts).
       */
      readonly evaluated?: readonly EvaluatedText[];
    }
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

/** What the shell a line runs in is known to have: `cdpath`, CDPATH set in its environment. */
export interface LineOptions {
  readonly cdpath?: boolean;
}

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

/** Where the shell is: a known directory (the `cd`s from the line's start), unknown (`null`), or nowhere, the shell having exited. */
const NEVER = "never";
type Place = { readonly steps: readonly DirectoryStep[]; readonly key: string } | null | typeof NEVER;
const START: Place = { steps: [], key: "" };

/** Where the shell is after a command that succeeded, and after one that failed. */
interface Outcome {
  readonly ok: Place;
  readonly failed: Place;
}

function join(a: Place, b: Place): Place {
  if (a === NEVER) return b;
  if (b === NEVER) return a;
  return a !== null && b !== null && a.key === b.key ? a : null;
}

function stay(place: Place): Outcome {
  return { ok: place, failed: place };
}

interface CompoundNode {
  Stmts: Stmt[];
}
interface IfNode {
  Cond: Stmt[];
  Then: Stmt[];
  Else: IfNode | null;
}

/**
 * One walk over a parsed line, in the order the shell runs it: the working directory of each
 * command (the `cd`s before it in the same shell), and how the line's exit status follows from its
 * commands' ({@link LineNode}). A `cd` moves the shell for what runs after it in the same shell:
 * after `&&` (which runs only if it succeeded), after `;` only if a failure would have ended the
 * shell (`cd x || exit`); a subshell (`( … )`, a pipeline's commands, `$( … )`, `&`) starts where
 * the shell is and takes none of its `cd`s out. Whatever may change the directory in ways the line
 * does not show (`cd -`, `cd ~`, `pushd`, `eval`, `source`, a command named by an expansion, a
 * function of the line that changes directory) leaves it unknown.
 */
class LineWalk {
  changesDirectory = false;
  private readonly physical: boolean;
  readonly cdpath: boolean;
  private readonly movingFunctions = new Set<string>();
  /** The commands given a directory so far, in order (a command may be given one more than once). */
  private readonly placed: number[] = [];

  constructor(
    private readonly source: string,
    private readonly commands: SimpleCommand[],
    private readonly indexAt: ReadonlyMap<number, number>,
    private readonly compoundAt: ReadonlyMap<number, number>,
    cdpath: boolean,
  ) {
    // `set -P` (or `-o physical`) makes every `cd` physical; with CDPATH (or cdable_vars), `cd NAME` may go elsewhere than `./NAME`.
    this.physical = /\bset\s+(-[A-Za-z]*P|-o\s+physical)\b|chase_?links/i.test(source);
    this.cdpath = cdpath || /\bCDPATH\b|cdable_?vars/i.test(source);
  }

  file(file: { Stmts: Stmt[] }): LineNode {
    const { node, outcome } = this.list(file.Stmts, START);
    const after = join(outcome.ok, outcome.failed);
    if (after !== NEVER && (after === null || after.key !== "")) this.changesDirectory = true;
    return node;
  }

  private list(statements: readonly Stmt[], place: Place): { node: LineNode; outcome: Outcome } {
    let here = place;
    let outcome = stay(place);
    const items: LineNode[] = [];
    for (const statement of statements) {
      // After an `exit`, nothing more runs: what follows is where it would be, not known.
      const walked = this.statement(statement, here === NEVER ? null : here);
      items.push(walked.node);
      outcome = here === NEVER ? stay(NEVER) : walked.outcome;
      here = join(outcome.ok, outcome.failed);
    }
    return { node: items.length === 0 ? { kind: "other" } : items.length === 1 ? items[0]! : { kind: "list", items }, outcome };
  }

  private statement(statement: Stmt, place: Place): { node: LineNode; outcome: Outcome } {
    const shell = shellSyntax();
    for (const redirection of statement.Redirs) {
      if (redirection.Word !== null) this.substitutions(redirection.Word, place);
      if (redirection.Hdoc !== null) this.substitutions(redirection.Hdoc, place);
    }
    const compound = this.compoundAt.get(statement.Pos().Offset());
    if (compound !== undefined) this.place(compound, place);
    const command = statement.Cmd;
    const node = statement as unknown as { Negated?: boolean; Background?: boolean; Coprocess?: boolean };
    if (command === null || command === undefined) return { node: { kind: "other" }, outcome: stay(place) };
    const walked = this.command(command as never, shell.NodeType(command as never), place);
    if (node.Background === true || node.Coprocess === true) {
      // `a &`: a subshell, in the background; the statement itself succeeds.
      return { node: { kind: "background", inner: walked.node }, outcome: stay(place) };
    }
    if (node.Negated === true) return { node: { kind: "not", inner: walked.node }, outcome: { ok: walked.outcome.failed, failed: walked.outcome.ok } };
    return walked;
  }

  private command(command: never, type: string, place: Place): { node: LineNode; outcome: Outcome } {
    switch (type) {
      case "CallExpr": {
        const call = command as unknown as CallExpr;
        this.substitutions(call as never, place);
        const index = this.indexAt.get(call.Pos().Offset());
        if (index === undefined) return { node: { kind: "other" }, outcome: stay(place) };
        this.place(index, place);
        return { node: { kind: "command", index }, outcome: this.effect(this.commands[index]!, place) };
      }
      case "BinaryCmd": {
        const binary = command as unknown as BinaryCmd;
        const operator = this.source.slice(binary.OpPos.Offset(), binary.OpPos.Offset() + 2);
        if (operator === "&&" || operator === "||") {
          const left = this.statement(binary.X, place);
          const next = operator === "&&" ? left.outcome.ok : left.outcome.failed;
          const right = this.statement(binary.Y, next === NEVER ? null : next);
          const rightOutcome = next === NEVER ? stay(NEVER) : right.outcome;
          const outcome =
            operator === "&&"
              ? { ok: rightOutcome.ok, failed: join(left.outcome.failed, rightOutcome.failed) }
              : { ok: join(left.outcome.ok, rightOutcome.ok), failed: rightOutcome.failed };
          return { node: { kind: operator === "&&" ? "and" : "or", left: left.node, right: right.node }, outcome };
        }
        // A pipeline: each side a subshell that starts where the shell is. Its last command may run
        // in the shell itself (zsh, Bash's lastpipe): a `cd` there leaves the directory unknown.
        const left = this.statement(binary.X, place);
        const right = this.statement(binary.Y, place);
        const moved = [right.outcome.ok, right.outcome.failed].some((after) => after !== NEVER && (after === null || place === null || place === NEVER || after.key !== place.key));
        return { node: { kind: "pipe", left: left.node, right: right.node }, outcome: stay(moved ? null : place) };
      }
      case "Subshell": {
        const inner = this.list((command as unknown as CompoundNode).Stmts, place);
        return { node: { kind: "group", inner: inner.node }, outcome: stay(place) };
      }
      case "Block": {
        const inner = this.list((command as unknown as CompoundNode).Stmts, place);
        return { node: { kind: "group", inner: inner.node }, outcome: inner.outcome };
      }
      case "TimeClause": {
        const timed = (command as unknown as { Stmt: Stmt | null }).Stmt;
        if (timed === null) return { node: { kind: "other" }, outcome: stay(place) };
        const inner = this.statement(timed, place);
        return { node: { kind: "group", inner: inner.node }, outcome: inner.outcome };
      }
      case "IfClause": {
        const clause = command as unknown as IfNode;
        const outcome = this.ifClause(clause, place);
        return { node: { kind: "other" }, outcome };
      }
      case "WhileClause":
      case "ForClause": {
        // A loop's body may run any number of times, each from where the last left the shell.
        const loop = command as unknown as { Cond?: Stmt[]; Do: Stmt[]; Loop?: unknown };
        this.substitutions((loop.Loop ?? null) as never, place);
        const body = (start: Place) => {
          const condition = this.list(loop.Cond ?? [], start);
          const done = this.list(loop.Do, join(condition.outcome.ok, condition.outcome.failed));
          return [condition.outcome.ok, condition.outcome.failed, done.outcome.ok, done.outcome.failed];
        };
        const from = this.placed.length;
        const moved = body(place).some((after) => after !== NEVER && (after === null || place === null || place === NEVER || after.key !== place.key));
        if (!moved) return { node: { kind: "other" }, outcome: stay(place) };
        // A later round starts where the last left the shell: the body's commands are not known.
        this.forget(from);
        return { node: { kind: "other" }, outcome: stay(null) };
      }
      case "CaseClause": {
        const clause = command as unknown as { Word: unknown; Items: { Stmts: Stmt[] }[] };
        this.substitutions(clause.Word as never, place);
        let outcome: Outcome = { ok: place, failed: NEVER };
        for (const item of clause.Items) {
          const walked = this.list(item.Stmts, place).outcome;
          outcome = { ok: join(outcome.ok, walked.ok), failed: join(outcome.failed, walked.failed) };
        }
        return { node: { kind: "other" }, outcome };
      }
      case "FuncDecl": {
        // The body runs when the function is called, from wherever the shell is then.
        const declaration = command as unknown as { Name: { Value: string }; Body: Stmt };
        const from = this.placed.length;
        const probe = this.statement(declaration.Body, START).outcome;
        if ([probe.ok, probe.failed].some((after) => after !== NEVER && (after === null || after.key !== ""))) this.movingFunctions.add(declaration.Name.Value);
        this.forget(from);
        return { node: { kind: "other" }, outcome: stay(place) };
      }
      case "CoprocClause": {
        const inner = (command as unknown as { Stmt: Stmt }).Stmt;
        this.statement(inner, place);
        return { node: { kind: "other" }, outcome: stay(place) };
      }
      default:
        // `[[ … ]]`, `(( … ))`, `let`, `export`/`declare`: no command of their own, and no `cd`.
        this.substitutions(command, place);
        return { node: { kind: "other" }, outcome: stay(place) };
    }
  }

  private ifClause(clause: IfNode, place: Place): Outcome {
    const condition = this.list(clause.Cond, place).outcome;
    const then = condition.ok === NEVER ? stay(NEVER) : this.list(clause.Then, condition.ok).outcome;
    let otherwise: Outcome;
    if (clause.Else === null) otherwise = { ok: condition.failed, failed: NEVER };
    else if (condition.failed === NEVER) otherwise = stay(NEVER);
    else if (clause.Else.Cond.length === 0) otherwise = this.list(clause.Else.Then, condition.failed).outcome;
    else otherwise = this.ifClause(clause.Else, condition.failed);
    return { ok: join(then.ok, otherwise.ok), failed: join(then.failed, otherwise.failed) };
  }

  /** The commands of the substitutions in a node's words (`$( … )`, `<( … )`): subshells that start where the shell is. */
  private substitutions(node: unknown, place: Place): void {
    if (node === null || node === undefined) return;
    // Most words hold none: looking at the text is much cheaper than walking the nodes.
    const span = node as { Pos(): { Offset(): number }; End(): { Offset(): number } };
    if (!/\$\(|`|[<>]\(/.test(this.source.slice(span.Pos().Offset(), span.End().Offset()))) return;
    const shell = shellSyntax();
    shell.Walk(node as never, (inner) => {
      if (inner === null) return true;
      // Within words, only a command or process substitution holds statements (`Stmts`); a
      // statement (`Cmd`) belongs to a compound command, walked in its turn.
      const fields = inner as unknown as { Stmts?: unknown; Cmd?: unknown };
      if (fields.Stmts !== undefined && fields.Cmd === undefined) {
        this.list((inner as unknown as CompoundNode).Stmts, place);
        return false;
      }
      return fields.Cmd === undefined;
    });
  }

  /** The commands placed since `from` (in a loop's body, a function's) run where the line does not show. */
  private forget(from: number): void {
    for (const index of this.placed.slice(from)) this.place(index, null, false);
  }

  private place(index: number, place: Place, record = true): void {
    if (record) this.placed.push(index);
    const command = this.commands[index]!;
    const { cd: _cd, directoryUnknown: _unknown, ...rest } = command;
    this.commands[index] = place === null || place === NEVER ? { ...rest, directoryUnknown: true } : place.steps.length > 0 ? { ...rest, cd: place.steps } : rest;
  }

  /** Where a simple command leaves the shell, when it succeeds and when it fails. */
  private effect(command: SimpleCommand, place: Place): Outcome {
    const words = command.words;
    if (words.length === 0) return stay(place);
    if (command.expanded?.[0] === true) return stay(null);
    let at = 0;
    // `builtin cd`, `command cd` (but `command -v cd` runs nothing).
    while ((words[at] === "builtin" || words[at] === "command") && at + 1 < words.length) {
      if (words[at] === "command" && (words[at + 1] === "-v" || words[at + 1] === "-V")) return stay(place);
      at += words[at] === "command" && words[at + 1] === "-p" ? 2 : 1;
    }
    const name = words[at]!;
    if (this.movingFunctions.has(name)) return stay(null);
    switch (name) {
      case "cd":
        return this.cd(words.slice(at + 1), (command.expanded ?? []).slice(at + 1), place);
      case "pushd":
      case "popd":
      case "eval":
      case "source":
      case ".":
        return stay(null);
      case "exit":
      case "return":
        return stay(NEVER);
      case "exec":
        // `exec CMD` replaces the shell: nothing after it runs.
        return words.length > at + 1 ? stay(NEVER) : stay(place);
      default:
        return stay(place);
    }
  }

  private cd(words: readonly string[], expanded: readonly boolean[], place: Place): Outcome {
    let physical = this.physical;
    let at = 0;
    for (; at < words.length; at++) {
      const word = words[at]!;
      if (word === "--") {
        at++;
        break;
      }
      if (!word.startsWith("-") || word === "-") break;
      // `-L`, `-P`, `-e`, `-@`; anything else (`cd -2`, zsh's directory stack) is not known.
      if (!/^-[LPe@]+$/.test(word)) return { ok: null, failed: place };
      for (const letter of word.slice(1)) if (letter === "L" || letter === "P") physical = letter === "P";
    }
    const operands = words.slice(at);
    // `cd` alone goes home; `cd a b` is zsh's substitution in the directory's name (or an error).
    if (operands.length !== 1 || expanded[at] === true) return { ok: null, failed: place };
    const target = operands[0]!;
    if (target === "" || target === "-" || target.startsWith("~")) return { ok: null, failed: place };
    const absolute = target.startsWith("/");
    if (!absolute && this.cdpath && !/^\.\.?(\/|$)/.test(target)) return { ok: null, failed: place };
    const step = { path: target, physical };
    if (absolute) return { ok: { steps: [step], key: JSON.stringify([step]) }, failed: place };
    if (place === null || place === NEVER) return { ok: null, failed: place };
    const steps = [...place.steps, step];
    return { ok: { steps, key: JSON.stringify(steps) }, failed: place };
  }
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
