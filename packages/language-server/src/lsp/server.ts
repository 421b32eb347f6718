import { join } from "node:path";
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeConfigurationNotification,
  ErrorCodes,
  ExecuteCommandRequest,
  FileChangeType,
  ResponseError,
  TextDocumentSyncKind,
  type CancellationToken,
  type CodeActionParams,
  type Connection,
  type InitializeParams,
  type InitializeResult,
  type Position,
  type TextDocumentIdentifier,
} from "vscode-languageserver/node";
import type { Analysis } from "../analysis.js";
import { quickFixes } from "../features/code-actions.js";
import { completions } from "../features/completion.js";
import { formatDocument } from "../features/formatting.js";
import { hover } from "../features/hover.js";
import { definition, prepareRename, references, rename } from "../features/navigation.js";
import { documentSymbols, foldingRanges } from "../features/outline.js";
import { semanticTokens, semanticTokensLegend } from "../features/semantic-tokens.js";
import { signatureHelp } from "../features/signature-help.js";
import { isTestDocument, testQuickFixes } from "../features/tests.js";
import { AnalysisWorker } from "../findings/runner.js";
import { TextPositions } from "../positions.js";
import {
  checkTraceMethod,
  diffCommittedMethod,
  runTestCommand,
  signatureMethod,
  type CheckTraceParams,
  type DiffCommittedParams,
  type SignatureParams,
} from "../protocol.js";
import { uriToPath } from "../uris.js";
import { settingsFrom } from "../workspace/workspace.js";
import { DocumentChecks } from "./document-checks.js";
import { ServerState } from "./server-state.js";
import { TestDocuments } from "./test-documents.js";
import { VigilRequests } from "./vigil-requests.js";
import { WorkspaceSync } from "./workspace-sync.js";

/**
 * The language server: LSP over a connection, every answer computed by the Vigil compiler. This
 * module is its registration: the capabilities it announces and a handler for each request and
 * notification, which hands the work to the server's parts. Only the modules of `lsp/` talk to the
 * connection; the features under `features/` take an analysis and return LSP data. Policies
 * (`.vigil`) are kept by `DocumentChecks` (each change schedules a check, then the verdict lenses,
 * `VerdictLenses`, and the analysis findings, `FindingsScheduler`); test files (`.vigiltest`,
 * language `vigil-test`) by `TestDocuments`; the settings, folders, watched files and status line
 * by `WorkspaceSync`; the `vigil/*` requests by `VigilRequests`. All of them share `ServerState`.
 */

export interface ServerOptions {
  /** The server's version, reported in `initialize`. */
  readonly version: string;
  /**
   * Where the documentation lives (a folder URL holding `language.md`); diagnostic codes link to
   * `<documentation>/language.md#diagnostics`. `initializationOptions.documentationUrl` overrides it.
   */
  readonly documentation?: string;
}

/** What the client may set in `initializationOptions`. */
interface InitializationOptions {
  /** Milliseconds to wait after a change before checking the document again (a burst of changes is checked once). */
  readonly diagnosticsDelay?: number;
  /** Overrides the documentation folder that diagnostic codes link into. */
  readonly documentationUrl?: string;
  /** The `vigil` settings, for a client that does not answer `workspace/configuration`. */
  readonly settings?: unknown;
}

export function startServer(connection: Connection, options: ServerOptions): void {
  new VigilServer(connection, options).listen();
}

class VigilServer {
  private readonly state: ServerState;
  private readonly tests: TestDocuments;
  private readonly sync: WorkspaceSync;
  private readonly checks: DocumentChecks;
  private readonly requests: VigilRequests;
  /** Runs the analysis and the diff (Z3) off the thread that answers the editor. */
  private readonly analysisWorker = new AnalysisWorker();

