import type { EvaluatedText } from "./evaluated.js";

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
  /**
   * With `directoryUnknown`, what the line still shows of where the command may run (see
   * {@link CommandDirectories}); absent, nothing. Without it, the one directory `cd` says.
   */
  readonly directories?: CommandDirectories;
  /** For a `cd` or `pushd`: where it takes the shell when it succeeds, from the line's start. */
  readonly leadsTo?: CommandDirectories;
}

/** A `cd` to `path`: logical (`..` climbs the path as written, as `cd` does by default) or physical (`cd -P`). */
export interface DirectoryStep {
  readonly path: string;
  readonly physical: boolean;
  /**
   * Which directory `path` is, the line's text alone does not say: the shell expands it (`cd "$D"`,
   * `cd ~/p`; `cd` alone goes to `~`), or the step is a directory stack's (`pushd DIR`), which
   * grounding does not follow. Grounding takes a command after it as in a directory not known; a
   * reader that knows the shell's variables and home directory (the runtime's guard) may resolve it.
   */
  readonly unresolved?: true;
}

/**
 * Every directory a command may run in, as far as the line shows: each way of `cd`s from the
 * line's start the shell may have taken to it (after `cd x; …`, the way through `x` and, had the
 * `cd` failed, the way without it), and whether it may also be in a directory the line does not
 * show (`elsewhere`: after `cd -`, `eval`, a loop that changes directory, CDPATH, …). A command
 * whose directory is known has one way and is nowhere else.
 */
export interface CommandDirectories {
  readonly ways: readonly (readonly DirectoryStep[])[];
  readonly elsewhere: boolean;
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
  /** `tooComplex`: the line may be valid, but it nests or chains beyond what is parsed (see `lineComplexity` in parse-command-line.ts). */
  | { readonly ok: false; readonly message: string; readonly tooComplex?: true };

/** What the shell a line runs in is known to have: `cdpath`, CDPATH set in its environment. */
export interface LineOptions {
  readonly cdpath?: boolean;
}
