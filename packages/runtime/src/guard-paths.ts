import { realpathSync } from "node:fs";
import { posix } from "node:path";

/**
 * Shell words as path patterns, for the guard: what a word on a command line may name once the
 * shell has expanded it. Grounding keeps a word as written, with its quotes removed and its
 * expansions unexpanded (`"$HOME/x"`, `$(pwd)/y`, `*.db`), so the guard cannot know the path; it
 * knows the set of paths the word may become, and refuses when that set meets a protected path.
 *
 * A word is a list of tokens: literal text, a pathname-pattern character (`*`, `?`, `[…]`), which
 * never matches a `/` and never matches the leading `.` of a name (Bash without `dotglob`), and an
 * expansion (`$X`, `${X}`, `$(…)`, backquotes, a brace expansion `{a,b}`, `~user`), which may become
 * any text, slashes and dots included. A relative word is taken against the working directory, or,
 * where that is not known, against any directory. `.` and `..` are resolved where the segment
 * before them is known; after an unknown one the whole prefix is unknown.
 */

export type PathToken =
  | { readonly kind: "text"; readonly text: string }
  /** `*` of a pathname pattern: any characters but `/`. */
  | { readonly kind: "star" }
  /** `?` or a bracket expression: one character but `/`. */
  | { readonly kind: "one" }
  /** An expansion: any text at all. */
  | { readonly kind: "any" };

export interface PathWord {
  readonly tokens: readonly PathToken[];
  /** Whether the word is one path as written (no pattern, no expansion). */
  readonly exact: boolean;
  /** For an exact word, its path with symbolic links resolved as far as it exists. */
  readonly real?: string;
}

/** Words longer than this are not analysed: they may name anything. */
const LONGEST_WORD = 4096;

/**
 * The path a word names, against `cwd` (undefined: not known). `home` is `~`. `dotglob` makes a
 * pattern match leading dots too (an earlier `shopt -s dotglob` of the same command line).
 */
export function pathWord(word: string, cwd: string | undefined, home: string): PathWord {
  if (word.length > LONGEST_WORD) return { tokens: [{ kind: "any" }], exact: false };
  let tokens = wordTokens(word, home);
  const first = tokens[0];
  const absolute = first !== undefined && first.kind === "text" && first.text.startsWith("/");
  // A word that starts with an expansion may be absolute or relative; `any` covers both, since it
  // may also become the working directory and a slash.
  if (!absolute && first?.kind !== "any") tokens = cwd !== undefined ? [{ kind: "text", text: `${cwd}/` }, ...tokens] : [{ kind: "any" }, { kind: "text", text: "/" }, ...tokens];
  return wordOf(normalize(tokens));
}

function wordOf(tokens: PathToken[]): PathWord {
  if (!tokens.every((t) => t.kind === "text")) return { tokens, exact: false };
  const path = tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
  return { tokens, exact: true, real: realPath(path) };
}

/** The exact path of a word that has no pattern and no expansion. */
export function exactPath(word: PathWord): string | undefined {
  if (!word.exact) return undefined;
  return word.tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
}

/** The word `base/name`: what `cp x DIR` writes when DIR is a directory. */
export function childWord(base: PathWord, name: PathWord): PathWord {
  const last = lastSegment(name.tokens);
  return wordOf(normalize([...base.tokens, { kind: "text", text: "/" }, ...last]));
}

/** Whether the word may name `path` itself. */
export function mayName(word: PathWord, path: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) return exact === path || word.real === path;
  return matches(word.tokens, path, false);
}

/** Whether the word may name `path` or a directory that holds it. */
export function mayHold(word: PathWord, path: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) {
    return [exact, word.real ?? exact].some((candidate) => candidate === path || candidate === "/" || path.startsWith(`${candidate}/`));
  }
  return ancestorsOf(path).some((ancestor) => matches(word.tokens, ancestor, false));
}

