import { readdir, stat } from "node:fs/promises";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import type { RunTask } from "./corpus-worker.js";
import { runErrorText, type RunOutcome } from "./outcome.js";
import { printableLine } from "./render.js";

/**
 * Corpus mode of `vigilc check`: a directory or a glob of traces, every run checked (in parallel
 * across cores, in worker threads), a progress line on a terminal, and a summary.
 */

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
  readonly engine?: RunTask["engine"];
  readonly timeoutMs?: number;
  readonly budgetMs?: number;
  readonly strict?: boolean;
  /** Send each run's events back, for the HTML report. */
  readonly timeline?: boolean;
  /** Called after each run with the number done so far. */
  readonly onProgress?: (done: number, total: number) => void;
}

/** Checks every file, in worker threads; outcomes come back in the files' order. */
export async function checkCorpus(files: readonly string[], options: CorpusOptions): Promise<RunOutcome[]> {
  const { Piscina } = await import("piscina");
  const pool = new Piscina<RunTask, RunOutcome>({
    filename: new URL("./corpus-worker.js", import.meta.url).href,
    maxThreads: Math.max(1, Math.min(availableParallelism(), files.length)),
    minThreads: 1,
  });
  let done = 0;
  try {
    return await Promise.all(
      files.map(async (file) => {
        const outcome = await pool.run({
          file,
          policySource: options.policySource,
          policyFile: options.policyFile,
          traceFormat: options.traceFormat,
          ...(options.ground !== undefined ? { ground: options.ground } : {}),
          ...(options.engine !== undefined ? { engine: options.engine } : {}),
          ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
          ...(options.budgetMs !== undefined ? { budgetMs: options.budgetMs } : {}),
          ...(options.strict === true ? { strict: true } : {}),
          ...(options.timeline === true ? { timeline: true } : {}),
        });
        options.onProgress?.(++done, files.length);
        return outcome;
      }),
    );
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
}

export function summarize(outcomes: readonly RunOutcome[]): CorpusSummary {
  const counts = new Map<string, number>();
  for (const outcome of outcomes) {
    for (const statement of outcome.statements) {
      const rule = `${statement.policy}.${statement.name}`;
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
  };
}

export function renderSummary(summary: CorpusSummary, outcomes: readonly RunOutcome[]): string {
  const lines: string[] = [];
  for (const outcome of outcomes) {
    if (outcome.verdict === "unsafe") {
      const broken = outcome.statements.filter((s) => !s.holds).map((s) => `${s.policy}.${s.name} at ${s.witnesses.join(", ") || "(undecided)"}`);
      lines.push(`unsafe  ${printableLine(outcome.file)}: ${broken.join("; ")}`);
    }
  }
  // File names and messages can quote a run's content: escaped before they reach a terminal.
  for (const outcome of outcomes) {
    for (const error of outcome.errors) {
      // An error about the policy (a closed-world warning under --strict) names the run it stopped.
      const run = error.file === outcome.file ? "" : `${outcome.file}: `;
      lines.push(`error   ${printableLine(run + runErrorText(error))}`);
    }
  }
  const width = Math.max(4, ...summary.violations.map((v) => v.rule.length));
  lines.push("", `${"rule".padEnd(width)}  violated in`);
  for (const { rule, runs } of summary.violations) lines.push(`${rule.padEnd(width)}  ${runs} of ${summary.runs - summary.failed} runs`);
  lines.push(
    "",
    `checked ${summary.runs} runs (${summary.events} events): ${summary.safe} safe, ${summary.unsafe} unsafe` +
      (summary.failed > 0 ? `, ${summary.failed} could not be checked` : ""),
    `verdict: ${summary.unsafe > 0 || summary.failed > 0 ? "unsafe" : "safe"}`,
  );
  return lines.join("\n") + "\n";
}
