import { spawn, type ChildProcess } from "node:child_process";
import { dirname, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter, type MessageConnection } from "vscode-jsonrpc/node";

/**
 * A small LSP client for the protocol tests: it starts the built server (node
 * packages/language-server/dist/main.js --stdio) in its own process group, speaks JSON-RPC to it over
 * stdio, records what the server sends, answers the server's requests as an editor would, and kills
 * the whole group when done. Every wait is bounded.
 */

const here = dirname(fileURLToPath(import.meta.url));
export const root = resolve(here, "../../../..");
export const serverMain = resolve(here, "../../dist/main.js");
export const fixtures = resolve(here, "../fixtures");
export const examples = resolve(root, "examples");

export interface Notification {
  readonly method: string;
  readonly params: any;
}

export interface StartOptions {
  /** The workspace folders (paths). */
  readonly folders?: readonly string[];
  /** Client capabilities beyond the defaults (merged shallowly per section). */
  readonly capabilities?: Record<string, unknown>;
  readonly initializationOptions?: Record<string, unknown>;
  /** What the client answers to `workspace/configuration` for the `vigil` section. */
  readonly settings?: Record<string, unknown>;
  /** Extra arguments for the server process. */
  readonly args?: readonly string[];
}

/** The capabilities of an editor like VS Code, as far as the server asks. */
export const editorCapabilities = {
  workspace: {
    configuration: true,
    workspaceFolders: true,
    didChangeConfiguration: { dynamicRegistration: true },
    didChangeWatchedFiles: { dynamicRegistration: true, relativePatternSupport: true },
    workspaceEdit: { documentChanges: true },
    codeLens: { refreshSupport: true },
  },
  textDocument: {
    synchronization: { dynamicRegistration: false },
    completion: { completionItem: { snippetSupport: true } },
    hover: { contentFormat: ["markdown", "plaintext"] },
    publishDiagnostics: { relatedInformation: true, versionSupport: true, codeDescriptionSupport: true, dataSupport: true },
  },
};

/**
 * The settings a test gives, with the analysis off unless the test sets `analysis` itself: its
 * findings arrive after a pause, and would race the expectations of tests about other features.
 */
function withQuietAnalysis(settings: Record<string, unknown>): Record<string, unknown> {
  return { analysis: { enabled: false }, ...settings };
}

export class TestServer {
  readonly notifications: Notification[] = [];
  /** Requests the server sent to the client (method and params). */
  readonly serverRequests: Notification[] = [];
  private readonly waiters: { test: (n: Notification) => boolean; resolve: (n: Notification) => void }[] = [];
  stderr = "";
  private settings: Record<string, unknown>;

  constructor(
    readonly process: ChildProcess,
    readonly connection: MessageConnection,
    settings: Record<string, unknown>,
  ) {
    this.settings = settings;
  }

