import { LineIndex } from "@vigil/diagnostics";
import { isJsonObject } from "../value.js";
import { arrayElementRanges } from "./json-text.js";
import type { TextOrigin } from "./lines.js";

/**
 * τ-bench runs (sierra-research/tau-bench, `historical_trajectories/*.json`): a run is an object
 * `{task_id, trial, reward, info, traj}` whose `traj` is the conversation as OpenAI chat messages
 * (system, user, assistant with `tool_calls`, tool results); a results file is a JSON array of
 * runs. One run is read like OpenAI chat messages (its `traj`); a file of runs is a corpus, cut
 * into its runs by {@link splitRunFile}, each read on its own and named by its task and trial.
 */

/** A τ-bench run: an object whose `traj` is a list (of chat messages). */
export function looksLikeTauBenchRun(value: unknown): boolean {
  return isJsonObject(value) && Array.isArray(value["traj"]);
}

/**
 * A file of τ-bench runs: a non-empty JSON array holding at least one run, and no element that is
 * a chat message or an event (whose list would be one run). An element that is not a run is read
 * as a run of the file all the same, and fails with its error: a run is never skipped.
 */
export function looksLikeTauBenchFile(value: unknown): boolean {
  if (!Array.isArray(value) || value.length === 0) return false;
  let runs = 0;
  for (const element of value) {
    if (looksLikeTauBenchRun(element)) runs++;
    else if (isJsonObject(element) && (typeof element["role"] === "string" || typeof element["type"] === "string" || typeof element["action"] === "string")) return false;
  }
  return runs > 0;
}

/** One run of a file holding several: its name, its place, and its text cut from the file. */
export interface RecordingRun {
  /**
   * How the run is named in reports: `task 3 trial 1` for a τ-bench run (`task 3` without a trial;
   * `run 17`, its place in the file, when it names no task or cannot be read). A name several runs
   * would share gets each run's place: `task 3 trial 1 (run 17)`.
   */
  readonly name: string;
  /** The run's 1-based place in the file. */
  readonly index: number;
  /** The run's text: the element of the file's array, as written. */
  readonly text: string;
  /** Where that text starts in the file, so that its events and errors point at the file's lines. */
  readonly origin: TextOrigin;
}

/** A file holding several runs, cut into them. */
export interface RunFile {
  readonly format: "tau-bench";
  readonly runs: readonly RecordingRun[];
}

/** How much of a file's beginning {@link mayBeRunFile} looks at. */
export const RUN_FILE_HEAD = 65_536;

/**
 * Whether a text that starts with `head` may be a file of τ-bench runs, and is worth reading whole
 * to cut into runs: a JSON array of objects that has a `traj` or `task_id` key in its first
 * {@link RUN_FILE_HEAD} characters. A cheap test, so that a corpus of other JSON files is not read
 * twice; a run file it misses is read as one trace, and fails with an error saying what it is.
 */
export function mayBeRunFile(head: string): boolean {
  const start = head.slice(0, RUN_FILE_HEAD);
  return /^\s*\[\s*\{/.test(start) && /"(?:traj|task_id)"\s*:/.test(start);
}

/**
 * Cuts a file of τ-bench runs into its runs: undefined when the text is not such a file (or
 * `format` names another format). The file's array is cut into its elements by one scan of the
 * text, and each element is parsed on its own (for its name), so the file is parsed once in all;
 * an element that does not parse is still a run, whose reading reports where it breaks. A file
 * cut short (its last run unterminated) gives that run to the end of the text.
 */
export function splitRunFile(text: string, options: { readonly format?: string } = {}): RunFile | undefined {
  const format = options.format ?? "auto";
  if (format !== "auto" && format !== "tau-bench") return undefined;
  const open = text.search(/\S/);
  if (open < 0 || text[open] !== "[") return undefined;
  if (format === "auto" && !mayBeRunFile(text.slice(open))) return undefined;
  const ranges = arrayElementRanges(text, open);
  const values = ranges.map((range) => parseOrUndefined(text.slice(range.start, range.end)));
  if (format === "auto" && !looksLikeTauBenchFile(values.filter((value) => value !== unparsed))) return undefined;
  const lines = new LineIndex(text);
  const names = values.map((value, index) => runName(value, index + 1));
  const counts = new Map<string, number>();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  const runs = ranges.map((range, index): RecordingRun => {
    const name = names[index]!;
    const { line, column } = lines.position(range.start);
    return {
      name: counts.get(name)! > 1 ? `${name} (run ${index + 1})` : name,
      index: index + 1,
      text: text.slice(range.start, range.end),
      origin: { offset: range.start, line, column },
    };
  });
  return { format: "tau-bench", runs };
}

/** The name of the run at a 1-based place of a file: by its task and trial, or by its place. */
export function runName(value: unknown, index: number): string {
  if (isJsonObject(value)) {
    const task = value["task_id"];
    const trial = value["trial"];
    if (typeof task === "number" || typeof task === "string") {
      return typeof trial === "number" || typeof trial === "string" ? `task ${task} trial ${trial}` : `task ${task}`;
    }
  }
  return `run ${index}`;
}

const unparsed: unique symbol = Symbol("unparsed");

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return unparsed;
  }
}
