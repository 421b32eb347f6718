import type { CommandDirectories, GroundedDirectory } from "@vigil/trace";
import { eventDirectory, type CallEvent } from "./call-events.js";
import { pathWord, type PathToken, type PathWord, type WordContext } from "./guard-paths.js";
import type { GuardContext, Variables } from "./guard-scope.js";

/**
 * How a command line's shell reads words, as far as the line shows it: which variables it may
 * set, which it expands unquoted, the temporary files it names (`tmp=$(mktemp)`), the variables
 * of its environment, and the directory each of its commands runs in.
 */

/**
 * The variables of the shell's environment, as far as it is known: a value is its text, unless
 * the shell would split it into several words (it holds a character of IFS: the environment's, or
 * space, tab and line break; or the line changes IFS), which the guard does not follow.
 */
export function environmentVariables(env: GuardContext["env"], line: LineShell): Variables {
  if (env === undefined) return () => undefined;
  const separators = env["IFS"] ?? " \t\n";
  return (name) => {
    const value = env[name];
    if (value === undefined) return undefined;
    // Only inside double quotes (`"$DIR"`) is a value one word whatever it holds.
    // Split where IFS says: the environment's (or space, tab and line break), or, when the line sets it, anywhere.
    const split = line.unquoted === undefined || line.unquoted.has(name);
    if (split && (line.changes("IFS") || [...separators].some((separator) => value.includes(separator)))) return undefined;
    return value;
  };
}

/**
 * The variables a command line expands outside double quotes (`$X`, `${X}`; inside `$(…)`,
 * backquotes and arithmetic too), where the shell splits their values into words; undefined when
 * the line is not read so simply (a `case`, parentheses that do not pair).
 */
