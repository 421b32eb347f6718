import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, unlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { daemonServing } from "../src/enforcement/hook-daemon.js";
import { examples, root, vigilc } from "./support/run-vigilc.js";
import { runHookProcess, type Answer } from "./support/hook-process.js";
import { SESSION as SNAPSHOT_SESSION } from "./support/hook-snapshot-fixture.js";

/**
 * The hook daemon (src/enforcement/hook-daemon.ts) and its relay (src/enforcement/hook-relay.cts): the command line
 * `--install` writes asks the daemon first; the daemon answers every event as the hook process
 * would; the relay refuses whatever is not a whole answer once it has read the event, and lets the
 * normal path answer, with the input untouched, when no daemon listens.
 */

const scratch = realpathSync(mkdtempSync(join(tmpdir(), "vigil-hook-daemon-")));
const relay = join(root, "packages", "cli", "dist", "enforcement", "hook-relay.cjs");
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const run = runHookProcess;

function makeProject(name: string): string {
  const project = join(scratch, name);
  mkdirSync(join(project, ".claude"), { recursive: true });
  copyFileSync(join(examples, "coding-agent", "coding-agent.vigil"), join(project, ".claude", "policy.vigil"));
  return project;
}

/** The PreToolUse command line `--print-settings` gives in `project`. */
async function installedCommand(project: string): Promise<string> {
  const printed = await vigilc(["hook", "claude-code", "--print-settings", "--policy", ".claude/policy.vigil"], { cwd: project, env: { CLAUDE_PROJECT_DIR: project } });
  expect(printed.code, printed.stderr).toBe(0);
  return (JSON.parse(printed.stdout) as { hooks: Record<string, { hooks: { command: string }[] }[]> }).hooks["PreToolUse"]![0]!.hooks[0]!.command;
}

/** The daemon's socket, as the command line names it. */
function socketOf(command: string): string {
  const match = /hook-relay\.cjs (\S+\.sock);/.exec(command);
  expect(match, command).not.toBeNull();
  return match![1]!;
}

function eventText(project: string, event: object, session = "daemon"): string {
  return JSON.stringify({ session_id: session, transcript_path: join(project, "t.jsonl"), cwd: project, permission_mode: "default", ...event });
}

/** Through the shell, as Claude Code runs a hook's command line. */
function hook(line: string, project: string, event: object): Promise<Answer> {
  return run("/bin/sh", ["-c", line], eventText(project, event), project, { CLAUDE_PROJECT_DIR: project });
}

/** The relay alone: what the daemon answers (exit 75 when no daemon listens). */
function relayed(socket: string, project: string, event: object): Promise<Answer> {
  return run(process.execPath, [relay, socket], eventText(project, event), project, { CLAUDE_PROJECT_DIR: project });
}

