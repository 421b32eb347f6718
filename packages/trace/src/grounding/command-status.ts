import type { EventStatus, TraceEvent } from "../event.js";
import type { CommandPieces, GroundedCommand, LinePieces } from "./grounded-command.js";
import type { LineNode } from "./parsed-line.js";

/**
 * The status of each grounded command (see docs/grounding.md): what a call's result shows of its
 * line's run (the exit status, the programs not found), and how each command's status follows from
 * it and the line's structure, as the grounded line's pieces become its events.
 */

/** What is known of a line's run: its exit status, and the programs the output shows were not found. */
export interface LineRun {
  readonly notFound: ReadonlySet<string>;
  /** The line ran: its output is its last command's. */
  readonly ran: boolean;
}

/** A line not known to have run: a call without a result, or commands grounded without a call. */
export const noRun: LineRun = { notFound: new Set(), ran: false };

/**
 * What a call's result shows of its line's run. A call that succeeded ran its line, which exited
 * 0, unless it was sent to the background (Claude Code's `Command running in background with ID:
 * …`: neither its status nor its output is known). A call that failed ran its line when its output
 * shows the exit status (Claude Code's first line `Exit code N`) or a shell's "command not found"
 * (its program's failure, on a line of its own); otherwise whether it ran is not known (a call
 * refused before it ran fails too). A call with no result has not run.
 */
export function lineRun(event: TraceEvent): LineRun & { readonly status?: EventStatus } {
  const output = event.output ?? "";
  const notFound = notFoundPrograms(output);
  if (event.status === "ok") {
    if (/^Command running in background with ID: /.test(output)) return { notFound: new Set(), ran: false };
    return { status: "ok", notFound, ran: true };
  }
  if (event.status === "error") {
    const exit = /^(?:Error: )?Exit code (\d+)[ \t]*(?:\r?\n|$)/.exec(output);
    if (exit !== null && Number(exit[1]) !== 0) return { status: "error", notFound, ran: true };
    return { notFound, ran: notFound.size > 0 };
  }
  return noRun;
}

/**
 * The programs a shell says it could not run, each on a line of the output, as Bash, dash, zsh and
 * sudo say it: `bash: line 1: NAME: command not found` (also `/bin/bash: …`, `sh: …`, without
 * `line N:`), `sh: 1: NAME: not found`, `zsh: command not found: NAME` (also `zsh:1:` and
 * `(eval):1:`), `sudo: NAME: command not found`; and, for a program named by a path, Bash's `NAME:
 * No such file or directory` or `Permission denied` and zsh's `no such file or directory: NAME` or
 * `permission denied: NAME`.
 */
function notFoundPrograms(output: string): Set<string> {
  const found = new Set<string>();
  if (output === "") return found;
  const shell = String.raw`(?:\/[\w./-]*\/)?(?:bash|sh|dash|ksh)`;
  const bash = new RegExp(String.raw`^${shell}: (?:line \d+: |\d+: )?(?:eval: (?:line \d+: )?)?(.+?): (?:command not found|not found)$`);
  const bashPath = new RegExp(String.raw`^${shell}: (?:line \d+: )?(.*\/.*?): (?:No such file or directory|Permission denied)$`);
  const zsh = /^(?:(?:\/[\w./-]*\/)?zsh|\(eval\))(?::\d+)?: (?:command not found|no such file or directory|permission denied): (.+)$/;
  const sudo = /^sudo: (.+?): command not found$/;
  for (const raw of output.slice(0, 65_536).split("\n")) {
    const line = raw.replace(/\r$/, "");
    const name = bash.exec(line)?.[1] ?? bashPath.exec(line)?.[1] ?? zsh.exec(line)?.[1] ?? sudo.exec(line)?.[1];
    if (name !== undefined) found.add(name);
  }
  return found;
}

/**
 * The events of a grounded line, given what is known of its run: each command's status follows
 * from the line's exit status and its structure (see {@link solveLine}); the files a command reads
 * and writes, and its redirections, are known to have been read and written when it succeeded;
 * the script a shell or `eval` runs ends with its status; and the last command of the line gets
 * the call's output when the line ran.
 */
export function emitLine(line: LinePieces, status: EventStatus | undefined, run: LineRun, output = false): GroundedCommand[] {
  const solved = solveLine(line, status, run);
  const events: GroundedCommand[] = [];
  line.commands.forEach((pieces, index) => {
    const known = solved.notRun.has(index) ? undefined : solved.statuses.has(index) ? solved.statuses.get(index) : evidence(pieces, run);
    events.push(...emitCommand(pieces, known, run, output && run.ran && solved.final === index));
  });
  events.push(...(line.evaluated ?? []));
  return events;
}

function emitCommand(pieces: CommandPieces, status: EventStatus | undefined, run: LineRun, output: boolean): GroundedCommand[] {
  const done = (event: GroundedCommand): GroundedCommand => (status === "ok" ? { ...event, status } : event);
  const events: GroundedCommand[] = pieces.reads.map(done);
  if (pieces.own !== undefined) events.push({ ...pieces.own, ...(status !== undefined ? { status } : {}), ...(output ? { receivesOutput: true as const } : {}) });
  events.push(...pieces.writes.map(done), ...pieces.unknown);
  if (pieces.script !== undefined) {
    events.push(...pieces.script.events);
    if (pieces.script.line !== undefined) events.push(...emitLine(pieces.script.line, pieces.script.passesStatus ? status : undefined, run));
  }
  for (const ran of pieces.runs) events.push(...emitCommand(ran, evidence(ran, run), run, false));
  events.push(...pieces.redirections.map(done));
  return events;
}

