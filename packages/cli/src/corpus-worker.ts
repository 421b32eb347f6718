import { readFile } from "node:fs/promises";
import { check, compile, readRecording, signatureOf, type TraceFormat } from "@vigil/compiler";
import { outcomeOf, type RunOutcome } from "./outcome.js";

export type { RunOutcome } from "./outcome.js";

/**
 * Checks one run of a corpus, in a worker thread. Everything it returns is plain data; a problem
 * with the run (unreadable, malformed, a policy error against its signature) is part of the result,
 * never a thrown error, so that the corpus report accounts for every run.
 */
export interface RunTask {
  readonly file: string;
  readonly policySource: string;
  readonly policyFile: string;
  readonly traceFormat: TraceFormat | "auto";
  readonly ground?: boolean;
  /** Send the run's events back for a report that shows them (`--html`). */
  readonly timeline?: boolean;
}

export default async function checkRun(task: RunTask): Promise<RunOutcome> {
  let text: string;
  try {
    text = await readFile(task.file, "utf8");
  } catch (error) {
    return { file: task.file, events: 0, statements: [], errors: [`${task.file}: cannot be read: ${(error as Error).message}`] };
  }
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  try {
    const read = readRecording(text, { file: task.file, format: task.traceFormat, ...(task.ground !== undefined ? { ground: task.ground } : {}) });
    const events = read.trace.events;
    const errors = read.diagnostics
      .filter((d) => d.severity === "error")
      .map((d) => `${d.file ?? task.file}:${d.span?.line ?? 1}: ${d.code} ${d.message}`);
    const format = read.format;
    if (errors.length > 0) return { file: task.file, ...(format ? { format } : {}), events: events.length, statements: [], errors };
    const compiled = compile(task.policySource, { file: task.policyFile, signature: signatureOf(events) });
    if (!compiled.ok) {
      const policyErrors = compiled.diagnostics.filter((d) => d.severity === "error").map((d) => `${task.policyFile}:${d.span?.line ?? 1}: ${d.code} ${d.message}`);
      return { file: task.file, ...(format ? { format } : {}), events: events.length, statements: [], errors: policyErrors };
    }
    const report = await check(compiled, events, { engine: "eval" });
    return outcomeOf(task.file, format, events, report, { timeline: task.timeline === true });
  } catch (error) {
    return { file: task.file, events: 0, statements: [], errors: [`${task.file}: internal error: ${(error as Error).message}`] };
  }
}
