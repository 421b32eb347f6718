import type { CheckReport, Diagnostic, StatementVerdict } from "@vigil/compiler";
import type { TraceEvent } from "@vigil/trace";

/**
 * A judged run as plain data: what the corpus workers send back and what every report (the summary,
 * JSON, SARIF, HTML) is written from. A problem with the run is part of it (`errors`), never a
 * thrown error, so that a report accounts for every run.
 */
export interface RunOutcome {
  readonly file: string;
  readonly format?: string;
  /** The decision procedure that judged the run. */
  readonly engine?: string;
  readonly events: number;
  /** Absent when the run could not be judged (see `errors`). */
  readonly verdict?: "safe" | "unsafe";
  readonly statements: readonly StatementResult[];
  /** The problems that kept the run from being judged, as data (rendered by each report). */
  readonly errors: readonly RunError[];
  /** The run's events as a report shows them; present when a report asked for it (`--html`). */
  readonly timeline?: readonly TimelineEntry[];
}

/** A diagnostic that kept a run from being judged, as plain data: its code stays in every report. */
export interface RunError {
  readonly code: string;
  readonly severity: "error" | "warning" | "info";
  readonly message: string;
  /** The file it is about (the run, or the policy). */
  readonly file: string;
  readonly line?: number;
  readonly column?: number;
}

/** A diagnostic as a run error, located in `fallbackFile` when it names no file. */
export function runError(d: Diagnostic, fallbackFile: string): RunError {
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    file: d.file ?? fallbackFile,
    ...(d.span !== undefined ? { line: d.span.line, column: d.span.column } : {}),
  };
}

/** How the text reports write a run error: `file:line: CODE message`. */
export function runErrorText(error: RunError): string {
  return `${error.file}:${error.line ?? 1}: ${error.code} ${error.message}`;
}

export interface StatementResult {
  readonly policy: string;
  readonly name: string;
  readonly doc?: string;
  readonly holds: boolean;
  /**
   * What enforcement does with a violation of the rule (`block` when the rule names no response);
   * reports show it beside a violation. It changes no verdict.
   */
  readonly response: StatementVerdict["statement"]["response"];
  /** What the rule tells the agent to do to comply, when it says. */
  readonly remediation?: string;
  readonly witnesses: number[];
  /** The trace line of each witness (same order). */
  readonly witnessLines: number[];
  readonly undecided?: string;
}

/** One event of a timeline, its values shortened for display. */
export interface TimelineEvent {
  readonly position: number;
  readonly action: string;
  readonly status?: "ok" | "error";
  /** Argument name and its value as JSON text (a string value without quotes), shortened. */
  readonly args: readonly (readonly [string, string])[];
  readonly output?: string;
  readonly line?: number;
  readonly callId?: string;
  /** For an event grounded from a shell call: that call's position. */
  readonly groundedFrom?: number;
}

/** A run of events left out of a long timeline (none of them a witness). */
export interface TimelineGap {
  readonly hidden: number;
}

export type TimelineEntry = TimelineEvent | TimelineGap;

/** Timelines up to this many events are shown whole. */
export const TIMELINE_WHOLE_UP_TO = 300;
/** Around each witness of a longer timeline, this many events on either side are kept. */
const CONTEXT = 3;
const VALUE_CHARS = 160;
const OUTPUT_CHARS = 240;

function shorten(text: string, limit: number): string {
  if (text.length <= limit) return text;
  let end = limit;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}… (${text.length} characters)`;
}

function timelineEvent(event: TraceEvent): TimelineEvent {
  const args = Object.entries(event.args).map(([key, value]) => {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return [key, shorten(text, VALUE_CHARS)] as const;
  });
  return {
    position: event.position,
    action: event.action,
    ...(event.status !== undefined ? { status: event.status } : {}),
    args,
    ...(event.output !== undefined && event.output !== "" ? { output: shorten(event.output, OUTPUT_CHARS) } : {}),
    ...(event.source?.line !== undefined ? { line: event.source.line } : {}),
    ...(event.source?.id !== undefined ? { callId: event.source.id } : {}),
    ...(event.source?.groundedFrom !== undefined ? { groundedFrom: event.source.groundedFrom } : {}),
  };
}

/**
 * The events a report shows: all of them up to {@link TIMELINE_WHOLE_UP_TO}; beyond, every witness
 * with its neighbours, the first ten and the last five, and a gap entry for each run left out.
 * A witness is never left out.
 */
export function timelineOf(events: readonly TraceEvent[], witnesses: Iterable<number>): TimelineEntry[] {
  if (events.length <= TIMELINE_WHOLE_UP_TO) return events.map(timelineEvent);
  const keep = new Set<number>();
  for (let p = 1; p <= Math.min(10, events.length); p++) keep.add(p);
  for (let p = Math.max(1, events.length - 4); p <= events.length; p++) keep.add(p);
  for (const w of witnesses) for (let p = Math.max(1, w - CONTEXT); p <= Math.min(events.length, w + CONTEXT); p++) keep.add(p);
  const entries: TimelineEntry[] = [];
  let hidden = 0;
  for (const event of events) {
    if (keep.has(event.position)) {
      if (hidden > 0) entries.push({ hidden });
      hidden = 0;
      entries.push(timelineEvent(event));
    } else hidden++;
  }
  if (hidden > 0) entries.push({ hidden });
  return entries;
}

/** The outcome of a judged run, with its timeline when asked for. */
export function outcomeOf(
  file: string,
  format: string | undefined,
  events: readonly TraceEvent[] | ReadonlyMap<number, TraceEvent>,
  report: CheckReport,
  options: { timeline?: boolean; eventCount?: number } = {},
): RunOutcome {
  // Either the whole run, or (when it was not kept) the events at the witnesses.
  const eventAt = (position: number): TraceEvent | undefined => ("get" in events ? events.get(position) : events[position - 1]);
  const eventCount = options.eventCount ?? ("get" in events ? events.size : events.length);
  const statements = report.statements.map((s) => ({
    policy: s.policy,
    name: s.name,
    ...(s.doc !== undefined ? { doc: s.doc } : {}),
    holds: s.holds,
    response: s.statement.response,
    ...(s.statement.remediation !== undefined ? { remediation: s.statement.remediation } : {}),
    witnesses: [...s.witnesses],
    witnessLines: s.witnesses.map((position) => eventAt(position)?.source?.line ?? 1),
    ...(s.undecided !== undefined ? { undecided: s.undecided } : {}),
  }));
  return {
    file,
    ...(format !== undefined ? { format } : {}),
    engine: report.engine,
    events: eventCount,
    verdict: report.verdict,
    statements,
    errors: [],
    ...(options.timeline === true && !("get" in events) ? { timeline: timelineOf(events, statements.flatMap((s) => s.witnesses)) } : {}),
  };
}
