import { realpathSync, statSync } from "node:fs";
import { posix } from "node:path";

/**
 * Shell words as path patterns, for the guard: what a word on a command line may name once the
 * shell has expanded it. Grounding keeps a word as written, with its quotes removed and its
 * expansions unexpanded (`"$HOME/x"`, `$(pwd)/y`, `*.db`), so the guard cannot know the path; it
 * knows the set of paths the word may become, and refuses when that set meets a protected path.
 *
 * A word is a list of tokens: literal text, a pathname-pattern character (`*`, `?`, `[…]`), which
 * never matches a `/` and never matches the leading `.` of a name (Bash without `dotglob`), an
 * extended pattern (`@(…)`, `!(…)`), which may match any name, and an expansion (`$X`, `${X}`,
 * `$(…)`, backquotes, a brace expansion `{a,b}`, `~user`), which may become any text, slashes and
 * dots included. What the guard knows of the shell is kept: `~` and `$HOME` are the home directory,
 * `$PWD`, `$(pwd)` and `~+` the working directory, unless the command line may change them. A
 * relative word is taken against the working directory, or, where that is not known, against any
 * directory. `.` and `..` are resolved where the segment before them is known, and `..` as the
 * system resolves it: from where a symbolic link before it leads (`link/../x`). After an unknown
 * segment the whole prefix is unknown.
 */

export type PathToken =
  | { readonly kind: "text"; readonly text: string }
  /** `*` of a pathname pattern: any characters but `/`. */
  | { readonly kind: "star" }
  /** `?` or a bracket expression: one character but `/`. */
  | { readonly kind: "one" }
  /** An extended pattern (`@(…)`, `!(…)`, `*(…)`): any characters but `/`, a leading dot included. */
  | { readonly kind: "name" }
  /** An expansion: any text at all. */
  | { readonly kind: "any" };

/** What is known of the shell that reads the words. */
export interface WordContext {
  /** `~` and `$HOME`; undefined when not known (the command line may set `HOME`). */
  readonly home?: string;
  /** Whether `$PWD`, `$(pwd)` and `~+` are the working directory (the line does not redefine them). */
  readonly knownPwd?: boolean;
  /**
   * The value of a variable the line does not set, when the shell's environment is known to hold
   * it; or, for one the line sets only to what a program makes (`tmp=$(mktemp)`), the paths it may
   * be, as tokens.
   */
  readonly variable?: (name: string) => string | readonly PathToken[] | undefined;
  /** Patterns match names that start with a dot too (`shopt -s dotglob`, `GLOBIGNORE`). */
  readonly dotglob?: boolean;
  /** Patterns match whatever the case (`shopt -s nocaseglob`). */
  readonly nocaseglob?: boolean;
  /** `..` is taken textually, as `cd` takes it (without `-P`), not through symbolic links. */
  readonly logical?: boolean;
  /**
   * Whether the command line may make or move a link at this path (`ln -s DIR x; rm x/../f`): where
   * it leads is then not known from the disk, so what `..` after it climbs out of is not known.
   */
  readonly linked?: (path: string) => boolean;
}

export interface PathWord {
  readonly tokens: readonly PathToken[];
  /** Whether the word is one path as written (no pattern, no expansion). */
  readonly exact: boolean;
  /** For an exact word, its path with symbolic links resolved as far as it exists. */
  readonly real?: string;
  /** The word's patterns match leading dots, or whatever the case. */
  readonly dotglob?: boolean;
  readonly nocase?: boolean;
  /**
   * The word names one of the command's open files (`/dev/stdin`, `/dev/fd/3`, `/proc/self/fd/3`):
   * opening it opens again whatever file the command line opened there (`< FILE`), for writing too.
   */
  readonly descriptor?: boolean;
}

