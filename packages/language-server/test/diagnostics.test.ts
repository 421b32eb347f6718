import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFixture, TestServer, uriOf } from "./support/lsp-client.js";

/** Diagnostics over JSON-RPC: on open, on change, against the sample signature, and when the samples change. */

describe("a workspace with vigil.config.json", () => {
  let server: TestServer;
  let workspace: string;
  let policyUri: string;
  let policyText: string;

  beforeAll(async () => {
    workspace = await copyFixture("workspace");
    server = await TestServer.start({ folders: [workspace] });
    policyUri = uriOf(join(workspace, "release.vigil"));
    policyText = await readFile(join(workspace, "release.vigil"), "utf8");
  });
  afterAll(async () => {
    await server?.close();
  });

  it("checks a document on open against the sample traces and schemas", async () => {
    const published = await server.open(policyUri, policyText);
    // Every action, key and value of the policy occurs in run-a, run-b or tools.json: nothing to say.
    expect(published.diagnostics).toEqual([]);
    const status = await server.waitFor("vigil/status", () => true, 20_000, 0);
    expect(status).toMatchObject({ text: "Vigil: 2 sample traces, 1 tool schema", severity: "info" });
    expect(status.tooltip).toContain("run-a.jsonl");
    expect(status.tooltip).toContain("tools.json");
  });

  it("checks again after every change, with codes, links, severities, related information and fixes", async () => {
    const changed = policyText
      .replace("action in {check}", "action in {chekc}")
      .replace('rule staged', 'rule check_first_again')
      .replace("rule no_prod_rollback", "rule check_first");
    const published = await server.change(policyUri, changed, 2);
    const byCode = (code: string) => published.diagnostics.filter((d: any) => d.code === code);

    const typo = byCode("V1101")[0];
    expect(typo).toMatchObject({ severity: 2, source: "vigil", codeDescription: { href: expect.stringMatching(/language\.md#diagnostics$/) } });
    expect(typo.message).toContain("`chekc`");
    expect(typo.data.fix).toEqual({ title: "replace with `check`", edits: [{ range: typo.range, newText: "check" }] });
    expect(changed.split("\n")[typo.range.start.line]!.slice(typo.range.start.character, typo.range.end.character)).toBe("chekc");

    const duplicate = byCode("V1002")[0];
    expect(duplicate.severity).toBe(1);
    expect(duplicate.relatedInformation).toEqual([{ message: "first declared here", location: { uri: policyUri, range: { start: { line: 6, character: 7 }, end: { line: 6, character: 18 } } } }]);
  });

  it("maps notes to information and marks an unused pattern as unnecessary", async () => {
    const changed = policyText.replace('env in {"prod"} and version', 'env in {"production"} and version').replace("once read_secret", "once action in {read_file}");
    const published = await server.change(policyUri, changed, 3);
    const note = published.diagnostics.find((d: any) => d.code === "V1103");
    expect(note).toMatchObject({ severity: 3 });
    expect(note.message).toContain('"production"');
    const unused = published.diagnostics.find((d: any) => d.code === "V1104");
    expect(unused).toMatchObject({ severity: 2, tags: [1] });
  });

  it("reports syntax errors with recovery: one mistake, one diagnostic, the rest still checked", async () => {
    const broken = policyText.replace("action in {check} and status = ok)", "action in {check} and status = ok").replace("{rollback}", "{rollbak}");
    const published = await server.change(policyUri, broken, 4);
    expect(published.diagnostics.map((d: any) => d.code).sort()).toEqual(["V0001", "V1101"]);
  });

  it("registers watchers for the config and the sample files", async () => {
    await server.change(policyUri, policyText, 5);
    const watchers = await latestWatchers(server, (w) => w.length > 1);
    expect(watchers).toContainEqual({ globPattern: "**/vigil.config.json" });
    expect(watchers).toContainEqual({ globPattern: { baseUri: uriOf(workspace), pattern: "traces/*.jsonl" } });
    expect(watchers).toContainEqual({ globPattern: { baseUri: uriOf(workspace), pattern: "tools.json" } });
  });

  it("checks open documents again when a sample trace changes", async () => {
    const uses = policyText.replace("action in {http_post}", "action in {http_put}");
    const before = await server.change(policyUri, uses, 6);
    expect(before.diagnostics.map((d: any) => d.code)).toEqual(["V1101"]);
    const since = server.notifications.length;
    await writeFile(join(workspace, "traces", "run-c.jsonl"), '{"action": "http_put", "args": {"url": "https://example.org"}}\n');
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: uriOf(join(workspace, "traces", "run-c.jsonl")), type: 1 }] });
    const after = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === policyUri && p.version === 6, 20_000, since);
    expect(after.diagnostics).toEqual([]);
    const status = await server.waitFor("vigil/status", (p) => p.text.startsWith("Vigil: 3 sample traces"), 20_000, since);
    expect(status.severity).toBe("info");
  });

  it("shows the problems of a sample trace on the trace file, and leaves the trace out", async () => {
    const since = server.notifications.length;
    const broken = join(workspace, "traces", "run-c.jsonl");
    await writeFile(broken, '{"action": "http_put"}\n{"action": 42}\n');
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: uriOf(broken), type: 2 }] });
    const onTrace = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uriOf(broken), 20_000, since);
    expect(onTrace.diagnostics[0]).toMatchObject({ code: "T0002", severity: 1, range: { start: { line: 1 } } });
    const status = await server.waitFor("vigil/status", (p) => p.text.includes("left out"), 20_000, since);
    expect(status).toMatchObject({ text: "Vigil: 2 sample traces, 1 tool schema, 1 left out", severity: "warning" });
    const policy = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === policyUri, 20_000, since);
    expect(policy.diagnostics.map((d: any) => d.code)).toEqual(["V1101"]);
  });

  it("reads the config again when it changes", async () => {
    const since = server.notifications.length;
    await writeFile(join(workspace, "vigil.config.json"), JSON.stringify({ traces: ["traces/run-a.jsonl"] }));
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: uriOf(join(workspace, "vigil.config.json")), type: 2 }] });
    const status = await server.waitFor("vigil/status", (p) => p.text === "Vigil: 1 sample trace", 20_000, since);
    expect(status.severity).toBe("info");
    const policy = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === policyUri && p.diagnostics.length > 1, 20_000, since);
    // run-a has no http_post (nor http_put) and no rollback.
    expect(policy.diagnostics.filter((d: any) => d.code === "V1101").map((d: any) => d.message.split("\n")[0])).toEqual([
      "the action `http_put` does not occur in the trace, so it matches no event",
      "the action `rollback` does not occur in the trace, so it matches no event",
    ]);
  });

  it("takes sample traces from the settings too", async () => {
    const since = server.notifications.length;
    await server.changeSettings({ sampleTraces: ["traces/run-b.jsonl"] });
    const status = await server.waitFor("vigil/status", (p) => p.text === "Vigil: 2 sample traces", 20_000, since);
    expect(status.tooltip).toContain("run-b.jsonl");
  });
});

