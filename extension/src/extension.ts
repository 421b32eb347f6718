import * as vscode from "vscode";
import { LanguageClient, TransportKind, type LanguageClientOptions, type ServerOptions } from "vscode-languageclient/node";
import { registerCheckAgainstTrace } from "./check-trace.js";
import { registerDiffWithCommitted } from "./diff-committed.js";
import { trackActivePolicy } from "./policy-document.js";
import { ServerStatusItem } from "./status.js";
import { registerShowSignature } from "./signature.js";
import { runTestMiddleware } from "./test-files.js";
import { TraceWatchers } from "./trace-watchers.js";
import { registerOpenWitness } from "./witness.js";
import { statusNotification, type StatusParams } from "./protocol.js";

/**
 * The Vigil extension: a language client for the Vigil language server (bundled in the
 * extension as dist/server.mjs and run with VS Code's own Node) for policies (`vigil`) and their
 * test files (`vigil-test`), plus the commands that show the server's answers the LSP has no place
 * for: a policy's verdicts on one trace, the signature it is checked against, a witness event in
 * its trace file, and what an edit changes against the last commit. The test lenses' command, `vigil.runTest`, is the server's.
 */

/** The client of the running server; replaced when the server is restarted. */
interface Session {
  client: LanguageClient | undefined;
}

/** The running session, so that deactivate can stop the server before VS Code moves on. */
let current: Session | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  const reports = vscode.window.createOutputChannel("Vigil");
  const serverLog = vscode.window.createOutputChannel("Vigil Language Server", { log: true });
  const status = new ServerStatusItem(serverLog);
  const session: Session = { client: undefined };
  current = session;
  const watchers = new TraceWatchers((changes) => session.client?.sendNotification("workspace/didChangeWatchedFiles", { changes }));
  context.subscriptions.push(reports, serverLog, status, watchers);

  const clientOf = () => {
    if (session.client === undefined || !session.client.isRunning()) throw new Error("the Vigil language server is not running");
    return session.client;
  };
  trackActivePolicy(context);
  registerCheckAgainstTrace(context, clientOf, reports);
  registerShowSignature(context, clientOf);
  registerDiffWithCommitted(context, clientOf);
  registerOpenWitness(context);

  const start = async () => {
    const client = new LanguageClient("vigil", "Vigil Language Server", serverOptions(context), clientOptions(serverLog));
    client.onNotification(statusNotification, (params: StatusParams) => status.show(params));
    session.client = client;
    try {
      await client.start();
    } catch (error) {
      status.show({ text: "Vigil: the language server did not start", tooltip: String(error), severity: "error" });
      serverLog.error(`the language server did not start: ${String(error)}`);
    }
  };
  const restart = async () => {
    const previous = session.client;
    session.client = undefined;
    if (previous !== undefined) await previous.dispose(2_000).catch(() => undefined);
    await start();
  };

  context.subscriptions.push(
    vscode.commands.registerCommand("vigil.restartServer", restart),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (event.affectsConfiguration("vigil.server.path")) void restart();
      if (event.affectsConfiguration("vigil.sampleTraces")) void watchers.refresh();
    }),
  );
  await watchers.refresh();
  await start();
}

export async function deactivate(): Promise<void> {
  const client = current?.client;
  current = undefined;
  // Stops the server with the LSP's shutdown and exit, killing it if it does not exit in time.
  if (client !== undefined) await client.dispose(2_000).catch(() => undefined);
}

/**
 * How the server runs: the bundled dist/server.mjs by default, run with VS Code's Node over stdio;
 * `vigil.server.path` names another one, a JavaScript file (run the same way) or an executable.
 */
function serverOptions(context: vscode.ExtensionContext): ServerOptions {
  const configured = vscode.workspace.getConfiguration("vigil").get<string>("server.path", "").trim();
  if (configured === "") {
    const module = context.asAbsolutePath("dist/server.mjs");
    return {
      run: { module, transport: TransportKind.stdio },
      debug: { module, transport: TransportKind.stdio, options: { execArgv: ["--nolazy", "--inspect=6012"] } },
    };
  }
  const path = resolveConfiguredPath(configured);
  return /\.[cm]?js$/.test(path) ? { module: path, transport: TransportKind.stdio } : { command: path, transport: TransportKind.stdio };
}

/** A configured path: `~` is the home folder, and a relative path is relative to the first workspace folder. */
function resolveConfiguredPath(configured: string): string {
  const home = process.env["HOME"] ?? process.env["USERPROFILE"] ?? "";
  const expanded = configured.startsWith("~/") ? `${home}${configured.slice(1)}` : configured;
  const folder = vscode.workspace.workspaceFolders?.[0];
  if (expanded.startsWith("/") || /^[A-Za-z]:[\\/]/.test(expanded) || folder === undefined) return expanded;
  return vscode.Uri.joinPath(folder.uri, expanded).fsPath;
}

function clientOptions(serverLog: vscode.LogOutputChannel): LanguageClientOptions {
  return {
    documentSelector: [
      { scheme: "file", language: "vigil" },
      { scheme: "untitled", language: "vigil" },
      { scheme: "file", language: "vigil-test" },
      { scheme: "untitled", language: "vigil-test" },
    ],
    middleware: runTestMiddleware,
    // The server reads `vigil.sampleTraces` and `vigil.engine` with workspace/configuration and is
    // told when they change.
    synchronize: { configurationSection: "vigil" },
    outputChannel: serverLog,
  };
}
