import type { Diagnostic } from "@vigil/diagnostics";
import type { PathToken, WordContext } from "./guard-paths.js";
import type { ProtectedPath } from "./guard-protected.js";

/**
 * What one check of the guard knows besides the call's events: the call's context (its working
 * directory, its notes, its shell's environment) and the scope worked out from it.
 */

export interface GuardContext {
  /** The working directory the call runs in; undefined when not known. */
  readonly cwd?: string;
  /** What reading the call noted (T0011: a command line that does not parse; T0014: an argument cut). */
  readonly notes?: readonly Diagnostic[];
  /**
   * The environment the call's shell starts with, as far as it is known (the hook's own: Claude
   * Code starts both from its environment, and its Bash tool also sources a snapshot of the user's
   * login shell, which may set a variable differently): a variable the line does not set reads as
   * its value here (`> "$TMPDIR/x"`). A variable it does not hold stays unknown as a path; where
   * Bash evaluates it as code (`$((N))`), it is unset, and so harmless.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** What one check knows besides the event: the protected entries and how the shell reads words. */
export interface Scope {
  readonly entries: readonly ProtectedPath[];
  readonly words: WordContext;
  /** The files the command line opens for reading (`< FILE`): what `/dev/stdin` or `/dev/fd/N` may be. */
  readonly opened: readonly string[];
  /** The identities on disk of the protected files, when first needed (a hard link shares one). */
  identities?: Map<string, ProtectedPath>;
  /**
   * Whether what Git tracks and ignores may differ from what its files say now: the line changes
   * them (writes a `.gitignore` or into `.git`, `git rm`, `git config`…), or Git is pointed
   * elsewhere (`GIT_DIR`, `GIT_INDEX_FILE`, … on the line or in the environment, or not known).
   * Worked out when a Git command first asks.
   */
  readonly gitUnsettled: () => boolean;
}

/** How a shell reads a variable a command line does not set: its value, the paths it may be (as tokens), or undefined when not known. */
export type Variables = (name: string) => string | readonly PathToken[] | undefined;
