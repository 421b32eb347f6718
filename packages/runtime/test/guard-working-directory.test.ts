import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { eventDirectory, readCall } from "../src/call-events.js";
import { databaseFiles, Guard, type GuardFinding, type ProtectedPath } from "../src/guard.js";

/**
 * Where each command of a shell call runs, as the guard reads it: the directory grounding's walk of
 * the line says (the `cd`s that ran before the command, in every way they may have run), not one
 * the guard works out again. A `cd` that may have failed leaves the shell where it was too, and a
 * subshell's `cd` ends with it; a `cd` that must have succeeded (`&&`) moves what follows it. The
 * project is a real directory, away from the directories the lines `cd` into.
 */

let root = "";
let project = "";
let home = "";
let guard: Guard;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "vigil-guard-cwd-"));
  project = join(root, "project");
  home = join(root, "home");
  mkdirSync(join(project, ".vigil"), { recursive: true });
  mkdirSync(join(project, ".claude"), { recursive: true });
  mkdirSync(join(project, "src"), { recursive: true });
  mkdirSync(home, { recursive: true });
  writeFileSync(join(project, ".vigil", "audit.db"), "");
  writeFileSync(join(project, ".claude", "policy.vigil"), "policy p {}\n");
  const entries: ProtectedPath[] = [...databaseFiles(join(project, ".vigil", "audit.db")), { path: join(project, ".claude", "policy.vigil"), what: "the policy" }];
  guard = new Guard(entries, { home });
});
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** The findings against a Bash call run from the project (or `cwd`), with the shell's environment when given. */
function bash(command: string, env?: Record<string, string>, cwd = project): GuardFinding[] {
  const read = readCall("Bash", { command }, "toolu_1");
  return guard.check(read.events, { cwd, notes: read.notes, ...(env !== undefined ? { env } : {}) });
}

describe("a cd that may have failed leaves the shell where it was", () => {
  it.each([
    ["after ;", "cd no-such-dir; rm -rf .vigil"],
    ["after || true", "cd no-such-dir || true; rm -rf .vigil"],
    ["after a cd that may have failed, and one that did not", "cd /var/tmp && cd no-such-dir; rm -rf .vigil"],
    ["after a chain of them", "cd a; cd b; cd c; cd d; cd e; rm .vigil/audit.db"],
    ["in an if that did not take the cd", "if cd no-such-dir; then true; fi; rm -rf .vigil"],
    ["inside the directory, a program the guard cannot follow", "cd .vigil; python3 script.py"],
  ])("%s: refused", (_name, command) => {
    expect(bash(command).length, command).toBeGreaterThan(0);
  });

  it("names the protected path in the directory the shell stayed in", () => {
    expect(bash("cd no-such-dir; rm -rf .vigil")).toMatchObject([{ guard: "protected_path", path: join(project, ".vigil", "audit.db"), effect: "delete" }]);
  });

  it.each([
    ["&& runs only after a cd that succeeded", "cd /var/tmp && tar xzf pkg.tgz"],
    ["the project elsewhere", "cd /tmp && rm -rf .vigil"],
    ["a failed cd ends the shell", "cd /tmp || exit 1; rm -rf .vigil"],
    ["a group after &&", "cd /tmp && { rm -rf .vigil; }"],
    ["the then of an if cd", "if cd /tmp; then rm -rf .vigil; fi"],
    ["ordinary work after a cd that may have failed", "cd build; rm -rf dist"],
  ])("%s: let through", (_name, command) => {
    expect(bash(command)).toEqual([]);
  });

  it("starts a script the line runs where the command that runs it runs, in each way", () => {
    // From the project's parent: `rm -rf project` there deletes the state directory.
    expect(bash("cd no-such-dir; sh -c 'rm -rf project'", undefined, root).length).toBeGreaterThan(0);
    expect(bash("cd /tmp && sh -c 'rm -rf project'", undefined, root)).toEqual([]);
    expect(bash("sh -c 'cd /tmp && rm -rf project'", undefined, root)).toEqual([]);
    expect(bash("sh -c 'cd no-such-dir; rm -rf project'", undefined, root).length).toBeGreaterThan(0);
    const read = readCall("Bash", { command: "cd no-such-dir; sh -c 'cd sub && rm -rf x'" }, "toolu_1");
    expect(eventDirectory(read.events.find((event) => event.action === "rm")!)).toEqual({
      at: {
        ways: [
          [{ path: "no-such-dir", physical: false }, { path: "sub", physical: false }],
          [{ path: "sub", physical: false }],
        ],
        elsewhere: false,
      },
    });
  });
});

