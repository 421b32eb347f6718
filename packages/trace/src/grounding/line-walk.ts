import { maximumWays } from "./absolute-paths.js";
import type { CommandDirectories, DirectoryStep, LineNode, SimpleCommand } from "./parsed-line.js";
import { shellSyntax, type BinaryCmd, type CallExpr, type CompoundNode, type IfNode, type Stmt } from "./shell-syntax.js";

/**
 * One way the shell may have come to where it is: the `cd`s from the line's start, a key that tells
 * ways apart, and the way without the last `cd`.
 */
interface Way {
  readonly steps: readonly DirectoryStep[];
  readonly key: string;
  readonly parent?: Way;
}

/**
 * Where the shell may be (see {@link CommandDirectories}): each way it may have come there, and
 * whether it may be in a directory the line does not show; or nowhere (`NEVER`), having exited.
 */
interface Where {
  readonly ways: readonly Way[];
  readonly elsewhere: boolean;
}
const NEVER = "never";
type Place = Where | typeof NEVER;
const START: Where = { ways: [{ steps: [], key: "" }], elsewhere: false };
const UNKNOWN: Where = { ways: [], elsewhere: true };

/** Where the shell is after a command that succeeded, and after one that failed. */
interface Outcome {
  readonly ok: Place;
  readonly failed: Place;
}

/** Ways, each once, the first {@link maximumWays} of them (past them, the shell may be elsewhere). */
function where(ways: readonly Way[], elsewhere: boolean): Where {
  const kept = new Map<string, Way>();
  for (const way of ways) {
    if (kept.has(way.key)) continue;
    if (kept.size === maximumWays) return { ways: [...kept.values()], elsewhere: true };
    kept.set(way.key, way);
  }
  return { ways: [...kept.values()], elsewhere };
}

/** Where the shell may be after one of two paths: anywhere either leads (the first one's ways first). */
function join(a: Place, b: Place): Place {
  if (a === NEVER) return b;
  if (b === NEVER) return a;
  return where([...a.ways, ...b.ways], a.elsewhere || b.elsewhere);
}

function same(a: Place, b: Place): boolean {
  if (a === NEVER || b === NEVER) return a === b;
  return a.elsewhere === b.elsewhere && a.ways.length === b.ways.length && a.ways.every((way) => b.ways.some((other) => other.key === way.key));
}

/** Whether `after` may be elsewhere than `before` (a shell that exited is nowhere). */
function moves(after: Place, before: Place): boolean {
  return after !== NEVER && !same(after, before);
}

/** A command that runs where the shell never is (after `exit`) runs nowhere known. */
function present(place: Place): Where {
  return place === NEVER ? UNKNOWN : place;
}

/** After what may change the directory as the line does not show: where the shell was, or elsewhere. */
function anywhere(place: Place): Where {
  return { ways: present(place).ways, elsewhere: true };
}

function stay(place: Place): Outcome {
  return { ok: place, failed: place };
}

function directoriesOf(place: Where): CommandDirectories {
  return { ways: place.ways.map((way) => way.steps), elsewhere: place.elsewhere };
}

/**
 * One walk over a parsed line, in the order the shell runs it: the working directory of each
 * command (the `cd`s before it in the same shell), and how the line's exit status follows from its
 * commands' ({@link LineNode}). A `cd` moves the shell for what runs after it in the same shell:
 * after `&&` (which runs only if it succeeded), after `;` only if a failure would have ended the
 * shell (`cd x || exit`), and otherwise the shell may be where it went or where it was; a subshell
 * (`( … )`, a pipeline's commands, `$( … )`, `&`) starts where the shell is and takes none of its
 * `cd`s out. Whatever may change the directory in ways the line does not show (`cd -`, `pushd`,
 * `eval`, `source`, a command named by an expansion, a function of the line that changes directory)
 * may leave the shell elsewhere. A command's directory is known when one way leads to it and each
 * of its `cd`s names its directory as written (not `cd ~`, `cd "$D"`); the ways are kept for a
 * reader that knows more of the shell (see {@link CommandDirectories}).
 */
export class LineWalk {
  changesDirectory = false;
  private readonly physical: boolean;
  readonly cdpath: boolean;
  private readonly movingFunctions = new Set<string>();
  /** The commands given a directory so far, in order (a command may be given one more than once). */
  private readonly placed: number[] = [];
  /** Where each command placed runs, and where each `cd` leads, by the command's index. */
  private readonly placeOf = new Map<number, Where>();
  private readonly leadOf = new Map<number, Where>();
  /** The key of each way, by the way it comes from and its last step: a way is known by a short key. */
  private readonly keys = new Map<string, string>();

