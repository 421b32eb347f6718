/**
 * Durations, as the language writes them: a whole number and a unit, `500ms`, `30s`, `5m`, `2h`,
 * `1d`. They bound time windows (`bresp[5m]`, `once[1h]`, `limit[3 per 1m]`) and place events in
 * test files (`at 5m`). A duration is a number of milliseconds.
 */
const units: { readonly [unit: string]: number } = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The units from the largest, as `formatDuration` prefers them. */
const unitsDescending = ["d", "h", "m", "s", "ms"] as const;

/** The largest duration accepted: about 142,700 years, so every sum of two stays an exact integer. */
export const maximumDuration = 2 ** 52;

const durationText = /^([0-9]+)(ms|s|m|h|d)$/;

/** True when the text has a duration's shape (digits and a unit), whether or not it is in range. */
export function looksLikeDuration(text: string): boolean {
  return durationText.test(text);
}

/**
 * The milliseconds a duration's text stands for; undefined when the text is not a duration, or is
 * one beyond {@link maximumDuration}.
 */
export function parseDuration(text: string): number | undefined {
  const match = durationText.exec(text);
  if (match === null) return undefined;
  const milliseconds = Number(match[1]) * units[match[2]!]!;
  return Number.isSafeInteger(milliseconds) && milliseconds <= maximumDuration ? milliseconds : undefined;
}

/** A duration in its shortest exact spelling: 300000 → `5m`, 90000 → `90s`, 1500 → `1500ms`. */
export function formatDuration(milliseconds: number): string {
  for (const unit of unitsDescending) {
    const size = units[unit]!;
    if (milliseconds % size === 0) return `${milliseconds / size}${unit}`;
  }
  return `${milliseconds}ms`;
}
