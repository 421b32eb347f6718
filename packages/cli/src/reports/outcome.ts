import { ruleId, type CheckReport, type Diagnostic, type RunJudgement, type StatementVerdict, type TraceFormat } from "@vigil/compiler";
import type { TraceEvent } from "@vigil/trace";

/**
 * A judged run as plain data: what the corpus workers send back and what every report (the summary,
 * JSON, SARIF, HTML) is written from. A problem with the run is part of it (`errors`), never a
 * thrown error, so that a report accounts for every run.
 */
export interface RunOutcome {
  /** The file the run was read from. */
  readonly file: string;
  /**
   * For a run of a file holding several (a τ-bench results file): the run's name in it, such as
   * `task 3 trial 1`. Its lines (witnesses, errors) are lines of `file`.
   */
  readonly run?: string;
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

/**
 * How reports show an event's status: `ok`, `error`, `pending` for a call without a result, and
 * `message` for a message of the conversation (`--messages`), which is no call and has no status.
 */
export function statusLabel(event: { readonly action: string; readonly status?: "ok" | "error" }): "ok" | "error" | "pending" | "message" {
  if (event.status !== undefined) return event.status;
  return event.action === "user_message" || event.action === "agent_message" ? "message" : "pending";
}

/** How reports name a run: its file, and for a run of a file of runs, its name in the file (`file · task 3 trial 1`). */
export function runLabel(outcome: { readonly file: string; readonly run?: string }): string {
  return outcome.run === undefined ? outcome.file : `${outcome.file} · ${outcome.run}`;
}

/**
 * A diagnostic as JSON data, the one shape every JSON report writes: its code, severity and message,
 * the file it is about (`fallbackFile` when it names none), where it starts and ends, and its help.
 * `vigilc test --format json` writes it whole; a run error keeps the fields up to its column.
 */
export interface DiagnosticJson {
  readonly code: string;
  readonly severity: "error" | "warning" | "info";
  readonly message: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly endLine?: number;
  readonly endColumn?: number;
  readonly help?: string;
}

export function diagnosticJson(d: Diagnostic, fallbackFile?: string): DiagnosticJson {
  const file = d.file ?? fallbackFile;
  return {
    code: d.code,
    severity: d.severity,
    message: d.message,
    ...(file !== undefined ? { file } : {}),
    ...(d.span !== undefined ? { line: d.span.line, column: d.span.column, endLine: d.span.endLine, endColumn: d.span.endColumn } : {}),
    ...(d.help !== undefined ? { help: d.help } : {}),
  };
}

/** A diagnostic as a run error, located in `fallbackFile` when it names no file. */
export function runError(d: Diagnostic, fallbackFile: string): RunError {
  const { endLine: _endLine, endColumn: _endColumn, help: _help, ...located } = diagnosticJson(d, fallbackFile);
  return { ...located, file: located.file ?? fallbackFile };
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
  /** For `until`: per witness (same order), the bad event that broke the interval it opened. */
  readonly brokenBy?: number[];
  readonly undecided?: string;
  /** On how many events the rule's trigger held (forward engine; absent for `always`): 0 means the rule held vacuously. */
  readonly triggered?: number;
  /**
   * How many of those events were answered, the obligation each opened discharged by an event of
   * the run (forward engine; absent for `abs`, whose triggers are its witnesses, and `always`).
   */
  readonly answered?: number;
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

/** A run of events left out of a long timeline; `witnesses` counts the witnesses among them. */
export interface TimelineGap {
  readonly hidden: number;
  readonly witnesses?: number;
}

export type TimelineEntry = TimelineEvent | TimelineGap;

/** Timelines up to this many events are shown whole. */
export const TIMELINE_WHOLE_UP_TO = 300;
/** Around each witness of a longer timeline, this many events on either side are kept. */
const CONTEXT = 3;
/**
 * A longer timeline shows this many witnesses of each rule (the first ones) with their neighbours:
 * a run with thousands of witnesses would otherwise be a page of the whole run. Every witness stays
 * listed in the JSON and SARIF reports.
 */
export const TIMELINE_WITNESSES_PER_RULE = 20;
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
 * The positions a timeline shows: all of them up to {@link TIMELINE_WHOLE_UP_TO} events; beyond,
 * the first ten, the last five, and the first {@link TIMELINE_WITNESSES_PER_RULE} witnesses of each
 * rule with their neighbours. A bounded set, so that a long run's events can be read for it alone.
 */
export function timelinePositions(count: number, witnessesByRule: readonly (readonly number[])[]): Set<number> {
  const keep = new Set<number>();
  if (count <= TIMELINE_WHOLE_UP_TO) {
    for (let p = 1; p <= count; p++) keep.add(p);
    return keep;
  }
  for (let p = 1; p <= Math.min(10, count); p++) keep.add(p);
  for (let p = Math.max(1, count - 4); p <= count; p++) keep.add(p);
  for (const witnesses of witnessesByRule) {
    for (const w of witnesses.slice(0, TIMELINE_WITNESSES_PER_RULE)) for (let p = Math.max(1, w - CONTEXT); p <= Math.min(count, w + CONTEXT); p++) keep.add(p);
  }
  return keep;
}

/**
 * The events a report shows (see {@link timelinePositions}), and a gap entry for each run left out,
 * saying how many witnesses it hides. `eventAt` gives the event at a kept position.
 */
export function timelineOf(
  count: number,
  eventAt: (position: number) => TraceEvent | undefined,
  witnessesByRule: readonly (readonly number[])[],
): TimelineEntry[] {
  const keep = timelinePositions(count, witnessesByRule);
  const witnesses = [...new Set(witnessesByRule.flat())].sort((a, b) => a - b);
  /** How many witnesses lie in [from, to): two binary searches in the sorted witnesses. */
  const firstAtLeast = (value: number): number => {
    let low = 0;
    let high = witnesses.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (witnesses[middle]! < value) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  const entries: TimelineEntry[] = [];
  let hidden = 0;
  let hiddenWitnesses = 0;
  const closeGap = () => {
    if (hidden > 0) entries.push(hiddenWitnesses > 0 ? { hidden, witnesses: hiddenWitnesses } : { hidden });
    hidden = 0;
    hiddenWitnesses = 0;
  };
  // Walk the kept positions in order, counting what lies between them instead of visiting it.
  const kept = [...keep].sort((a, b) => a - b);
  let next = 1;
  const hide = (from: number, to: number) => {
    hidden += to - from;
    hiddenWitnesses += firstAtLeast(to) - firstAtLeast(from);
  };
  for (const position of kept) {
    if (position > next) hide(next, position);
    const event = eventAt(position);
    if (event === undefined) {
      hide(position, position + 1);
    } else {
      closeGap();
      entries.push(timelineEvent(event));
    }
    next = position + 1;
  }
  if (next <= count) hide(next, count + 1);
  closeGap();
  return entries;
}

/**
 * The events a timeline needs from a run whose events were not kept: read again from its file, only
 * at the positions the timeline shows (see {@link timelinePositions}), with the witness events
 * already at hand.
 */
export async function timelineEvents(
  judged: RunJudgement,
  options: { readonly traceFormat?: TraceFormat | "auto"; readonly ground?: boolean; readonly messages?: boolean },
): Promise<ReadonlyMap<number, TraceEvent>> {
  const { readEventsAt } = await import("@vigil/compiler");
  const positions = timelinePositions(judged.eventCount, judged.report!.statements.map((s) => s.witnesses));
  const reading = {
    file: judged.file,
    format: options.traceFormat ?? "auto",
    ...(options.ground !== undefined ? { ground: options.ground } : {}),
    // The same events as the first reading, or the positions would name other events.
    ...(options.messages === true ? { messages: true } : {}),
  };
  const events = await readEventsAt(judged.file, reading, positions);
  for (const [position, event] of judged.witnessEvents ?? []) events.set(position, event);
  return events;
}

/** The outcome of a judged run, with its timeline when asked for. */
export function outcomeOf(
  file: string,
  format: string | undefined,
  events: readonly TraceEvent[] | ReadonlyMap<number, TraceEvent>,
  report: CheckReport,
  options: { timeline?: boolean; eventCount?: number; witnessLines?: ReadonlyMap<number, number>; run?: string } = {},
): RunOutcome {
  // Either the whole run, or (when it was not kept) the events a report needs, by position.
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
    witnessLines: s.witnesses.map((position) => options.witnessLines?.get(position) ?? eventAt(position)?.source?.line ?? 1),
    ...(s.brokenBy !== undefined ? { brokenBy: [...s.brokenBy] } : {}),
    ...(s.triggers !== undefined ? { triggered: s.triggers.count } : {}),
    ...(s.answers !== undefined ? { answered: s.answers.count } : {}),
    ...(s.undecided !== undefined ? { undecided: s.undecided } : {}),
  }));
  return {
    file,
    ...(options.run !== undefined ? { run: options.run } : {}),
    ...(format !== undefined ? { format } : {}),
    engine: report.engine,
    events: eventCount,
    verdict: report.verdict,
    statements,
    errors: [],
    ...(options.timeline === true ? { timeline: timelineOf(eventCount, eventAt, statements.map((s) => s.witnesses)) } : {}),
  };
}

