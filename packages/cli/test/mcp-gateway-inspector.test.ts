import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readAudit, Store, verifyAudit } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, root } from "./support/paths.js";

/**
 * `vigilc mcp-gateway` driven by the MCP Inspector's CLI (@modelcontextprotocol/inspector-cli, the
 * `--cli` mode of the MCP Inspector) in front of the reference filesystem MCP server. The Inspector
 * keeps `--` for itself, so it starts the gateway with `--server-command`; each of its invocations
 * is a new connection and a new gateway process that sends its tools/call under the same JSON-RPC
 * id as the last, and every call must still be recorded and audited as its own.
 */

const POLICY = `policy files {
  /// Credential files are never read.
  rule no_credentials: abs(action in {read_text_file, read_file, read_multiple_files} and path ~ "*.env")
    block "Do not read credential files; ask the user for the value you need."
}
`;

const inspector = join(root, "node_modules", "@modelcontextprotocol", "inspector-cli", "build", "cli.js");
const server = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
let scratch = "";
let served = "";
let policy = "";

beforeAll(() => {
  for (const needed of [inspector, server]) if (!existsSync(needed)) throw new Error(`${needed} is missing (a development dependency)`);
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "vigil-inspector-")));
  served = join(scratch, "served dir");
  mkdirSync(served);
  writeFileSync(join(served, "notes.txt"), "hello from the served directory\n");
  writeFileSync(join(served, ".env"), "API_TOKEN=secret\n");
  policy = join(scratch, "files.vigil");
  writeFileSync(policy, POLICY);
  // The Inspector's CLI finds its own package.json only when "../package.json" exists from its working directory.
  writeFileSync(join(scratch, "package.json"), "{}\n");
  mkdirSync(join(scratch, "work"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A word of a `--server-command` line, quoted so that blanks and quotes in it stay in it. */
const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

interface Outcome {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** One invocation of the Inspector's CLI against a new gateway; the whole process group is killed after 30 s. */
function inspect(database: string, request: readonly string[]): Promise<Outcome> {
  const serverCommand = [process.execPath, server, served].map(quote).join(" ");
  const args = [inspector, "--cli", process.execPath, cli, "mcp-gateway", "--policy", policy, "--db", database, "--run", "inspected", "--server-command", serverCommand, ...request];
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, args, { cwd: join(scratch, "work"), detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
    child.stderr.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
    const timer = setTimeout(() => {
      process.kill(-child.pid!, "SIGKILL");
      reject(new Error(`the Inspector did not finish in 30 s: ${stderr}`));
    }, 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
  });
}

interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { readonly text?: string }[];
}
const text = (result: ToolResult) => result.content.map((c) => c.text ?? "").join("\n");
const callTool = async (database: string, tool: string, path: string): Promise<ToolResult> => {
  const outcome = await inspect(database, ["--method", "tools/call", "--tool-name", tool, "--tool-arg", `path=${path}`]);
  expect(outcome.code, outcome.stderr).toBe(0);
  return JSON.parse(outcome.stdout) as ToolResult;
};

describe("vigilc mcp-gateway, driven by the MCP Inspector's CLI", () => {
  it("lists the server's tools, forwards an allowed call, refuses a forbidden one with the rule's text, and records every call apart", async () => {
    const database = join(scratch, "inspected.db");
    const listed = await inspect(database, ["--method", "tools/list"]);
    expect(listed.code, listed.stderr).toBe(0);
    const tools = (JSON.parse(listed.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(["read_text_file", "list_directory"]));

    // The same call twice, each in its own process under the same JSON-RPC id: both run.
    for (let i = 0; i < 2; i++) {
      const notes = await callTool(database, "read_text_file", join(served, "notes.txt"));
      expect(notes.isError).not.toBe(true);
      expect(text(notes)).toContain("hello from the served directory");
    }
    const secret = await callTool(database, "read_text_file", join(served, ".env"));
    expect(secret.isError).toBe(true);
    expect(text(secret)).toContain("files.no_credentials");
    expect(text(secret)).toContain("Credential files are never read.");
    expect(text(secret)).toContain("Do not read credential files; ask the user for the value you need.");
    expect(text(secret)).not.toContain("API_TOKEN");

    const store = Store.open(database, { mustExist: true });
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true });
      const calls = store.db.prepare("SELECT call_id, decision, state FROM calls WHERE run_id = 'inspected' ORDER BY audit_seq").all() as { call_id: string; decision: string; state: string }[];
      expect(calls.map((c) => `${c.decision}:${c.state}`)).toEqual(["allow:recorded", "allow:recorded", "block:pending"]);
      expect(new Set(calls.map((c) => c.call_id)).size).toBe(3);
      const records = [...readAudit(store)].filter((r) => r.runId === "inspected" && r.kind !== "finish");
      expect(records.map((r) => `${r.kind}:${r.outcome}`)).toEqual(["decision:allow", "result:ok", "decision:allow", "result:ok", "decision:block"]);
      // Each result is of the call decided just before it, and no two decisions share an id.
      const ids = records.map((r) => r.callId);
      expect(ids[1]).toBe(ids[0]);
      expect(ids[3]).toBe(ids[2]);
      expect(new Set([ids[0], ids[2], ids[4]]).size).toBe(3);
      const outputs = store.db.prepare("SELECT call_id FROM events WHERE run_id = 'inspected' AND action = 'read_text_file' AND status = 'ok'").all();
      expect(outputs).toHaveLength(2);
    } finally {
      store.close();
    }
  });
});