/** Whether the word may name `tree` or something inside it. */
export function mayBeIn(word: PathWord, tree: string): boolean {
  const exact = exactPath(word);
  if (exact !== undefined) return [exact, word.real ?? exact].some((candidate) => candidate === tree || candidate.startsWith(`${tree}/`));
  return matches(word.tokens, tree, false) || matches(word.tokens, `${tree}/`, true);
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
 * rest appended.
 */
export function realPath(path: string): string {
  let prefix = path;
  const rest: string[] = [];
  for (let depth = 0; depth < 256; depth++) {
    try {
      const real = realpathSync(prefix);
      return rest.length === 0 ? real : posix.join(real, ...rest.reverse());
    } catch {
      if (prefix === "/" || prefix === "" || prefix === ".") return path;
      rest.push(posix.basename(prefix));
      prefix = posix.dirname(prefix);
    }
  }
  return path;
}

function wordTokens(word: string, home: string): PathToken[] {
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
  let index = 0;
  if (word === "~" || word.startsWith("~/")) {
    text = home;
    index = 1;
  } else if (/^~[A-Za-z0-9._-]/.test(word)) {
    // `~user`: another user's home directory.
    push({ kind: "any" });
    index = word.search(/\/|$/);
  }
  while (index < word.length) {
    const char = word[index]!;
    if (char === "$") {
      const end = expansionEnd(word, index);
      if (end > index + 1) {
        push({ kind: "any" });
        index = end;
        continue;
      }
    } else if (char === "`") {
      const end = word.indexOf("`", index + 1);
      push({ kind: "any" });
      index = end < 0 ? word.length : end + 1;
      continue;
    } else if (char === "*") {
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

/** The tokens as segments between slashes, `.` and `..` resolved where the segment before is known. */
function normalize(tokens: readonly PathToken[]): PathToken[] {
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
  const kept: PathToken[][] = rooted ? [] : [segments[0]!];
  for (const segment of segments.slice(1)) {
    const only = segment.length === 1 ? segment[0] : undefined;
    const single = only?.kind === "text" ? only.text : undefined;
    if (segment.length === 0 || single === ".") continue;
    if (single === "..") {
      const previous = kept[kept.length - 1];
      if (previous !== undefined && previous.every((t) => t.kind === "text")) kept.pop();
      else if (previous !== undefined || !rooted) {
        // What `..` climbs out of is not known: any prefix.
        kept.length = 0;
        kept.push([{ kind: "any" }]);
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
 * Whether the tokens match `path` whole (`prefix`: match a prefix of some string that starts
 * with `path`, i.e. all of `path` is consumed with tokens possibly left). Dynamic programming over
 * (token, character): time proportional to their product, no backtracking.
 */
function matches(tokens: readonly PathToken[], path: string, prefix: boolean): boolean {
  // Split text tokens into characters for a uniform step; words are bounded by LONGEST_WORD.
  const steps: ({ kind: "char"; char: string } | { kind: "star" } | { kind: "one" } | { kind: "any" })[] = [];
  /** Per step: whether it starts a path segment (a pattern there cannot match a leading dot). */
  const segmentStart: boolean[] = [];
  let previousChar: string | undefined = undefined;
  for (const token of tokens) {
    if (token.kind === "text") {
      for (const char of token.text) {
        steps.push({ kind: "char", char });
        segmentStart.push(false);
        previousChar = char;
      }
    } else {
      steps.push(token);
      segmentStart.push(previousChar === undefined || previousChar === "/");
      previousChar = "x";
    }
  }
  const n = path.length;
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
      const dotBarred = step.kind !== "char" && segmentStart[s] === true && path[j] === "." && (j === 0 || path[j - 1] === "/");
      switch (step.kind) {
        case "char":
          if (path[j] === step.char) next[j + 1] = 1;
          break;
        case "one":
          if (!dotBarred && j < n && path[j] !== "/") next[j + 1] = 1;
          break;
        case "star": {
          if (dotBarred) break;
          next[j] = 1;
          for (let k = j; k < n && path[k] !== "/"; k++) next[k + 1] = 1;
          break;
        }
      }
    }
    current = next;
    if (prefix && current[n] === 1) return true;
  }
  return current[n] === 1;
}