  constructor(
    private readonly connection: Connection,
    private readonly options: ServerOptions,
  ) {
    const state = new ServerState(connection, options.documentation);
    this.state = state;
    this.tests = new TestDocuments({
      document: (uri) => state.documents.get(uri),
      openDocuments: () => state.documents.all(),
      fileOf: (uri) => uriToPath(uri) ?? join(state.workspace.currentFolders[0] ?? process.cwd(), "untitled.vigiltest"),
      get diagnosticsDelayMs() {
        return state.diagnosticsDelayMs;
      },
      get codeLink() {
        return state.codeLink();
      },
      publish: (uri, version, diagnostics) => void this.connection.sendDiagnostics({ uri, ...(version !== undefined ? { version } : {}), diagnostics }),
      refreshLenses: () => {
        if (state.capabilities.workspace?.codeLens?.refreshSupport === true) void this.connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
      },
      namedFilesChanged: () => this.sync.updateWatchers(),
      logError: (what, error) => state.logError(what, error),
    });
    // The sync and the checks need each other; each sees of the other only what it asks for.
    this.sync = new WorkspaceSync(state, { checkAll: () => this.checks.checkAll(), dropFindings: () => this.checks.dropFindings() }, () => this.tests.namedFiles());
    this.checks = new DocumentChecks(state, this.sync, (uri) => this.tests.has(uri), this.analysisWorker);
    this.requests = new VigilRequests(state, this.checks, this.tests, this.analysisWorker);
  }

