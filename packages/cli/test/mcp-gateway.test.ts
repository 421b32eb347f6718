import { existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { readAudit, Store, verifyAudit } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cli, root } from "./support/run-vigilc.js";

/**
 * `vigilc mcp-gateway` in front of the reference filesystem MCP server
 * (@modelcontextprotocol/server-filesystem), driven by the MCP SDK's own client over stdio, the
 * way an agent runs it: the client spawns `vigilc mcp-gateway … -- node <server> <dir>`.
 */

const POLICY = `policy files {
  /// Credential files are never read.
  rule no_credentials: abs(action in {read_text_file, read_file, read_multiple_files} and path ~ "*.env")
    block "Do not read credential files; ask the user for the value you need."
  /// A file is written only after a directory was listed in this session.
  rule list_before_write: prec(action in {write_file}, action in {list_directory} and status = ok)
    block "List the directory (list_directory) before writing into it."
}
`;

const server = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
let scratch = "";
let served = "";
let other = "";
let policy = "";

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npx tsc -b\` before the CLI tests`);
  if (!existsSync(server)) throw new Error(`${server} is missing (a development dependency of @vigil/runtime)`);
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "vigil-mcp-")));
  served = join(scratch, "served");
  other = join(scratch, "other");
  mkdirSync(served);
  mkdirSync(other);
  writeFileSync(join(served, "notes.txt"), "hello from the served directory\n");
  writeFileSync(join(served, ".env"), "API_TOKEN=secret\n");
  policy = join(scratch, "files.vigil");
  writeFileSync(policy, POLICY);
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

interface ToolResult {
  readonly isError?: boolean;
  readonly content: readonly { readonly type: string; readonly text?: string }[];
}
const text = (result: ToolResult) => result.content.map((c) => c.text ?? "").join("\n");

async function connect(database: string, roots?: () => string[]): Promise<{ client: Client; transport: StdioClientTransport; stderr: () => string }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cli, "mcp-gateway", "--policy", policy, "--db", database, "--run", "session-1", "--", process.execPath, server, served],
    cwd: scratch,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
  const client = new Client({ name: "vigil-test-client", version: "1.0.0" }, { capabilities: roots !== undefined ? { roots: { listChanged: true } } : {} });
  if (roots !== undefined) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots().map((dir) => ({ uri: pathToFileURL(dir).href, name: dir })) }));
  await client.connect(transport);
  return { client, transport, stderr: () => stderr };
}

/** Calls a tool; every call has a time limit, so a hang fails the test instead of stalling it. */
async function callTool(client: Client, name: string, args: Record<string, unknown>): Promise<ToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, { timeout: 30_000 })) as ToolResult;
}