describe("a command line a command runs later or through an option", () => {
  it("checks a trap's command wherever the shell may be when it fires", () => {
    expect(bash("cd no-such-dir; trap 'rm -rf .vigil' EXIT").length).toBeGreaterThan(0);
    // Set in /tmp, it fires there, or where `cd -` took the shell back to.
    expect(bash("cd /tmp && trap 'rm -rf .vigil' EXIT")).toEqual([]);
    expect(bash("cd /tmp && trap 'rm -rf .vigil' EXIT; cd -").length).toBeGreaterThan(0);
    expect(bash("trap 'rm -f build.log' EXIT; cd src && make > build.log")).toEqual([]);
  });

  it("checks an option's command in each directory the command may run in", () => {
    expect(bash("cd no-such-dir; tar --to-command='rm -rf ../.vigil' -xf /tmp/x.tar", undefined, join(project, "src")).length).toBeGreaterThan(0);
    expect(bash("cd /var/tmp && tar --to-command='rm -rf .vigil' -xf /tmp/x.tar")).toEqual([]);
  });
});

describe("a cd in a subshell ends with it", () => {
  it.each([
    ["( … )", "(cd /tmp); rm -rf .vigil"],
    ["( … && … )", "(cd /tmp && true); rm -rf .vigil"],
    ["a pipeline's first command", "cd /tmp | true; rm -rf .vigil"],
    ["a pipeline's last command, which zsh runs in the shell", "true | cd /tmp; rm -rf .vigil"],
    ["the background", "cd /tmp & rm -rf .vigil"],
    ["a command substitution", "echo $(cd /tmp) && rm -rf .vigil"],
    ["a shell the line starts", "bash -c 'cd /tmp'; rm -rf .vigil"],
  ])("%s: refused", (_name, command) => {
    expect(bash(command).length, command).toBeGreaterThan(0);
  });
});

describe("a cd whose directory the line does not show", () => {
  it("refuses `cd \"$X\"` with X not known", () => {
    expect(bash('cd "$X" && rm -rf .vigil').length).toBeGreaterThan(0);
    expect(bash('cd "$X" && rm -rf .vigil', {}).length).toBeGreaterThan(0);
  });

  it("reads X from the shell's environment when it is known", () => {
    expect(bash('cd "$X" && rm -rf .vigil', { X: "/var/tmp" })).toEqual([]);
    expect(bash('cd "$X" && rm -rf .vigil', { X: project }).length).toBeGreaterThan(0);
    expect(bash('cd "$X" && rm audit.db', { X: join(project, ".vigil") }).length).toBeGreaterThan(0);
  });

  it("takes `cd` alone and `cd ~` to the home directory", () => {
    expect(bash("cd && rm -rf .vigil")).toEqual([]);
    expect(bash("cd ~ && rm -rf .vigil")).toEqual([]);
    // The line may set HOME: then where `~` is is not known.
    expect(bash("HOME=/var/tmp; cd ~ && rm -rf .vigil").length).toBeGreaterThan(0);
  });

  it.each([
    ["cd -", "cd /tmp; cd -; rm -rf .vigil"],
    ["eval", "cd /tmp && eval \"$GO\" && rm -rf .vigil"],
    ["source", "cd /tmp && source env.sh && rm -rf .vigil"],
    ["a loop that changes directory", "for d in /tmp /var/tmp; do cd $d; done; rm -rf .vigil"],
    ["a function that changes directory", "go() { cd /tmp; }; go; rm -rf .vigil"],
    ["popd", "pushd /tmp && popd && rm -rf .vigil"],
  ])("refuses what follows %s", (_name, command) => {
    expect(bash(command).length, command).toBeGreaterThan(0);
  });

  it.each([
    ["eval", "eval 'cd .vigil'; python3 script.py"],
    ["a function", "go() { cd .vigil; }; go; python3 script.py"],
  ])("where %s may have taken the shell is among where what follows may run", (_name, command) => {
    expect(bash(command)).toMatchObject([{ guard: "protected_path", path: join(project, ".vigil"), effect: "use" }]);
  });
});