/** A command's failure the output shows: the shell found no program by its name. */
function evidence(pieces: CommandPieces, run: LineRun): EventStatus | undefined {
  const program = pieces.own?.args["program"];
  return typeof program === "string" && run.notFound.has(program) ? "error" : undefined;
}

/**
 * The status of each command of a line whose exit status is `status` (undefined: not known), by
 * the line's structure: in `a && b` that succeeded both did, and in one that failed, if `a` is
 * known to have failed, `b` did not run; in `a || b` that failed both did, and in one that
 * succeeded, if `a` is known to have failed, `b` succeeded; `a | b` and `a; b` end with `b`'s
 * status (with `pipefail`, a pipeline that succeeded has every command succeed, and one that
 * failed, none known); `! a` inverts; a group is its list's; commands in the background, in `if`,
 * loops, `case` and functions, and in substitutions, are not known. `final` is the command whose
 * output the line's is: the last that ran of the last list, pipeline or `&&`/`||` chain.
 */
function solveLine(line: LinePieces, status: EventStatus | undefined, run: LineRun): { statuses: Map<number, EventStatus>; notRun: Set<number>; final?: number } {
  const statuses = new Map<number, EventStatus>();
  const notRun = new Set<number>();
  const structure = line.structure;
  if (structure === undefined) {
    // Commands without their line's structure (grounded one by one): none known.
    return line.commands.length === 1 ? { statuses: status !== undefined ? new Map([[0, status]]) : statuses, notRun, final: 0 } : { statuses, notRun };
  }
  const evidenceOf = (node: LineNode): EventStatus | undefined => {
    switch (node.kind) {
      case "command":
        return evidence(line.commands[node.index]!, run);
      case "not": {
        const inner = evidenceOf(node.inner);
        return inner === undefined ? undefined : inner === "ok" ? "error" : "ok";
      }
      case "group":
        return evidenceOf(node.inner);
      case "list":
        return node.items.length > 0 ? evidenceOf(node.items[node.items.length - 1]!) : undefined;
      case "pipe":
        return line.pipefail === true ? undefined : evidenceOf(node.right);
      case "and": {
        const left = evidenceOf(node.left);
        return left === "error" ? "error" : left === "ok" ? evidenceOf(node.right) : undefined;
      }
      case "or": {
        const left = evidenceOf(node.left);
        return left === "ok" ? "ok" : left === "error" ? evidenceOf(node.right) : undefined;
      }
      default:
        return undefined;
    }
  };
  const skip = (node: LineNode): void => {
    switch (node.kind) {
      case "command":
        notRun.add(node.index);
        return;
      case "and":
      case "or":
      case "pipe":
        skip(node.left);
        skip(node.right);
        return;
      case "list":
        node.items.forEach(skip);
        return;
      case "not":
      case "group":
      case "background":
        skip(node.inner);
        return;
      default:
        return;
    }
  };
  const solve = (node: LineNode, result: EventStatus | undefined): void => {
    switch (node.kind) {
      case "command":
        if (result !== undefined) statuses.set(node.index, result);
        return;
      case "not":
        solve(node.inner, result === undefined ? undefined : result === "ok" ? "error" : "ok");
        return;
      case "group":
        solve(node.inner, result);
        return;
      case "background":
        solve(node.inner, undefined);
        return;
      case "list":
        node.items.forEach((item, index) => solve(item, index === node.items.length - 1 ? result : undefined));
        return;
      case "pipe":
        solve(node.left, line.pipefail === true && result === "ok" ? "ok" : undefined);
        solve(node.right, line.pipefail === true && result === "error" ? undefined : result);
        return;
      case "and": {
        const left = evidenceOf(node.left);
        if (result === "ok") {
          solve(node.left, "ok");
          solve(node.right, "ok");
        } else if (left === "error") {
          solve(node.left, "error");
          skip(node.right);
        } else {
          // A command the output shows ran after `&&` ran because the one before it succeeded.
          const leftKnown = left ?? (evidenceOf(node.right) !== undefined ? "ok" : undefined);
          solve(node.left, leftKnown);
          solve(node.right, leftKnown === "ok" ? result : undefined);
        }
        return;
      }
      case "or": {
        const left = evidenceOf(node.left);
        if (result === "error") {
          solve(node.left, "error");
          solve(node.right, "error");
        } else if (left === "ok") {
          solve(node.left, "ok");
          skip(node.right);
        } else {
          // After `||`, it ran because the one before it failed.
          const leftKnown = left ?? (evidenceOf(node.right) !== undefined ? "error" : undefined);
          solve(node.left, leftKnown);
          solve(node.right, leftKnown === "error" ? result : undefined);
        }
        return;
      }
      default:
        return;
    }
  };
  const last = (node: LineNode): number | undefined => {
    switch (node.kind) {
      case "command":
        return notRun.has(node.index) ? undefined : node.index;
      case "and":
      case "or":
        return last(node.right) ?? last(node.left);
      case "pipe":
        return last(node.right);
      case "list":
        return node.items.length > 0 ? last(node.items[node.items.length - 1]!) : undefined;
      case "not":
      case "group":
        return last(node.inner);
      default:
        return undefined;
    }
  };
  solve(structure, status);
  const final = last(structure);
  return { statuses, notRun, ...(final !== undefined ? { final } : {}) };
}
