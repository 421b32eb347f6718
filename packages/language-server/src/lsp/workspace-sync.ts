import { basename, dirname } from "node:path";
import {
  CodeLensRefreshRequest,
  DidChangeWatchedFilesNotification,
  MessageType,
  ShowMessageNotification,
  type Disposable,
  type FileSystemWatcher,
} from "vscode-languageserver/node";
import { signatureOfSamples } from "../features/custom-requests.js";
import { renderForeignDiagnostic } from "../features/diagnostics.js";
import { statusMethod, type StatusParams } from "../protocol.js";
import { pathToUri, uriToPath } from "../uris.js";
import { configFileName } from "../workspace/config.js";
import type { SampleSet } from "../workspace/samples.js";
import { settingsFrom, type PolicyContext } from "../workspace/workspace.js";
import type { ServerState } from "./server-state.js";

/** At most this many diagnostics of a sample trace or schema are shown on it. */
const foreignDiagnosticsShown = 100;

/** What the workspace sync asks of the open policy documents. */
export interface SyncedDocuments {
  /** Checks every open policy document again. */
  checkAll(): Promise<void>;
  /** Drops every document's analysis findings, and stops the analyses in flight. */
  dropFindings(): void;
}

/**
 * The workspace as the client sees it: the `vigil` settings and the workspace folders it sends,
 * the file watchers the server registers (configs, sample files, the files open test files name),
 * and what the server tells it of the samples the policies are checked against (a status line, a
 * note when there is no config, the sample files' own diagnostics). Whatever the policies are
 * checked against changes, every open policy is checked again.
 */
export class WorkspaceSync {
  private noConfigAnnounced = false;
  private lastStatus = "";
  private watcherRegistration: Promise<Disposable> | undefined;
  private watcherKey = "";
  /** The sample sets whose files' own diagnostics have been published, and the files published. */
  private readonly announcedSamples = new WeakSet<SampleSet>();
  private readonly foreignDiagnosticUris = new Set<string>();

  constructor(
    private readonly server: ServerState,
    private readonly documents: SyncedDocuments,
    /** The policies and traces the open test files name. */
    private readonly namedTestFiles: () => readonly string[],
  ) {}

  async configurationChanged(settings: unknown): Promise<void> {
    let section: unknown;
    if (this.server.capabilities.workspace?.configuration === true) {
      section = await this.server.connection.workspace.getConfiguration("vigil").catch(() => undefined);
    } else if (typeof settings === "object" && settings !== null) {
      section = (settings as Record<string, unknown>)["vigil"];
    }
    if (section === undefined) return;
    const workspace = this.server.workspace;
    const before = workspace.generation;
    const analysisBefore = JSON.stringify(workspace.currentSettings.analysis);
    workspace.setSettings(settingsFrom(section));
    const analysisChanged = JSON.stringify(workspace.currentSettings.analysis) !== analysisBefore;
    // Findings of other settings (or of an analysis now turned off) are dropped, and sought again.
    if (analysisChanged) this.documents.dropFindings();
    if (workspace.generation !== before || analysisChanged) await this.recheckAll();
  }

  async refreshFolders(): Promise<void> {
    const folders = await this.server.connection.workspace.getWorkspaceFolders().catch(() => null);
    this.server.workspace.setFolders((folders ?? []).map((folder) => uriToPath(folder.uri)).filter((path): path is string => path !== undefined));
    await this.recheckAll();
  }

  /** Something the policies are checked against changed: check every open document again, then ask for fresh lenses. */
  async recheckAll(): Promise<void> {
    await this.documents.checkAll();
    if (this.server.capabilities.workspace?.codeLens?.refreshSupport === true) await this.server.connection.sendRequest(CodeLensRefreshRequest.type).catch(() => undefined);
  }

  /**
   * Registers file watchers for the configs, every sample file, and the policies and traces the open
   * test files name, when the client lets the server do so.
   */
  updateWatchers(): void {
    if (this.server.capabilities.workspace?.didChangeWatchedFiles?.dynamicRegistration !== true) return;
    void this.server.workspace.loadedSampleSets().then((sets) => {
      const relative = this.server.capabilities.workspace?.didChangeWatchedFiles?.relativePatternSupport === true;
      const watchers: FileSystemWatcher[] = [{ globPattern: `**/${configFileName}` }];
      const watch = (base: string, pattern: string) => watchers.push({ globPattern: relative ? { baseUri: pathToUri(base), pattern } : `${base.replaceAll("\\", "/")}/${pattern}` });
      for (const set of sets) {
        for (const watched of set.watched) watch(watched.base, watched.pattern);
      }
      for (const file of this.namedTestFiles()) watch(dirname(file), globEscaped(basename(file)));
      const key = JSON.stringify(watchers);
      if (key === this.watcherKey) return;
      this.watcherKey = key;
      const previous = this.watcherRegistration;
      this.watcherRegistration = this.server.connection.client.register(DidChangeWatchedFilesNotification.type, { watchers });
      void previous?.then((registration) => registration.dispose()).catch(() => undefined);
      this.watcherRegistration.catch((error: unknown) => this.server.logError("registering file watchers", error));
    });
  }

  /** Tells the client what the policies are checked against: a status line, and once the note that there is no config. */
  announce(context: PolicyContext): void {
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
        void this.server.connection.sendNotification(ShowMessageNotification.type, {
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

  /** Sends the status line (`vigil/status`), unless it says what the last one said. */
  sendStatus(status: StatusParams): void {
    const key = JSON.stringify(status);
    if (key === this.lastStatus) return;
    this.lastStatus = key;
    void this.server.connection.sendNotification(statusMethod, status);
  }

  /** The problems of the sample traces and schemas, shown on those files. */
  private publishSampleDiagnostics(samples: SampleSet): void {
    if (this.announcedSamples.has(samples)) return;
    this.announcedSamples.add(samples);
    const codeLink = this.server.codeLink();
    for (const source of [...samples.traces, ...samples.schemas]) {
      const uri = pathToUri(source.file);
      const shown = source.diagnostics.filter((d) => d.severity !== "info").slice(0, foreignDiagnosticsShown);
      if (shown.length === 0 && !this.foreignDiagnosticUris.has(uri)) continue;
      if (shown.length > 0) this.foreignDiagnosticUris.add(uri);
      else this.foreignDiagnosticUris.delete(uri);
      void this.server.connection.sendDiagnostics({ uri, diagnostics: shown.map((d) => renderForeignDiagnostic(d, codeLink)) });
    }
  }
}

/** A file name as a glob that matches only it. */
function globEscaped(name: string): string {
  return name.replace(/[*?[\]{}!]/g, (character) => `[${character}]`);
}
