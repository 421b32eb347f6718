import { CompileCache } from "@vigil/compiler";
import { ErrorCodes, LSPErrorCodes, ResponseError, type CodeLens, type TextDocumentIdentifier } from "vscode-languageserver/node";
import type { TextDocument } from "vscode-languageserver-textdocument";
import { analyze, type Analysis } from "../analysis.js";
import { renderDiagnostic } from "../features/diagnostics.js";
import type { AnalysisWorker } from "../findings/runner.js";
import { TextPositions } from "../positions.js";
import { scanTokens, type Token } from "../tokens.js";
import { uriToPath } from "../uris.js";
import type { PolicyContext } from "../workspace/workspace.js";
import { DebouncedJob } from "./debounced-job.js";
import { FindingsScheduler, type FindingsHost } from "./findings-scheduler.js";
import type { ServerState } from "./server-state.js";
import { VerdictLenses } from "./verdict-lenses.js";
import type { WorkspaceSync } from "./workspace-sync.js";

/** How a check waits for the document's sample traces. */
interface CheckOptions {
  /** Waits for them however long they take (a request needs the version as checked against them). */
  readonly waitForSamples?: boolean;
}

/**
 * An open policy document: its latest analysis, and its three jobs, each one object. A change
 * aborts the check in flight (and the verdicts judged under its signal) and the analysis in flight.
 */
interface PolicyDocument {
  analysis?: Analysis;
  /** Checks the current version and publishes its diagnostics; then come the verdicts and the findings. */
  readonly check: DebouncedJob<CheckOptions, Analysis | undefined>;
  readonly verdicts: VerdictLenses;
  readonly findings: FindingsScheduler;
  /** The current text's positions and tokens, made once per version (completion reads them on every keystroke). */
  tokens?: { readonly version: number; readonly positions: TextPositions; readonly tokens: readonly Token[] };
}

/** How long a check waits for the sample traces to be read before it checks without them. */
const samplesPatienceMs = 500;

/**
 * The open policy documents (`.vigil`): each change schedules a check, which publishes the
 * version's diagnostics and then prepares its verdict lenses and its analysis findings; requests
 * take the analysis of the current version. Test files are `TestDocuments`'.
 */
export class DocumentChecks {
  private readonly states = new Map<string, PolicyDocument>();
  private readonly compileCache = new CompileCache();
  private readonly findingsHost: FindingsHost;

  constructor(
    private readonly server: ServerState,
    private readonly sync: WorkspaceSync,
    /** Whether an open document is a test file (which is not a policy). */
    private readonly isTestFile: (uri: string) => boolean,
    analysisWorker: AnalysisWorker,
  ) {
    this.findingsHost = {
      worker: analysisWorker,
      settings: () => server.workspace.currentSettings.analysis,
      logError: (what, error) => server.logError(what, error),
    };
  }

  /** A policy document was opened: any state of an earlier opening is dropped (the change that follows checks it). */
  opened(uri: string): void {
    const previous = this.states.get(uri);
    if (previous !== undefined) this.forget(previous);
    this.track(uri);
  }

  /** A policy document's text changed: it is checked again once the burst of changes ends. */
  changed(uri: string): void {
    if (!this.states.has(uri)) this.track(uri);
    this.schedule(uri, this.server.diagnosticsDelayMs);
  }

  /** A policy document was closed: its work stops, and its diagnostics are cleared. */
  closed(uri: string): void {
    const state = this.states.get(uri);
    if (state !== undefined) this.forget(state);
    this.states.delete(uri);
    this.compileCache.delete(uri);
    void this.server.connection.sendDiagnostics({ uri, diagnostics: [] });
  }

  /** The latest analysis of an open policy document, however old (completion does not wait for a check). */
  latestAnalysis(uri: string): Analysis | undefined {
    return this.states.get(uri)?.analysis;
  }

  /** The analysis of the document's current version (checked now if the latest check is older). */
  async currentAnalysis(params: { textDocument: TextDocumentIdentifier }): Promise<Analysis> {
    const document = this.server.documentOf(params);
    if (this.isTestFile(document.uri)) throw new ResponseError(ErrorCodes.InvalidParams, `${document.uri} is a test file, not a policy`);
    for (let attempt = 0; attempt < 5; attempt++) {
      const state = this.states.get(document.uri);
      if (state === undefined) break;
      const latest = state.analysis;
      if (latest !== undefined && latest.version === document.version && latest.generation === this.server.workspace.generation) return latest;
      const checked = await state.check.run({ waitForSamples: true });
      if (checked !== undefined) return checked;
    }
    throw new ResponseError(LSPErrorCodes.ContentModified, "the document kept changing while it was checked");
  }

  /** The verdict lenses of the document's current version. */
  async verdictLenses(params: { textDocument: TextDocumentIdentifier }): Promise<CodeLens[]> {
    const analysis = await this.currentAnalysis(params);
    return this.states.get(analysis.uri)!.verdicts.lenses(analysis);
  }

