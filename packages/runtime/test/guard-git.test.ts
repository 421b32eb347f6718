import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { readCall } from "../src/call-events.js";
import { databaseFiles, Guard, vigilCodePaths, type GuardFinding, type ProtectedPath } from "../src/guard.js";

/**
 * The guard and Git's commands that delete or rewrite a whole tree (`git clean`, `git checkout --
 * .`, `git restore .`, `git stash -u`), in a project that is a Git repository: what Git leaves
 * alone is read from the repository's own files (its index and ignore rules), as Git reads them.
 * The repository is made by hand, as Git lays it out (no `git` program is run): a `.git` with an
 * index (version 2) that tracks the project's settings and policy, and a `.gitignore` that ignores
 * `.vigil/` and Claude Code's local settings.
 */

let root = "";
let project = "";
let home = "";
let guard: Guard;
/** The hook's environment: known, without any of Git's variables. */
const env = { HOME: "/home/dev", TMPDIR: "/tmp" };

/** Git's index (version 2) of `files` (paths in the working tree), with the stat data Git keeps. */
function writeIndex(files: readonly string[]): void {
  const entries = [...files].sort().map((name) => {
    const stat = statSync(join(project, name), { bigint: true });
    const fixed = Buffer.alloc(62);
    const words = [
      stat.ctimeNs / 1_000_000_000n, stat.ctimeNs % 1_000_000_000n, stat.mtimeNs / 1_000_000_000n, stat.mtimeNs % 1_000_000_000n,
      stat.dev % 4_294_967_296n, stat.ino % 4_294_967_296n, 0o100644n, stat.uid, stat.gid, stat.size,
    ];
    words.forEach((word, index) => fixed.writeUInt32BE(Number(word), index * 4));
    createHash("sha1").update(name).digest().copy(fixed, 40);
    fixed.writeUInt16BE(Buffer.byteLength(name), 60);
    const length = (62 + Buffer.byteLength(name) + 8) & ~7;
    return Buffer.concat([fixed, Buffer.from(name), Buffer.alloc(length - 62 - Buffer.byteLength(name))]);
  });
  const header = Buffer.alloc(12);
  header.write("DIRC", 0, "latin1");
  header.writeUInt32BE(2, 4);
  header.writeUInt32BE(entries.length, 8);
  const body = Buffer.concat([header, ...entries]);
  writeFileSync(join(project, ".git", "index"), Buffer.concat([body, createHash("sha1").update(body).digest()]));
}

/** The project's tracked files, changed a while ago (Git takes a file changed in the second its index was written as changed). */
function track(files: readonly string[]): void {
  const past = new Date(Date.now() - 3600_000);
  for (const file of files) utimesSync(join(project, file), past, past);
  writeIndex(files);
}

const TRACKED = [".gitignore", ".claude/settings.json", ".claude/policy.vigil", "src/app.py"];

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "vigil-guard-git-"));
  project = join(root, "project");
  home = join(root, "home");
  for (const directory of [".vigil", ".claude", "src", ".git/refs/heads", ".git/info", "node_modules/.cache"]) mkdirSync(join(project, directory), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(project, ".git", "HEAD"), "ref: refs/heads/main\n");
  writeFileSync(join(project, ".git", "refs", "heads", "main"), `${"0".repeat(40)}\n`);
  writeFileSync(join(project, ".git", "config"), "[core]\n\trepositoryformatversion = 0\n\tbare = false\n");
  writeFileSync(join(project, ".vigil", "audit.db"), "");
  writeFileSync(join(project, ".vigil", "sidecar.token"), "t");
  writeFileSync(join(project, ".claude", "policy.vigil"), "policy p {}\n");
  writeFileSync(join(project, ".claude", "settings.json"), "{}\n");
  writeFileSync(join(project, ".claude", "settings.local.json"), "{}\n");
  writeFileSync(join(project, "src", "app.py"), "print(1)\n");
  const entries: ProtectedPath[] = [
    ...databaseFiles(join(project, ".vigil", "audit.db")),
    { path: join(project, ".claude", "policy.vigil"), what: "the policy" },
    { path: join(project, ".vigil", "sidecar.token"), what: "the sidecar's token", secret: true },
    ...vigilCodePaths(),
  ];
  guard = new Guard(entries, { claudeSettings: true, home });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

beforeEach(() => {
  writeFileSync(join(project, ".gitignore"), "node_modules/\n.vigil/\n.claude/settings.local.json\n*.pyc\n");
  writeFileSync(join(project, ".git", "info", "exclude"), "# git ls-files --others --exclude-from=.git/info/exclude\n");
  writeFileSync(join(project, ".claude", "settings.json"), "{}\n");
  track(TRACKED);
});

function bash(command: string, options: { cwd?: string; env?: Record<string, string> | undefined } = {}): GuardFinding[] {
  const read = readCall("Bash", { command }, "toolu_1");
  return guard.check(read.events, { cwd: options.cwd ?? project, notes: read.notes, ...("env" in options ? (options.env !== undefined ? { env: options.env } : {}) : { env }) });
}