/**
 * The work of the guard's check under way, counted rather than timed: whether a call fits within
 * the guard's budget depends on the call, the protected paths and the files on disk, never on how
 * busy the machine is. One unit is one step of the pattern matcher (a character of a path against
 * one token of a word), or one character of a path compared with an exact word or read from a
 * word. Other work is counted as the units it takes about as long as: a look at the disk
 * ({@link LOOKUP_UNITS}), a text scanned for a protected path, a nested command line parsed (the
 * guard's own). The work is counted where it is done, before it is done, so a check refused for its
 * size stops there. Nothing cached across checks is counted, so that one check does not change
 * what the next one spends.
 */
interface Work {
  spent: number;
  readonly limit: number;
}

/** The check's work so far; undefined outside a check (the guard's own setup is not counted). */
let work: Work | undefined;

/** What one look at the disk counts as (a `realpath` step, a `stat`): a few microseconds, as many steps of the matcher. */
export const LOOKUP_UNITS = 2_000;

/** Thrown where the work is done once the check under way has spent its budget. */
export class WorkBudgetExceeded extends Error {
  constructor(readonly limit: number) {
    super(`the guard's check needs more than ${limit} units of work`);
  }
}

/**
 * Runs a check with `limit` units of work to spend, and gives what it found with the units spent.
 * Checks are synchronous, so one count at a time is enough; an enclosing count is put back after.
 */
export function withinWork<T>(limit: number, check: () => T): { result: T; spent: number } {
  const outer = work;
  const current: Work = { spent: 0, limit };
  work = current;
  try {
    return { result: check(), spent: current.spent };
  } finally {
    work = outer;
  }
}

/** Counts `units` of work against the check under way; past its budget, it is refused here. */
export function spend(units: number): void {
  if (work === undefined) return;
  work.spent += units;
  if (work.spent > work.limit) throw new WorkBudgetExceeded(work.limit);
}

/** Words longer than this are not analysed: they may name anything. */
const LONGEST_WORD = 4096;

const ANY: PathWord = { tokens: [{ kind: "any" }], exact: false };

/**
 * Paths that name a file the command itself has open: its descriptors. The system opens the file
 * behind them anew, so `> /dev/stdin < FILE` writes FILE.
 */
const DESCRIPTOR = /^\/(dev\/(fd|stdin|stdout|stderr)|proc\/[^/]+\/fd)(\/|$)/;

/** `/proc/self/cwd`: the directory the command runs in, not the guard's. */
const SELF_DIRECTORY = /^\/proc\/(self|thread-self)\/cwd(?=\/|$)/;

/** The path a word names, against `cwd` (undefined: not known). */
export function pathWord(word: string, cwd: string | undefined, context: WordContext = {}): PathWord {
  if (word.length > LONGEST_WORD) return ANY;
  spend(word.length + (cwd?.length ?? 0));
  let tokens = wordTokens(word, cwd, context);
  const first = tokens[0];
  const absolute = first !== undefined && first.kind === "text" && first.text.startsWith("/");
  // A word that starts with an expansion may be absolute or relative; `any` covers both, since it
  // may also become the working directory and a slash.
  if (!absolute && first?.kind !== "any") tokens = cwd !== undefined ? [{ kind: "text", text: `${cwd}/` }, ...tokens] : [{ kind: "any" }, { kind: "text", text: "/" }, ...tokens];
  tokens = fromSelfDirectory(tokens, cwd);
  const normal = normalize(tokens, context.logical === true ? "logical" : "physical", context.linked);
  const head = normal[0];
  // Patterns over /proc may name any file a process has open, or the directory it runs in.
  if (head?.kind === "text" && /^\/proc(\/|$)/.test(head.text) && !normal.every((t) => t.kind === "text")) return ANY;
  return wordOf(normal, { ...(context.dotglob === true ? { dotglob: true } : {}), ...(context.nocaseglob === true ? { nocase: true } : {}) });
}

