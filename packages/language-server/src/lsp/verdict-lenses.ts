import { LSPErrorCodes, ResponseError, type CodeLens } from "vscode-languageserver/node";
import type { Analysis } from "../analysis.js";
import { verdictLenses } from "../features/code-lens.js";
import { judgeSamples, type VerdictTable } from "../features/verdicts.js";
import type { SampleSet } from "../workspace/samples.js";
import { DebouncedJob } from "./debounced-job.js";

/** How long a document must stay unchanged before its verdict lenses are computed unasked. */
const verdictsIdleMs = 250;

/** The document the lenses are on, as the server keeps it. */
export interface LensedDocument {
  /** The document's latest analysis. */
  latestAnalysis(): Analysis | undefined;
  /** The signal of the document's latest check, which the next change aborts. */
  checkSignal(): AbortSignal | undefined;
}

/** An analysis, and the signal of the check that made it (or of the latest check, for a lens asked before the judging started). */
interface Judging {
  readonly analysis: Analysis;
  readonly signal: AbortSignal;
}

/**
 * The verdict lenses of one policy document: every rule's verdict on the sample traces, judged once
 * per analysis, when the document has been still for a moment or a lens is asked for. Judging is
 * part of the document's check: it runs under the check's signal, not one of its own, so the next
 * change, which aborts the check, stops the judging too, and drops the judging waiting.
 */
export class VerdictLenses {
  /** The analysis the lenses are for; undefined when it has no usable sample traces. */
  private analysis: Analysis | undefined;
  private readonly judging: DebouncedJob<Judging, VerdictTable | undefined>;

  constructor(
    private readonly document: LensedDocument,
    private readonly logError: (what: string, error: unknown) => void,
  ) {
    this.judging = new DebouncedJob(({ analysis, signal }) => this.judge(analysis, signal));
  }

  /** After a check: judges its analysis once the document has been still for a moment. */
  prepare(analysis: Analysis, checkSignal: AbortSignal): void {
    this.judging.cancel();
    if (!hasUsableTraces(analysis.context.samples)) {
      this.analysis = undefined;
      return;
    }
    this.analysis = analysis;
    this.judging.schedule({ analysis, signal: checkSignal }, verdictsIdleMs);
    checkSignal.addEventListener("abort", () => this.judging.cancel(), { once: true });
  }

  /** Drops the judging waiting (the document is closed; the check's abort stops the one in flight). */
  cancel(): void {
    this.judging.cancel();
  }

  /** The lenses of the document's current analysis, once its verdicts are judged (now, if they wait). */
  async lenses(analysis: Analysis): Promise<CodeLens[]> {
    if (!hasUsableTraces(analysis.context.samples)) return [];
    const verdicts = await this.verdictsOf(analysis);
    if (this.document.latestAnalysis() !== analysis) throw documentChanged();
    return verdictLenses(analysis, verdicts);
  }

  private async verdictsOf(analysis: Analysis): Promise<VerdictTable | undefined> {
    const signal = this.document.checkSignal();
    if (this.analysis !== analysis || signal === undefined) throw documentChanged();
    try {
      return await this.start({ analysis, signal });
    } catch (error) {
      if (this.document.checkSignal()?.aborted === true) throw documentChanged();
      throw error;
    }
  }

  /** The judging of an analysis, started now unless it has been (an analysis is judged once). */
  private start(judging: Judging): Promise<VerdictTable | undefined> {
    const latest = this.judging.latest;
    if (latest?.input.analysis === judging.analysis) return latest.output;
    return this.judging.run(judging);
  }

  private judge(analysis: Analysis, signal: AbortSignal): Promise<VerdictTable | undefined> {
    const judged = analysis.compiled.ok ? judgeSamples(analysis.compiled, analysis.context.samples!, signal) : Promise.resolve(undefined);
    // The lens request that waits for it reports a failure; nobody may be waiting.
    judged.catch((error: unknown) => {
      if (!signal.aborted) this.logError("judging the sample traces", error);
    });
    return judged;
  }
}

/** Whether a document has sample traces to judge its rules on (and so verdict lenses). */
function hasUsableTraces(samples: SampleSet | undefined): samples is SampleSet {
  return samples !== undefined && samples.traces.some((trace) => trace.usable);
}

function documentChanged(): ResponseError<void> {
  return new ResponseError(LSPErrorCodes.ContentModified, "the document changed; the lenses are computed again");
}
