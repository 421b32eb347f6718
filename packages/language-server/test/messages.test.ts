import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cursor, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * `"messages": true` in vigil.config.json: the sample traces are read with the conversation's
 * messages as events (as `vigilc check --messages`), so completion offers `user_message`, the
 * closed world knows `text`, and the lenses and `vigil/checkTrace` judge rules about messages.
 */

const chat = [
  { role: "system", content: "You book trains." },
  { role: "user", content: "Book the 9:40 to Lyon." },
  { role: "assistant", content: "Shall I book TGV 6611?" },
  { role: "user", content: "yes" },
  { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "book_train", arguments: '{"train": "TGV 6611"}' } }] },
  { role: "tool", tool_call_id: "c1", content: "booked" },
];
const policy = 'policy trains {\n  /// Book only after a yes.\n  rule confirmed: prec(action in {book_train}, action in {user_message} and text ~ "yes")\n}\n';

async function workspaceWith(config: unknown): Promise<string> {
  const directory = await mkdtemp(join(tmpdir(), "vigil-messages-"));
  await writeFile(join(directory, "vigil.config.json"), JSON.stringify(config));
  await writeFile(join(directory, "chat.json"), JSON.stringify(chat, null, 2));
  await writeFile(join(directory, "trains.vigil"), policy);
  return directory;
}

async function completionLabels(server: TestServer, uri: string, marked: string, version: number): Promise<string[]> {
  const { text, position } = cursor(marked);
  await server.change(uri, text, version);
  const list = await server.request("textDocument/completion", { textDocument: { uri }, position });
  return list.items.map((item: any) => item.label);
}

describe('a config with "messages": true', () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;

  beforeAll(async () => {
    workspace = await workspaceWith({ traces: ["chat.json"], messages: true });
    server = await TestServer.start({ folders: [workspace] });
    uri = uriOf(join(workspace, "trains.vigil"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it("knows the message actions and `text`: no closed-world warning, and the rule holds", async () => {
    const published = await server.open(uri, policy);
    expect(published.diagnostics).toEqual([]);
    const lenses = await server.request("textDocument/codeLens", { textDocument: { uri } });
    expect(lenses.map((lens: any) => lens.command.title)).toEqual(["holds on 1 trace"]);
  });

  it("offers the message actions after `action in {`", async () => {
    const labels = await completionLabels(server, uri, "policy trains {\n  rule r: abs(action in {<|>\n}\n", 2);
    expect(labels).toEqual(expect.arrayContaining(["user_message", "agent_message", "book_train"]));
  });

  it("judges a trace file of vigil/checkTrace with messages too", async () => {
    await server.change(uri, policy, 3);
    const result = await server.request("vigil/checkTrace", { uri, trace: join(workspace, "chat.json") });
    expect(result.errors).toEqual([]);
    expect(result.statements.map((s: any) => [s.name, s.holds])).toEqual([["confirmed", true]]);
  });
});

describe("a config without messages", () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;

  beforeAll(async () => {
    workspace = await workspaceWith({ traces: ["chat.json"] });
    server = await TestServer.start({ folders: [workspace] });
    uri = uriOf(join(workspace, "trains.vigil"));
  });
  afterAll(async () => {
    await server?.close();
    await rm(workspace, { recursive: true, force: true });
  });

  it("reads the calls only: `user_message` is outside the closed world, and the rule is violated", async () => {
    const published = await server.open(uri, policy);
    expect(published.diagnostics.map((d: any) => [d.code, d.message.split("\n")[0]])).toEqual([
      ["V1101", "the action `user_message` does not occur in the trace, so it matches no event"],
      ["V1102", expect.stringContaining("`text`")],
    ]);
    const labels = await completionLabels(server, uri, "policy trains {\n  rule r: abs(action in {<|>\n}\n", 2);
    expect(labels).toEqual(["book_train"]);
  });

  it('says what is wrong with a "messages" that is not true or false', async () => {
    const since = server.notifications.length;
    await writeFile(join(workspace, "vigil.config.json"), JSON.stringify({ traces: ["chat.json"], messages: "yes" }));
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: uriOf(join(workspace, "vigil.config.json")), type: 2 }] });
    const status = await server.waitFor("vigil/status", (p) => typeof p.tooltip === "string" && p.tooltip.includes('"messages"'), 20_000, since);
    expect(status.tooltip).toContain('"messages" in vigil.config.json must be true or false');
  });
});
