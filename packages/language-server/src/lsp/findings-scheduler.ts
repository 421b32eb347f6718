import type { CompiledPolicy, Diagnostic } from "@vigil/compiler";
import { diagnostic } from "@vigil/diagnostics";
import type { Analysis } from "../analysis.js";
import { carryFindings, type HeldFindings } from "../findings/carry.js";
import { AnalysisFailed, type AnalysisWorker } from "../findings/runner.js";
import { uriToPath } from "../uris.js";
import type { AnalysisSettings } from "../workspace/workspace.js";
import { DebouncedJob } from "./debounced-job.js";

/** How long one solver call of the editor's analysis may take (`vigilc analyze` allows 30 s). */
export const analysisSolverCallMs = 10_000;

/** What the findings of every document need from the server. */
export interface FindingsHost {
  /** Runs the analysis off the thread that answers the editor. */
  readonly worker: AnalysisWorker;
  /** The `vigil.analysis.*` settings in force. */
  settings(): AnalysisSettings;
  logError(what: string, error: unknown): void;
}

/** The document the findings are of, as the server keeps it. */
export interface FindingsDocument {
  /** The document's latest analysis; undefined once the document is closed (or opened again). */
  currentAnalysis(): Analysis | undefined;
  /** Publishes a version's diagnostics again, with the findings as they now stand. */
  publish(analysis: Analysis): void;
}

/**
 * The analysis findings (`vigilc analyze`: A0001–A0007) of one policy document: computed in the
 * worker once the document has been still for `vigil.analysis.delay`, for a version that compiles,
 * and carried across edits (`carryFindings`) until the next analysis says again. A change stops the
 * analysis waiting and the one in flight.
 */
export class FindingsScheduler {
  /** The findings of the latest version analysed. */
  private held: HeldFindings | undefined;
  private readonly analysis: DebouncedJob<Analysis, void>;

  constructor(
    private readonly host: FindingsHost,
    private readonly document: FindingsDocument,
  ) {
    this.analysis = new DebouncedJob(
      (analysis, signal) => this.analyze(analysis, signal),
      (error, analysis) => this.host.logError(`analysing ${analysis.uri}`, error),
    );
  }

  /** The findings that still apply to a version: the latest version's, moved into it. */
  carriedTo(analysis: Analysis): readonly Diagnostic[] {
    return this.held !== undefined ? carryFindings(this.held, analysis.text, analysis.compiled.syntax) : [];
  }

  /** After a check: analyses its version once the document has been still long enough, unless that is done or under way. */
  prepare(analysis: Analysis): void {
    this.analysis.cancel();
    const settings = this.host.settings();
    if (!settings.enabled || !analysis.compiled.ok || this.held?.text === analysis.text) return;
    // The same text checked again (new samples, a request) is already being analysed.
    const latest = this.analysis.latest;
    if (latest?.input.text === analysis.text && !latest.signal.aborted) return;
    this.analysis.schedule(analysis, settings.delayMs);
  }

  /** The document changed: the analysis waiting and the one in flight are of an older version. */
  stop(): void {
    this.analysis.stop();
  }

  /** The analysis settings changed: findings of the old ones are dropped (and sought again after the next check). */
  reset(): void {
    this.analysis.abort();
    this.held = undefined;
  }

  private async analyze(analysis: Analysis, signal: AbortSignal): Promise<void> {
    const file = uriToPath(analysis.uri);
    let diagnostics: readonly Diagnostic[] | undefined;
    try {
      diagnostics = await this.host.worker.analyze(
        { text: analysis.text, ...(file !== undefined ? { file } : {}), depth: this.host.settings().depth, timeoutMs: analysisSolverCallMs },
        signal,
      );
    } catch (error) {
      if (signal.aborted) return;
      if (!(error instanceof AnalysisFailed)) this.host.logError(`analysing ${analysis.uri}`, error);
      // The analysis said nothing: shown, not silently missing.
      diagnostics = [undecidedFinding(analysis.compiled, error instanceof Error ? error.message : String(error), file)];
    }
    // A newer version (or a closed document) has no use for it; the same text checked again does.
    const current = this.document.currentAnalysis();
    if (diagnostics === undefined || signal.aborted || current?.text !== analysis.text) return;
    this.held = { text: analysis.text, syntax: analysis.compiled.syntax, diagnostics };
    this.document.publish(current);
  }
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
