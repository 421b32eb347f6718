import { statSync } from "node:fs";
import { tmpdir } from "node:os";
import { isAbsolute, join, posix } from "node:path";
import type { CallEvent } from "./call-events.js";
import { positionalsOf, programOf } from "./guard-arguments.js";
import { ownEffects } from "./guard-effects.js";
import type { LineShell } from "./guard-line-shell.js";
import { LOOKUP_UNITS, mayBeIn, mayName, pathWord, realPath, spend } from "./guard-paths.js";
import type { Scope } from "./guard-scope.js";

/**
 * Which program a command runs, and whether it can be trusted to be the one its name says; and
 * the commands that change what a name runs for the rest of the line.
 */

/**
 * How the event changes what a command's name runs for the rest of the line (`hash -p /bin/rm ls`,
 * `alias ls=rm`, `enable -f lib.so rm`), or undefined.
 */
export function redefinition(event: CallEvent): string | undefined {
  const program = programOf(event);
  const words = positionalsOf(event.args);
  if (program === "hash" && event.args["p"] !== undefined) return "`hash -p`";
  if (program === "alias" && words.some((word) => word.includes("="))) return "`alias`";
  if (program === "enable" && words.length > 0) return "`enable`";
  return undefined;
}

/** Shell builtins: the shell runs them before it looks for a program of that name. */
const BUILTINS = new Set([
  "cd", "pushd", "popd", "dirs", "echo", "printf", "pwd", "test", "[", "read", "type", "command", "builtin", "hash", "true", "false", ":",
  "export", "unset", "local", "declare", "typeset", "readonly", "set", "shopt", "source", ".", "eval", "exec", "exit", "return", "shift",
  "break", "continue", "wait", "kill", "let", "trap", "alias", "unalias", "enable", "getopts", "mapfile", "readarray", "umask", "ulimit",
  "times", "jobs", "fg", "bg", "disown", "history", "help",
]);

/**
 * Whether programs are what their names say. A program the agent's user may have put there (in
 * the home directory, the project or a temporary directory: `./cat`, `~/.local/bin/cat` early on
 * PATH), or found while the line changes PATH or writes into one of its directories, may be any
 * program. Shell builtins, the system's programs and Vigil's own are what they say.
 */
export class Programs {
  private readonly places: readonly string[];
  private readonly path: readonly string[];
  private readonly anyName: boolean;
  private readonly found = new Map<string, string | undefined>();

  constructor(line: LineShell, homes: readonly string[], events: readonly CallEvent[], cwd: string | undefined, private readonly scope: Scope) {
    this.places = [...homes, ...(cwd !== undefined ? [cwd] : []), tmpdir(), "/tmp", "/var/tmp", "/dev/shm"].filter((place) => place !== "/" && place !== "");
    this.path = (process.env["PATH"] ?? "").split(":").filter((directory) => isAbsolute(directory));
    // The line changes PATH, or writes into a directory of it (`cp /bin/rm ~/.local/bin/cat`).
    const writes = events.slice(1).flatMap((event) => ownEffects(event).filter((effect) => ["write", "link", "move", "chmod"].includes(effect.effect)));
    this.anyName =
      line.changes("PATH") ||
      writes.some((effect) => effect.words.some((word) => this.path.some((directory) => mayBeIn(pathWord(word, cwd, scope.words), directory))));
  }

  trusted(event: CallEvent, cwds: readonly (string | undefined)[]): boolean {
    const written = event.action === "awk" ? "awk" : event.args["program"];
    if (typeof written !== "string" || !/^[A-Za-z0-9_./+-]+$/.test(written)) return true;
    if (!written.includes("/")) {
      if (BUILTINS.has(written)) return true;
      if (this.anyName) return false;
      const directory = this.directoryOf(written);
      // Vigil's own command is what it says wherever Vigil is installed: `vigilc` in the
      // `node_modules/.bin` of an install in the project, the home directory or a temporary one is
      // a protected path, which the agent cannot have put there. Where Vigil is installed is not
      // the call's, and must not change the answer.
      return directory === undefined || this.protectedProgram(join(directory, written)) || !this.userPlace(directory);
    }
    // A program named by its path: what is at that path now, unless the agent's user keeps it.
    return cwds.every((cwd) => {
      const path = pathWord(written, cwd, this.scope.words);
      if (!path.exact || path.real === undefined) return false;
      if (this.scope.entries.some((entry) => mayName(path, entry.path) || (entry.tree === true && mayBeIn(path, entry.path)))) return true;
      return !this.anyName && !this.userPlace(posix.dirname(path.real));
    });
  }

  /** Whether the program at `path` (found on PATH) is a protected one, by its path or where its links lead. */
  private protectedProgram(path: string): boolean {
    const real = realPath(path);
    return this.scope.entries.some((entry) => [path, real].some((candidate) => candidate === entry.path || (entry.tree === true && candidate.startsWith(`${entry.path}/`))));
  }

  private userPlace(directory: string): boolean {
    const real = realPath(directory);
    return this.places.some((place) => [directory, real].some((candidate) => candidate === place || candidate.startsWith(`${place}/`)));
  }

  /** The directory on PATH the shell would run `name` from, if any. */
  private directoryOf(name: string): string | undefined {
    if (this.found.has(name)) return this.found.get(name);
    const directory = this.path.find((candidate) => {
      spend(LOOKUP_UNITS);
      try {
        return statSync(join(candidate, name)).isFile();
      } catch {
        return false;
      }
    });
    this.found.set(name, directory);
    return directory;
  }
}