/** `/proc/self/cwd/x` is `x` in the command's working directory. */
function fromSelfDirectory(tokens: PathToken[], cwd: string | undefined): PathToken[] {
  const head = tokens[0];
  if (head?.kind !== "text" || !SELF_DIRECTORY.test(head.text)) return tokens;
  const rest = head.text.replace(SELF_DIRECTORY, "");
  const base: PathToken[] = cwd !== undefined ? [{ kind: "text", text: cwd }] : [{ kind: "any" }];
  return [...base, ...(rest !== "" ? [{ kind: "text" as const, text: rest }] : []), ...tokens.slice(1)];
}

function wordOf(tokens: PathToken[], flags: { dotglob?: boolean; nocase?: boolean }): PathWord {
  if (!tokens.every((t) => t.kind === "text")) return { tokens, exact: false, ...flags };
  const path = tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
  const real = realPath(path);
  if (DESCRIPTOR.test(path) || DESCRIPTOR.test(real)) return { ...ANY, descriptor: true };
  return { tokens, exact: true, real };
}

/** The exact path of a word that has no pattern and no expansion. */
export function exactPath(word: PathWord): string | undefined {
  if (!word.exact) return undefined;
  return word.tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
}

/** The word `base/name`: what `cp x DIR` writes when DIR is a directory. */
export function childWord(base: PathWord, name: PathWord): PathWord {
  if (base.descriptor === true) return base;
  const last = lastSegment(name.tokens);
  return wordOf(normalize([...base.tokens, { kind: "text", text: "/" }, ...last], "logical"), { ...(base.dotglob === true ? { dotglob: true } : {}), ...(base.nocase === true ? { nocase: true } : {}) });
}

/** Whether the word may name `path` itself. */
export function mayName(word: PathWord, path: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) {
    spend(path.length);
    return exact === path || word.real === path;
  }
  return matches(word, path, false);
}

/** Whether the word may name `path` or a directory that holds it. */
export function mayHold(word: PathWord, path: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) {
    spend(path.length);
    return [exact, word.real ?? exact].some((candidate) => candidate === path || candidate === "/" || path.startsWith(`${candidate}/`));
  }
  return ancestorsOf(path).some((ancestor) => matches(word, ancestor, false));
}

/** Whether the word may name `tree` or something inside it. */
export function mayBeIn(word: PathWord, tree: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) {
    spend(tree.length);
    return [exact, word.real ?? exact].some((candidate) => candidate === tree || candidate.startsWith(`${tree}/`));
  }
  return matches(word, tree, false) || matches(word, `${tree}/`, true);
}

/** `path` and the directories that hold it, the root last. */
export function ancestorsOf(path: string): string[] {
  const found = [path];
  let current = path;
  while (current !== "/" && current !== "") {
    current = posix.dirname(current);
    found.push(current);
  }
  return found;
}

/**
 * The path with symbolic links resolved as far as it exists (`link/x` where `link` points into a
 * protected directory names the protected file): the longest existing prefix is resolved and the
 * rest appended. The system's own resolution is used, which on a file system that ignores case
 * (macOS) also gives the name's case on disk: `.VIGIL/Audit.db` is `.vigil/audit.db` there.
 */
export function realPath(path: string): string {
  let prefix = path;
  const rest: string[] = [];
  for (let depth = 0; depth < 256; depth++) {
    spend(LOOKUP_UNITS);
    try {
      const real = realpathSync.native(prefix);
      return rest.length === 0 ? real : posix.join(real, ...rest.reverse());
    } catch {
      if (prefix === "/" || prefix === "" || prefix === ".") return path;
      rest.push(posix.basename(prefix));
      prefix = posix.dirname(prefix);
    }
  }
  return path;
}

/**
 * A file's identity on disk (its device and inode) when it is a regular file that has other names:
 * a hard link made earlier (`cp -l DB /tmp/x`) writes the protected file under another name.
 */
