import { readFileSync, statSync } from "node:fs";
import { posix } from "node:path";
import { ancestorsOf, LOOKUP_UNITS, spend } from "./guard-paths.js";

/**
 * Git's view of the files under a working tree, read from the repository's own files (no `git`
 * program is run): which files the index tracks, and which paths the repository's ignore rules
 * (`.gitignore` files, `.git/info/exclude`) ignore. `git clean` deletes only untracked files, and
 * only ignored ones with `-x` or `-X`; `git checkout -- PATH` and `git restore PATH` rewrite only
 * tracked ones. What cannot be read is taken as the worst for the question asked: a file not known
 * to be tracked is untracked, a path not known to be ignored is not ignored.
 *
 * The user's own excludes (`core.excludesFile`, `~/.config/git/ignore`) are not read: a path
 * ignored only there is taken as not ignored.
 */
export interface GitRepository {
  /** The working tree's top directory. */
  readonly root: string;
  /** The repository's directory for this working tree (`.git`, or a worktree's under it). */
  readonly gitDir: string;
  /** The directory shared by all worktrees (`info/exclude`, `config`, refs). */
  readonly commonDir: string;
}

/** The repository whose working tree holds `directory` (the nearest `.git` above it), or undefined. */
export function gitRepository(directory: string): GitRepository | undefined {
  for (let current = directory; ; current = posix.dirname(current)) {
    const dotGit = posix.join(current, ".git");
    spend(LOOKUP_UNITS);
    let stat;
    try {
      stat = statSync(dotGit);
    } catch {
      stat = undefined;
    }
    if (stat !== undefined) {
      let gitDir = dotGit;
      if (stat.isFile()) {
        // A worktree's or a submodule's `.git` file: `gitdir: PATH`.
        const pointer = /^gitdir:\s*(.+?)\s*$/m.exec(readText(dotGit, 4096) ?? "");
        if (pointer === null) return undefined;
        gitDir = posix.resolve(current, pointer[1]!);
      }
      const common = readText(posix.join(gitDir, "commondir"), 4096)?.trim();
      return { root: current, gitDir, commonDir: common !== undefined && common !== "" ? posix.resolve(gitDir, common) : gitDir };
    }
    if (current === "/" || current === "") return undefined;
  }
}

/** A file's text, counted as a look at the disk and its length; undefined when it cannot be read or is larger than `limit`. */
function readText(path: string, limit: number): string | undefined {
  const buffer = readBytes(path, limit);
  return buffer?.toString("utf8");
}