  listen(): void {
    const { connection } = this;
    const { documents } = this.state;
    connection.onInitialize((params) => this.initialize(params));
    connection.onInitialized(() => void this.initialized());

    // Opening a document also fires a change of its content, which checks it (at once: it is quiet).
    documents.onDidOpen(({ document }) => {
      if (isTestDocument(document.uri, document.languageId)) return this.tests.opened(document.uri);
      this.checks.opened(document.uri);
    });
    documents.onDidChangeContent(({ document }) => {
      if (this.tests.has(document.uri)) return this.tests.changed(document.uri);
      this.checks.changed(document.uri);
      // The tests of an open test file naming this policy read its unsaved text.
      const file = uriToPath(document.uri);
      if (file !== undefined) this.tests.policyEdited(file);
    });
    documents.onDidSave(({ document }) => {
      if (this.tests.has(document.uri)) return this.tests.saved(document.uri);
      const file = uriToPath(document.uri);
      if (file !== undefined) this.tests.fileChanged(file);
    });
    documents.onDidClose(({ document }) => {
      if (this.tests.has(document.uri)) return this.tests.closed(document.uri);
      this.checks.closed(document.uri);
      // Test files naming it read its file from now on.
      const file = uriToPath(document.uri);
      if (file !== undefined) this.tests.fileChanged(file);
    });

    connection.onDidChangeConfiguration((params) => void this.sync.configurationChanged(params.settings));
    connection.onDidChangeWatchedFiles((params) => {
      let changed = false;
      for (const change of params.changes) {
        const path = uriToPath(change.uri);
        if (path !== undefined && documents.all().every((document) => uriToPath(document.uri) !== path)) this.tests.fileChanged(path);
        if (path === undefined || path.endsWith(".vigil")) continue;
        const kind = change.type === FileChangeType.Created ? "created" : change.type === FileChangeType.Deleted ? "deleted" : "changed";
        if (this.state.workspace.fileChanged(path, kind)) changed = true;
      }
      if (changed) void this.sync.recheckAll();
    });

    connection.onHover(this.policyRequest("hover", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.checks.currentAnalysis(params);
      return hover(analysis, this.offsetOf(analysis, params.position), { markdown: this.supportsMarkdownHover() });
    }));
    connection.onCompletion(this.policyRequest("completion", null, (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const document = this.state.documentOf(params);
      const analysis = this.checks.latestAnalysis(document.uri);
      const { positions, tokens } = this.checks.tokensOf(document);
      const offset = positions.offsetAt(this.positionOf(params));
      // Completion runs on every keystroke: it reads the current text's tokens and the names of the
      // latest analysis (which may be a few keystrokes old), and never waits for a check.
      return completions({
        positions,
        tokens,
        offset,
        ...(analysis !== undefined ? { analysis } : {}),
        snippets: this.state.capabilities.textDocument?.completion?.completionItem?.snippetSupport === true,
      });
    }));
    connection.onSignatureHelp(this.policyRequest("signature help", null, (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const { positions, tokens } = this.checks.tokensOf(this.state.documentOf(params));
      return signatureHelp(tokens, positions.offsetAt(this.positionOf(params)));
    }));
    connection.onDefinition(this.policyRequest("definition", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.checks.currentAnalysis(params);
      return definition(analysis, this.offsetOf(analysis, params.position));
    }));
    connection.onReferences(this.policyRequest("references", [], async (params: { textDocument: TextDocumentIdentifier; position: Position; context?: { includeDeclaration?: boolean } }) => {
      const analysis = await this.checks.currentAnalysis(params);
      return references(analysis, this.offsetOf(analysis, params.position), params.context?.includeDeclaration !== false);
    }));
    connection.onPrepareRename(this.policyRequest("prepare rename", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.checks.currentAnalysis(params);
      return prepareRename(analysis, this.offsetOf(analysis, params.position));
    }));
    connection.onRenameRequest(this.policyRequest("rename", null, async (params: { textDocument: TextDocumentIdentifier; position: Position; newName: string }) => {
      const analysis = await this.checks.currentAnalysis(params);
      if (typeof params.newName !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "rename needs a new name (`newName`)");
      const edits = rename(analysis, this.offsetOf(analysis, params.position), params.newName);
      return this.supportsVersionedEdits()
        ? { documentChanges: [{ textDocument: { uri: analysis.uri, version: analysis.version }, edits }] }
        : { changes: { [analysis.uri]: edits } };
    }));
    connection.onDocumentSymbol(this.policyRequest("document symbols", [], async (params: { textDocument: TextDocumentIdentifier }) => documentSymbols(await this.checks.currentAnalysis(params))));
    connection.onFoldingRanges(this.policyRequest("folding ranges", [], async (params: { textDocument: TextDocumentIdentifier }) => foldingRanges(await this.checks.currentAnalysis(params))));
    connection.languages.semanticTokens.on(this.policyRequest("semantic tokens", { data: [] }, async (params: { textDocument: TextDocumentIdentifier }) => semanticTokens(await this.checks.currentAnalysis(params))));
    connection.onDocumentFormatting(this.policyRequest("formatting", [], (params: { textDocument: TextDocumentIdentifier }) => formatDocument(new TextPositions(this.state.documentOf(params).getText()))));
    connection.onCodeAction(this.guard("code actions", async (params: CodeActionParams) => {
      if (this.isTestRequest(params)) {
        const document = this.state.documentOf(params);
        return testQuickFixes(document.uri, document.version, Array.isArray(params.context?.diagnostics) ? params.context.diagnostics : [], this.supportsVersionedEdits());
      }
      const analysis = await this.checks.currentAnalysis(params);
      const diagnostics = Array.isArray(params.context?.diagnostics) ? params.context.diagnostics : [];
      return quickFixes(analysis, diagnostics, this.supportsVersionedEdits());
    }));
    connection.onCodeLens(this.guard("code lens", async (params: { textDocument: TextDocumentIdentifier }) => {
      if (this.isTestRequest(params)) return this.tests.lenses(this.state.documentOf(params).uri);
      return this.checks.verdictLenses(params);
    }));

    connection.onRequest(checkTraceMethod, this.guard("vigil/checkTrace", (params: CheckTraceParams, token) => this.requests.checkTrace(params, token)));
    connection.onRequest(signatureMethod, this.guard("vigil/signature", (params: SignatureParams) => this.requests.signature(params)));
    connection.onRequest(diffCommittedMethod, this.guard("vigil/diffCommitted", (params: DiffCommittedParams, token) => this.requests.diffCommitted(params, token)));
    connection.onShutdown(() => this.analysisWorker.dispose());
    connection.onExecuteCommand(this.guard(ExecuteCommandRequest.method, (params: { command?: unknown; arguments?: unknown[] }) => this.requests.executeCommand(params)));

    documents.listen(connection);
    connection.listen();
  }

  private initialize(params: InitializeParams): InitializeResult {
    const state = this.state;
    state.capabilities = params.capabilities ?? {};
    const options = (params.initializationOptions ?? {}) as InitializationOptions;
    if (typeof options.diagnosticsDelay === "number" && options.diagnosticsDelay >= 0) state.diagnosticsDelayMs = options.diagnosticsDelay;
    if (typeof options.documentationUrl === "string" && options.documentationUrl.length > 0) state.documentation = options.documentationUrl;
    if (options.settings !== undefined) state.workspace.setSettings(settingsFrom(options.settings));
    const folders = (params.workspaceFolders ?? []).map((folder) => uriToPath(folder.uri)).filter((path): path is string => path !== undefined);
    if (folders.length === 0 && typeof params.rootUri === "string") {
      const root = uriToPath(params.rootUri);
      if (root !== undefined) folders.push(root);
    }
    state.workspace.setFolders(folders);
    return {
      capabilities: {
        textDocumentSync: { openClose: true, change: TextDocumentSyncKind.Incremental, save: { includeText: false } },
        hoverProvider: true,
        completionProvider: { triggerCharacters: ["{", ",", ".", "(", ":"], resolveProvider: false },
        signatureHelpProvider: { triggerCharacters: ["(", ","], retriggerCharacters: [","] },
        definitionProvider: true,
        referencesProvider: true,
        renameProvider: { prepareProvider: true },
        documentSymbolProvider: true,
        foldingRangeProvider: true,
        semanticTokensProvider: { legend: semanticTokensLegend, full: true, range: false },
        documentFormattingProvider: true,
        codeActionProvider: { codeActionKinds: [CodeActionKind.QuickFix] },
        codeLensProvider: { resolveProvider: false },
        executeCommandProvider: { commands: [runTestCommand] },
        workspace: { workspaceFolders: { supported: true, changeNotifications: true } },
      },
      serverInfo: { name: "vigil-language-server", version: this.options.version },
    };
  }

  private async initialized(): Promise<void> {
    // Folder changes can be listened to only once the client said it sends them.
    if (this.state.capabilities.workspace?.workspaceFolders === true) this.connection.workspace.onDidChangeWorkspaceFolders(() => void this.sync.refreshFolders());
    if (this.state.capabilities.workspace?.didChangeConfiguration?.dynamicRegistration === true) {
      await this.connection.client.register(DidChangeConfigurationNotification.type, { section: "vigil" }).catch(() => undefined);
    }
    await this.sync.configurationChanged(undefined);
    this.sync.updateWatchers();
  }

  // Helpers of the handlers.

  private positionOf(params: { position?: Position }): Position {
    const position = params.position;
    if (typeof position?.line !== "number" || typeof position.character !== "number") {
      throw new ResponseError(ErrorCodes.InvalidParams, "the request has no valid position ({ line, character })");
    }
    return position;
  }

  private offsetOf(analysis: Analysis, position: Position | undefined): number {
    return analysis.positions.offsetAt(this.positionOf({ ...(position !== undefined ? { position } : {}) }));
  }

  private supportsVersionedEdits(): boolean {
    return this.state.capabilities.workspace?.workspaceEdit?.documentChanges === true;
  }

  private supportsMarkdownHover(): boolean {
    const formats = this.state.capabilities.textDocument?.hover?.contentFormat;
    return formats === undefined || formats.includes("markdown");
  }

  /** A request about a policy; a test file gets the empty answer (its features are its diagnostics, lenses and quick fixes). */
  private policyRequest<P extends { textDocument?: TextDocumentIdentifier }, R, E>(name: string, empty: E, handler: (params: P, token: CancellationToken) => R | Promise<R>): (params: P, token: CancellationToken) => Promise<R | E> {
    return this.guard(name, (params: P, token) => (this.isTestRequest(params) ? empty : handler(params, token)));
  }

  private isTestRequest(params: { textDocument?: TextDocumentIdentifier } | undefined): boolean {
    const uri = params?.textDocument?.uri;
    return typeof uri === "string" && this.tests.has(uri);
  }

  /**
   * Wraps a request handler: a malformed request or unknown document is answered with its error,
   * and any other failure with an internal error, logged; the server keeps running either way.
   */
  private guard<P, R>(name: string, handler: (params: P, token: CancellationToken) => R | Promise<R>): (params: P, token: CancellationToken) => Promise<R> {
    return async (params: P, token: CancellationToken) => {
      try {
        return await handler(params, token);
      } catch (error) {
        if (error instanceof ResponseError) throw error;
        this.state.logError(name, error);
        throw new ResponseError(ErrorCodes.InternalError, `${name} failed: ${(error as Error)?.message ?? String(error)}`);
      }
    };
  }
}

