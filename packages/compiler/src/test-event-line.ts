import { formatDateTime } from "@vigil/diagnostics";
import { formatDuration } from "@vigil/syntax";
import type { JsonValue, TraceEvent } from "@vigil/trace";

/**
 * An event as a test file writes it by hand (`action {key: value} status output "…" at T`): what a
 * failing test shows, ready to be pasted into an `events { … }` block.
 */
export function eventLine(event: Pick<TraceEvent, "kind" | "action" | "args" | "status" | "output" | "time">): string {
  const text = event.args["text"];
  const time = event.time !== undefined ? ` at ${timeText(event.time)}` : "";
  if (event.kind === "message" && typeof text === "string" && (event.action === "user_message" || event.action === "agent_message")) {
    return `${event.action === "user_message" ? "user" : "agent"} ${JSON.stringify(text)}${time}`;
  }
  const action = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(event.action) && !statusWords.has(event.action) ? event.action : JSON.stringify(event.action);
  const args = Object.keys(event.args).length > 0 ? ` ${valueText(event.args)}` : "";
  const status = event.status ?? "pending";
  const output = event.output !== undefined ? ` output ${JSON.stringify(event.output)}` : "";
  return `${action}${args} ${status}${output}${time}`;
}

/**
 * An event's time as `at` takes it: in the first year after epoch 0 (where a test's offsets from
 * the run's start fall), a duration (`90s`); otherwise the date-time (`"2026-11-27T10:00:00.000Z"`).
 */
function timeText(time: number): string {
  if (time === 0) return "0s";
  return time > 0 && time < OFFSETS_BELOW ? formatDuration(time) : JSON.stringify(formatDateTime(time));
}

const OFFSETS_BELOW = 365 * 86_400_000;

const statusWords = new Set(["ok", "error", "pending", "output"]);

function valueText(value: JsonValue): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(valueText).join(", ")}]`;
  const object = value as { readonly [key: string]: JsonValue };
  const members = Object.keys(object).map((key) => `${/^[A-Za-z_][A-Za-z0-9_-]*$/.test(key) ? key : JSON.stringify(key)}: ${valueText(object[key]!)}`);
  return `{${members.join(", ")}}`;
}
