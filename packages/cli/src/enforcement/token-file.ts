import { randomBytes } from "node:crypto";
import { closeSync, constants, fstatSync, fsyncSync, mkdirSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { tokenProblem } from "@vigil/runtime/token";

/**
 * The sidecar's token files: `vigilc serve` reads them (or creates them), and `vigilc hook
 * claude-code --server` reads one to relay events with it. This module loads only Node's own
 * modules, so that the hook's fast path stays fast.
 *
 * A token file holds one token on one line (a trailing newline is not part of it). A generated
 * token is 256 random bits as 64 hex digits.
 */

/** A token file is a line; anything much larger is not one (and is not read whole). */
const MAX_TOKEN_FILE_BYTES = 4096;

/** The file name of the admin token next to the database, and where the hook looks by default. */
export const TOKEN_FILE_NAME = "sidecar.token";

export type TokenRead = { readonly token: string; readonly created: boolean } | { readonly problem: string };

/**
 * Reads a token file. Only a regular file is read (a FIFO planted at the path would otherwise
 * block the reader). With `private`, the file must also belong to this process's user and be
 * neither readable nor writable by group or others, as ssh demands of a private key: whoever can
 * read the admin token can do anything the sidecar can, and whoever can write it can choose it.
 */
export function readTokenFile(path: string, options: { readonly private: boolean; readonly followLinks?: boolean }): TokenRead | "missing" {
  let fd: number;
  try {
    // Non-blocking, so that opening a FIFO returns at once (it is refused just below).
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0) | (options.followLinks === true ? 0 : (constants.O_NOFOLLOW ?? 0)));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ENOENT") return "missing";
    if (code === "ELOOP") return { problem: `the token file ${path} is a symbolic link; give the path of the file itself` };
    return { problem: `cannot read the token file ${path}: ${(error as Error).message}` };
  }
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return { problem: `the token file ${path} is not a regular file` };
    if (options.private && process.platform !== "win32") {
      const uid = process.getuid?.();
      if (uid !== undefined && stat.uid !== uid) {
        return { problem: `the token file ${path} belongs to another user (uid ${stat.uid}, not ${uid}); the admin token file must be the sidecar's own, or that user can choose the token` };
      }
      if ((stat.mode & 0o077) !== 0) {
        const mode = (stat.mode & 0o777).toString(8).padStart(3, "0");
        return { problem: `permissions ${mode} for the token file ${path} are too open: the admin token must not be readable or writable by group or others (chmod 600 ${path})` };
      }
    }
    if (stat.size > MAX_TOKEN_FILE_BYTES) return { problem: `the token file ${path} is ${stat.size} bytes; a token file holds one token on one line` };
    const buffer = Buffer.alloc(MAX_TOKEN_FILE_BYTES + 1);
    let length = 0;
    for (;;) {
      const read = readSync(fd, buffer, length, buffer.length - length, null);
      if (read === 0) break;
      length += read;
      if (length > MAX_TOKEN_FILE_BYTES) return { problem: `the token file ${path} is over ${MAX_TOKEN_FILE_BYTES} bytes; a token file holds one token on one line` };
    }
    const token = buffer.toString("utf8", 0, length).replace(/\r?\n$/, "");
    const problem = tokenProblem(token);
    if (problem !== undefined) return { problem: `the token in ${path} is refused: ${problem}` };
    return { token, created: false };
  } catch (error) {
    return { problem: `cannot read the token file ${path}: ${(error as Error).message}` };
  } finally {
    closeSync(fd);
  }
}

/**
 * Reads the token file, or creates it with a new random token when there is none. It is created
 * with mode 0600 and `O_EXCL`: if a file appears at the path between the look and the creation
 * (someone else put it there at that moment), the creation fails and that file is not used.
 */
export function loadOrCreateTokenFile(path: string, options: { readonly private: boolean }): TokenRead {
  const existing = readTokenFile(path, options);
  if (existing !== "missing") return existing;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  } catch (error) {
    return { problem: `cannot create the directory of the token file ${path}: ${(error as Error).message}` };
  }
  const token = randomBytes(32).toString("hex");
  let fd: number;
  try {
    fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (constants.O_NOFOLLOW ?? 0), 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "EEXIST") {
      return { problem: `the token file ${path} appeared while the sidecar was creating it; another process made it, so it is not used (look at who did, remove it, and start again)` };
    }
    return { problem: `cannot create the token file ${path}: ${(error as Error).message}` };
  }
  try {
    writeSync(fd, `${token}\n`);
    fsyncSync(fd);
  } catch (error) {
    closeSync(fd);
    try {
      unlinkSync(path);
    } catch {
      // Left as it is; the next start reads it and refuses an empty or partial token.
    }
    return { problem: `cannot write the token file ${path}: ${(error as Error).message}` };
  }
  closeSync(fd);
  return { token, created: true };
}