  /** The positions and tokens of a document's current text, without waiting for a check. */
  tokensOf(document: TextDocument): { positions: TextPositions; tokens: readonly Token[] } {
    const state = this.states.get(document.uri);
    if (state?.tokens?.version === document.version) return state.tokens;
    const positions = new TextPositions(document.getText());
    const scanned = { version: document.version, positions, tokens: scanTokens(positions.text) };
    if (state !== undefined) state.tokens = scanned;
    return scanned;
  }

  /** Checks every open policy document again (what they are checked against changed). */
  async checkAll(): Promise<void> {
    await Promise.all([...this.states].map(([uri, state]) => state.check.run({}).catch((error: unknown) => this.server.logError(`checking ${uri}`, error))));
  }

  /** Drops every document's analysis findings and stops the analyses in flight (the analysis settings changed). */
  dropFindings(): void {
    for (const state of this.states.values()) state.findings.reset();
  }

  private track(uri: string): PolicyDocument {
    const state: PolicyDocument = {
      check: new DebouncedJob(
        (options, signal) => this.check(uri, state, options, signal),
        (error) => this.server.logError(`checking ${uri}`, error),
      ),
      verdicts: new VerdictLenses(
        { latestAnalysis: () => state.analysis, checkSignal: () => state.check.latest?.signal },
        (what, error) => this.server.logError(what, error),
      ),
      findings: new FindingsScheduler(this.findingsHost, {
        currentAnalysis: () => (this.states.get(uri) === state ? state.analysis : undefined),
        publish: (analysis) => this.publish(analysis),
      }),
    };
    this.states.set(uri, state);
    return state;
  }

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
    state.check.abort();
    state.findings.stop();
    const quiet = !state.check.waiting && state.check.msSinceStart >= delayMs;
    state.check.schedule({}, quiet ? 0 : delayMs);
  }

  /**
   * Checks the current version of a document and publishes its diagnostics (a run of its check job).
   * Returns the analysis, or undefined when a newer check took over while this one waited for the
   * workspace.
   */
  private async check(uri: string, state: PolicyDocument, options: CheckOptions, signal: AbortSignal): Promise<Analysis | undefined> {
    const { workspace } = this.server;
    const file = uriToPath(uri);
    let generation = workspace.generation;
    const loading = workspace.contextOf(file);
    let context: PolicyContext | undefined = options.waitForSamples === true ? await loading : await Promise.race([loading, delay(samplesPatienceMs)]);
    if (context === undefined) {
      // The samples take long to read (a long trace): the document is checked without them now, and
      // again once they are read. Requests wait for them (an analysis of generation -1 is never current).
      context = workspace.folderOf(file ?? "") !== undefined ? { root: workspace.folderOf(file ?? "")! } : {};
      generation = -1;
      this.sync.sendStatus({ text: "Vigil: reading the sample traces…", severity: "info" });
      void loading.then(() => this.states.get(uri) === state && this.schedule(uri, 0)).catch(() => undefined);
    }
    const document = this.server.documents.get(uri);
    if (signal.aborted || document === undefined || this.states.get(uri) !== state) return undefined;
    let analysis: Analysis;
    try {
      analysis = analyze({ uri, version: document.version, text: document.getText(), ...(file !== undefined ? { file } : {}), context, generation, cache: this.compileCache, signal });
    } catch (error) {
      if (signal.aborted) return undefined;
      throw error;
    }
    state.analysis = analysis;
    this.publish(analysis);
    state.verdicts.prepare(analysis, signal);
    state.findings.prepare(analysis);
    if (generation !== -1) {
      this.sync.announce(analysis.context);
      this.sync.updateWatchers();
    }
    return analysis;
  }

  /** Publishes a version's diagnostics: the compiler's, and the analysis findings that still apply to it. */
  private publish(analysis: Analysis): void {
    const codeLink = this.server.codeLink();
    const findings = this.states.get(analysis.uri)?.findings.carriedTo(analysis) ?? [];
    const diagnostics = [...analysis.diagnostics, ...findings].map((diagnostic) =>
      renderDiagnostic(diagnostic, { uri: analysis.uri, version: analysis.version, positions: analysis.positions, ...(codeLink !== undefined ? { codeLink } : {}) }),
    );
    void this.server.connection.sendDiagnostics({ uri: analysis.uri, version: analysis.version, diagnostics });
  }

  /** Stops every job of a document that is closed (or opened again). */
  private forget(state: PolicyDocument): void {
    state.check.stop();
    state.verdicts.cancel();
    state.findings.stop();
  }
}

function delay(ms: number): Promise<undefined> {
  return new Promise((resolve) => setTimeout(() => resolve(undefined), ms));
}
