import { readdir, stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { RunFile, Signature, TextOrigin } from "@vigil/trace";
import { ruleId } from "@vigil/compiler";
import type { RunResult, RunTask } from "./corpus-worker.js";
import { neverTriggered, runErrorText, runLabel, type RunOutcome } from "../reports/outcome.js";
import { printableLine } from "../reports/render.js";

/**
 * Corpus mode of `vigilc check`: a directory or a glob of traces, or a file holding several runs
 * (a τ-bench results file), every run checked (in parallel across cores, in worker threads), a
 * progress line on a terminal, and a summary.
 */

/**
 * One run of a corpus: a file, read by a worker; or a run of a file holding several, cut from the
 * file here (which reads the file once) and given to a worker as its text, with its name and the
 * place of the text in the file.
 */
export interface CorpusRun {
  readonly file: string;
  readonly run?: string;
  readonly text?: string;
  readonly origin?: TextOrigin;
}

/** The runs of a file of runs, each named by its name in the file. */
export function runsOfFile(file: string, runFile: RunFile): CorpusRun[] {
  return runFile.runs.map((run) => ({ file, run: run.name, text: run.text, origin: run.origin }));
}

/**
 * The runs of a corpus's files: a file holding several runs gives each of them (read whole here,
 * once); any other file is one run, read by its worker. With a format of one run named, every
 * file is one run.
 */
export async function expandRunFiles(files: readonly string[], traceFormat: RunTask["traceFormat"]): Promise<CorpusRun[]> {
  const { readRunFile } = await import("@vigil/trace");
  const runs: CorpusRun[] = [];
  for (const file of files) {
    const read = traceFormat === "auto" || traceFormat === "tau-bench" ? await readRunFile(file, { format: traceFormat }) : undefined;
    // A file that cannot be read is left to its worker, which reports why as that run's error.
    if (read === undefined || "code" in read) runs.push({ file });
    else for (const run of runsOfFile(file, read)) runs.push(run);
  }
  return runs;
}

const traceExtensions = [".jsonl", ".json", ".ndjson"];

/** Whether the `--trace` argument names several runs (a directory or a glob). */
export async function isCorpus(argument: string): Promise<boolean> {
  if (/[*?[\]{}]/.test(argument)) return true;
  try {
    return (await stat(argument)).isDirectory();
  } catch {
    return false;
  }
}

/** The trace files of a directory (recursively) or a glob, sorted. */
export async function expandCorpus(argument: string): Promise<string[]> {
  if (/[*?[\]{}]/.test(argument)) {
    const { glob } = await import("tinyglobby");
    return (await glob(argument, { onlyFiles: true, expandDirectories: false })).sort();
  }
  const files: string[] = [];
  const walk = async (directory: string): Promise<void> => {
    const entries = await readdir(directory, { withFileTypes: true });
    for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (traceExtensions.some((extension) => entry.name.endsWith(extension))) files.push(path);
    }
  };
  await walk(argument);
  return files;
}

export interface CorpusOptions {
  readonly policySource: string;
  readonly policyFile: string;
  readonly traceFormat: RunTask["traceFormat"];
  readonly ground?: boolean;
  readonly messages?: boolean;
  readonly engine?: RunTask["engine"];
  readonly timeoutMs?: number;
  readonly budgetMs?: number;
  readonly strict?: boolean;
  /** Send each run's events back, for the HTML report. */
  readonly timeline?: boolean;
  /** Called after each run with the number done so far. */
  readonly onProgress?: (done: number, total: number) => void;
}

/**
 * A corpus checked: each run's outcome, in the runs' order, and the signature of the corpus, the
 * union of the signatures of the runs that could be read (undefined when none could), against
 * which the policy's names are judged once (the closed world of a corpus: a name is known when
 * some run shows it).
 */
export interface CorpusResult {
  readonly outcomes: RunOutcome[];
  readonly signature: Signature | undefined;
}

/**
 * The union of the signatures of a corpus's runs, gathered as they come: merged every few dozen
 * so that a corpus of many runs holds one signature and a few, not one per run.
 */
export class CorpusSignature {
  private pending: Signature[] = [];

  constructor(private readonly merge: (signatures: readonly Signature[]) => Signature) {}

  add(signature: Signature): void {
    this.pending.push(signature);
    if (this.pending.length >= 64) this.pending = [this.merge(this.pending)];
  }

  signature(): Signature | undefined {
    if (this.pending.length === 0) return undefined;
    return { ...this.merge(this.pending), origin: "corpus" };
  }
}