describe("a workspace without vigil.config.json", () => {
  let server: TestServer;
  let folder: string;

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "vigil-ls-bare-"));
    server = await TestServer.start({ folders: [folder] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("checks syntax and structure only, and says so once", async () => {
    const first = await server.open(uriOf(join(folder, "a.vigil")), "policy a {\n  rule r: abs(action in {anything})\n  rule r: abs(action in {b})\n}\n");
    expect(first.diagnostics.map((d: any) => d.code)).toEqual(["V1002"]);
    await server.open(uriOf(join(folder, "b.vigil")), "policy b {\n  rule s: abs(x in {1})\n}\n");
    await server.change(uriOf(join(folder, "b.vigil")), "policy b {\n  rule s: abs(x in {2})\n}\n", 2);
    const messages = server.notifications.filter((n) => n.method === "window/showMessage");
    expect(messages).toHaveLength(1);
    expect(messages[0]!.params).toMatchObject({ type: 3 });
    expect(messages[0]!.params.message).toContain("no vigil.config.json");
    const status = await server.waitFor("vigil/status", () => true, 20_000, 0);
    expect(status).toEqual({
      text: "Vigil: no vigil.config.json — syntax and structure only",
      tooltip: expect.stringContaining("vigil.sampleTraces"),
      severity: "info",
    });
  });

  it("clears a closed document's diagnostics", async () => {
    const uri = uriOf(join(folder, "a.vigil"));
    const since = server.notifications.length;
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
    const cleared = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri, 20_000, since);
    expect(cleared.diagnostics).toEqual([]);
  });
});

/** The watchers of the latest registration of `workspace/didChangeWatchedFiles`, once one passes the test. */
async function latestWatchers(server: TestServer, test: (watchers: any[]) => boolean): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const registrations = server.serverRequests
      .filter((r) => r.method === "client/registerCapability")
      .flatMap((r) => r.params.registrations)
      .filter((r: any) => r.method === "workspace/didChangeWatchedFiles");
    const watchers = registrations[registrations.length - 1]?.registerOptions.watchers;
    if (watchers !== undefined && test(watchers)) return watchers;
    if (Date.now() > deadline) throw new Error(`no matching watcher registration: ${JSON.stringify(watchers)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a client that registers nothing and takes no snippets", () => {
  let server: TestServer;
  let workspace: string;

  beforeAll(async () => {
    workspace = await copyFixture("workspace");
    server = await TestServer.start({
      folders: [workspace],
      capabilities: { workspace: { workspaceEdit: { documentChanges: false } }, textDocument: { completion: { completionItem: { snippetSupport: false } } } },
      initializationOptions: { settings: { sampleTraces: [] } },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("still checks against the samples, completes in plain text and edits without versions", async () => {
    const uri = uriOf(join(workspace, "draft.vigil"));
    const published = await server.open(uri, "policy draft {\n  rule r: prec(action in {deplyo}, action in {check})\n}\n");
    expect(published.diagnostics.map((d: any) => d.code)).toEqual(["V1101"]);
    const list = await server.request("textDocument/completion", { textDocument: { uri }, position: { line: 1, character: 10 } });
    const prec = list.items.find((item: any) => item.label.startsWith("prec("));
    expect(prec.insertTextFormat).toBeUndefined();
    expect(prec.textEdit.newText).toBe("prec(ψ, ψ')");
    const actions = await server.request("textDocument/codeAction", { textDocument: { uri }, range: published.diagnostics[0].range, context: { diagnostics: published.diagnostics } });
    expect(actions[0].edit).toEqual({ changes: { [uri]: [{ range: published.diagnostics[0].range, newText: "deploy" }] } });
    expect(server.serverRequests.filter((r) => r.method === "client/registerCapability")).toEqual([]);
  });
});