describe("vigilc mcp-gateway", () => {
  it("forwards the server's tools, blocks what the policy forbids with the reason, and logs every decision", async () => {
    const database = join(scratch, "gateway.db");
    const { client, transport, stderr } = await connect(database);
    try {
      const tools = (await client.listTools()).tools.map((tool) => tool.name);
      expect(tools).toEqual(expect.arrayContaining(["read_text_file", "write_file", "list_directory", "list_allowed_directories"]));

      // A write before any listing: blocked, the server never sees it.
      const early = await callTool(client, "write_file", { path: join(served, "out.txt"), content: "draft" });
      expect(early.isError).toBe(true);
      expect(text(early)).toContain("files.list_before_write");
      expect(text(early)).toContain("A file is written only after a directory was listed in this session.");
      expect(text(early)).toContain("List the directory (list_directory) before writing into it.");
      expect(existsSync(join(served, "out.txt"))).toBe(false);

      // An allowed call reaches the server and its result comes back.
      const notes = await callTool(client, "read_text_file", { path: join(served, "notes.txt") });
      expect(notes.isError).not.toBe(true);
      expect(text(notes)).toContain("hello from the served directory");

      const secret = await callTool(client, "read_text_file", { path: join(served, ".env") });
      expect(secret.isError).toBe(true);
      expect(text(secret)).toContain("Do not read credential files");
      expect(text(secret)).not.toContain("API_TOKEN");

      // The prec rule is satisfied once the earlier call happened.
      const listing = await callTool(client, "list_directory", { path: served });
      expect(text(listing)).toContain("notes.txt");
      const write = await callTool(client, "write_file", { path: join(served, "out.txt"), content: "final" });
      expect(write.isError).not.toBe(true);
      expect(readFileSync(join(served, "out.txt"), "utf8")).toBe("final");

      // A call the server itself refuses (outside its directories) is forwarded, and recorded as failed.
      const outside = await callTool(client, "read_text_file", { path: join(other, "nothing.txt") });
      expect(outside.isError).toBe(true);

      // Other requests go through as they are: the server's answer, even an error of its own.
      await expect(client.ping()).resolves.toEqual({});
      await expect(client.listResources()).rejects.toThrow(/Method not found/);
    } finally {
      await client.close();
      await transport.close();
    }

    // The gateway ends with its client; the run's verdicts are logged last.
    const store = await waitForFinish(database);
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true });
      // The records of the run (the policy's own record, of no run, aside).
      const records = [...readAudit(store)].filter((r) => r.runId !== "").map((r) => `${r.kind}:${r.outcome}:${(r.body["call"] as { action?: string } | undefined)?.action ?? ""}`);
      expect(records).toEqual([
        "decision:block:write_file",
        "decision:allow:read_text_file",
        "result:ok:read_text_file",
        "decision:block:read_text_file",
        "decision:allow:list_directory",
        "result:ok:list_directory",
        "decision:allow:write_file",
        "result:ok:write_file",
        "decision:allow:read_text_file",
        "result:error:read_text_file",
        // The blocked calls never ran: the run that happened keeps every rule.
        "finish:safe:",
      ]);
      const output = store.db.prepare("SELECT output FROM events WHERE run_id = 'session-1' AND action = 'read_text_file' AND status = 'ok'").get() as { output: string };
      expect(output.output).toContain("hello from the served directory");
    } finally {
      store.close();
    }
    expect(stderr()).toContain("Secure MCP Filesystem Server running on stdio");
  });

  it("forwards the server's requests to the client and the client's notifications to the server (roots)", async () => {
    let roots = [other];
    const { client, transport } = await connect(join(scratch, "roots.db"), () => roots);
    try {
      // On initialization the server asks the client for its roots (roots/list, server to client).
      const allowed = async () => text(await callTool(client, "list_allowed_directories", {}));
      await waitUntil(async () => (await allowed()).includes(other));
      expect(await allowed()).not.toContain(served);
      // A notification from the client makes the server ask again.
      roots = [served, other];
      await client.sendRootsListChanged();
      await waitUntil(async () => (await allowed()).includes(served));
      expect(await allowed()).toContain(other);
    } finally {
      await client.close();
      await transport.close();
    }
  });

  it("refuses, whatever the policy says, a tool call that would change the gateway's own database or policy", async () => {
    // The served directory is the project: the gateway's database and policy live in it, in reach of the server's tools.
    const project = join(scratch, "project");
    mkdirSync(join(project, ".vigil"), { recursive: true });
    const own = join(project, "files.vigil");
    writeFileSync(own, POLICY);
    const database = join(project, ".vigil", "audit.db");
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cli, "mcp-gateway", "--policy", own, "--db", database, "--run", "guarded", "--", process.execPath, server, project],
      cwd: project,
      stderr: "pipe",
    });
    const client = new Client({ name: "vigil-test-client", version: "1.0.0" }, { capabilities: {} });
    await client.connect(transport);
    try {
      await callTool(client, "list_directory", { path: project });
      const rewrite = await callTool(client, "write_file", { path: own, content: "policy files {}\n" });
      expect(rewrite.isError).toBe(true);
      expect(text(rewrite)).toContain("Vigil's guard refused");
      expect(text(rewrite)).toContain("a file of the policy in force");
      expect(readFileSync(own, "utf8")).toBe(POLICY);
      const move = await callTool(client, "move_file", { source: join(project, ".vigil"), destination: join(project, "elsewhere") });
      expect(move.isError).toBe(true);
      expect(text(move)).toContain(join(project, ".vigil"));
      expect(existsSync(database)).toBe(true);
      // Ordinary work in the same directory goes on.
      const write = await callTool(client, "write_file", { path: join(project, "notes.md"), content: "ok" });
      expect(write.isError).not.toBe(true);
    } finally {
      await client.close();
      await transport.close();
    }
  });

  it("exit 2 without a server to run, or with a policy that has errors", async () => {
    const { vigilc } = await import("./support/run-vigilc.js");
    const none = await vigilc(["mcp-gateway", "--policy", policy, "--db", join(scratch, "none.db"), "--"]);
    expect(none.code).toBe(2);
    const broken = join(scratch, "broken.vigil");
    writeFileSync(broken, "policy p { rule r: prec( }\n");
    const invalid = await vigilc(["mcp-gateway", "--policy", broken, "--db", join(scratch, "none.db"), "--", process.execPath, server, served]);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toMatch(/broken\.vigil:1:\d+: V\d{4}/);
  });
});

async function waitUntil(condition: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for the condition");
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
}

/** The database once the gateway, ended by its client, has logged the run's verdicts. */
async function waitForFinish(database: string): Promise<Store> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const store = Store.open(database, { mustExist: true });
    const finished = store.db.prepare("SELECT 1 FROM audit WHERE kind = 'finish'").get() !== undefined;
    if (finished) return store;
    store.close();
    if (Date.now() > deadline) throw new Error("the gateway did not log the end of its run");
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
}