/** Checks every run, in worker threads; outcomes come back in the runs' order, with the corpus's signature. */
export async function checkCorpus(runs: readonly CorpusRun[], options: CorpusOptions): Promise<CorpusResult> {
  const { Piscina } = await import("piscina");
  const { mergeSignatures } = await import("@vigil/trace");
  const union = new CorpusSignature(mergeSignatures);
  const pool = new Piscina<RunTask, RunResult>({
    filename: new URL("./corpus-worker.js", import.meta.url).href,
    maxThreads: Math.max(1, Math.min(availableParallelism(), runs.length)),
    minThreads: 1,
  });
  let done = 0;
  try {
    const outcomes = await Promise.all(
      runs.map(async ({ file, run, text, origin }) => {
        const { outcome, signature } = await pool.run({
          file,
          ...(run !== undefined ? { run } : {}),
          ...(text !== undefined ? { text } : {}),
          ...(origin !== undefined ? { origin } : {}),
          policySource: options.policySource,
          policyFile: options.policyFile,
          // A run cut from a file of runs is a τ-bench run, whatever the file was detected as.
          traceFormat: run !== undefined ? "tau-bench" : options.traceFormat,
          ...(options.ground !== undefined ? { ground: options.ground } : {}),
          ...(options.messages === true ? { messages: true } : {}),
          ...(options.engine !== undefined ? { engine: options.engine } : {}),
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}),
          ...(options.strict === true ? { strict: true } : {}),
          ...(options.timeline === true ? { timeline: true } : {}),
        });
        if (signature !== undefined) union.add(signature);
        options.onProgress?.(++done, runs.length);
        return outcome;
      }),
    );
    return { outcomes, signature: union.signature() };
  } finally {
    await pool.destroy();
  }
}

/** A one-line progress bar, redrawn in place (only on a terminal). */
export function progressLine(done: number, total: number, width = 30): string {
  const filled = total === 0 ? width : Math.round((done / total) * width);
  return `\r[${"#".repeat(filled)}${"-".repeat(width - filled)}] ${done}/${total} runs`;
}

export interface CorpusSummary {
  readonly runs: number;
  readonly safe: number;
  readonly unsafe: number;
  readonly failed: number;
  readonly events: number;
  /** Per statement: in how many runs it was violated (or undecided). */
  readonly violations: readonly { readonly rule: string; readonly runs: number }[];
  /**
   * The rules whose trigger held on no event of any run checked (counted by the forward engine):
   * they held everywhere vacuously, which is what a pattern that can never match looks like.
   */
  readonly neverTriggered: readonly string[];
}

export function summarize(outcomes: readonly RunOutcome[]): CorpusSummary {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    for (const statement of outcome.statements) {
      const rule = ruleId(statement);
      if (!counts.has(rule)) counts.set(rule, 0);
      if (!statement.holds) counts.set(rule, counts.get(rule)! + 1);
    }
  }
  return {
    runs: outcomes.length,
    safe: outcomes.filter((o) => o.verdict === "safe").length,
    unsafe: outcomes.filter((o) => o.verdict === "unsafe").length,
    failed: outcomes.filter((o) => o.verdict === undefined).length,
    events: outcomes.reduce((sum, o) => sum + o.events, 0),
    violations: [...counts].map(([rule, runs]) => ({ rule, runs })),
    neverTriggered: neverTriggered(outcomes),
  };
}

/** How many runs the human summary names per rule (JSON lists every run's verdicts). */
const RUNS_NAMED_PER_RULE = 12;

export function renderSummary(summary: CorpusSummary, outcomes: readonly RunOutcome[]): string {
  const lines: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.verdict === "unsafe") {
      const broken = outcome.statements
        .filter((s) => !s.holds)
        .map((s) => `${ruleId(s)} at ${s.witnesses.map((w, i) => (s.brokenBy?.[i] ? `${w} (broken by ${s.brokenBy[i]})` : `${w}`)).join(", ") || "(undecided)"}`);
      lines.push(`unsafe  ${printableLine(runLabel(outcome))}: ${broken.join("; ")}`);
    }
  }
  // File names and messages can quote a run's content: escaped before they reach a terminal.
  for (const outcome of outcomes) {
    for (const error of outcome.errors) {
      // An error about the policy (a closed-world warning under --strict) names the run it stopped,
      // and so does an error in a run of a file of runs (its line is the file's).
      const run = error.file === outcome.file && outcome.run === undefined ? "" : `${runLabel(outcome)}: `;
      lines.push(`error   ${printableLine(run + runErrorText(error))}`);
    }
  }
  const width = Math.max(4, ...summary.violations.map((v) => v.rule.length));
  lines.push("", `${"rule".padEnd(width)}  violated in`);
  for (const { rule, runs } of summary.violations) lines.push(`${rule.padEnd(width)}  ${runs} of ${summary.runs - summary.failed} runs`);
  // Which runs break each rule, by name (a run of a file of runs by its own name, other runs by file).
  const broken = summary.violations.filter((v) => v.runs > 0);
  if (broken.length > 0) lines.push("", "runs breaking each rule:");
  for (const { rule } of broken) {
    const names = outcomes.filter((o) => o.statements.some((s) => !s.holds && ruleId(s) === rule)).map((o) => printableLine(o.run ?? o.file));
    const shown = names.slice(0, RUNS_NAMED_PER_RULE);
    lines.push(`${rule}: ${shown.join(", ")}${names.length > shown.length ? `, … and ${names.length - shown.length} more` : ""}`);
  }
  for (const rule of summary.neverTriggered) {
    lines.push("", `warning: the trigger of ${rule} matched no event in any of the ${summary.runs - summary.failed} runs: it held only vacuously (a pattern that can never match looks like this)`);
  }
  lines.push(
    "",
    `checked ${summary.runs} runs (${summary.events} events): ${summary.safe} safe, ${summary.unsafe} unsafe` +
      (summary.failed > 0 ? `, ${summary.failed} could not be checked` : ""),
    `verdict: ${summary.unsafe > 0 || summary.failed > 0 ? "unsafe" : "safe"}`,
  );
  return lines.join("\n") + "\n";
}
