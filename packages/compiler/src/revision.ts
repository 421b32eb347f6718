import { execFile } from "node:child_process";
import { basename, dirname, resolve } from "node:path";

/** A file's text at a git revision, or why it could not be read. */
export type FileAtRevision = { readonly ok: true; readonly text: string } | { readonly ok: false; readonly reason: string };

/**
 * The text of a file at a git revision (a commit, a branch, `HEAD`): `git show REV:./NAME` run in
 * the file's folder, so the path is resolved in the repository that holds the file, wherever the
 * caller runs. Never throws: a file outside a repository, a revision that does not exist, a file
 * not committed at it, or a missing `git` are each a reason in git's words.
 */
export function readFileAtRevision(file: string, revision: string, options: { readonly timeoutMs?: number } = {}): Promise<FileAtRevision> {
  const path = resolve(file);
  return new Promise((done) => {
    execFile(
      "git",
      ["-C", dirname(path), "show", `${revision}:./${basename(path)}`],
      { encoding: "utf8", maxBuffer: 64 * 2 ** 20, timeout: options.timeoutMs ?? 30_000, windowsHide: true },
      (error, stdout, stderr) => {
        if (error === null) return done({ ok: true, text: stdout });
        const code = (error as NodeJS.ErrnoException).code;
        if (code === "ENOENT") return done({ ok: false, reason: "git is not installed (or not on PATH)" });
        const said = stderr.trim().split("\n").filter((line) => line.length > 0).at(-1);
        done({ ok: false, reason: said ?? (error.killed ? "git did not answer in time" : error.message) });
      },
    );
  });
}
