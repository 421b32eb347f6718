import type { TraceEvent } from "./event.js";
import type { JsonValue } from "./value.js";

/**
 * The canonical events table: every event of every run, one row each, as `vigilc export` writes it
 * and as a warehouse holds a fleet's runs. Shell calls are grounded once, when the row is made; a
 * policy compiled to SQL reads these columns and nothing else.
 */
export interface EventRow {
  /** The run: its trace file, and for a run of a file holding several, ` · ` and its name. */
  readonly run: string;
  /** The event's position in its run, from 1. */
  readonly seq: number;
  /** `call` (a tool call, and a command grounded from one) or `message` (a turn of the conversation). */
  readonly kind: "call" | "message";
  readonly action: string;
  /** `ok`, `error`, or null for a call without a result, a command whose outcome cannot be known, and a message. */
  readonly status: "ok" | "error" | null;
  /** The arguments, a JSON object (strings longer than the observation cap cut, as every engine sees them). */
  readonly args: { readonly [key: string]: JsonValue };
  /** The observed output (its first 65,536 characters), or null when there is none. */
  readonly output: string | null;
  /** The event's time in epoch milliseconds, or null when the recording has none. */
  readonly time: number | null;
  /** The file the event was read from, and the line its record starts on (null when unknown). */
  readonly file: string | null;
  readonly line: number | null;
}

/** The columns of the events table, in order, with their SQL types (as a Parquet file has them). */
export const eventColumns: readonly { readonly name: keyof EventRow; readonly type: string; readonly nullable: boolean }[] = [
  { name: "run", type: "VARCHAR", nullable: false },
  { name: "seq", type: "INTEGER", nullable: false },
  { name: "kind", type: "VARCHAR", nullable: false },
  { name: "action", type: "VARCHAR", nullable: false },
  { name: "status", type: "VARCHAR", nullable: true },
  { name: "args", type: "JSON", nullable: false },
  { name: "output", type: "VARCHAR", nullable: true },
  { name: "time", type: "BIGINT", nullable: true },
  { name: "file", type: "VARCHAR", nullable: true },
  { name: "line", type: "INTEGER", nullable: true },
];

/** The row of one event of a run. */
export function eventRow(run: string, event: TraceEvent, file: string | undefined): EventRow {
  return {
    run,
    seq: event.position,
    kind: event.kind ?? "call",
    action: event.action,
    status: event.status ?? null,
    args: event.args,
    output: event.output ?? null,
    time: event.time ?? null,
    file: event.source?.file ?? file ?? null,
    line: event.source?.line ?? null,
  };
}

/** A run's name in the table: its file, and the name of a run of a file holding several. */
export function runName(file: string, run: string | undefined): string {
  return run === undefined ? file : `${file} · ${run}`;
}
