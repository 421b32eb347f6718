import { readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { compile, CompileCache, readFileAtRevision, type CompiledPolicy, type Diagnostic } from "@vigil/compiler";
import { diagnostic } from "@vigil/diagnostics";
import {
  CodeActionKind,
  CodeLensRefreshRequest,
  DidChangeConfigurationNotification,
  DidChangeWatchedFilesNotification,
  ErrorCodes,
  ExecuteCommandRequest,
  FileChangeType,
  LSPErrorCodes,
  MessageType,
  ResponseError,
  ShowMessageNotification,
  TextDocuments,
  TextDocumentSyncKind,
  type CancellationToken,
  type ClientCapabilities,
  type CodeActionParams,
  type Connection,
  type Disposable,
  type FileSystemWatcher,
  type InitializeParams,
  type InitializeResult,
  type Position,
  type TextDocumentIdentifier,
} from "vscode-languageserver/node";
import { TextDocument } from "vscode-languageserver-textdocument";
import { analyze, type Analysis } from "../analysis.js";
import { carryFindings, type HeldFindings } from "../findings/carry.js";
import { AnalysisFailed, AnalysisWorker } from "../findings/runner.js";
import { quickFixes } from "../features/code-actions.js";
import { verdictLenses } from "../features/code-lens.js";
import { completions } from "../features/completion.js";
import { checkTrace, signatureOfSamples } from "../features/custom-requests.js";
import { renderDiagnostic, renderForeignDiagnostic } from "../features/diagnostics.js";
import { formatDocument } from "../features/formatting.js";
import { hover } from "../features/hover.js";
import { definition, prepareRename, references, rename } from "../features/navigation.js";
import { documentSymbols, foldingRanges } from "../features/outline.js";
import { semanticTokens, semanticTokensLegend } from "../features/semantic-tokens.js";
import { signatureHelp } from "../features/signature-help.js";
import { isTestDocument, testQuickFixes } from "../features/tests.js";
import { judgeSamples, type VerdictTable } from "../features/verdicts.js";
import { TextPositions } from "../positions.js";
import {
  checkTraceMethod,
  diffCommittedMethod,
  runTestCommand,
  signatureMethod,
  statusMethod,
  type CheckTraceParams,
  type CheckTraceResult,
  type DiffCommittedParams,
  type DiffCommittedResult,
  type RunTestArguments,
  type RunTestResult,
  type SignatureParams,
  type SignatureResult,
  type StatusParams,
} from "../protocol.js";
import { scanTokens, type Token } from "../tokens.js";
import { pathToUri, uriToPath } from "../uris.js";
import { configFileName } from "../workspace/config.js";
import type { SampleSet } from "../workspace/samples.js";
import { settingsFrom, Workspace, type PolicyContext } from "../workspace/workspace.js";
import { TestDocuments } from "./test-documents.js";

/**
 * The language server: LSP over a connection, every answer computed by the Vigil compiler. This is
 * the only module that talks to the connection; the features under `features/` take an analysis
 * and return LSP data. Policies (`.vigil`) are handled here; test files (`.vigiltest`, language
 * `vigil-test`) by `TestDocuments`, which answers through this server.
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

interface DocumentState {
  analysis?: Analysis;
  /** The debounce timer of the next check. */
  timer?: NodeJS.Timeout;
  /** When the latest check started (performance.now()). */
  lastCheck?: number;
  /** The check in flight and the verdicts that follow it; aborted by a newer change. */
  work?: AbortController;
  verdicts?: { readonly analysis: Analysis; started?: Promise<VerdictTable | undefined>; timer?: NodeJS.Timeout };
  /** The analysis findings (A0001–A0007) of the latest version analysed, carried across edits (`carryFindings`). */
  findings?: HeldFindings;
  /** The pause after which the current version is analysed, and the analysis in flight (aborted by a change). */
  findingsTimer?: NodeJS.Timeout;
  findingsWork?: { readonly text: string; readonly controller: AbortController };
  /** The current text's positions and tokens, made once per version (completion reads them on every keystroke). */
  tokens?: { readonly version: number; readonly positions: TextPositions; readonly tokens: readonly Token[] };
}

/** How long a check waits for the sample traces to be read before it checks without them. */
const samplesPatienceMs = 500;
/** How long a document must stay unchanged before its verdict lenses are computed unasked. */
const verdictsIdleMs = 250;
/** How long one solver call of the editor's analysis may take (`vigilc analyze` allows 30 s). */
const analysisSolverCallMs = 10_000;
/** At most this many diagnostics of a sample trace or schema are shown on it. */
const foreignDiagnosticsShown = 100;

export function startServer(connection: Connection, options: ServerOptions): void {
  new VigilServer(connection, options).listen();
}

