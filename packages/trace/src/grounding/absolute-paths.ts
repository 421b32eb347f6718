import type { JsonValue } from "../value.js";
import type { CommandDirectories, DirectoryStep, SimpleCommand } from "./parsed-line.js";

/**
 * The paths of grounded events made absolute against the working directory, where it is known:
 * the directory each command of a line works in (the line's, moved by the `cd`s before it), and
 * each path argument taken against it, written as the system would resolve it.
 */

/** The working directory of a command of a line that starts in `start`: undefined when not known. */
export function commandDirectory(start: string | undefined, command: SimpleCommand): string | undefined {
  if (command.directoryUnknown === true) return undefined;
  let directory = start;
  for (const step of command.cd ?? []) directory = changeDirectory(directory, step);
  return directory;
}

/** Where a line starts: one way, with no `cd` on it. */
export const lineStart: CommandDirectories = { ways: [[]], elsewhere: false };

/** Nothing is known of where a command runs. */
export const nowhereKnown: CommandDirectories = { ways: [], elsewhere: true };

/**
 * How many ways to a command's directory are kept (see {@link CommandDirectories}): past them, the
 * command may be elsewhere. A chain of `cd x; cd y; …` doubles them at each `cd`; the first ways
 * kept are those through the `cd`s that succeeded.
 */
export const maximumWays = 16;

/** Every directory a command of a line may run in, as ways from the line's start. */
export function commandDirectories(command: SimpleCommand): CommandDirectories {
  if (command.directoryUnknown !== true) return { ways: [command.cd ?? []], elsewhere: false };
  return command.directories ?? nowhereKnown;
}

/**
 * The directories of a command of a line that starts where `start` says (a script a command runs
 * starts where that command runs): each of its ways after each of the start's. Undefined `start`:
 * the line is the outermost one.
 */
export function directoriesFrom(start: CommandDirectories | undefined, directories: CommandDirectories): CommandDirectories {
  if (start === undefined) return directories;
  const ways = start.ways.flatMap((before) => directories.ways.map((way) => [...before, ...way]));
  // From a directory not known, a way that starts over (`cd /x`) still leads where it says.
  const unknownStart = start.elsewhere && directories.ways.some((way) => !way.some(startsOver));
  return someDirectories(ways, directories.elsewhere || unknownStart);
}

/** The directories after one more step from each way (a directory option: `env -C DIR`). */
export function directoriesThrough(directories: CommandDirectories, step: DirectoryStep): CommandDirectories {
  return someDirectories(
    directories.ways.map((way) => [...way, step]),
    directories.elsewhere && !startsOver(step),
  );
}

/**
 * Ways as kept: each from its last step that starts over (what came before it does not matter),
 * each once, at most {@link maximumWays} of them (past them, `elsewhere`).
 */
export function someDirectories(ways: readonly (readonly DirectoryStep[])[], elsewhere: boolean): CommandDirectories {
  const kept = new Map<string, readonly DirectoryStep[]>();
  let more = elsewhere;
  for (const way of ways) {
    let from = 0;
    way.forEach((step, index) => {
      if (startsOver(step)) from = index;
    });
    const trimmed = from === 0 ? way : way.slice(from);
    const key = JSON.stringify(trimmed);
    if (kept.has(key)) continue;
    if (kept.size === maximumWays) {
      more = true;
      break;
    }
    kept.set(key, trimmed);
  }
  return { ways: [...kept.values()], elsewhere: more };
}

/** A step to an absolute path (`/x`, or `~` when the shell expands it), whatever directory it starts from. */
function startsOver(step: DirectoryStep): boolean {
  return step.path.startsWith("/") || (step.unresolved === true && (step.path === "~" || step.path.startsWith("~/")));
}

/** Where `cd` goes: the path joined to the directory it starts from, `..` climbed as written unless physical. */
function changeDirectory(from: string | undefined, step: DirectoryStep): string | undefined {
  const joined = step.path.startsWith("/") ? step.path : from !== undefined ? `${from}/${step.path}` : undefined;
  return joined === undefined ? undefined : normalizePath(joined, !step.physical);
}

/**
 * An absolute path with `.` segments and repeated slashes removed; `..` is climbed as written only
 * when `logical` (as `cd` does), and otherwise kept, since the system climbs it from where a
 * symbolic link before it leads; `/..` is `/`. A final slash is kept.
 */
export function normalizePath(path: string, logical: boolean): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && (parts.length === 0 || (logical && parts[parts.length - 1] !== ".."))) {
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  const trailing = path.length > 1 && path.endsWith("/") && parts.length > 0;
  return `/${parts.join("/")}${trailing ? "/" : ""}`;
}

/**
 * A path argument taken against the working directory: a relative one is joined to it when it is
 * known; `.` segments and repeated slashes go; `..` stays (see {@link normalizePath}). What is not
 * a path on this machine, or not known as written, stays as it is: `-` (standard input), a word
 * starting with `~`, an expansion (`$…`, a backquote) or a brace (`{}` of `find -exec`), a
 * remote or URL form (a `:` before any `/`: `host:path`, `s3://…`), and `!`, `(`, `)`, `,` (the
 * syntax of `find`).
 */
export function pathArgument(value: string, cwd: string | undefined): string {
  if (value === "" || value === "-" || /^[~$`{]/.test(value) || /^[^/]*:/.test(value) || ["!", "(", ")", ","].includes(value)) return value;
  if (value.startsWith("/")) return normalizePath(value, false);
  return cwd !== undefined ? normalizePath(`${cwd}/${value}`, false) : value;
}

/** A path argument's value (a path, or a list of them) taken against `cwd`; `searched`: a name without a slash is looked up in PATH, and stays. */
export function pathValue(value: JsonValue, cwd: string | undefined, searched: boolean): JsonValue {
  const one = (text: string) => (searched && !text.includes("/") ? text : pathArgument(text, cwd));
  if (typeof value === "string") return one(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? one(item) : item));
  return value;
}

/** The directory a directory argument names, against the one it is given in; undefined when not known. */
export function pathDirectory(value: string, cwd: string | undefined): string | undefined {
  if (value.startsWith("/")) return normalizePath(value, false);
  if (cwd === undefined || /^[~$`{]/.test(value) || value === "") return undefined;
  return normalizePath(`${cwd}/${value}`, false);
}
