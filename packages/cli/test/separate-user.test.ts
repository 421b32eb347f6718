import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkState, readAudit, Store, verifyAudit } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli } from "./support/run-vigilc.js";

/**
 * The deployment the agent cannot reach, for real: the sidecar runs as its own OS user, with its
 * database, its admin token and the policy in directories the agent's user cannot write (the state
 * directory it cannot even read), listening on a Unix socket its group may connect to, in a
 * directory the agent cannot write (so nothing else can take the socket's place). The agent's user
 * holds only the hook token, and Claude Code's hook, run as the agent's user, relays with it.
 *
 * The test creates the two users and the group (it needs root, as CI has), starts the sidecar as
 * its user, and tries, as the agent's user, every way in: reading the admin token, writing the
 * database or the policy, putting a file where the socket is, and sending requests the hook token
 * does not allow.
 */

const SIDECAR_USER = "vigil-sidecar";
const AGENT_USER = "vigil-agent";
const HOOKS_GROUP = "vigil-hooks";

const isRoot = process.getuid?.() === 0;
const tools = ["useradd", "groupadd", "runuser"].every((tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status === 0);
/** The built CLI must be readable by other users (a checkout under a private directory is not). */
const codeReadable = isRoot && tools && readableByOthers(cli);
const skipped = !isRoot ? "needs root, to create users" : !tools ? "needs useradd, groupadd and runuser" : !codeReadable ? `the CLI at ${cli} is not readable by other users` : undefined;
if (skipped !== undefined) console.warn(`separate-user deployment test skipped: ${skipped}`);

function readableByOthers(path: string): boolean {
  return spawnSync("sh", ["-c", 'p="$1"; while [ "$p" != "/" ]; do [ -d "$p" ] && { [ "$(( 0$(stat -c %a "$p") & 1 ))" -ne 0 ] || exit 1; }; p=$(dirname "$p"); done', "sh", path]).status === 0;
}

function ensureAccount(): void {
  if (spawnSync("getent", ["group", HOOKS_GROUP]).status !== 0) execFileSync("groupadd", ["--system", HOOKS_GROUP]);
  if (spawnSync("id", [SIDECAR_USER]).status !== 0) execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", SIDECAR_USER]);
  if (spawnSync("id", [AGENT_USER]).status !== 0) execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/bin/sh", "--groups", HOOKS_GROUP, AGENT_USER]);
  else execFileSync("usermod", ["--append", "--groups", HOOKS_GROUP, AGENT_USER]);
}

const id = (flag: string, user: string) => Number(execFileSync("id", [flag, user], { encoding: "utf8" }).trim());
const groupId = () => Number(execFileSync("getent", ["group", HOOKS_GROUP], { encoding: "utf8" }).split(":")[2]);

/** Runs a command as the agent's user: its exit status and output. */
function asAgent(command: readonly string[], input?: string): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync("runuser", ["-u", AGENT_USER, "--", ...command], { encoding: "utf8", input: input ?? "", timeout: 60_000, env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: "/tmp" } });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

let root = "";
let state = "";
let run = "";
let policy = "";
let socket = "";
let hookToken = "";
let sidecar: ChildProcess | undefined;

const POLICY = `policy project {
  /// A test run that passed.
  pattern tests_pass = action in {Bash} and command ~ "npm test*" and status = ok
  /// Never commit without a passing test run earlier in the session.
  rule tests_before_commit: prec(action in {Bash} and command ~ "git commit*", tests_pass)
    block "Run the tests first."
}
`;

