import { maximumDuration, parseDuration } from "@vigil/syntax";

/**
 * Durations in words, for hovers and completion: `5m` is "five minutes (300,000 ms)". A duration is
 * a whole number and a unit (`500ms`, `30s`, `5m`, `2h`, `1d`; docs/language.md, Time and counts).
 */

const unitNames: Readonly<Record<string, readonly [string, string]>> = {
  ms: ["millisecond", "milliseconds"],
  s: ["second", "seconds"],
  m: ["minute", "minutes"],
  h: ["hour", "hours"],
  d: ["day", "days"],
};

const smallNumbers = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"];

const grouped = (value: number) => value.toLocaleString("en-US");

/**
 * A duration's text in words, or undefined when the text is not a duration's shape. One beyond the
 * longest duration says so.
 */
export function durationInWords(text: string): string | undefined {
  const match = /^([0-9]+)(ms|s|m|h|d)$/.exec(text);
  if (match === null) return undefined;
  const milliseconds = parseDuration(text);
  if (milliseconds === undefined) return `longer than the longest duration (${grouped(maximumDuration)} ms)`;
  const count = Number(match[1]);
  const unit = match[2]!;
  const [singular, plural] = unitNames[unit]!;
  const words = `${count < smallNumbers.length ? smallNumbers[count] : grouped(count)} ${count === 1 ? singular : plural}`;
  return unit === "ms" ? words : `${words} (${grouped(milliseconds)} ms)`;
}

/** The durations completion offers where one can be written (the client filters them by what is typed). */
export const suggestedDurations: readonly string[] = ["500ms", "30s", "1m", "5m", "15m", "1h", "1d"];