  constructor(
    private readonly source: string,
    private readonly commands: SimpleCommand[],
    private readonly indexAt: ReadonlyMap<number, number>,
    private readonly compoundAt: ReadonlyMap<number, number>,
    cdpath: boolean,
  ) {
    // `set -P` (or `-o physical`) makes every `cd` physical; with CDPATH (or cdable_vars), `cd NAME`
    // may go elsewhere than `./NAME`. Quotes and backslashes do not hide a name from this, and
    // ANSI-C quoting (`$'…'`) may hide any.
    const hidden = source.includes("$'");
    const plain = source.replace(/['"\\]/g, "");
    this.physical = hidden || /\bset\s+(-[A-Za-z]*P|-o\s+physical)\b|chase_?links/i.test(source) || /\bset\s+-[A-Za-z]*P|\bphysical\b/.test(plain);
    this.cdpath = cdpath || hidden || /\bCDPATH\b|cdable_?vars/i.test(source) || /\bCDPATH\b|cdable_?vars/i.test(plain);
  }

  file(file: { Stmts: Stmt[] }): LineNode {
    const { node, outcome } = this.list(file.Stmts, START);
    this.changesDirectory = moves(join(outcome.ok, outcome.failed), START);
    return node;
  }

  private list(statements: readonly Stmt[], place: Place): { node: LineNode; outcome: Outcome } {
    let here = place;
    let outcome = stay(place);
    const items: LineNode[] = [];
    for (const statement of statements) {
      // After an `exit`, nothing more runs: what follows is where it would be, not known.
      const walked = this.statement(statement, present(here));
      items.push(walked.node);
      outcome = here === NEVER ? stay(NEVER) : walked.outcome;
      here = join(outcome.ok, outcome.failed);
    }
    return { node: items.length === 0 ? { kind: "other" } : items.length === 1 ? items[0]! : { kind: "list", items }, outcome };
  }

  private statement(statement: Stmt, place: Where): { node: LineNode; outcome: Outcome } {
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

  private command(command: never, type: string, place: Where): { node: LineNode; outcome: Outcome } {
    switch (type) {
      case "CallExpr": {
        const call = command as unknown as CallExpr;
        this.substitutions(call as never, place);
        const index = this.indexAt.get(call.Pos().Offset());
        if (index === undefined) return { node: { kind: "other" }, outcome: stay(place) };
        this.place(index, place);
        const { ok, failed, leads } = this.effect(this.commands[index]!, place);
        if (leads !== undefined) this.lead(index, leads);
        return { node: { kind: "command", index }, outcome: { ok, failed } };
      }
      case "BinaryCmd": {
        const binary = command as unknown as BinaryCmd;
        const operator = this.source.slice(binary.OpPos.Offset(), binary.OpPos.Offset() + 2);
        if (operator === "&&" || operator === "||") {
          const left = this.statement(binary.X, place);
          const next = operator === "&&" ? left.outcome.ok : left.outcome.failed;
          const right = this.statement(binary.Y, present(next));
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
        const after = [right.outcome.ok, right.outcome.failed];
        const moved = after.some((end) => moves(end, place));
        return { node: { kind: "pipe", left: left.node, right: right.node }, outcome: stay(moved ? anywhere(after.reduce<Place>(join, place)) : place) };
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
        const after = body(place);
        if (!after.some((end) => moves(end, place))) return { node: { kind: "other" }, outcome: stay(place) };
        // A later round starts where the last left the shell: the body's commands may be elsewhere.
        this.forget(from);
        return { node: { kind: "other" }, outcome: stay(anywhere(after.reduce<Place>(join, place))) };
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
        if ([probe.ok, probe.failed].some((after) => moves(after, START))) this.movingFunctions.add(declaration.Name.Value);
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

  private ifClause(clause: IfNode, place: Where): Outcome {
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
  private substitutions(node: unknown, place: Where): void {
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

  /** The commands placed since `from` (in a loop's body, a function's) may also run where the line does not show. */
  private forget(from: number): void {
    for (const index of this.placed.slice(from)) {
      this.place(index, anywhere(this.placeOf.get(index) ?? UNKNOWN), false);
      const leads = this.leadOf.get(index);
      if (leads !== undefined) this.lead(index, anywhere(leads));
    }
  }

  /**
   * Gives a command its directory: `cd` when one way leads there and names each directory as
   * written, `directoryUnknown` (with the `directories` the line still shows) otherwise.
   */
  private place(index: number, place: Place, record = true): void {
    if (record) this.placed.push(index);
    const where = present(place);
    this.placeOf.set(index, where);
    const { cd: _cd, directoryUnknown: _unknown, directories: _directories, ...rest } = this.commands[index]!;
    const only = where.ways.length === 1 && !where.elsewhere ? where.ways[0]!.steps : undefined;
    if (only !== undefined && only.every((step) => step.unresolved !== true)) this.commands[index] = only.length > 0 ? { ...rest, cd: only } : rest;
    else this.commands[index] = { ...rest, directoryUnknown: true, ...(where.ways.length > 0 ? { directories: directoriesOf(where) } : {}) };
  }

  /** Records where a `cd` takes the shell when it succeeds. */
  private lead(index: number, leads: Where): void {
    this.leadOf.set(index, leads);
    this.commands[index] = { ...this.commands[index]!, leadsTo: directoriesOf(leads) };
  }

  /** Where a simple command leaves the shell, when it succeeds and when it fails; for a `cd`, where it leads. */
  private effect(command: SimpleCommand, place: Where): Outcome & { readonly leads?: Where } {
    const words = command.words;
    if (words.length === 0) return stay(place);
    if (command.expanded?.[0] === true) return stay(anywhere(place));
    let at = 0;
    // `builtin cd`, `command cd` (but `command -v cd` runs nothing).
    while ((words[at] === "builtin" || words[at] === "command") && at + 1 < words.length) {
      if (words[at] === "command" && (words[at + 1] === "-v" || words[at + 1] === "-V")) return stay(place);
      at += words[at] === "command" && words[at + 1] === "-p" ? 2 : 1;
    }
    const name = words[at]!;
    if (this.movingFunctions.has(name)) return stay(anywhere(place));
    switch (name) {
      case "cd":
      case "pushd":
        return this.cd(words.slice(at + 1), (command.expanded ?? []).slice(at + 1), place, name === "pushd");
      case "popd":
      case "eval":
      case "source":
      case ".":
        return stay(anywhere(place));
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

  /**
   * Where `cd WORDS` (`pushd WORDS`: `stack`) takes the shell when it succeeds; when it fails, the
   * shell stays where it was.
   */
  private cd(words: readonly string[], expanded: readonly boolean[], place: Where, stack: boolean): Outcome & { readonly leads: Where } {
    const elsewhere = { ok: anywhere(place), failed: place, leads: anywhere(place) };
    let physical = this.physical;
    let at = 0;
    for (; at < words.length; at++) {
      const word = words[at]!;
      if (word === "--") {
        at++;
        break;
      }
      if (!word.startsWith("-") || word === "-") break;
      // `-L`, `-P`, `-e`, `-@`; anything else (`cd -2`, zsh's directory stack, `pushd -n`) is not known.
      if (stack || !/^-[LPe@]+$/.test(word)) return elsewhere;
      for (const letter of word.slice(1)) if (letter === "L" || letter === "P") physical = letter === "P";
    }
    const operands = words.slice(at);
    // `cd` alone goes home; `pushd` alone swaps the stack's top two directories.
    const target = operands[0] ?? (stack ? undefined : "~");
    // `cd -` goes back, `pushd +1` turns the stack, `cd ""` is the shell's to read.
    if (target === undefined || target === "-" || target === "" || (stack && /^[-+]/.test(target))) return elsewhere;
    const unresolved = stack || expanded[at] === true || target.startsWith("~");
    const step: DirectoryStep = { path: target, physical, ...(unresolved ? { unresolved: true as const } : {}) };
    let ok = this.into(place, step, target.startsWith("/") || target === "~" || target.startsWith("~/"));
    // With CDPATH, `cd NAME` looks for NAME in its directories first (not `./NAME`, `../NAME` or
    // `/…`); `cd a b` is an error in Bash, a substitution in the directory's name in zsh.
    if ((this.cdpath && !/^(\/|\.\.?(\/|$))/.test(target)) || operands.length > 1) ok = anywhere(ok);
    return { ok, failed: place, leads: ok };
  }

  /** Where the shell is after `step` from each way to `place`; `startsOver`: from its start, whatever way led there. */
  private into(place: Where, step: DirectoryStep, startsOver: boolean): Where {
    if (startsOver) return { ways: [this.extend(START.ways[0]!, step)], elsewhere: false };
    return where(
      place.ways.map((way) => this.extend(way, step)),
      place.elsewhere,
    );
  }

  /**
   * The way after one more `cd`. A plain one (its word as written, `..` climbed as written) after
   * another is one `cd` to both joined: `cd a; cd ..` leads where the shell was, and two ways that
   * lead to the same directory so are one.
   */
  private extend(way: Way, step: DirectoryStep): Way {
    const last = way.steps[way.steps.length - 1];
    if (plain(step) && !step.path.startsWith("/")) {
      if (last !== undefined && way.parent !== undefined && plain(last)) {
        const joined = logicalPath(`${last.path}/${step.path}`);
        return joined === "." ? way.parent : this.append(way.parent, { path: joined, physical: false });
      }
      if (logicalPath(step.path) === ".") return way;
    }
    return this.append(way, step);
  }

  private append(way: Way, step: DirectoryStep): Way {
    const text = `${way.key}\u0000${step.physical ? "P" : "L"}${step.unresolved === true ? "?" : "="}${step.path}`;
    let key = this.keys.get(text);
    if (key === undefined) {
      key = String(this.keys.size + 1);
      this.keys.set(text, key);
    }
    return { steps: [...way.steps, step], key, parent: way };
  }
}

/** A `cd` whose word is the directory as written, `..` climbed as written. */
function plain(step: DirectoryStep): boolean {
  return !step.physical && step.unresolved !== true;
}

/** A path with `.` and repeated slashes gone and `..` climbed as written (`.` for none, relative; `/` at the root). */
function logicalPath(path: string): string {
  const absolute = path.startsWith("/");
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && parts.length > 0 && parts[parts.length - 1] !== "..") parts.pop();
    else if (part !== ".." || !absolute) parts.push(part);
  }
  return absolute ? `/${parts.join("/")}` : parts.length === 0 ? "." : parts.join("/");
}