function unquotedVariables(command: string): Set<string> | undefined {
  if (/\bcase\b/.test(command)) return undefined;
  const found = new Set<string>();
  // Each frame: whether it is inside double quotes, and, for `$(`, the parentheses open in it.
  const frames: { quoted: boolean; parentheses: number; closer: ")" | "`" | undefined }[] = [{ quoted: false, parentheses: 0, closer: undefined }];
  for (let index = 0; index < command.length; index++) {
    const frame = frames[frames.length - 1]!;
    const char = command[index]!;
    if (char === "\\") {
      index++;
      continue;
    }
    if (!frame.quoted && char === "'") {
      const ansi = command[index - 1] === "$";
      for (index++; index < command.length && command[index] !== "'"; index++) if (ansi && command[index] === "\\") index++;
      continue;
    }
    if (char === '"') {
      if (frame.quoted) frames.pop();
      else frames.push({ quoted: true, parentheses: 0, closer: undefined });
      continue;
    }
    if (char === "`") {
      if (frame.closer === "`") frames.pop();
      else frames.push({ quoted: false, parentheses: 0, closer: "`" });
      continue;
    }
    if (char === "$" && command[index + 1] === "(") {
      frames.push({ quoted: false, parentheses: 0, closer: ")" });
      index++;
      continue;
    }
    if (char === "$") {
      const name = /^\{?([A-Za-z_][A-Za-z0-9_]*)/.exec(command.slice(index + 1));
      if (name !== null && !frame.quoted) found.add(name[1]!);
      continue;
    }
    if (!frame.quoted && char === "(") frame.parentheses++;
    if (!frame.quoted && char === ")") {
      if (frame.parentheses > 0) frame.parentheses--;
      else if (frame.closer === ")") frames.pop();
      else return undefined;
    }
    if (frames.length === 0) return undefined;
  }
  return frames.length === 1 ? found : undefined;
}

/**
 * What a command line may change of how its shell reads words, as far as the line shows it (quotes
 * and backslashes do not hide a name from this, and ANSI-C quoting `$'…'` may hide any: then
 * everything may change).
 */
export interface LineShell {
  /** Whether the line may set the variable `name`: it names it other than to expand it. */
  changes(name: string): boolean;
  /** `$PWD` or `pwd` may not be the working directory: the line sets `PWD`, or defines a `pwd`. */
  readonly redefinesPwd: boolean;
  /** Patterns match leading dots (`shopt -s dotglob`, or `GLOBIGNORE` set), or any case (`nocaseglob`). */
  readonly dotglob: boolean;
  readonly nocaseglob: boolean;
  /**
   * Variables the line sets only to a new temporary file's name (`tmp=$(mktemp)`, `d=$(mktemp -d)`):
   * the paths the name may be, given how the shell reads the variables the line does not set.
   */
  readonly temporaries: ReadonlyMap<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined>;
  /** The variables the line expands outside double quotes, whose values the shell splits; undefined when not known. */
  readonly unquoted: ReadonlySet<string> | undefined;
}

export function lineShell(command: string | undefined): LineShell {
  if (command === undefined) return { changes: () => false, redefinesPwd: false, dotglob: false, nocaseglob: false, temporaries: new Map(), unquoted: new Set() };
  const hidden = command.includes("$'");
  const plain = command.replace(/['"\\]/g, "");
  const mentions = (text: string, name: string) => new RegExp(`\\b${name}\\b`).test(text.replace(new RegExp(`\\$\\{?${name}\\b`, "g"), ""));
  const changes = (name: string) => hidden || mentions(plain, name);
  return {
    changes,
    temporaries: hidden ? new Map() : temporaryVariables(command, changes, mentions),
    unquoted: hidden ? undefined : unquotedVariables(command),
    redefinesPwd: changes("PWD") || /\bpwd\s*\(\s*\)|\bfunction\s+pwd\b|\balias\b[^;&|]*\bpwd=/.test(plain),
    dotglob: hidden || /\b(dotglob|GLOBIGNORE)\b/.test(plain),
    nocaseglob: hidden || /\bnocaseglob\b/.test(plain),
  };
}

/**
 * `NAME=$(mktemp …)` (also after `local`, `export`, `declare`, `readonly`, and with backquotes or
 * double quotes): the variable holds the name of a file or directory mktemp has just made, with
 * random letters in it, so it is no protected path (deleting or writing it is ordinary work), unless
 * `..` climbs out of it. Only a variable the line sets in no other way, and a mktemp given only
 * options whose meaning is known and a template without a slash, are taken so.
 */
const MKTEMP = /(?:^|[\s;&|({])(?:(?:local|export|readonly|declare|typeset)(?:\s+-[A-Za-z]+)*\s+)?([A-Za-z_][A-Za-z0-9_]*)=("?)(?:\$\(\s*mktemp((?:[ \t]+[^\s)$`;|&<>'"\\]+)*)\s*\)|`\s*mktemp((?:[ \t]+[^\s$`;|&<>'"\\]+)*)\s*`)\2(?=$|[\s;&|)])/g;

function temporaryVariables(command: string, changes: (name: string) => boolean, mentions: (text: string, name: string) => boolean): Map<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined> {
  const found = new Map<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined>();
  const matches = [...command.matchAll(MKTEMP)];
  for (const match of matches) {
    const name = match[1]!;
    if (found.has(name)) continue;
    const words = (match[3] ?? match[4] ?? "").trim().split(/[ \t]+/).filter((word) => word !== "");
    const made = mktempPath(words);
    if (made === undefined) continue;
    // Set in no other way: without the mktemp assignments, the line only expands it (an option
    // `-f` is not the variable `f`).
    const rest = matches.filter((other) => other[1] === name).reduceRight((text, other) => text.slice(0, other.index) + " " + text.slice(other.index + other[0].length), command);
    if (mentions(rest.replace(/['"\\]/g, "").replace(new RegExp(`(^|\\s)-+[A-Za-z0-9_]*\\b`, "g"), " "), name)) continue;
    found.set(name, made);
  }
  return found;
}

/**
 * The paths `mktemp WORDS` makes, given the temporary directory (TMPDIR; undefined when not known):
 * in `-p DIR` (`--tmpdir=DIR`), in the temporary directory without a template or with `-t`, and
 * otherwise in the working directory; named by the template with its Xs random, or `tmp.` and
 * random letters. Undefined for an option or template it does not know.
 */
function mktempPath(words: readonly string[]): ((tmpdir: string | undefined) => readonly PathToken[] | undefined) | undefined {
  let directory: string | undefined;
  let inTemporary = false;
  let template: string | undefined;
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (/^-[dqu]+$/.test(word) || ["--directory", "--quiet", "--dry-run"].includes(word)) continue;
    if (word === "-t" || word === "--tmpdir") inTemporary = true;
    else if (word === "-p" && words[index + 1] !== undefined) directory = words[++index];
    else if (word.startsWith("--tmpdir=")) directory = word.slice("--tmpdir=".length);
    else if (!word.startsWith("-") && template === undefined && !word.includes("/")) template = word;
    else return undefined;
  }
  if (directory !== undefined && (directory === "" || /[~*?[{]/.test(directory))) return undefined;
  const random: PathToken[] = [{ kind: "one" }, { kind: "one" }, { kind: "one" }];
  // A template's trailing Xs are random letters; without one, `tmp.` and at least six (GNU: ten, BSD: eight).
  const xs = template !== undefined ? (/X{3,}$/.exec(template)?.[0].length ?? 0) : 0;
  const name: PathToken[] =
    template === undefined
      ? [{ kind: "text", text: "tmp." }, ...random, ...random, { kind: "star" }]
      : xs > 0
        ? [...(xs < template.length ? [{ kind: "text" as const, text: template.slice(0, -xs) }] : []), ...Array.from({ length: xs }, (): PathToken => ({ kind: "one" }))]
        : // BSD's `-t PREFIX`: PREFIX, a dot and random letters.
          inTemporary
          ? [{ kind: "text", text: `${template}.` }, ...random, ...random, { kind: "star" }]
          : [];
  if (name.length === 0) return undefined;
  const inWorkingDirectory = directory === undefined && template !== undefined && !inTemporary;
  return (tmpdir) => {
    const base = directory !== undefined ? directory.replace(/\/+$/, "") : inWorkingDirectory ? "." : tmpdir?.replace(/\/+$/, "");
    if (base === undefined || /[*?[\]{}$`]/.test(base)) return undefined;
    return [{ kind: "text", text: `${base}/` }, ...name];
  };
}

/** Where the call's own event runs: where the call starts. */
const CALL: GroundedDirectory = { at: { ways: [[]], elsewhere: false } };

/**
 * The directories the commands of a call run in, one meaning with grounding's: grounding walks the
 * line in the order the shell runs it and says, for each command, each way of `cd`s the shell may
 * have taken to it from where the call starts (a `cd` that may have failed leaves both ways; a
 * subshell's `cd` ends with it), and whether it may be in a directory the line does not show
 * (`cd -`, `eval`, CDPATH, …). Here each way is read as the guard reads words: from the directory
 * the call starts in, each `cd`'s word with the variables the guard knows, `~` the home directory,
 * `..` climbed as written unless the `cd` is physical (`cd -P`, `set -P`). A way that does not lead
 * to one exact directory, a command that may be elsewhere, and an event grounding did not place
 * run in a directory not known (undefined). A command that may be elsewhere may also be wherever
 * a `cd` before it may have led (`eval "cd DIR"`, a function's `cd`).
 */
export class WorkingDirectories {
  /** Where a `cd` word leads from a directory, by the directory, the word and whether it is physical. */
  private readonly steps = new Map<string, string | undefined>();
  private readonly leads = new Set<string | undefined>();
  private readonly seen: Set<string | undefined>;
  /** By the event's index: where it may run, and where it may lead the shell (a `cd`). */
  private readonly byEvent = new Map<number, readonly (string | undefined)[]>();

  /** `start`: the absolute directory the call starts in; undefined when not known. */
  constructor(
    private readonly start: string | undefined,
    private readonly words: WordContext,
  ) {
    this.seen = new Set([start]);
  }

  /** The directories the call's event at `index` may run in (undefined among them: one not known); never none. */
  of(event: CallEvent, index: number): (string | undefined)[] {
    const directory = eventDirectory(event) ?? (index === 0 ? CALL : undefined);
    const found = this.resolve(directory?.at);
    if (directory?.at.elsewhere !== false) for (const lead of this.leads) found.add(lead);
    const leads = directory?.to !== undefined ? this.resolve(directory.to) : new Set<string | undefined>();
    for (const lead of leads) this.leads.add(lead);
    for (const cwd of found) this.seen.add(cwd);
    this.byEvent.set(index, [...found, ...leads]);
    return [...found];
  }

  /** Every directory the call's commands may run in so far, or its `cd`s lead to, and where it starts. */
  get all(): (string | undefined)[] {
    return [...new Set([...this.seen, ...this.leads])];
  }

  /** Where the shell may be from the event at `index` on: where it and the events after it may run, or lead. */
  from(index: number): (string | undefined)[] {
    const found = new Set<string | undefined>();
    for (const [at, cwds] of this.byEvent) if (at >= index) for (const cwd of cwds) found.add(cwd);
    return [...found];
  }

  private resolve(directories: CommandDirectories | undefined): Set<string | undefined> {
    const found = new Set<string | undefined>();
    for (const way of directories?.ways ?? []) {
      let cwd = this.start;
      for (const step of way) cwd = this.step(cwd, step.path, step.physical);
      found.add(cwd);
    }
    if (directories === undefined || directories.elsewhere || found.size === 0) found.add(undefined);
    return found;
  }

  /** Where `cd WORD` goes from `cwd`: an exact directory, or undefined when not known. */
  private step(cwd: string | undefined, word: string, physical: boolean): string | undefined {
    const key = `${cwd ?? ""}\u0000${physical ? "P" : "L"}\u0000${word}`;
    if (this.steps.has(key)) return this.steps.get(key);
    const to = exactOrUnknown(pathWord(word, cwd, { ...this.words, logical: !physical }));
    this.steps.set(key, to);
    return to;
  }
}

export function exactOrUnknown(word: PathWord): string | undefined {
  if (!word.exact) return undefined;
  return word.tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
}
