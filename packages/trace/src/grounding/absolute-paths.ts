import type { JsonValue } from "../value.js";
import type { DirectoryStep, SimpleCommand } from "./parsed-line.js";

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