describe("git clean", () => {
  it.each(["git clean -fd", "git clean -f", "git clean -fdq", "git clean -fd src", "cd src && git clean -fd", "git reset --hard && git clean -fd", "git stash -u", "git stash push --include-untracked", "git clean -fdx node_modules"])(
    "lets `%s` through: it deletes untracked files Git does not ignore, and the state is ignored, the settings and the policy tracked",
    (command) => {
      expect(bash(command)).toEqual([]);
    },
  );

  it("lets it through from a subdirectory, whose own Claude Code settings do not exist", () => {
    expect(bash("git clean -fd", { cwd: join(project, "src") })).toEqual([]);
    expect(bash("git clean -fdx", { cwd: join(project, "src") })).toEqual([]);
  });

  it.each([
    ["-x deletes ignored files too", "git clean -fdx"],
    ["-X deletes only them", "git clean -fdX"],
    ["-X apart", "git clean -f -d -X"],
    ["the state among its paths", "git clean -fdx build .vigil"],
    ["git stash --all takes ignored files away", "git stash --all"],
    ["the line rewrites the ignore rules first", "echo '!.vigil/' >> .gitignore && git clean -fd"],
    ["the line removes the ignore rules first", "rm .gitignore; git clean -fd"],
    ["the line writes into .git first", "echo x > .git/info/exclude; git clean -fd"],
    ["the line untracks the policy first", "git rm --cached .claude/policy.vigil && git clean -fd"],
    ["git -c", "git -c core.excludesFile=/dev/null clean -fd"],
    ["--git-dir", "git --git-dir=/tmp/other/.git clean -fd"],
    ["GIT_DIR set on the line", "GIT_DIR=/tmp/other/.git git clean -fd"],
  ])("refuses `git clean` when %s", (_name, command) => {
    expect(bash(command).length, command).toBeGreaterThan(0);
  });

  it("refuses when the state directory is not ignored: git clean -fd deletes it", () => {
    writeFileSync(join(project, ".gitignore"), "node_modules/\n.claude/settings.local.json\n");
    track(TRACKED);
    expect(bash("git clean -fd")).toMatchObject([{ guard: "protected_path", path: join(project, ".vigil", "audit.db"), effect: "delete" }]);
  });

  it("follows Git's ignore rules: the nearest file's last rule wins, and nothing is re-included in an ignored directory", () => {
    writeFileSync(join(project, ".gitignore"), "node_modules/\n.vigil/\n!.vigil/\n.claude/settings.local.json\n");
    track(TRACKED);
    expect(bash("git clean -fd").length).toBeGreaterThan(0);
    writeFileSync(join(project, ".gitignore"), "node_modules/\n/.v*/\n.claude/settings.local.json\n");
    track(TRACKED);
    expect(bash("git clean -fd")).toEqual([]);
    // In .git/info/exclude, and with `**`.
    writeFileSync(join(project, ".gitignore"), "node_modules/\n.claude/settings.local.json\n");
    writeFileSync(join(project, ".git", "info", "exclude"), "**/.vigil/**\n.vigil\n");
    track(TRACKED);
    expect(bash("git clean -fd")).toEqual([]);
    // A file re-included inside an ignored directory stays ignored.
    writeFileSync(join(project, ".gitignore"), "node_modules/\n.vigil/\n!.vigil/audit.db\n.claude/settings.local.json\n");
    track(TRACKED);
    expect(bash("git clean -fd")).toEqual([]);
  });

  it("refuses when a protected file is neither tracked nor ignored", () => {
    track(TRACKED.filter((file) => file !== ".claude/policy.vigil"));
    expect(bash("git clean -fd")).toMatchObject([{ path: join(project, ".claude", "policy.vigil"), effect: "delete" }]);
  });

  it("refuses when it cannot read what Git tracks and ignores: no repository, or the environment not known", () => {
    const elsewhere = mkdtempSync(join(tmpdir(), "vigil-guard-nogit-"));
    try {
      mkdirSync(join(elsewhere, ".vigil"));
      const state = new Guard(databaseFiles(join(elsewhere, ".vigil", "audit.db")), { home });
      const read = readCall("Bash", { command: "git clean -fd" }, "t");
      expect(state.check(read.events, { cwd: elsewhere, notes: read.notes, env }).length).toBeGreaterThan(0);
    } finally {
      rmSync(elsewhere, { recursive: true, force: true });
    }
    expect(bash("git clean -fd", { env: undefined }).length).toBeGreaterThan(0);
    expect(bash("git clean -fd", { env: { ...env, GIT_INDEX_FILE: "/tmp/index" } }).length).toBeGreaterThan(0);
  });
});

describe("git checkout -- PATH and git restore PATH", () => {
  it.each(["git checkout -- .", "git checkout .", "git restore .", "git restore --worktree .", "git checkout -- src", "git checkout -- .claude"])(
    "lets `%s` through when the tracked protected files are as the index has them",
    (command) => {
      expect(bash(command)).toEqual([]);
    },
  );

  it("refuses when a tracked protected file changed: it would be rewritten", () => {
    writeFileSync(join(project, ".claude", "settings.json"), '{"hooks": {}}\n');
    expect(bash("git checkout -- .")).toMatchObject([{ path: join(project, ".claude", "settings.json"), effect: "write" }]);
    expect(bash("git restore .claude").length).toBeGreaterThan(0);
    // Other paths are still fine.
    expect(bash("git checkout -- src")).toEqual([]);
  });

  it.each([
    ["a branch", "git checkout main -- ."],
    ["a commit", "git checkout HEAD~1 -- ."],
    ["restore --source", "git restore --source=HEAD~2 ."],
    ["restore --staged --worktree", "git restore --staged --worktree ."],
  ])("refuses files brought from %s: the commit is not read", (_name, command) => {
    expect(bash(command).length, command).toBeGreaterThan(0);
  });
});