/** Waits (a bounded number of looks) until `check` holds. */
async function eventually(check: () => Promise<boolean> | boolean, what: string): Promise<void> {
  for (let look = 0; look < 600; look++) {
    if (await check()) return;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
  throw new Error(`${what}: not after 600 looks`);
}

/** The answer with the project's path taken out. */
function comparable(answer: Answer, project: string): Answer {
  const strip = (text: string) => text.replaceAll(project, "PROJECT");
  return { code: answer.code, stdout: strip(answer.stdout), stderr: strip(answer.stderr) };
}

/** The snapshot tests' session, and its end. */
const SESSION: readonly object[] = [...SNAPSHOT_SESSION, { hook_event_name: "SessionEnd", reason: "exit" }];

let command = "";

beforeAll(async () => {
  command = await installedCommand(makeProject("settings"));
}, 120_000);

describe("the hook daemon", () => {
  it("is asked first by the installed command line, on a socket in Vigil's state directory", () => {
    expect(command).toMatch(/^\S+ \S+\/hook-relay\.cjs \S+\/\.vigil\/hook-[0-9a-f]{16}\.sock; s=\$\?; \[ \$s = 0 \] \|\| \[ \$s = 2 \] \|\| \[ \$s = 71 \] && exit \$s; /);
    expect(command).toMatch(/ --daemon$/);
  });

  it("is started by the first event, and then answers every event as the hook process does", async () => {
    const project = makeProject("session");
    const reference = makeProject("reference");
    const line = await installedCommand(project);
    const socket = socketOf(line);
    const normal = `${process.execPath} ${join(root, "packages", "cli", "dist", "main.js")} hook claude-code --policy ${join(reference, ".claude", "policy.vigil")}`;
    // No daemon yet: the normal path answers the first event, and starts one.
    expect(await daemonServing(socket)).toBe(false);
    const first = await hook(line, project, SESSION[0]!);
    const firstExpected = await hook(normal, reference, SESSION[0]!);
    expect(comparable(first, project)).toEqual(comparable(firstExpected, reference));
    await eventually(() => daemonServing(socket), "the daemon serves");
    expect(readFileSync(join(project, ".vigil", "hook-daemon.log"), "utf8")).toContain(`vigil hook daemon: serving on ${socket}`);
    const answers: Answer[] = [];
    for (const event of SESSION.slice(1)) {
      // The relay alone: the daemon's answer, never the normal path's.
      const fromDaemon = await relayed(socket, project, event);
      expect(fromDaemon.code, fromDaemon.stderr).not.toBe(75);
      const fromProcess = await hook(normal, reference, event);
      expect({ event, ...comparable(fromDaemon, project) }).toEqual({ event, ...comparable(fromProcess, reference) });
      answers.push(fromDaemon);
    }
    const decision = (answer: Answer) => (answer.stdout === "" ? "none" : (JSON.parse(answer.stdout) as { hookSpecificOutput: { permissionDecision: string } }).hookSpecificOutput.permissionDecision);
    expect([0, 2, 4, 5, 6, 7, 8, 9].map((index) => decision(answers[index]!))).toEqual(["none", "none", "deny", "deny", "deny", "deny", "deny", "none"]);
    // The whole command line, with the daemon up, answers the same.
    const again = await hook(line, project, { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "git push --force origin main" }, tool_use_id: "t9" });
    expect(again.code).toBe(0);
    expect(decision(again)).toBe("deny");
    // The audit log the daemon wrote verifies, and holds every decision.
    const verified = await vigilc(["audit", "verify", join(project, ".vigil", "audit.db")], { cwd: project });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain("the audit log verifies");
  }, 600_000);

  it("reads the policy at every event: an edited policy is in force at the next call", async () => {
    const project = makeProject("edited");
    const line = await installedCommand(project);
    const socket = socketOf(line);
    const push = (id: string) => ({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "git push --force origin main" }, tool_use_id: id });
    expect((await hook(line, project, push("e1"))).stdout).toContain('"deny"');
    await eventually(() => daemonServing(socket), "the daemon serves");
    expect((await relayed(socket, project, push("e2"))).stdout).toContain('"deny"');
    writeFileSync(join(project, ".claude", "policy.vigil"), "policy edited {\n  rule nothing_to_say: abs(action in {no_such_tool})\n}\n");
    const after = await relayed(socket, project, push("e3"));
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe("");
  }, 600_000);

  it("stops when its socket is removed, and a second one started beside a running one leaves at once", async () => {
    const project = makeProject("stops");
    const line = await installedCommand(project);
    const socket = socketOf(line);
    await hook(line, project, SESSION[0]!);
    await eventually(() => daemonServing(socket), "the daemon serves");
    // A second daemon for the same socket sees the first and exits 0 without touching it.
    const words = line.slice(line.lastIndexOf("exec ") + "exec ".length).split(" ").slice(2).filter((word) => word !== "--daemon");
    const second = await run(process.execPath, [join(root, "packages", "cli", "dist", "main.js"), ...words, "--serve-daemon"], "", project, { CLAUDE_PROJECT_DIR: project });
    expect(second.code, second.stderr).toBe(0);
    expect(await daemonServing(socket)).toBe(true);
    unlinkSync(socket);
    await eventually(() => readFileSync(join(project, ".vigil", "hook-daemon.log"), "utf8").includes("stopping: its socket"), "the daemon stops");
    // With none, the relay exits 75 and the normal path answers (and starts a new daemon).
    expect((await relayed(socket, project, SESSION[0]!)).code).toBe(75);
    const answered = await hook(line, project, SESSION[0]!);
    expect(answered.code, answered.stderr).toBe(0);
    await eventually(() => daemonServing(socket), "a new daemon serves");
  }, 600_000);
});

