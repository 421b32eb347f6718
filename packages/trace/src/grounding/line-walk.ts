import type { DirectoryStep, LineNode, SimpleCommand } from "./parsed-line.js";
import { shellSyntax, type BinaryCmd, type CallExpr, type CompoundNode, type IfNode, type Stmt } from "./shell-syntax.js";

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
export class LineWalk {
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