function readBytes(path: string, limit: number): Buffer | undefined {
  spend(LOOKUP_UNITS);
  try {
    const stat = statSync(path);
    if (!stat.isFile() || stat.size > limit) return undefined;
    spend(Math.ceil(stat.size / 2));
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** The largest index read (bytes): a bigger one is taken as not known. */
const LARGEST_INDEX = 64 * 1024 * 1024;

/** What the index says of a tracked file when it was last seen unchanged: its size and time of change. */
export interface GitIndexEntry {
  readonly size: number;
  readonly seconds: number;
  readonly nanoseconds: number;
  /** The time of the file's last status change (which a program cannot set back), in seconds. */
  readonly changedSeconds: number;
}

/** The files the index tracks, and when the index was written (a file changed in that second may look unchanged). */
export interface GitIndex {
  readonly entries: ReadonlyMap<string, GitIndexEntry>;
  readonly writtenSeconds: number;
}

/**
 * The paths the index tracks (absolute, under the working tree), or undefined when it cannot be
 * read. Reads index versions 2, 3 and 4, with SHA-1 or SHA-256 object names; an entry of a sparse
 * index that stands for a directory ends with `/`.
 */
export function gitTrackedPaths(repository: GitRepository): GitIndex | undefined {
  const file = posix.join(repository.gitDir, "index");
  const index = readBytes(file, LARGEST_INDEX);
  if (index === undefined) return undefined;
  let writtenSeconds: number;
  try {
    writtenSeconds = Math.floor(statSync(file).mtimeMs / 1000);
  } catch {
    return undefined;
  }
  const config = readText(posix.join(repository.commonDir, "config"), 1024 * 1024) ?? "";
  const hashLength = /^\s*objectformat\s*=\s*sha256\s*$/im.test(config) ? 32 : 20;
  try {
    if (index.toString("latin1", 0, 4) !== "DIRC") return undefined;
    const version = index.readUInt32BE(4);
    if (version < 2 || version > 4) return undefined;
    const count = index.readUInt32BE(8);
    const paths = new Map<string, GitIndexEntry>();
    let offset = 12;
    let previous = "";
    for (let entry = 0; entry < count; entry++) {
      const start = offset;
      // ctime, mtime, dev, ino, mode, uid, gid, size (40 bytes), the object's name, then the flags.
      const flags = index.readUInt16BE(start + 40 + hashLength);
      let nameAt = start + 40 + hashLength + 2;
      if (version >= 3 && (flags & 0x4000) !== 0) nameAt += 2;
      let name: string;
      if (version === 4) {
        // The number of bytes to drop from the previous name (Git's offset varint), then the rest.
        let byte = index[nameAt++]!;
        let strip = byte & 0x7f;
        while ((byte & 0x80) !== 0) {
          byte = index[nameAt++]!;
          strip = ((strip + 1) << 7) | (byte & 0x7f);
        }
        const end = index.indexOf(0, nameAt);
        if (end < 0 || strip > previous.length) return undefined;
        name = previous.slice(0, previous.length - strip) + index.toString("utf8", nameAt, end);
        offset = end + 1;
      } else {
        const end = index.indexOf(0, nameAt);
        if (end < 0) return undefined;
        name = index.toString("utf8", nameAt, end);
        // Entries are padded with NULs to a multiple of 8 bytes.
        offset = start + ((nameAt - start + (end - nameAt) + 8) & ~7);
      }
      if (offset > index.length) return undefined;
      previous = name;
      const seen = { changedSeconds: index.readUInt32BE(start), seconds: index.readUInt32BE(start + 8), nanoseconds: index.readUInt32BE(start + 12), size: index.readUInt32BE(start + 36) };
      paths.set(posix.join(repository.root, name) + (name.endsWith("/") ? "/" : ""), seen);
    }
    return { entries: paths, writtenSeconds };
  } catch {
    return undefined;
  }
}

/** The tracked paths at `path`, or under it when it is a directory (`tree`); a sparse index's directory above it counts. */
export function gitTrackedAt(index: GitIndex, path: string, tree: boolean): string[] {
  const tracked = index.entries;
  const found = tracked.has(path) ? [path] : [];
  for (const ancestor of ancestorsOf(path).slice(1)) if (tracked.has(`${ancestor}/`)) found.push(`${ancestor}/`);
  if (!tree) return found;
  spend(tracked.size);
  for (const candidate of tracked.keys()) if (candidate.startsWith(`${path}/`)) found.push(candidate);
  return found;
}

/**
 * Whether a tracked file is as the index last saw it, as Git tells without reading it: it exists,
 * with the size and times of change the index holds, changed before the second the index was
 * written (Git's "racy" files are taken as changed). A sparse index's directory is not known.
 */
export function gitUnchanged(index: GitIndex, path: string): boolean {
  const entry = index.entries.get(path);
  if (entry === undefined || path.endsWith("/")) return false;
  spend(LOOKUP_UNITS);
  try {
    const stat = statSync(path, { bigint: true });
    const seconds = Number(stat.mtimeNs / 1_000_000_000n);
    const nanoseconds = Number(stat.mtimeNs % 1_000_000_000n);
    return (
      stat.isFile() &&
      Number(stat.size % 4_294_967_296n) === entry.size &&
      seconds === entry.seconds &&
      Number(stat.ctimeNs / 1_000_000_000n) === entry.changedSeconds &&
      (entry.nanoseconds === 0 || nanoseconds === entry.nanoseconds) &&
      seconds < index.writtenSeconds
    );
  } catch {
    return false;
  }
}

/** One line of an ignore file: a pattern, whether it re-includes (`!`), whether it names only directories, and where it applies. */
interface IgnoreRule {
  readonly pattern: RegExp;
  readonly negated: boolean;
  readonly directoryOnly: boolean;
  /** Matched against the path's last name (a pattern without a slash), or against its path below `base`. */
  readonly basename: boolean;
  /** The directory of the file the rule is in (the working tree's top for `info/exclude`). */
  readonly base: string;
}

/**
 * Whether the repository's ignore rules ignore `path` (`directory`: it is one), as Git decides: the
 * last rule that matches wins, from the `.gitignore` nearest the path up to the top and then
 * `.git/info/exclude`; a path in an ignored directory is ignored, whatever the rules say of it.
 * A rule this cannot read is taken as ignoring nothing, or, when it re-includes, as re-including
 * everything: a path is then not known to be ignored.
 */
export function gitIgnores(repository: GitRepository, path: string, directory: boolean): boolean {
  const relative = posix.relative(repository.root, path);
  if (relative === "" || relative.startsWith("..")) return false;
  const config = readText(posix.join(repository.commonDir, "config"), 1024 * 1024) ?? "";
  const ignoreCase = /^\s*ignorecase\s*=\s*true\s*$/im.test(config);
  const segments = relative.split("/");
  const exclude = ignoreRules(posix.join(repository.commonDir, "info", "exclude"), repository.root, ignoreCase);
  const perDirectory: IgnoreRule[][] = [];
  for (let depth = 1; depth <= segments.length; depth++) {
    // The rules of the directory that holds this prefix (read once, as the walk goes down).
    const holder = posix.join(repository.root, ...segments.slice(0, depth - 1));
    perDirectory.push(ignoreRules(posix.join(holder, ".gitignore"), holder, ignoreCase));
    const prefix = posix.join(repository.root, ...segments.slice(0, depth));
    const isDirectory = depth < segments.length || directory;
    // The nearest file's last matching rule decides; `info/exclude` comes after every `.gitignore`.
    let decided: IgnoreRule | undefined;
    for (const rules of [...[...perDirectory].reverse(), exclude]) {
      decided = lastMatch(rules, prefix, isDirectory);
      if (decided !== undefined) break;
    }
    if (decided !== undefined && !decided.negated) return true;
  }
  return false;
}

function lastMatch(rules: readonly IgnoreRule[], path: string, directory: boolean): IgnoreRule | undefined {
  for (let index = rules.length - 1; index >= 0; index--) {
    const rule = rules[index]!;
    if (rule.directoryOnly && !directory) continue;
    if (!path.startsWith(`${rule.base}/`)) continue;
    spend(path.length);
    const subject = rule.basename ? posix.basename(path) : path.slice(rule.base.length + 1);
    if (rule.pattern.test(subject)) return rule;
  }
  return undefined;
}

/** The rules of an ignore file (none when it cannot be read). */
function ignoreRules(file: string, base: string, ignoreCase: boolean): IgnoreRule[] {
  const text = readText(file, 1024 * 1024);
  if (text === undefined) return [];
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    // Trailing spaces go unless escaped; blank lines and comments are not rules.
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negated = line.startsWith("!");
    if (negated) line = line.slice(1);
    else if (line.startsWith("\\!") || line.startsWith("\\#")) line = line.slice(1);
    const directoryOnly = line.endsWith("/");
    if (directoryOnly) line = line.replace(/\/+$/, "");
    if (line === "") continue;
    const basename = !line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    const pattern = globPattern(line, ignoreCase);
    if (pattern === undefined) {
      // A rule that ignores is left out (a path is then not known to be ignored); one that
      // re-includes cannot be: whether the path is ignored is not known.
      if (negated) rules.push({ pattern: /[\s\S]*/, negated, directoryOnly, basename, base: base === "/" ? "" : base.replace(/\/$/, "") });
      continue;
    }
    rules.push({ pattern, negated, directoryOnly, basename, base: base === "/" ? "" : base.replace(/\/$/, "") });
  }
  return rules;
}

/** A pattern of an ignore file as a regular expression (Git's wildmatch, `**` included); undefined for one this does not read. */
function globPattern(glob: string, ignoreCase: boolean): RegExp | undefined {
  let source = "";
  for (let index = 0; index < glob.length; index++) {
    const char = glob[index]!;
    if (char === "\\") {
      const next = glob[++index];
      if (next === undefined) return undefined;
      source += escapeRegExp(next);
    } else if (char === "*") {
      if (glob[index + 1] === "*") {
        const before = index === 0 || glob[index - 1] === "/";
        const after = index + 2 === glob.length || glob[index + 2] === "/";
        index++;
        if (before && after) {
          if (index + 1 === glob.length) source += "[\\s\\S]*";
          else {
            // `**/`: any number of directories, none included.
            source += "(?:[\\s\\S]*/)?";
            index++;
          }
          continue;
        }
      }
      source += "[^/]*";
    } else if (char === "?") source += "[^/]";
    else if (char === "[") {
      let end = index + 1;
      if (glob[end] === "!" || glob[end] === "^") end++;
      if (glob[end] === "]") end++;
      while (end < glob.length && glob[end] !== "]") end++;
      if (end >= glob.length) return undefined;
      const body = glob.slice(index + 1, end);
      // Character classes (`[[:alpha:]]`) and escapes in a bracket are not read here.
      if (body.includes("[:") || body.includes("\\")) return undefined;
      const negate = body.startsWith("!") || body.startsWith("^");
      const members = (negate ? body.slice(1) : body).replace(/[\]\\^]/g, "\\$&");
      source += `[${negate ? "^/" : ""}${members}]`;
      index = end;
    } else source += escapeRegExp(char);
  }
  try {
    return new RegExp(`^${source}$`, ignoreCase ? "i" : "");
  } catch {
    return undefined;
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
}

/**
 * Whether a word given to `git checkout` or `git restore` may name a commit rather than a path
 * (`HEAD~1`, `main`, `v1.2`, an object's name): the files then come from that commit, which is
 * not read here.
 */
export function gitMayBeRevision(repository: GitRepository, word: string): boolean {
  if (/[~^@:]/.test(word) || /^[0-9a-fA-F]{4,64}$/.test(word) || /^[A-Z_]*HEAD$/.test(word)) return true;
  if (word.startsWith("-") || word.includes("..")) return true;
  for (const place of ["", "refs/", "refs/heads/", "refs/tags/", "refs/remotes/"]) {
    spend(LOOKUP_UNITS);
    try {
      if (statSync(posix.join(repository.commonDir, place, word)).isFile()) return true;
    } catch {
      // Not a reference there.
    }
  }
  const packed = readText(posix.join(repository.commonDir, "packed-refs"), 16 * 1024 * 1024) ?? "";
  return packed.split("\n").some((line) => line.endsWith(` refs/heads/${word}`) || line.endsWith(` refs/tags/${word}`) || line.endsWith(` refs/remotes/${word}`));
}