describe("the relay", () => {
  const input = eventText(scratch, SESSION[1]!);

  /** A peer on a socket of its own that does `serve` with each connection. */
  async function peer(name: string, serve: (connection: import("node:net").Socket) => void): Promise<{ socket: string; server: Server }> {
    const socket = join(scratch, `${name}.sock`);
    // Read what the relay sends (else its end is never seen), then do `serve`.
    const server = createServer({ allowHalfOpen: true }, (connection) => {
      serve(connection);
      connection.resume();
    });
    await new Promise<void>((resolvePromise) => server.listen(socket, resolvePromise));
    return { socket, server };
  }

  it("exits 75 without reading standard input when no daemon listens, so the normal path reads it whole", async () => {
    const missing = join(scratch, "nothing-here.sock");
    expect(existsSync(missing)).toBe(false);
    const answer = await run("/bin/sh", ["-c", `${process.execPath} ${relay} ${missing}; echo "rc=$?"; cat`], input, scratch);
    expect(answer.stdout).toBe(`rc=75\n${input}`);
    // A file that is not a socket, too.
    writeFileSync(join(scratch, "not-a-socket"), "");
    const notSocket = await run("/bin/sh", ["-c", `${process.execPath} ${relay} ${join(scratch, "not-a-socket")}; echo "rc=$?"; cat`], input, scratch);
    expect(notSocket.stdout).toBe(`rc=75\n${input}`);
  });

  it.each([
    ["closes without an answer", (connection: import("node:net").Socket) => connection.on("end", () => connection.end()), "it closed the connection without an answer"],
    ["answers with what is not JSON", (connection: import("node:net").Socket) => connection.on("end", () => connection.end("allow")), "its answer is not JSON"],
    ["answers without an exit code", (connection: import("node:net").Socket) => connection.on("end", () => connection.end(JSON.stringify({ stdout: "", stderr: "" }))), "not a hook's answer"],
    ["answers with an exit code no hook gives", (connection: import("node:net").Socket) => connection.on("end", () => connection.end(JSON.stringify({ stdout: "", stderr: "", exitCode: 75 }))), "not a hook's answer"],
    ["breaks the connection", (connection: import("node:net").Socket) => connection.on("data", () => connection.destroy()), "did not answer"],
  ])("refuses the call (exit 2, a deny) when the daemon %s", async (name, serve, why) => {
    const { socket, server } = await peer(name.replace(/\W/g, "-"), serve);
    try {
      const answer = await run("/bin/sh", ["-c", `${process.execPath} ${relay} ${socket}; echo "rc=$?"`], input, scratch);
      expect(answer.stdout).toMatch(/"permissionDecision":"deny"/);
      expect(answer.stdout).toMatch(/rc=2\n$/);
      expect(answer.stderr).toContain(why);
    } finally {
      server.close();
    }
  });

  it("passes the event, the working directory and the environment, and relays the answer; a non-blocking failure keeps its own exit code", async () => {
    let received = "";
    const { socket, server } = await peer("echo", (connection) => {
      connection.on("data", (chunk: Buffer) => (received += chunk.toString("utf8")));
      connection.on("end", () => connection.end(JSON.stringify({ stdout: "out\n", stderr: "err\n", exitCode: 1 })));
    });
    try {
      const answer = await run(process.execPath, [relay, socket], input, scratch, { VIGIL_RELAY_PROBE: "seen" });
      expect(answer).toEqual({ code: 71, stdout: "out\n", stderr: "err\n" });
      const newline = received.indexOf("\n");
      const header = JSON.parse(received.slice(0, newline)) as { version: number; cwd: string; env: Record<string, string> };
      expect(header.version).toBe(1);
      expect(header.cwd).toBe(scratch);
      expect(header.env["VIGIL_RELAY_PROBE"]).toBe("seen");
      expect(received.slice(newline + 1)).toBe(input);
      // Through the installed command line's shell: 71 is an answer, not a reason to ask the normal path.
      const line = `${process.execPath} ${relay} ${socket}; s=$?; [ $s = 0 ] || [ $s = 2 ] || [ $s = 71 ] && exit $s; echo fell-through`;
      const viaShell = await run("/bin/sh", ["-c", line], input, scratch);
      expect(viaShell.code).toBe(71);
      expect(viaShell.stdout).toBe("out\n");
    } finally {
      server.close();
    }
  });
});