describe("pushd", () => {
  it("moves the shell when it succeeds, as cd does", () => {
    expect(bash("pushd /tmp && rm -rf .vigil")).toEqual([]);
    expect(bash("pushd .vigil && rm audit.db").length).toBeGreaterThan(0);
  });

  it("leaves the shell where it was when it may have failed, or where the line does not show", () => {
    expect(bash("pushd no-such-dir; rm -rf .vigil").length).toBeGreaterThan(0);
    // `-n` changes the stack, not the directory; `+1` turns the stack.
    expect(bash("pushd -n /tmp && rm -rf .vigil").length).toBeGreaterThan(0);
    expect(bash("pushd +1 && rm -rf .vigil").length).toBeGreaterThan(0);
  });
});

describe("CDPATH in the shell's environment", () => {
  const saved = process.env["CDPATH"];
  afterEach(() => {
    if (saved === undefined) delete process.env["CDPATH"];
    else process.env["CDPATH"] = saved;
  });

  it("refuses after `cd NAME`, which may go to a NAME in one of its directories", () => {
    process.env["CDPATH"] = root;
    expect(bash("cd project && rm -rf .vigil").length).toBeGreaterThan(0);
    expect(bash("cd src && rm -rf .vigil").length).toBeGreaterThan(0);
  });

  it("lets through after `cd ./NAME` and `cd /DIR`, which it does not search", () => {
    process.env["CDPATH"] = root;
    expect(bash("cd ./src && rm -rf .vigil")).toEqual([]);
    expect(bash("cd /tmp && rm -rf .vigil")).toEqual([]);
  });

  it("lets `cd NAME` through without it", () => {
    delete process.env["CDPATH"];
    expect(bash("cd src && rm -rf .vigil")).toEqual([]);
  });
});

describe("where a command runs is no argument", () => {
  it("is kept beside the events, which policies match, not among their arguments", () => {
    const read = readCall("Bash", { command: "cd no-such-dir; rm -rf .vigil" }, "toolu_1");
    const [, cd, rm] = read.events;
    expect(rm).toEqual({ action: "rm", args: { program: "rm", recursive: true, force: true, target: ".vigil" } });
    expect(cd).toEqual({ action: "cd", args: { program: "cd", path: "no-such-dir" } });
    expect(eventDirectory(rm!)).toEqual({ at: { ways: [[{ path: "no-such-dir", physical: false }], []], elsewhere: false } });
    expect(eventDirectory(cd!)).toEqual({ at: { ways: [[]], elsewhere: false }, to: { ways: [[{ path: "no-such-dir", physical: false }]], elsewhere: false } });
  });

  it("takes an event it was not given a directory for as in a directory not known", () => {
    // The same events, made anew: grounding's note of where they run is not theirs.
    const read = readCall("Bash", { command: "cd /tmp && rm -rf .vigil" }, "toolu_1");
    expect(guard.check(read.events, { cwd: project, notes: read.notes })).toEqual([]);
    const copies = read.events.map((event) => ({ ...event, args: { ...event.args, target: ".vigil" } }));
    expect(guard.check(copies, { cwd: project, notes: read.notes }).length).toBeGreaterThan(0);
  });
});
