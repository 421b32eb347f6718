import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { TestServer, uriOf } from "./support/lsp-client.js";

/** Bad input is answered with errors (or ignored, for notifications), never with a crash. */

let server: TestServer;
let folder: string;
let uri: string;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "vigil-ls-bad-"));
  server = await TestServer.start({ folders: [folder] });
  uri = uriOf(join(folder, "p.vigil"));
  await server.open(uri, "policy p {\n  rule r: abs(action in {a})\n}\n");
});
afterAll(async () => {
  await server?.close();
});

const invalidParams = -32602;

async function rejection(method: string, params: unknown): Promise<{ code: number; message: string }> {
  try {
    await server.request(method, params);
  } catch (error) {
    return { code: (error as { code: number }).code, message: (error as Error).message };
  }
  throw new Error(`${method} did not fail`);
}

it("answers a request about an unknown document with an error", async () => {
  const error = await rejection("textDocument/hover", { textDocument: { uri: "file:///nowhere/q.vigil" }, position: { line: 0, character: 0 } });
  expect(error).toEqual({ code: invalidParams, message: "unknown document file:///nowhere/q.vigil: it is not open" });
  for (const method of ["textDocument/completion", "textDocument/definition", "textDocument/documentSymbol", "textDocument/formatting", "textDocument/codeLens", "textDocument/semanticTokens/full"]) {
    expect((await rejection(method, { textDocument: { uri: "file:///nowhere/q.vigil" }, position: { line: 0, character: 0 }, options: {} })).code).toBe(invalidParams);
  }
});

it("answers malformed parameters with an error", async () => {
  expect(await rejection("textDocument/hover", { textDocument: { uri } })).toEqual({ code: invalidParams, message: "the request has no valid position ({ line, character })" });
  expect(await rejection("textDocument/hover", { position: { line: 0, character: 0 } })).toEqual({ code: invalidParams, message: "the request names no document (`textDocument.uri`)" });
  expect((await rejection("textDocument/completion", { textDocument: { uri }, position: { line: "one", character: 0 } })).code).toBe(invalidParams);
  expect((await rejection("textDocument/rename", { textDocument: { uri }, position: { line: 1, character: 8 } })).code).toBe(invalidParams);
  expect((await rejection("vigil/checkTrace", {})).message).toContain("vigil/checkTrace needs { uri");
  expect((await rejection("vigil/checkTrace", { uri, trace: "/tmp/x.jsonl", engine: "z3" })).message).toBe('unknown engine `z3`: use "eval" or "smt"');
  expect((await rejection("vigil/checkTrace", { uri: "untitled:Untitled-1", trace: "/tmp/x.jsonl" })).message).toContain("unknown document untitled:Untitled-1");
  expect((await rejection("vigil/signature", { uri: 42 })).code).toBe(invalidParams);
  expect((await rejection("vigil/noSuchRequest", {})).code).toBe(-32601);
});

it("takes positions past the end of a line or of the text", async () => {
  const hover = await server.request("textDocument/hover", { textDocument: { uri }, position: { line: 1_000_000, character: 5 } });
  expect(hover).toBeNull();
  const completion = await server.request("textDocument/completion", { textDocument: { uri }, position: { line: 1, character: 9_999 } });
  expect(Array.isArray(completion.items)).toBe(true);
});

it("ignores notifications about documents it does not have, and reads any text", async () => {
  await server.connection.sendNotification("textDocument/didChange", { textDocument: { uri: "file:///nowhere/q.vigil", version: 2 }, contentChanges: [{ text: "x" }] });
  await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri: "file:///nowhere/q.vigil" } });
  const garbage = "\u0000\uffff policy { rule : prec( (((( \"\\q \n".repeat(200) + "\ud800";
  const published = await server.open(uriOf(join(folder, "garbage.vigil")), garbage);
  expect(published.diagnostics.length).toBeGreaterThan(0);
  const deep = `policy d {\n  rule r: abs(${"(".repeat(5000)}action in {a}${")".repeat(5000)})\n}\n`;
  const nested = await server.open(uriOf(join(folder, "deep.vigil")), deep);
  expect(nested.diagnostics.map((d: any) => d.code)).toContain("V0006");
});

it("is still serving after all of that", async () => {
  const symbols = await server.request("textDocument/documentSymbol", { textDocument: { uri } });
  expect(symbols[0].name).toBe("p");
  expect(server.process.exitCode).toBeNull();
  expect(server.stderr).toBe("");
  // No request failed inside the server: every error above was an answer, not a crash caught late.
  expect(server.notifications.filter((n) => n.method === "window/logMessage")).toEqual([]);
});

it("has no lenses without sample traces", async () => {
  expect(await server.request("textDocument/codeLens", { textDocument: { uri } })).toEqual([]);
});
