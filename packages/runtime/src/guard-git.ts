import { lstatSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { CallEvent } from "./call-events.js";
import { positionalsOf, strings } from "./guard-arguments.js";
import { ownEffects } from "./guard-effects.js";
import { gitIgnores, gitMayBeRevision, gitRepository, gitTrackedAt, gitTrackedPaths, gitUnchanged, type GitRepository } from "./guard-git-repository.js";
import type { LineShell } from "./guard-line-shell.js";
import { exactPath, LOOKUP_UNITS, pathWord, spend, type WordContext } from "./guard-paths.js";
import type { ProtectedPath } from "./guard-protected.js";
import type { GuardContext, Scope } from "./guard-scope.js";

/**
 * Git's commands over a whole tree, read against the repository: whether what Git tracks and
 * ignores may change on the line, and what of the protected paths a `git clean`, `git checkout`,
 * `git restore` or `git stash` leaves alone.
 */

/** Variables that point Git at another repository, index or configuration than its files in the working tree say. */
const GIT_ENVIRONMENT = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_NAMESPACE"];

/** Git commands that change which files the index tracks, or Git's configuration, other than from history. */
const GIT_INDEX_CHANGES = new Set(["git rm", "git update-index", "git read-tree", "git config", "git sparse-checkout", "git submodule", "git worktree", "git init", "git clone"]);

/** See {@link Scope.gitUnsettled}. */
export function gitMayChange(events: readonly CallEvent[], context: GuardContext, line: LineShell, words: WordContext): boolean {
  const env = context.env;
  if (env === undefined || GIT_ENVIRONMENT.some((name) => line.changes(name) || env[name] !== undefined)) return true;
  return events.slice(1).some((event) => {
    if (GIT_INDEX_CHANGES.has(event.action)) return true;
    return ownEffects(event).some(
      (effect) =>
        effect.effect !== "read" &&
        effect.effect !== "use" &&
        effect.words.some((word) => {
          const path = pathWord(word, context.cwd, words);
          const exact = exactPath(path);
          // A pattern or an expansion may be a `.gitignore`, unless it cannot hold `.git`.
          if (exact === undefined) return path.tokens.some((token) => token.kind === "any" || (token.kind === "text" && token.text.includes(".git")));
          return /(^|\/)\.git(ignore)?(\/|$)/.test(exact) || /(^|\/)\.git\//.test(path.real ?? "");
        }),
    );
  });
}

/**
 * What of the protected paths a Git command that deletes or rewrites a tree leaves alone, read
 * from the repository the command runs in, or undefined when nothing is known to be spared:
 *
 * - `git clean` deletes untracked files that are not ignored; `-x` ignored ones too, `-X` only
 *   those: a file the index tracks is spared, and, without `-x` or `-X`, a file or directory the
 *   repository's ignore rules ignore (`.vigil/` in `.gitignore`). `git stash -u` (`--all`) takes
 *   away untracked files as `git clean -d` (`-x`) deletes them.
 * - `git checkout -- PATH` and `git restore PATH` rewrite tracked files that changed from the
 *   index: a path with no tracked file at or under it, or none that changed since the index saw
 *   it, is spared. From a commit (`git checkout main -- .`, `--source`), nothing is.
 *
 * Everything outside the repository's working tree is spared. Nothing is when there is no
 * repository to read (Git may be pointed at one: see {@link Scope.gitUnsettled}), or the line may
 * change what Git tracks or ignores.
 */
export function gitSpares(event: CallEvent, cwd: string | undefined, scope: Scope): ((entry: ProtectedPath) => boolean) | undefined {
  const action = event.action;
  if (!["git clean", "git checkout", "git restore", "git stash"].includes(action) || cwd === undefined || scope.gitUnsettled()) return undefined;
  const a = event.args;
  if (["config", "git_dir", "work_tree", "namespace", "exec_path"].some((key) => a[key] !== undefined)) return undefined;
  const repository = gitRepository(cwd);
  if (repository === undefined) return undefined;
  const config = readRepositoryConfig(repository);
  if (/^\s*worktree\s*=/im.test(config)) return undefined;
  const index = gitTrackedPaths(repository);
  const outside = (entry: ProtectedPath) => !entry.path.startsWith(`${repository.root}/`);
  const isTracked = (entry: ProtectedPath) => index !== undefined && entry.tree !== true && gitTrackedAt(index, entry.path, false).length > 0;
  if (action === "git clean" || action === "git stash") {
    const all = action === "git clean" ? a["x"] === true : a["all"] === true || a["a"] === true;
    const onlyIgnored = action === "git clean" && (a["X"] !== undefined || a["strategy_option"] !== undefined);
    // What does not exist is not deleted (Claude Code's settings of a directory that has none).
    return (entry) => outside(entry) || !exists(entry.path) || isTracked(entry) || (!all && !onlyIgnored && gitIgnores(repository, entry.path, entry.tree === true || isDirectory(entry.path)));
  }
  // `git checkout` and `git restore`: from the index, unless a commit is named.
  if (action === "git restore" && ["source", "s", "staged", "S"].some((key) => a[key] !== undefined)) return undefined;
  const words = [...strings(a["target"]), ...positionalsOf(a)];
  if (words.some((word) => gitMayBeRevision(repository, word))) return undefined;
  if (index === undefined) return (entry) => outside(entry);
  // A tracked file as the index has it is rewritten with what it holds: left as it is.
  return (entry) => outside(entry) || gitTrackedAt(index, entry.path, entry.tree === true).every((path) => gitUnchanged(index, path));
}

function readRepositoryConfig(repository: GitRepository): string {
  spend(LOOKUP_UNITS);
  try {
    return readFileSync(join(repository.commonDir, "config"), "utf8");
  } catch {
    return "";
  }
}

function exists(path: string): boolean {
  spend(LOOKUP_UNITS);
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  spend(LOOKUP_UNITS);
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}
