import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { CallIds, Routes } from "../src/mcp-gateway.js";
import { Enforcer, loadPolicy, readAudit, runMcpGateway, Store } from "../src/index.js";

/**
 * The gateway's own identity of a call: the client's JSON-RPC id only routes the answer. Two
 * `tools/call` requests in flight at once under one JSON-RPC id, in front of the reference
 * filesystem MCP server, are two calls: each decided, forwarded, answered and recorded as its own.
 */

const root = join(import.meta.dirname, "..", "..", "..");
const server = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const POLICY = `policy files {
  /// Credential files are never read.
  rule no_credentials: abs(action in {read_text_file} and path ~ "*.env")
    block "Do not read credential files."
}
`;

let scratch = "";
let served = "";
let store: Store;
beforeEach(() => {
  scratch = realpathSync(mkdtempSync(join(tmpdir(), "vigil-gateway-ids-")));
  served = join(scratch, "served");
  mkdirSync(served);
  writeFileSync(join(served, "a.txt"), "the first file\n");
  writeFileSync(join(served, "b.txt"), "the second file\n");
  writeFileSync(join(scratch, "files.vigil"), POLICY);
  store = Store.open(join(scratch, "audit.db"));
});
afterEach(() => {
  store.close();
  rmSync(scratch, { recursive: true, force: true });
});

/** A gateway in this process, its client side on two streams: send JSON-RPC lines, wait for answers by id. */
async function gateway(runId: string) {
  const enforcer = new Enforcer(store, await loadPolicy([join(scratch, "files.vigil")], store));
  const input = new PassThrough();
  const output = new PassThrough();
  const answers: { id?: unknown; result?: { content?: { text?: string }[]; isError?: boolean } }[] = [];
  let buffered = "";
  output.on("data", (chunk: Buffer) => {
    buffered += chunk.toString("utf8");
    for (let end = buffered.indexOf("\n"); end >= 0; end = buffered.indexOf("\n")) {
      answers.push(JSON.parse(buffered.slice(0, end)));
      buffered = buffered.slice(end + 1);
    }
  });
  const stop = new AbortController();
  const running = runMcpGateway({ enforcer, runId, command: process.execPath, args: [server, served], cwd: scratch, input, output, signal: stop.signal, log: () => {} });
  const send = (message: object) => input.write(`${JSON.stringify(message)}\n`);
  const answered = async (count: number) => {
    const deadline = Date.now() + 20_000;
    while (answers.filter((a) => a.id !== undefined).length < count) {
      if (Date.now() > deadline) throw new Error(`${count} answers did not come: ${JSON.stringify(answers)}`);
      await new Promise((resolvePromise) => setTimeout(resolvePromise, 50));
    }
    return answers.filter((a) => a.id !== undefined);
  };
  const end = async () => {
    stop.abort();
    await running;
  };
  send({ jsonrpc: "2.0", id: 7, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } } });
  await answered(1);
  send({ jsonrpc: "2.0", method: "notifications/initialized" });
  return { send, answered, end };
}

const read = (path: string) => ({ jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "read_text_file", arguments: { path } } });

describe("the MCP gateway's identity of a call", () => {
  it("decides, forwards, answers and records apart two calls in flight under one JSON-RPC id (the id of the initialize request too)", async () => {
    const client = await gateway("same-id");
    try {
      client.send(read(join(served, "a.txt")));
      client.send(read(join(served, "b.txt")));
      const answers = (await client.answered(3)).slice(1);
      expect(answers.map((a) => a.id)).toEqual([7, 7]);
      const texts = answers.map((a) => a.result?.content?.map((c) => c.text).join("") ?? "").sort();
      expect(texts[0]).toContain("the first file");
      expect(texts[1]).toContain("the second file");
    } finally {
      await client.end();
    }
    const calls = store.db.prepare("SELECT call_id, args, state FROM calls WHERE run_id = 'same-id' ORDER BY audit_seq").all() as { call_id: string; args: string; state: string }[];
    expect(calls.map((c) => [JSON.parse(c.args).path, c.state])).toEqual([
      [join(served, "a.txt"), "recorded"],
      [join(served, "b.txt"), "recorded"],
    ]);
    expect(calls[0]!.call_id).not.toBe(calls[1]!.call_id);
    // Each call's own result, whichever the server answered first (the events take the order results arrive in).
    const outputs = store.db.prepare("SELECT call_id, output FROM events WHERE run_id = 'same-id' ORDER BY call_id").all() as { call_id: string; output: string }[];
    expect(outputs.map((o) => [o.call_id, o.output.includes("first") ? "a" : "b"])).toEqual(
      [
        [calls[0]!.call_id, "a"],
        [calls[1]!.call_id, "b"],
      ].sort(([x], [y]) => x!.localeCompare(y!)),
    );
    const audit = [...readAudit(store, "same-id")].filter((r) => r.kind !== "finish").map((r) => `${r.kind}:${r.outcome}:${r.callId}`);
    expect(audit.filter((r) => r.startsWith("decision:allow:"))).toEqual([`decision:allow:${calls[0]!.call_id}`, `decision:allow:${calls[1]!.call_id}`]);
    expect(audit.filter((r) => r.startsWith("result:ok:")).sort()).toEqual([`result:ok:${calls[0]!.call_id}`, `result:ok:${calls[1]!.call_id}`].sort());
  });

  it("keeps the calls of two gateways in one run apart when their clients use the same ids", async () => {
    for (const file of ["a.txt", ".env", "a.txt"]) {
      const client = await gateway("shared");
      try {
        client.send(read(join(served, file)));
        const [, answer] = await client.answered(2);
        expect(answer!.result?.isError === true).toBe(file === ".env");
      } finally {
        await client.end();
      }
    }
    const calls = store.db.prepare("SELECT call_id, decision, state FROM calls WHERE run_id = 'shared' ORDER BY audit_seq").all() as { call_id: string; decision: string; state: string }[];
    expect(calls.map((c) => `${c.decision}:${c.state}`)).toEqual(["allow:recorded", "block:pending", "allow:recorded"]);
    expect(new Set(calls.map((c) => c.call_id)).size).toBe(3);
  });
});

describe("CallIds and Routes", () => {
  it("draws ids no other gateway draws, in order", () => {
    const one = new CallIds();
    const other = new CallIds();
    const ids = [one.next(), one.next(), other.next()];
    expect(ids[0]).toMatch(/^mcp-[0-9a-f-]{36}-1$/);
    expect(ids[1]).toBe(ids[0]!.replace(/-1$/, "-2"));
    expect(new Set(ids).size).toBe(3);
  });

  it("sends each request under its own id and routes each answer back under the client's, once", () => {
    const routes = new Routes();
    const first = routes.out({ jsonrpc: "2.0", id: "2", method: "tools/call" }, { callId: "c1", name: "t" });
    const second = routes.out({ jsonrpc: "2.0", id: "2", method: "ping" });
    expect(first.id).not.toBe(second.id);
    expect(routes.idsOf("2")).toEqual([first.id, second.id]);
    expect(routes.back(second.id)).toEqual({ clientId: "2" });
    expect(routes.back(first.id)).toEqual({ clientId: "2", call: { callId: "c1", name: "t" } });
    expect(routes.back(first.id)).toBeUndefined();
    expect(routes.back("2")).toBeUndefined();
  });
});