class VigilServer {
  private readonly documents = new TextDocuments(TextDocument);
  private readonly workspace = new Workspace();
  private readonly compileCache = new CompileCache();
  private readonly states = new Map<string, DocumentState>();
  private capabilities: ClientCapabilities = {};
  private diagnosticsDelayMs = 20;
  private documentation: string | undefined;
  private noConfigAnnounced = false;
  private lastStatus = "";
  private watcherRegistration: Promise<Disposable> | undefined;
  private watcherKey = "";
  /** The sample sets whose files' own diagnostics have been published, and the files published. */
  private readonly announcedSamples = new WeakSet<SampleSet>();
  private readonly foreignDiagnosticUris = new Set<string>();
  private readonly tests: TestDocuments;
  /** Runs the analysis and the diff (Z3) off the thread that answers the editor. */
  private readonly analysisWorker = new AnalysisWorker();

  constructor(
    private readonly connection: Connection,
    private readonly options: ServerOptions,
  ) {
    this.documentation = options.documentation;
    const server = this;
    this.tests = new TestDocuments({
      document: (uri) => this.documents.get(uri),
      openDocuments: () => this.documents.all(),
      fileOf: (uri) => uriToPath(uri) ?? join(this.workspace.currentFolders[0] ?? process.cwd(), "untitled.vigiltest"),
      get diagnosticsDelayMs() {
        return server.diagnosticsDelayMs;
      },
      get codeLink() {
        return server.codeLink();
      },
      publish: (uri, version, diagnostics) => void this.connection.sendDiagnostics({ uri, ...(version !== undefined ? { version } : {}), diagnostics }),
      refreshLenses: () => {
        if (this.capabilities.workspace?.codeLens?.refreshSupport === true) void this.connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
      },
      namedFilesChanged: () => this.updateWatchers(),
      logError: (what, error) => this.logError(what, error),
    });
  }