  static async start(options: StartOptions = {}): Promise<TestServer> {
    const child = spawn(process.execPath, [serverMain, "--stdio", ...(options.args ?? [])], { cwd: root, stdio: ["pipe", "pipe", "pipe"], detached: true });
    const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
    const server = new TestServer(child, connection, withQuietAnalysis(options.settings ?? {}));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (server.stderr += chunk));
    connection.onNotification((method, params) => server.record({ method, params }));
    connection.onRequest((method, params) => {
      server.serverRequests.push({ method, params });
      if (method === "workspace/configuration") {
        const items = (params as { items: { section?: string }[] }).items;
        return items.map((item) => (item.section === "vigil" ? server.settings : null));
      }
      return null;
    });
    connection.listen();
    const capabilities = { ...editorCapabilities, ...(options.capabilities ?? {}) };
    const folders = options.folders ?? [];
    await withTimeout(
      connection.sendRequest("initialize", {
        processId: process.pid,
        rootUri: folders[0] !== undefined ? pathToFileURL(folders[0]).href : null,
        workspaceFolders: folders.map((folder) => ({ uri: pathToFileURL(folder).href, name: folder })),
        capabilities,
        initializationOptions: { diagnosticsDelay: 10, ...(options.initializationOptions ?? {}) },
      }),
      // Generous: the server loads the whole compiler on a machine of two shared cores.
      60_000,
      "initialize",
    );
    await connection.sendNotification("initialized", {});
    return server;
  }

  private record(notification: Notification): void {
    this.notifications.push(notification);
    for (const waiter of [...this.waiters]) {
      if (waiter.test(notification)) {
        this.waiters.splice(this.waiters.indexOf(waiter), 1);
        waiter.resolve(notification);
      }
    }
  }

  /** Changes what `workspace/configuration` answers and tells the server. */
  async changeSettings(settings: Record<string, unknown>): Promise<void> {
    this.settings = withQuietAnalysis(settings);
    await this.connection.sendNotification("workspace/didChangeConfiguration", { settings: { vigil: this.settings } });
  }

  /** The next notification (from now on, or already received when `since` is given) that passes the test. */
  waitFor(method: string, test: (params: any) => boolean = () => true, timeoutMs = 20_000, since?: number): Promise<any> {
    if (since !== undefined) {
      const found = this.notifications.slice(since).find((n) => n.method === method && test(n.params));
      if (found !== undefined) return Promise.resolve(found.params);
    }
    return withTimeout(
      new Promise<Notification>((resolvePromise) => this.waiters.push({ test: (n) => n.method === method && test(n.params), resolve: resolvePromise })).then((n) => n.params),
      timeoutMs,
      `waiting for ${method}`,
    );
  }

  /** Opens a document (a test file when its name says so, else a policy) and waits for its first diagnostics. */
  async open(uri: string, text: string, version = 1, languageId = uri.endsWith(".vigiltest") ? "vigil-test" : "vigil"): Promise<any> {
    const since = this.notifications.length;
    await this.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId, version, text } });
    return this.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === version, 30_000, since);
  }

  /** Replaces a document's text and waits for the diagnostics of that version. */
  async change(uri: string, text: string, version: number): Promise<any> {
    const since = this.notifications.length;
    await this.connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [{ text }] });
    return this.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === version, 30_000, since);
  }

  /** The diagnostics published last for a document (undefined before any). */
  latestDiagnostics(uri: string): any {
    return this.notifications.findLast((n) => n.method === "textDocument/publishDiagnostics" && n.params.uri === uri)?.params;
  }

  request<R = any>(method: string, params: unknown, timeoutMs = 30_000): Promise<R> {
    return withTimeout(this.connection.sendRequest(method, params) as Promise<R>, timeoutMs, method);
  }

  /** Shuts the server down politely, then kills its process group whatever happened. */
  async close(): Promise<void> {
    try {
      await withTimeout(this.connection.sendRequest("shutdown"), 5_000, "shutdown");
      await this.connection.sendNotification("exit");
      await withTimeout(new Promise((resolvePromise) => (this.process.exitCode !== null ? resolvePromise(undefined) : this.process.once("exit", resolvePromise))), 5_000, "exit");
    } catch {
      // Killed below.
    } finally {
      this.connection.dispose();
      killGroup(this.process);
    }
  }
}

export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
    }),
  ]);
}

/** A document with a `<|>` cursor marker: the text without it, and the cursor as an LSP position. */
export function cursor(marked: string): { text: string; offset: number; position: { line: number; character: number } } {
  const offset = marked.indexOf("<|>");
  if (offset < 0) throw new Error("no <|> cursor marker in the text");
  const text = marked.slice(0, offset) + marked.slice(offset + 3);
  return { text, offset, position: positionAt(text, offset) };
}

export function positionAt(text: string, offset: number): { line: number; character: number } {
  const before = text.slice(0, offset);
  const line = before.split("\n").length - 1;
  return { line, character: offset - (before.lastIndexOf("\n") + 1) };
}

/** The offset of an LSP position in a text with `\n` line ends. */
export function offsetAt(text: string, position: { line: number; character: number }): number {
  const lines = text.split("\n");
  let offset = 0;
  for (let index = 0; index < position.line; index++) offset += lines[index]!.length + 1;
  return offset + position.character;
}

/** Applies LSP text edits (non-overlapping) to a text with `\n` line ends. */
export function applyEdits(text: string, edits: readonly { range: { start: any; end: any }; newText: string }[]): string {
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  let result = text;
  for (const edit of sorted) result = result.slice(0, offsetAt(text, edit.range.start)) + edit.newText + result.slice(offsetAt(text, edit.range.end));
  return result;
}

/** A fresh copy of a fixture folder in a temporary directory (tests may change its files). */
export async function copyFixture(name: string): Promise<string> {
  const { cp, mkdtemp } = await import("node:fs/promises");
  const { tmpdir } = await import("node:os");
  const { join } = await import("node:path");
  const directory = await mkdtemp(join(tmpdir(), "vigil-ls-"));
  await cp(resolve(fixtures, name), directory, { recursive: true });
  return directory;
}

export function uriOf(path: string): string {
  return pathToFileURL(path).href;
}
