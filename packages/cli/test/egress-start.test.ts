import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, get, type Server } from "node:http";
import { createServer as createNetServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { examples, vigilc } from "./support/run-vigilc.js";
import { freePort } from "../../../test/support/ports.js";

/**
 * The hook starts the egress proxy when a session starts, and never takes another program on the
 * proxy's port for it: the sandbox would send every connection there, undecided.
 */

let project = "";
let started: number[] = [];
beforeEach(() => {
  project = mkdtempSync(join(tmpdir(), "vigil-egress-start-"));
  mkdirSync(join(project, ".claude"));
  copyFileSync(join(examples, "coding-agent", "coding-agent.vigil"), join(project, ".claude", "policy.vigil"));
  started = [];
});
afterEach(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {
      // Already gone.
    }
  }
  rmSync(project, { recursive: true, force: true });
});

const hook = (ports: string, event: Record<string, unknown>) =>
  vigilc(["hook", "claude-code", "--policy", ".claude/policy.vigil", "--egress", ports], {
    cwd: project,
    env: { CLAUDE_PROJECT_DIR: project },
    input: JSON.stringify({ session_id: "s1", transcript_path: join(project, "none.jsonl"), cwd: project, ...event }),
  });
const sessionStart = (ports: string) => hook(ports, { hook_event_name: "SessionStart", source: "startup" });
const preToolUse = (ports: string, tool: string, input: Record<string, unknown>) => hook(ports, { hook_event_name: "PreToolUse", tool_name: tool, tool_input: input, tool_use_id: `t-${tool}` });

function identity(port: number): Promise<{ vigil?: string; database?: string; pid?: string }> {
  return new Promise((resolve, reject) => {
    get({ host: "127.0.0.1", port, path: "/.well-known/vigil-egress" }, (response) => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve(JSON.parse(body) as { vigil?: string; database?: string; pid?: string }));
    }).on("error", reject);
  });
}

describe("the egress proxy, started by the hook when a session starts", () => {
  it("refuses shell calls while the SOCKS port is held by another program, the HTTP port being Vigil's proxy", async () => {
    const [http, socksFree] = [await freePort(), await freePort()];
    expect((await sessionStart(`${http}:${socksFree}`)).code).toBe(0);
    const said = await identity(http);
    started.push(Number(said.pid));
    // A program that answers SOCKS5 as a proxy would, on another port: the sandbox would send it everything.
    const squatter = createNetServer((socket) => socket.once("data", () => socket.end(Buffer.from([5, 0]))));
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    try {
      const ports = `${http}:${(squatter.address() as { port: number }).port}`;
      const shell = await preToolUse(ports, "Bash", { command: "ls" });
      expect(shell.code).toBe(2);
      expect(shell.stderr).toContain("are held by something that is not Vigil's egress proxy");
      // Vigil's own two ports: decided as usual.
      expect((await preToolUse(`${http}:${socksFree}`, "Bash", { command: "ls" })).code).toBe(0);
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });

  it("with nothing on the proxy's port, a shell call is decided as usual (the sandbox then has no network at all)", async () => {
    const shell = await preToolUse(`${await freePort()}:${await freePort()}`, "Bash", { command: "ls" });
    expect(shell.stderr).toBe("");
    expect(shell.code).toBe(0);
  });

  it("starts `vigilc egress` for the hook's database, and a second session finds it running", async () => {
    const [http, socks] = [await freePort(), await freePort()];
    const first = await sessionStart(`${http}:${socks}`);
    expect(first.stderr).toBe("");
    expect(first.code).toBe(0);
    const said = await identity(http);
    started.push(Number(said.pid));
    expect(said).toMatchObject({ vigil: "egress", database: join(project, ".vigil", "audit.db") });
    const second = await sessionStart(`${http}:${socks}`);
    expect(second.code).toBe(0);
    expect((await identity(http)).pid).toBe(said.pid);
    expect(readFileSync(join(project, ".vigil", "egress.log"), "utf8")).toContain("vigil egress proxy listening");
  });

  it("never takes another program on the proxy's port for the proxy: says so when the session starts, and refuses shell calls while it holds the port", async () => {
    const squatter: Server = createServer((_request, response) => response.end("a local service"));
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    try {
      const port = (squatter.address() as { port: number }).port;
      const ports = `${port}:${await freePort()}`;
      const answered = await sessionStart(ports);
      expect(answered.stderr).toContain(`127.0.0.1:${port} or :`);
      expect(answered.stderr).toContain("is taken by something that is not Vigil's egress proxy");
      const shell = await preToolUse(ports, "Bash", { command: "ls" });
      expect(shell.code).toBe(2);
      expect(shell.stdout).toContain('"permissionDecision":"deny"');
      expect(shell.stderr).toContain("are held by something that is not Vigil's egress proxy");
      // Claude Code's own tools run outside the sandbox and do not use the proxy: decided as usual.
      const read = await preToolUse(ports, "Read", { file_path: join(project, "notes.txt") });
      expect(read.code).toBe(0);
      expect(read.stdout).toBe("");
    } finally {
      await new Promise((resolve) => squatter.close(resolve));
    }
  });
});