  listen(): void {
    const { connection, documents } = this;
    connection.onInitialize((params) => this.initialize(params));
    connection.onInitialized(() => void this.initialized());

    // Opening a document also fires a change of its content, which checks it (at once: it is quiet).
    documents.onDidOpen(({ document }) => {
      if (isTestDocument(document.uri, document.languageId)) return this.tests.opened(document.uri);
      const previous = this.states.get(document.uri);
      if (previous !== undefined) this.forget(previous);
      this.states.set(document.uri, {});
    });
    documents.onDidChangeContent(({ document }) => {
      if (this.tests.has(document.uri)) return this.tests.changed(document.uri);
      if (!this.states.has(document.uri)) this.states.set(document.uri, {});
      this.schedule(document.uri, this.diagnosticsDelayMs);
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
      const state = this.states.get(document.uri);
      if (state !== undefined) this.forget(state);
      this.states.delete(document.uri);
      this.compileCache.delete(document.uri);
      void connection.sendDiagnostics({ uri: document.uri, diagnostics: [] });
      // Test files naming it read its file from now on.
      const file = uriToPath(document.uri);
      if (file !== undefined) this.tests.fileChanged(file);
    });

    connection.onDidChangeConfiguration((params) => void this.configurationChanged(params.settings));
    connection.onDidChangeWatchedFiles((params) => {
      let changed = false;
      for (const change of params.changes) {
        const path = uriToPath(change.uri);
        if (path !== undefined && this.documents.all().every((document) => uriToPath(document.uri) !== path)) this.tests.fileChanged(path);
        if (path === undefined || path.endsWith(".vigil")) continue;
        const kind = change.type === FileChangeType.Created ? "created" : change.type === FileChangeType.Deleted ? "deleted" : "changed";
        if (this.workspace.fileChanged(path, kind)) changed = true;
      }
      if (changed) void this.recheckAll();
    });

    connection.onHover(this.policyRequest("hover", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.currentAnalysis(params);
      return hover(analysis, this.offsetOf(analysis, params.position), { markdown: this.supportsMarkdownHover() });
    }));
    connection.onCompletion(this.policyRequest("completion", null, (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const document = this.documentOf(params);
      const state = this.states.get(document.uri);
      const { positions, tokens } = this.tokensOf(document);
      const offset = positions.offsetAt(this.positionOf(params));
      // Completion runs on every keystroke: it reads the current text's tokens and the names of the
      // latest analysis (which may be a few keystrokes old), and never waits for a check.
      return completions({
        positions,
        tokens,
        offset,
        ...(state?.analysis !== undefined ? { analysis: state.analysis } : {}),
        snippets: this.capabilities.textDocument?.completion?.completionItem?.snippetSupport === true,
      });
    }));
    connection.onSignatureHelp(this.policyRequest("signature help", null, (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const { positions, tokens } = this.tokensOf(this.documentOf(params));
      return signatureHelp(tokens, positions.offsetAt(this.positionOf(params)));
    }));
    connection.onDefinition(this.policyRequest("definition", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.currentAnalysis(params);
      return definition(analysis, this.offsetOf(analysis, params.position));
    }));
    connection.onReferences(this.policyRequest("references", [], async (params: { textDocument: TextDocumentIdentifier; position: Position; context?: { includeDeclaration?: boolean } }) => {
      const analysis = await this.currentAnalysis(params);
      return references(analysis, this.offsetOf(analysis, params.position), params.context?.includeDeclaration !== false);
    }));
    connection.onPrepareRename(this.policyRequest("prepare rename", null, async (params: { textDocument: TextDocumentIdentifier; position: Position }) => {
      const analysis = await this.currentAnalysis(params);
      return prepareRename(analysis, this.offsetOf(analysis, params.position));
    }));
    connection.onRenameRequest(this.policyRequest("rename", null, async (params: { textDocument: TextDocumentIdentifier; position: Position; newName: string }) => {
      const analysis = await this.currentAnalysis(params);
      if (typeof params.newName !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "rename needs a new name (`newName`)");
      const edits = rename(analysis, this.offsetOf(analysis, params.position), params.newName);
      return this.supportsVersionedEdits()
        ? { documentChanges: [{ textDocument: { uri: analysis.uri, version: analysis.version }, edits }] }
        : { changes: { [analysis.uri]: edits } };
    }));
    connection.onDocumentSymbol(this.policyRequest("document symbols", [], async (params: { textDocument: TextDocumentIdentifier }) => documentSymbols(await this.currentAnalysis(params))));
    connection.onFoldingRanges(this.policyRequest("folding ranges", [], async (params: { textDocument: TextDocumentIdentifier }) => foldingRanges(await this.currentAnalysis(params))));
    connection.languages.semanticTokens.on(this.policyRequest("semantic tokens", { data: [] }, async (params: { textDocument: TextDocumentIdentifier }) => semanticTokens(await this.currentAnalysis(params))));
    connection.onDocumentFormatting(this.policyRequest("formatting", [], (params: { textDocument: TextDocumentIdentifier }) => formatDocument(new TextPositions(this.documentOf(params).getText()))));
    connection.onCodeAction(this.guard("code actions", async (params: CodeActionParams) => {
      if (this.isTestRequest(params)) {
        const document = this.documentOf(params);
        return testQuickFixes(document.uri, document.version, Array.isArray(params.context?.diagnostics) ? params.context.diagnostics : [], this.supportsVersionedEdits());
      }
      const analysis = await this.currentAnalysis(params);
      const diagnostics = Array.isArray(params.context?.diagnostics) ? params.context.diagnostics : [];
      return quickFixes(analysis, diagnostics, this.supportsVersionedEdits());
    }));
    connection.onCodeLens(this.guard("code lens", async (params: { textDocument: TextDocumentIdentifier }) => {
      if (this.isTestRequest(params)) return this.tests.lenses(this.documentOf(params).uri);
      const analysis = await this.currentAnalysis(params);
      if (!hasUsableTraces(analysis.context.samples)) return [];
      const state = this.states.get(analysis.uri)!;
      const verdicts = await this.verdictsOf(state, analysis);
      if (state.analysis !== analysis) throw new ResponseError(LSPErrorCodes.ContentModified, "the document changed; the lenses are computed again");
      return verdictLenses(analysis, verdicts);
    }));

    connection.onRequest(checkTraceMethod, this.guard("vigil/checkTrace", (params: CheckTraceParams, token) => this.checkTrace(params, token)));
    connection.onRequest(signatureMethod, this.guard("vigil/signature", (params: SignatureParams) => this.signature(params)));
    connection.onRequest(diffCommittedMethod, this.guard("vigil/diffCommitted", (params: DiffCommittedParams, token) => this.diffCommitted(params, token)));
    connection.onShutdown(() => this.analysisWorker.dispose());
    connection.onExecuteCommand(this.guard(ExecuteCommandRequest.method, (params: { command?: unknown; arguments?: unknown[] }) => this.executeCommand(params)));

    documents.listen(connection);
    connection.listen();
  }

  private initialize(params: InitializeParams): InitializeResult {
    this.capabilities = params.capabilities ?? {};
    const options = (params.initializationOptions ?? {}) as InitializationOptions;
    if (typeof options.diagnosticsDelay === "number" && options.diagnosticsDelay >= 0) this.diagnosticsDelayMs = options.diagnosticsDelay;
    if (typeof options.documentationUrl === "string" && options.documentationUrl.length > 0) this.documentation = options.documentationUrl;
    if (options.settings !== undefined) this.workspace.setSettings(settingsFrom(options.settings));
    const folders = (params.workspaceFolders ?? []).map((folder) => uriToPath(folder.uri)).filter((path): path is string => path !== undefined);
    if (folders.length === 0 && typeof params.rootUri === "string") {
      const root = uriToPath(params.rootUri);
      if (root !== undefined) folders.push(root);
    }
    this.workspace.setFolders(folders);
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
    if (this.capabilities.workspace?.workspaceFolders === true) this.connection.workspace.onDidChangeWorkspaceFolders(() => void this.refreshFolders());
    if (this.capabilities.workspace?.didChangeConfiguration?.dynamicRegistration === true) {
      await this.connection.client.register(DidChangeConfigurationNotification.type, { section: "vigil" }).catch(() => undefined);
    }
    await this.configurationChanged(undefined);
    this.updateWatchers();
  }

  // Documents: each change schedules a check; requests take the analysis of the current version.

  /**
   * Schedules a check of a document. The first change after a quiet moment is checked at once (the
   * changes that came in the same read are applied first); a change that follows a check within
   * `delayMs` waits that long, and every further change in the burst pushes the check back, so a
   * burst is checked once, at its end.
   */
  private schedule(uri: string, delayMs: number): void {
    const state = this.states.get(uri);
    if (state === undefined) return;
    // Work on an older version is stale from now on.
    state.work?.abort();
    state.findingsWork?.controller.abort();
    clearTimeout(state.findingsTimer);
    const quiet = state.timer === undefined && performance.now() - (state.lastCheck ?? -Infinity) >= delayMs;
    clearTimeout(state.timer);
    state.timer = setTimeout(() => void this.check(uri).catch((error: unknown) => this.logError(`checking ${uri}`, error)), quiet ? 0 : delayMs);
  }

  /**
   * Checks the current version of a document and publishes its diagnostics. Returns the analysis,
   * or undefined when a newer check took over while this one waited for the workspace.
   */
  private async check(uri: string, options: { readonly waitForSamples?: boolean } = {}): Promise<Analysis | undefined> {
    const state = this.states.get(uri);
    if (state === undefined) return undefined;
    clearTimeout(state.timer);
    state.timer = undefined;
    state.lastCheck = performance.now();
    state.work?.abort();
    const work = new AbortController();
    state.work = work;
    const file = uriToPath(uri);
    let generation = this.workspace.generation;
    const loading = this.workspace.contextOf(file);
    let context: PolicyContext | undefined = options.waitForSamples === true ? await loading : await Promise.race([loading, delay(samplesPatienceMs)]);
    if (context === undefined) {
      // The samples take long to read (a long trace): the document is checked without them now, and
      // again once they are read. Requests wait for them (an analysis of generation -1 is never current).
      context = this.workspace.folderOf(file ?? "") !== undefined ? { root: this.workspace.folderOf(file ?? "")! } : {};
      generation = -1;
      this.sendStatus({ text: "Vigil: reading the sample traces…", severity: "info" });
      void loading.then(() => this.states.get(uri) === state && this.schedule(uri, 0)).catch(() => undefined);
    }
    const document = this.documents.get(uri);
    if (work.signal.aborted || document === undefined || this.states.get(uri) !== state) return undefined;
    let analysis: Analysis;
    try {
      analysis = analyze({ uri, version: document.version, text: document.getText(), ...(file !== undefined ? { file } : {}), context, generation, cache: this.compileCache, signal: work.signal });
    } catch (error) {
      if (work.signal.aborted) return undefined;
      throw error;
    }
    state.analysis = analysis;
    this.publish(analysis);
    this.prepareVerdicts(state, analysis, work.signal);
    this.prepareFindings(state, analysis);
    if (generation !== -1) {
      this.announce(analysis.context);
      this.updateWatchers();
    }
    return analysis;
  }

  /** The analysis of the document's current version (checked now if the latest check is older). */
  private async currentAnalysis(params: { textDocument: TextDocumentIdentifier }): Promise<Analysis> {
    const document = this.documentOf(params);
    if (this.tests.has(document.uri)) throw new ResponseError(ErrorCodes.InvalidParams, `${document.uri} is a test file, not a policy`);
    for (let attempt = 0; attempt < 5; attempt++) {
      const state = this.states.get(document.uri);
      if (state === undefined) break;
      const latest = state.analysis;
      if (latest !== undefined && latest.version === document.version && latest.generation === this.workspace.generation) return latest;
      const checked = await this.check(document.uri, { waitForSamples: true });
      if (checked !== undefined) return checked;
    }
    throw new ResponseError(LSPErrorCodes.ContentModified, "the document kept changing while it was checked");
  }

  /** Publishes a version's diagnostics: the compiler's, and the analysis findings that still apply to it. */
  private publish(analysis: Analysis): void {
    const codeLink = this.codeLink();
    const held = this.states.get(analysis.uri)?.findings;
    const findings = held !== undefined ? carryFindings(held, analysis.text, analysis.compiled.syntax) : [];
    const diagnostics = [...analysis.diagnostics, ...findings].map((diagnostic) =>
      renderDiagnostic(diagnostic, { uri: analysis.uri, version: analysis.version, positions: analysis.positions, ...(codeLink !== undefined ? { codeLink } : {}) }),
    );
    void this.connection.sendDiagnostics({ uri: analysis.uri, version: analysis.version, diagnostics });
  }

  private forget(state: DocumentState): void {
    clearTimeout(state.timer);
    clearTimeout(state.verdicts?.timer);
    clearTimeout(state.findingsTimer);
    state.work?.abort();
    state.findingsWork?.controller.abort();
  }

  // Analysis findings (`vigilc analyze`): computed in the worker once a document has been still for
  // `vigil.analysis.delay`, for a version that compiles; a change stops the analysis in flight.

  private prepareFindings(state: DocumentState, analysis: Analysis): void {
    clearTimeout(state.findingsTimer);
    const settings = this.workspace.currentSettings.analysis;
    if (!settings.enabled || !analysis.compiled.ok || state.findings?.text === analysis.text) return;
    // The same text checked again (new samples, a request) is already being analysed.
    if (state.findingsWork?.text === analysis.text && !state.findingsWork.controller.signal.aborted) return;
    state.findingsTimer = setTimeout(() => void this.analyzeNow(state, analysis).catch((error: unknown) => this.logError(`analysing ${analysis.uri}`, error)), settings.delayMs);
  }

  private async analyzeNow(state: DocumentState, analysis: Analysis): Promise<void> {
    state.findingsWork?.controller.abort();
    const work = new AbortController();
    state.findingsWork = { text: analysis.text, controller: work };
    const file = uriToPath(analysis.uri);
    let diagnostics: readonly Diagnostic[] | undefined;
    try {
      diagnostics = await this.analysisWorker.analyze(
        { text: analysis.text, ...(file !== undefined ? { file } : {}), depth: this.workspace.currentSettings.analysis.depth, timeoutMs: analysisSolverCallMs },
        work.signal,
      );
    } catch (error) {
      if (work.signal.aborted) return;
      if (!(error instanceof AnalysisFailed)) this.logError(`analysing ${analysis.uri}`, error);
      // The analysis said nothing: shown, not silently missing.
      diagnostics = [undecidedFinding(analysis.compiled, error instanceof Error ? error.message : String(error), file)];
    }
    // A newer version (or a closed document) has no use for it; the same text checked again does.
    const current = this.states.get(analysis.uri) === state ? state.analysis : undefined;
    if (diagnostics === undefined || work.signal.aborted || current?.text !== analysis.text) return;
    state.findings = { text: analysis.text, syntax: analysis.compiled.syntax, diagnostics };
    this.publish(current);
  }

  // Verdict lenses: computed once per analysis, when the document has been still for a moment or a
  // lens is asked for, and dropped (aborted) by the next change.

  private prepareVerdicts(state: DocumentState, analysis: Analysis, signal: AbortSignal): void {
    clearTimeout(state.verdicts?.timer);
    if (!hasUsableTraces(analysis.context.samples)) {
      delete state.verdicts;
      return;
    }
    const pending: NonNullable<DocumentState["verdicts"]> = { analysis };
    state.verdicts = pending;
    pending.timer = setTimeout(() => void this.startVerdicts(pending, signal), verdictsIdleMs);
    signal.addEventListener("abort", () => clearTimeout(pending.timer), { once: true });
  }

  private startVerdicts(pending: NonNullable<DocumentState["verdicts"]>, signal: AbortSignal): Promise<VerdictTable | undefined> {
    clearTimeout(pending.timer);
    if (pending.started === undefined) {
      const { analysis } = pending;
      pending.started = analysis.compiled.ok ? judgeSamples(analysis.compiled, analysis.context.samples!, signal) : Promise.resolve(undefined);
      // The lens request that waits for it reports a failure; nobody may be waiting.
      pending.started.catch((error: unknown) => {
        if (!signal.aborted) this.logError("judging the sample traces", error);
      });
    }
    return pending.started;
  }

  private async verdictsOf(state: DocumentState, analysis: Analysis): Promise<VerdictTable | undefined> {
    const pending = state.verdicts;
    if (pending === undefined || pending.analysis !== analysis || state.work === undefined) {
      throw new ResponseError(LSPErrorCodes.ContentModified, "the document changed; the lenses are computed again");
    }
    try {
      return await this.startVerdicts(pending, state.work.signal);
    } catch (error) {
      if (state.work.signal.aborted) throw new ResponseError(LSPErrorCodes.ContentModified, "the document changed; the lenses are computed again");
      throw error;
    }
  }

  // The workspace: configs, sample traces, settings, watched files.

  private async configurationChanged(settings: unknown): Promise<void> {
    let section: unknown;
    if (this.capabilities.workspace?.configuration === true) {
      section = await this.connection.workspace.getConfiguration("vigil").catch(() => undefined);
    } else if (typeof settings === "object" && settings !== null) {
      section = (settings as Record<string, unknown>)["vigil"];
    }
    if (section === undefined) return;
    const before = this.workspace.generation;
    const analysisBefore = JSON.stringify(this.workspace.currentSettings.analysis);
    this.workspace.setSettings(settingsFrom(section));
    const analysisChanged = JSON.stringify(this.workspace.currentSettings.analysis) !== analysisBefore;
    if (analysisChanged) {
      // Findings of other settings (or of an analysis now turned off) are dropped, and sought again.
      for (const state of this.states.values()) {
        state.findingsWork?.controller.abort();
        delete state.findings;
      }
    }
    if (this.workspace.generation !== before || analysisChanged) await this.recheckAll();
  }

  private async refreshFolders(): Promise<void> {
    const folders = await this.connection.workspace.getWorkspaceFolders().catch(() => null);
    this.workspace.setFolders((folders ?? []).map((folder) => uriToPath(folder.uri)).filter((path): path is string => path !== undefined));
    await this.recheckAll();
  }

  /** Something the policies are checked against changed: check every open document again, then ask for fresh lenses. */
  private async recheckAll(): Promise<void> {
    await Promise.all([...this.states.keys()].map((uri) => this.check(uri).catch((error: unknown) => this.logError(`checking ${uri}`, error))));
    if (this.capabilities.workspace?.codeLens?.refreshSupport === true) await this.connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
  }

  /**
   * Registers file watchers for the configs, every sample file, and the policies and traces the open
   * test files name, when the client lets the server do so.
   */
  private updateWatchers(): void {
    if (this.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration !== true) return;
    void this.workspace.loadedSampleSets().then((sets) => {
      const relative = this.capabilities.workspace?.didChangeWatchedFiles?.relativePatternSupport === true;
      const watchers: FileSystemWatcher[] = [{ globPattern: `**/${configFileName}` }];
      const watch = (base: string, pattern: string) => watchers.push({ globPattern: relative ? { baseUri: pathToUri(base), pattern } : `${base.replaceAll("\\", "/")}/${pattern}` });
      for (const set of sets) {
        for (const watched of set.watched) watch(watched.base, watched.pattern);
      }
      for (const file of this.tests.namedFiles()) watch(dirname(file), globEscaped(basename(file)));
      const key = JSON.stringify(watchers);
      if (key === this.watcherKey) return;
      this.watcherKey = key;
      const previous = this.watcherRegistration;
      this.watcherRegistration = this.connection.client.register(DidChangeWatchedFilesNotification.type, { watchers });
      void previous?.then((registration) => registration.dispose()).catch(() => undefined);
      this.watcherRegistration.catch((error: unknown) => this.logError("registering file watchers", error));
    });
  }

  /** Tells the client what the policies are checked against: a status line, and once the note that there is no config. */
  private announce(context: PolicyContext): void {
    const samples = context.samples;
    let status: StatusParams;
    if (samples === undefined) {
      status = {
        text: `Vigil: no ${configFileName} — syntax and structure only`,
        tooltip: `Add a ${configFileName} such as {"traces": ["*.jsonl"]} next to the policies (or set vigil.sampleTraces) to check names against sample traces and see each rule's verdict.`,
        severity: "info",
      };
      if (!this.noConfigAnnounced) {
        this.noConfigAnnounced = true;
        void this.connection.sendNotification(ShowMessageNotification.type, {
          type: MessageType.Info,
          message: `Vigil: no ${configFileName} found, so policies are checked for syntax and structure only. Add one with sample traces ({"traces": ["*.jsonl"]}) to check names against them and see verdicts.`,
        });
      }
    } else if (samples.traces.length + samples.schemas.length === 0) {
      // A config that gives this policy no samples (its folder has none): still syntax and structure only.
      const tooltip = [...(samples.section !== undefined ? [`config: ${samples.section.configFile}`] : []), ...samples.problems.map((problem) => `⚠ ${problem}`)].join("\n");
      status = {
        text: "Vigil: no sample traces — syntax and structure only",
        ...(tooltip.length > 0 ? { tooltip } : {}),
        severity: samples.problems.length > 0 ? "warning" : "info",
      };
    } else {
      const traces = samples.traces.filter((t) => t.usable).length;
      const schemas = samples.schemas.filter((s) => s.usable).length;
      const left = samples.traces.length + samples.schemas.length - traces - schemas;
      const parts = [`${traces} sample ${traces === 1 ? "trace" : "traces"}`];
      if (schemas > 0) parts.push(`${schemas} tool ${schemas === 1 ? "schema" : "schemas"}`);
      const summary = signatureOfSamples(samples);
      const tooltip = [
        ...(samples.section !== undefined ? [`config: ${samples.section.configFile}`] : []),
        ...summary.sources.map((source) => `· ${source}`),
        ...summary.problems.map((problem) => `⚠ ${problem}`),
      ].join("\n");
      status = {
        text: `Vigil: ${parts.join(", ")}${left > 0 ? `, ${left} left out` : ""}`,
        ...(tooltip.length > 0 ? { tooltip } : {}),
        severity: summary.problems.length > 0 ? (traces + schemas === 0 ? "error" : "warning") : "info",
      };
      this.publishSampleDiagnostics(samples);
    }
    this.sendStatus(status);
  }

  private sendStatus(status: StatusParams): void {
    const key = JSON.stringify(status);
    if (key === this.lastStatus) return;
    this.lastStatus = key;
    void this.connection.sendNotification(statusMethod, status);
  }

  /** The problems of the sample traces and schemas, shown on those files. */
  private publishSampleDiagnostics(samples: SampleSet): void {
    if (this.announcedSamples.has(samples)) return;
    this.announcedSamples.add(samples);
    const codeLink = this.codeLink();
    for (const source of [...samples.traces, ...samples.schemas]) {
      const uri = pathToUri(source.file);
      const shown = source.diagnostics.filter((d) => d.severity !== "info").slice(0, foreignDiagnosticsShown);
      if (shown.length === 0 && !this.foreignDiagnosticUris.has(uri)) continue;
      if (shown.length > 0) this.foreignDiagnosticUris.add(uri);
      else this.foreignDiagnosticUris.delete(uri);
      void this.connection.sendDiagnostics({ uri, diagnostics: shown.map((d) => renderForeignDiagnostic(d, codeLink)) });
    }
  }

  // The custom requests.

  private async checkTrace(params: CheckTraceParams, token: CancellationToken): Promise<CheckTraceResult> {
    if (typeof params?.uri !== "string" || typeof params.trace !== "string" || params.trace.length === 0) {
      throw new ResponseError(ErrorCodes.InvalidParams, "vigil/checkTrace needs { uri: the policy document, trace: a file path, engine?: \"eval\" | \"smt\" }");
    }
    if (params.engine !== undefined && params.engine !== "eval" && params.engine !== "smt") {
      throw new ResponseError(ErrorCodes.InvalidParams, `unknown engine \`${String(params.engine)}\`: use "eval" or "smt"`);
    }
    const engine = params.engine ?? this.workspace.currentSettings.engine;
    const policy = await this.policyOf(params.uri);
    // The trace is read as the policy's sample traces are: with messages when its config says so.
    const messages = (await this.workspace.contextOf(uriToPath(params.uri))).samples?.section?.messages === true;
    // A long trace (or the solver) may take a while: the client's cancellation stops the run.
    const cancelled = new AbortController();
    const subscription = token.onCancellationRequested(() => cancelled.abort());
    try {
      return await checkTrace(policy.compiled, policy.positions, params.trace, engine, cancelled.signal, messages);
    } catch (error) {
      if (cancelled.signal.aborted) throw new ResponseError(LSPErrorCodes.RequestCancelled, "vigil/checkTrace was cancelled");
      throw error;
    } finally {
      subscription.dispose();
    }
  }

  /** `vigil/diffCommitted`: the document's current text against the file at a git revision, diffed in the worker. */
  private async diffCommitted(params: DiffCommittedParams, token: CancellationToken): Promise<DiffCommittedResult> {
    const usage = "vigil/diffCommitted needs { uri: the policy document, revision?: a git revision, depth?: 1–12 }";
    if (typeof params?.uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, usage);
    const revision = params.revision ?? "HEAD";
    // A revision is never an option of git's.
    if (typeof revision !== "string" || revision.length === 0 || revision.startsWith("-")) throw new ResponseError(ErrorCodes.InvalidParams, `${usage}; \`${String(revision)}\` is not a revision`);
    const depth = params.depth ?? this.workspace.currentSettings.analysis.depth;
    if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1 || depth > 12) throw new ResponseError(ErrorCodes.InvalidParams, `${usage}; the depth is ${String(depth)}`);
    const file = uriToPath(params.uri);
    if (file === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `${params.uri} is not a file, so it has no committed version`);
    const open = this.documents.get(params.uri) !== undefined ? await this.currentAnalysis({ textDocument: { uri: params.uri } }) : undefined;
    const text = open?.text ?? (await readFile(file, "utf8").catch(() => undefined));
    if (text === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${params.uri}: it is not open and cannot be read`);
    const name = basename(file);
    const errors = (compiled: CompiledPolicy) => compiled.diagnostics.filter((d) => d.severity === "error").length;
    const now = open?.compiled ?? compile(text, { file });
    if (!now.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `\`${name}\` has ${plural(errors(now), "error")}: fix ${errors(now) === 1 ? "it" : "them"} to compare it with ${revision}`);
    const before = await readFileAtRevision(file, revision);
    if (!before.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `no version of \`${name}\` at ${revision} to compare with: ${before.reason}`);
    const old = `${name}@${revision}`;
    const then = compile(before.text, { file: old });
    if (!then.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `\`${old}\` has ${plural(errors(then), "error")}, so it cannot be compared`);
    const cancelled = new AbortController();
    const subscription = token.onCancellationRequested(() => cancelled.abort());
    try {
      const answer = await this.analysisWorker.diff({ oldText: before.text, oldName: old, newText: text, newName: name, depth, timeoutMs: analysisSolverCallMs }, cancelled.signal);
      if (answer === undefined) throw new ResponseError(LSPErrorCodes.RequestCancelled, "vigil/diffCommitted was cancelled");
      // A run the forward engine does not confirm is a bug, said where the report is read.
      const warning = answer.unconfirmed > 0 ? `> **Internal error:** ${plural(answer.unconfirmed, "run")} found by the search ${answer.unconfirmed === 1 ? "is" : "are"} not confirmed by the forward engine; this is a bug in Vigil.\n\n` : "";
      return {
        uri: params.uri,
        ...(open !== undefined ? { version: open.version } : {}),
        revision,
        old,
        new: name,
        relation: answer.relation,
        basis: answer.basis,
        same: answer.same,
        markdown: `${warning}${answer.markdown}`,
        json: answer.json,
      };
    } catch (error) {
      if (error instanceof AnalysisFailed) throw new ResponseError(LSPErrorCodes.RequestFailed, error.message);
      throw error;
    } finally {
      subscription.dispose();
    }
  }

  /** `workspace/executeCommand`: the server's one command, `vigil.runTest` (the test lenses'). */
  private async executeCommand(params: { command?: unknown; arguments?: unknown[] }): Promise<RunTestResult> {
    if (params?.command !== runTestCommand) throw new ResponseError(ErrorCodes.InvalidParams, `unknown command \`${String(params?.command)}\`: the server has only ${runTestCommand}`);
    const target = (Array.isArray(params.arguments) ? params.arguments[0] : undefined) as Partial<RunTestArguments> | undefined;
    if (typeof target?.uri !== "string" || (target.name !== undefined && typeof target.name !== "string")) {
      throw new ResponseError(ErrorCodes.InvalidParams, `${runTestCommand} needs { uri: the test file, name?: the test to run }`);
    }
    return this.tests.run({ uri: target.uri, ...(target.name !== undefined ? { name: target.name } : {}) });
  }

  private async signature(params: SignatureParams): Promise<SignatureResult> {
    if (typeof params?.uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "vigil/signature needs { uri: the policy document }");
    if (this.documents.get(params.uri) !== undefined) return signatureOfSamples((await this.currentAnalysis({ textDocument: { uri: params.uri } })).context.samples);
    const file = uriToPath(params.uri);
    if (file === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${params.uri}: it is not open and not a file`);
    return signatureOfSamples((await this.workspace.contextOf(file)).samples);
  }

  /** A policy by URI: the open document's current analysis, or the file on disk compiled as it is. */
  private async policyOf(uri: string): Promise<{ compiled: Analysis["compiled"]; positions: TextPositions }> {
    if (this.documents.get(uri) !== undefined) return this.currentAnalysis({ textDocument: { uri } });
    const file = uriToPath(uri);
    let text: string | undefined;
    if (file !== undefined) text = await readFile(file, "utf8").catch(() => undefined);
    if (file === undefined || text === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open and cannot be read`);
    return { compiled: compile(text, { file }), positions: new TextPositions(text) };
  }

  // Helpers.

  /** The open document a request is about; a request about anything else is answered with an error. */
  private documentOf(params: { textDocument?: TextDocumentIdentifier } | undefined): TextDocument {
    const uri = params?.textDocument?.uri;
    if (typeof uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "the request names no document (`textDocument.uri`)");
    const document = this.documents.get(uri);
    if (document === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open`);
    return document;
  }

  /** The positions and tokens of a document's current text, without waiting for a check. */
  private tokensOf(document: TextDocument): { positions: TextPositions; tokens: readonly Token[] } {
    const state = this.states.get(document.uri);
    if (state?.tokens?.version === document.version) return state.tokens;
    const positions = new TextPositions(document.getText());
    const scanned = { version: document.version, positions, tokens: scanTokens(positions.text) };
    if (state !== undefined) state.tokens = scanned;
    return scanned;
  }

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
    return this.capabilities.workspace?.workspaceEdit?.documentChanges === true;
  }

  private supportsMarkdownHover(): boolean {
    const formats = this.capabilities.textDocument?.hover?.contentFormat;
    return formats === undefined || formats.includes("markdown");
  }

  /** Where each code is explained: a test file's codes (V2xxx) in testing.md, the others in language.md. */
  private codeLink(): ((code: string) => string | undefined) | undefined {
    const base = this.documentation;
    if (base === undefined) return undefined;
    return (code) => `${base.replace(/\/+$/, "")}/${/^V2\d{3}$/.test(code) ? "testing" : "language"}.md#diagnostics`;
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
        this.logError(name, error);
        throw new ResponseError(ErrorCodes.InternalError, `${name} failed: ${(error as Error)?.message ?? String(error)}`);
      }
    };
  }

  private logError(what: string, error: unknown): void {
    this.connection.console.error(`${what}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
  }

}

/** A file name as a glob that matches only it. */
function globEscaped(name: string): string {
  return name.replace(/[*?[\]{}!]/g, (character) => `[${character}]`);
}

/** An A0007 finding at the first policy's name: the analysis ran and could not say anything (why is in the message). */
function undecidedFinding(compiled: CompiledPolicy, reason: string, file: string | undefined): Diagnostic {
  const first = compiled.syntax.policies[0];
  return diagnostic("A0007", `the analysis could not decide: ${reason}`, {
    ...(first !== undefined ? { span: first.name.span } : {}),
    ...(file !== undefined ? { file } : {}),
    help: "the other diagnostics are unaffected; the analysis runs again after the next edit (vigil.analysis.*)",
  });
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}

function hasUsableTraces(samples: SampleSet | undefined): samples is SampleSet {
  return samples !== undefined && samples.traces.some((trace) => trace.usable);
}