export function sharedFileIdentity(path: string): string | undefined {
  spend(LOOKUP_UNITS);
  try {
    const stat = statSync(path);
    return stat.isFile() && stat.nlink > 1 ? `${stat.dev}:${stat.ino}` : undefined;
  } catch {
    return undefined;
  }
}

/** A regular file's identity on disk, to compare with {@link sharedFileIdentity}. */
export function fileIdentity(path: string): string | undefined {
  spend(LOOKUP_UNITS);
  try {
    const stat = statSync(path);
    return stat.isFile() ? `${stat.dev}:${stat.ino}` : undefined;
  } catch {
    return undefined;
  }
}

function wordTokens(word: string, cwd: string | undefined, context: WordContext): PathToken[] {
  const tokens: PathToken[] = [];
  let text = "";
  const flush = () => {
    if (text !== "") tokens.push({ kind: "text", text });
    text = "";
  };
  const push = (token: PathToken) => {
    flush();
    const previous = tokens[tokens.length - 1];
    // Two expansions in a row are one: keeps the patterns small.
    if (token.kind === "any" && previous?.kind === "any") return;
    tokens.push(token);
  };
  const home = context.home;
  const pwd = context.knownPwd === true ? cwd : undefined;
  let index = 0;
  if (word === "~" || word.startsWith("~/")) {
    if (home !== undefined) text = home;
    else push({ kind: "any" });
    index = 1;
  } else if (word === "~+" || word.startsWith("~+/")) {
    // `~+` is `$PWD`.
    if (pwd !== undefined) text = pwd;
    else push({ kind: "any" });
    index = 2;
  } else if (/^~[^/]/.test(word)) {
    // `~user` (another user's home directory), `~-` (`$OLDPWD`), `~2` (the directory stack).
    push({ kind: "any" });
    index = word.search(/\/|$/);
  }
  while (index < word.length) {
    const char = word[index]!;
    if (char === "$") {
      const end = expansionEnd(word, index);
      if (end > index + 1) {
        const written = word.slice(index, end);
        // `$X`, `${X}`, and `${X:?message}`, `${X:-default}`, `${X:=default}`, which are X's value when it is set and not empty.
        const name = /^\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=?][^}]*)?\}|([A-Za-z_][A-Za-z0-9_]*))$/.exec(written);
        const known = name !== null ? context.variable?.(name[1] ?? name[2]!) : undefined;
        if (home !== undefined && (written === "$HOME" || written === "${HOME}")) text += home;
        else if (pwd !== undefined && (written === "$PWD" || written === "${PWD}" || written === "$(pwd)")) text += pwd;
        else if (typeof known === "object") {
          for (const token of known) {
            if (token.kind === "text") text += token.text;
            else push(token);
          }
        }
        // A value from the environment is its text; one holding pattern characters stays unknown
        // (unquoted, the shell would expand them).
        else if (known !== undefined && known !== "" && !/[*?[\]{}$`]/.test(known)) text += known;
        else push({ kind: "any" });
        index = end;
        continue;
      }
    } else if (char === "`") {
      const end = word.indexOf("`", index + 1);
      if (pwd !== undefined && word.slice(index, end + 1) === "`pwd`") text += pwd;
      else push({ kind: "any" });
      index = end < 0 ? word.length : end + 1;
      continue;
    } else if ("?*+@!".includes(char) && word[index + 1] === "(") {
      // An extended pattern (Bash's `extglob`): `@(a|b)`, `!(x)`, `*(…)`, `+(…)`, `?(…)`.
      const end = groupEnd(word, index + 1);
      if (end > 0) {
        push(word.slice(index + 2, end).includes("/") ? { kind: "any" } : { kind: "name" });
        index = end + 1;
        continue;
      }
    }
    if (char === "*") {
      push({ kind: "star" });
      index++;
      continue;
    } else if (char === "?") {
      push({ kind: "one" });
      index++;
      continue;
    } else if (char === "[") {
      const end = word.indexOf("]", index + 2);
      if (end > 0) {
        push({ kind: "one" });
        index = end + 1;
        continue;
      }
    } else if (char === "{") {
      const end = braceEnd(word, index);
      if (end > 0) {
        push({ kind: "any" });
        index = end + 1;
        continue;
      }
    }
    text += char;
    index++;
  }
  flush();
  return tokens;
}