/** The responses a rule may give, weakest first. */
// `halt` and `quarantine` refuse the call as `block` does: they rank with it.
const RESPONSE_RANK = { warn: 0, ask: 1, block: 2, halt: 2, quarantine: 2 } as const;

/** How strong a response must be for a rule it breaks to fail `vigilc check` (`--fail-on`). */
export type FailOn = keyof typeof RESPONSE_RANK;

/**
 * Whether the statements fail the run's exit status under `--fail-on`: some statement that does not
 * hold (violated, or undecided: fail closed) has a response at least as strong as `threshold`. A
 * `warn` rule's violation under `--fail-on block` is reported and does not fail.
 */
export function failsOn(threshold: FailOn, statements: readonly { readonly holds: boolean; readonly response: FailOn }[]): boolean {
  return statements.some((statement) => !statement.holds && RESPONSE_RANK[statement.response] >= RESPONSE_RANK[threshold]);
}

/**
 * The rules whose trigger held on no event of any run whose triggers were counted (the forward
 * engine counts them): each held only vacuously, which is what a pattern that can never match
 * looks like. In the order the rules were first met.
 */
export function neverTriggered(outcomes: readonly RunOutcome[]): string[] {
  const untriggered = new Map<string, boolean>();
  for (const outcome of outcomes) {
    for (const statement of outcome.statements) {
      if (statement.triggered === undefined) continue;
      const rule = ruleId(statement);
      untriggered.set(rule, (untriggered.get(rule) ?? true) && statement.triggered === 0);
    }
  }
  return [...untriggered].filter(([, none]) => none).map(([rule]) => rule);
}