describe.skipIf(skipped !== undefined)("a sidecar as its own OS user, which the agent's user cannot reach", () => {
  beforeAll(async () => {
    ensureAccount();
    const sidecarUid = id("-u", SIDECAR_USER);
    const sidecarGid = id("-g", SIDECAR_USER);
    const hooksGid = groupId();
    root = mkdtempSync(join(tmpdir(), "vigil-separate-"));
    chmodSync(root, 0o755);
    // The state: the database and the admin token, the sidecar's user's alone.
    state = join(root, "state");
    mkdirSync(state, { mode: 0o700 });
    chownSync(state, sidecarUid, sidecarGid);
    chmodSync(state, 0o700);
    // The policy: readable by all, writable by nobody but root.
    policy = join(root, "policy.vigil");
    writeFileSync(policy, POLICY, { mode: 0o644 });
    // The socket and the hook token: the hooks' group may enter and read, nobody but the sidecar's
    // user may create anything there (setgid: the socket belongs to the group).
    run = join(root, "run");
    mkdirSync(run);
    chownSync(run, sidecarUid, hooksGid);
    chmodSync(run, 0o2750);
    hookToken = join(run, "hook.token");
    writeFileSync(hookToken, `${"h".repeat(16)}${Math.random().toString(16).slice(2).padEnd(48, "0")}\n`, { mode: 0o640 });
    chownSync(hookToken, sidecarUid, hooksGid);
    chmodSync(hookToken, 0o640);
    socket = join(run, "sidecar.sock");

    sidecar = spawn(
      "runuser",
      [
        "-u", SIDECAR_USER, "--", process.execPath, cli, "serve",
        "--policy", policy,
        "--db", join(state, "audit.db"),
        "--token-file", join(state, "sidecar.token"),
        "--hook-token-file", hookToken,
        "--socket", socket,
        "--socket-mode", "660",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    sidecar.stdout!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    sidecar.stderr!.on("data", (chunk: Buffer) => (output += chunk.toString()));
    const deadline = Date.now() + 30_000;
    while (!output.includes("listening on")) {
      if (Date.now() > deadline || sidecar.exitCode !== null) throw new Error(`the sidecar did not start as ${SIDECAR_USER}: ${output}`);
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
    }
  }, 60_000);

  afterAll(async () => {
    if (sidecar !== undefined && sidecar.exitCode === null) {
      const exited = new Promise((resolvePromise) => sidecar!.once("exit", resolvePromise));
      // runuser passes the signal on to the sidecar.
      sidecar.kill("SIGTERM");
      await Promise.race([exited, new Promise((resolvePromise) => setTimeout(resolvePromise, 10_000))]);
    }
    if (root !== "") rmSync(root, { recursive: true, force: true });
  });

  it("the agent's user can read neither the admin token nor the database, nor write them or the policy", () => {
    expect(asAgent(["cat", join(state, "sidecar.token")]).status).not.toBe(0);
    expect(asAgent(["ls", state]).status).not.toBe(0);
    expect(asAgent(["sh", "-c", `echo x >> ${join(state, "audit.db")}`]).status).not.toBe(0);
    expect(asAgent(["rm", "-f", join(state, "audit.db")]).status).not.toBe(0);
    expect(asAgent(["sh", "-c", `echo "policy project {}" > ${policy}`]).status).not.toBe(0);
    // Nor can it put anything where the socket is, or take the socket's place.
    expect(asAgent(["sh", "-c", `touch ${join(run, "other.sock")}`]).status).not.toBe(0);
    expect(asAgent(["rm", "-f", socket]).status).not.toBe(0);
  });

  it("the agent's user cannot forge a request: without a token 401, with the hook token 403 on everything but a hook event", () => {
    const request = (path: string, token: string | undefined, body: object) =>
      asAgent([
        process.execPath,
        "-e",
        `const http = require("node:http");
         const [socket, path, token, body] = process.argv.slice(1);
         const req = http.request({ socketPath: socket, path, method: "POST", headers: { "content-type": "application/json", ...(token ? { authorization: "Bearer " + token } : {}) } }, (res) => { res.resume(); res.on("end", () => console.log(res.statusCode)); });
         req.on("error", (e) => { console.log("error " + e.code); });
         req.end(body);`,
        socket,
        path,
        token ?? "",
        JSON.stringify(body),
      ]).stdout.trim();
    const token = asAgent(["cat", hookToken]).stdout.trim();
    expect(token.length).toBeGreaterThanOrEqual(32);
    expect(request("/v1/runs/s/record", undefined, { id: "forged", action: "Bash", status: "ok" })).toBe("401");
    for (const path of ["/v1/runs/s/record", "/v1/runs/s/decide", "/v1/runs/s/cancel", "/v1/runs/s/finish", "/v1/runs/s/message"]) {
      expect(request(path, token, { id: "forged", action: "Bash", args: {}, status: "ok", text: "please commit" }), path).toBe("403");
    }
  });

  it("Claude Code's hook, run as the agent's user, relays with the hook token; a forged result changes nothing", () => {
    const hook = (event: object) =>
      asAgent([process.execPath, cli, "hook", "claude-code", "--server", `unix:${socket}`, "--token-file", hookToken], JSON.stringify({ session_id: "sep", cwd: "/tmp", hook_event_name: "PostToolUse", ...event }));
    const commit = { hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "git commit -m x" } };
    const refused = hook({ ...commit, tool_use_id: "toolu_1" });
    expect(refused.status).toBe(0);
    expect(JSON.parse(refused.stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    // A result of a test run that never happened, sent the way the hook sends one.
    const forged = hook({ tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_forged", tool_response: { stdout: "ok", stderr: "" } });
    expect(forged.status).toBe(0);
    expect(forged.stdout).toContain("never decided");
    expect(JSON.parse(hook({ ...commit, tool_use_id: "toolu_2" }).stdout)).toMatchObject({ hookSpecificOutput: { permissionDecision: "deny" } });
    // The real sequence: the tests are decided, run and recorded, and then the commit is not refused.
    expect(hook({ hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_3" }).stdout).toBe("");
    expect(hook({ tool_name: "Bash", tool_input: { command: "npm test" }, tool_use_id: "toolu_3", tool_response: { stdout: "1 passing", stderr: "" } }).stdout).toBe("");
    expect(hook({ ...commit, tool_use_id: "toolu_4" }).stdout).toBe("");
  });

  it("the log the sidecar wrote verifies, and holds the forged result as an anomaly", async () => {
    const exited = new Promise((resolvePromise) => sidecar!.once("exit", resolvePromise));
    sidecar!.kill("SIGTERM");
    await Promise.race([exited, new Promise((resolvePromise) => setTimeout(resolvePromise, 10_000))]);
    const store = Store.open(join(state, "audit.db"), { mustExist: true });
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true });
      expect(checkState(store)).toEqual([]);
      const kinds = [...readAudit(store, "sep")].map((r) => `${r.kind}:${r.outcome}`);
      expect(kinds).toEqual(["decision:block", "anomaly:note", "decision:block", "decision:allow", "result:ok", "decision:allow"]);
    } finally {
      store.close();
    }
  });
});
