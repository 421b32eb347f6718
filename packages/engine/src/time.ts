import type { TraceEvent } from "@vigil/trace";

/**
 * The times a run's events carry, for the statements that read time (a window of time, a limit per
 * a time). Each such statement needs every event to have a time, never earlier than the time of the
 * event before it: a window measured on a trace without times would be a guess, so the statement is
 * undecided instead (fail closed), with the event that has no time named.
 */
export class EventTimes {
  private latest = -Infinity;

  /** Undefined when the event's time can be used; otherwise why not, naming the event. */
  problem(event: TraceEvent): string | undefined {
    const time = event.time;
    if (time === undefined || !Number.isFinite(time)) return `${describeEvent(event)} has no time, and the rule measures time`;
    if (time < this.latest) {
      return `${describeEvent(event)} has a time (${new Date(time).toISOString()}) earlier than the event before it (${new Date(this.latest).toISOString()}), and the rule measures time`;
    }
    this.latest = time;
    return undefined;
  }
}

/** `event 5 (line 7 of run.jsonl)`: an event as a person finds it. */
export function describeEvent(event: TraceEvent): string {
  const source = event.source;
  if (source?.line === undefined) return `event ${event.position}`;
  return `event ${event.position} (line ${source.line}${source.file !== undefined ? ` of ${source.file}` : ""})`;
}