/** The end of a parameter expansion or a substitution starting with `$` at `start` (start + 1 when none). */
function expansionEnd(word: string, start: number): number {
  const next = word[start + 1];
  if (next === "{" || next === "(") {
    const close = next === "{" ? "}" : ")";
    let depth = 0;
    for (let index = start + 1; index < word.length; index++) {
      if (word[index] === next) depth++;
      else if (word[index] === close && --depth === 0) return index + 1;
    }
    return word.length;
  }
  if (next !== undefined && /[A-Za-z_]/.test(next)) {
    let index = start + 1;
    while (index < word.length && /[A-Za-z0-9_]/.test(word[index]!)) index++;
    return index;
  }
  if (next !== undefined && /[@*#?$!0-9-]/.test(next)) return start + 2;
  return start + 1;
}

/** The `)` closing the group opened at `start`, or -1. */
function groupEnd(word: string, start: number): number {
  let depth = 0;
  for (let index = start; index < word.length; index++) {
    if (word[index] === "(") depth++;
    else if (word[index] === ")" && --depth === 0) return index;
  }
  return -1;
}

/** The `}` closing a brace expansion (`{a,b}`, `{1..3}`) at `start`, or -1 when it is not one. */
function braceEnd(word: string, start: number): number {
  let depth = 0;
  let list = false;
  for (let index = start; index < word.length; index++) {
    const char = word[index]!;
    if (char === "{") depth++;
    else if (char === "}" && --depth === 0) return list ? index : -1;
    else if (depth === 1 && (char === "," || (char === "." && word[index + 1] === "."))) list = true;
  }
  return -1;
}

/**
 * The tokens as segments between slashes, `.` and `..` resolved where the segment before is known.
 * `..` climbs out of where the path so far really is (`physical`: through a symbolic link, as the
 * system resolves it), or out of the path as written (`logical`: as `cd` does); out of a path the
 * command line may make a link at (`linked`), it climbs out of what is not known.
 */
function normalize(tokens: readonly PathToken[], climb: "physical" | "logical", linked?: (path: string) => boolean): PathToken[] {
  const segments: PathToken[][] = [[]];
  for (const token of tokens) {
    if (token.kind !== "text") {
      segments[segments.length - 1]!.push(token);
      continue;
    }
    const parts = token.text.split("/");
    parts.forEach((part, index) => {
      if (index > 0) segments.push([]);
      if (part !== "") segments[segments.length - 1]!.push({ kind: "text", text: part });
    });
  }
  // segments[0] is what precedes the first slash: empty for an absolute path.
  const rooted = segments[0]!.length === 0;
  let kept: PathToken[][] = rooted ? [] : [segments[0]!];
  const known = (segment: readonly PathToken[]) => segment.every((t) => t.kind === "text");
  for (const segment of segments.slice(1)) {
    const only = segment.length === 1 ? segment[0] : undefined;
    const single = only?.kind === "text" ? only.text : undefined;
    if (segment.length === 0 || single === ".") continue;
    if (single === "..") {
      const written = `/${kept.map((s) => s.map((t) => (t.kind === "text" ? t.text : "")).join("")).join("/")}`;
      if (rooted && kept.every(known) && (climb === "logical" || kept.length === 0 || linked === undefined || !linked(written))) {
        if (climb === "physical" && kept.length > 0) {
          const real = realPath(written);
          if (real !== written) kept = real.split("/").filter((part) => part !== "").map((part) => [{ kind: "text", text: part }]);
        }
        kept.pop();
      } else {
        // What `..` climbs out of is not known (a name before it may be a symbolic link): any prefix.
        kept = [[{ kind: "any" }]];
      }
      continue;
    }
    kept.push(segment);
  }
  const result: PathToken[] = [];
  const text = (value: string) => {
    const last = result[result.length - 1];
    if (last?.kind === "text") result[result.length - 1] = { kind: "text", text: last.text + value };
    else result.push({ kind: "text", text: value });
  };
  kept.forEach((segment, index) => {
    if (rooted || index > 0) text("/");
    for (const token of segment) {
      if (token.kind === "text") text(token.text);
      else if (!(token.kind === "any" && result[result.length - 1]?.kind === "any")) result.push(token);
    }
  });
  if (result.length === 0) text("/");
  return result;
}

function lastSegment(tokens: readonly PathToken[]): PathToken[] {
  for (let index = tokens.length - 1; index >= 0; index--) {
    const token = tokens[index]!;
    if (token.kind === "any") return tokens.slice(index);
    if (token.kind === "text") {
      const slash = token.text.lastIndexOf("/");
      if (slash >= 0) {
        const head: PathToken = { kind: "text", text: token.text.slice(slash + 1) };
        return [head, ...tokens.slice(index + 1)].filter((t) => t.kind !== "text" || t.text !== "");
      }
    }
  }
  return [...tokens];
}

/**
 * Whether the word's tokens match `path` whole (`prefix`: match a prefix of some string that
 * starts with `path`, i.e. all of `path` is consumed with tokens possibly left). Dynamic
 * programming over (token, character): time proportional to their product, no backtracking.
 */
function matches(word: PathWord, path: string, prefix: boolean): boolean {
  const nocase = word.nocase === true;
  const subject = nocase ? path.toLowerCase() : path;
  // Split text tokens into characters for a uniform step; words are bounded by LONGEST_WORD.
  const steps: ({ kind: "char"; char: string } | { kind: "star" } | { kind: "one" } | { kind: "name" } | { kind: "any" })[] = [];
  /** Per step: whether it starts a path segment (a pattern there cannot match a leading dot). */
  const segmentStart: boolean[] = [];
  let previousChar: string | undefined = undefined;
  for (const token of word.tokens) {
    if (token.kind === "text") {
      for (const char of token.text) {
        steps.push({ kind: "char", char: nocase ? char.toLowerCase() : char });
        segmentStart.push(false);
        previousChar = char;
      }
    } else {
      steps.push(token);
      segmentStart.push(word.dotglob !== true && (previousChar === undefined || previousChar === "/"));
      previousChar = "x";
    }
  }
  const n = subject.length;
  // The matcher's work is its table: a step of the word against each character of the path.
  spend(steps.length * (n + 1));
  let current = new Uint8Array(n + 1);
  current[0] = 1;
  for (let s = 0; s < steps.length; s++) {
    const step = steps[s]!;
    const next = new Uint8Array(n + 1);
    if (step.kind === "any") {
      // Any text: every end at or after the first reachable start.
      const first = current.indexOf(1);
      if (first >= 0) next.fill(1, first);
      current = next;
      if (prefix && current[n] === 1) return true;
      continue;
    }
    for (let j = 0; j <= n; j++) {
      if (current[j] === 0) continue;
      const dotBarred = (step.kind === "star" || step.kind === "one") && segmentStart[s] === true && subject[j] === "." && (j === 0 || subject[j - 1] === "/");
      switch (step.kind) {
        case "char":
          if (subject[j] === step.char) next[j + 1] = 1;
          break;
        case "one":
          if (!dotBarred && j < n && subject[j] !== "/") next[j + 1] = 1;
          break;
        case "star":
        case "name": {
          if (dotBarred) break;
          next[j] = 1;
          for (let k = j; k < n && subject[k] !== "/"; k++) next[k + 1] = 1;
          break;
        }
      }
    }
    current = next;
    if (prefix && current[n] === 1) return true;
  }
  return current[n] === 1;
}
