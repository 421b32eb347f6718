import type { CheckedStatement } from "@vigil/checker";
import { eventAmount } from "@vigil/engine";
import { displayValue, keyPathDisplay, valuesAtSubject, type TraceEvent } from "@vigil/trace";

/**
 * Why an event matching a sum limit's pattern (`limit[X of KEY …](ψ)`) could not be counted, when
 * it could not (`it has no amount at \`KEY\``, `its amount at \`KEY\` is not a number ("12 USD")`):
 * its amount at KEY is missing, not a number, or negative. Such an event is a witness
 * by itself whatever the total (docs/language.md, Limits); a report says so beside it, so that the
 * witness is not read as a total past the maximum. Undefined for an event whose amount counts, and
 * for every other statement.
 */
export function uncountedAmount(statement: CheckedStatement, event: TraceEvent): string | undefined {
  if (statement.form !== "limit" || statement.measure.kind !== "sum") return undefined;
  const { subject, key } = statement.measure;
  if (eventAmount(event, subject, key) !== undefined) return undefined;
  const where = `\`${subject === "output" ? (key.length === 0 ? "output" : `output.${keyPathDisplay(key)}`) : keyPathDisplay(key)}\``;
  const values = valuesAtSubject(event, subject, key);
  if (values.length === 0) return `it has no amount at ${where}`;
  const bad = values.find((value) => typeof value !== "number") ?? values.find((value) => typeof value === "number" && value < 0);
  const text = bad === undefined ? "" : displayValue(bad);
  const shown = bad === undefined ? "" : ` (${text.length <= 60 ? text : `${text.slice(0, 59)}…`})`;
  const why = bad !== undefined && typeof bad === "number" ? "is negative" : bad !== undefined ? "is not a number" : "cannot be counted exactly";
  return `its amount at ${where} ${why}${shown}`;
}
