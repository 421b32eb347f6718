/**
 * Event times. An event's time is a whole number of milliseconds since the Unix epoch
 * (1970-01-01T00:00:00Z), as a trace gives it (`"time": 1764237600000`) or as an ISO 8601
 * date-time with a time zone (`"2026-11-27T10:00:00Z"`, `"2026-11-27T11:00:00.250+01:00"`).
 * Traces (`@vigil/trace`) and test files (`@vigil/syntax`) read both forms with the one reader
 * here, the package below them both, so the two never disagree on what a date means.
 *
 * The reader is strict, unlike `Date.parse`: a date-time is `YYYY-MM-DDThh:mm:ss`, optionally a
 * fraction of a second (any number of digits, cut to milliseconds), then `Z` or `±hh:mm`. A date
 * alone, a time without a zone, a space for `T`, lower-case `t` or `z`, a day that the month does
 * not have, a leap second (`:60`) and hours past 23 are refused.
 */

/** The earliest time an event may have: 0000-01-01T00:00:00.000Z (the first instant a four-digit year writes). */
export const EARLIEST_EVENT_TIME = -62_167_219_200_000;

/** The latest time an event may have: 9999-12-31T23:59:59.999Z (the last instant a four-digit year writes). */
export const LATEST_EVENT_TIME = 253_402_300_799_999;

/**
 * Whether a number is an event time: a whole number of milliseconds between
 * {@link EARLIEST_EVENT_TIME} and {@link LATEST_EVENT_TIME}, the instants both forms can write. (The
 * difference of two such times, and their sum with any duration, stays an exact integer.)
 */
export function isEventTime(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= EARLIEST_EVENT_TIME && value <= LATEST_EVENT_TIME;
}

const dateTimePattern = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?(?:(Z)|([+-])([0-9]{2}):([0-9]{2}))$/;

/**
 * The epoch milliseconds of an ISO 8601 date-time with a time zone, or undefined when the text is
 * not one (see the module's comment for what is accepted).
 */
export function parseDateTime(text: string): number | undefined {
  const match = dateTimePattern.exec(text);
  if (match === null) return undefined;
  const year = Number(match[1]);
  const month = Number(match[2]);
  const day = Number(match[3]);
  const hour = Number(match[4]);
  const minute = Number(match[5]);
  const second = Number(match[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  // The fraction is cut (not rounded) to milliseconds: `…:59.9999Z` stays in its second.
  const milliseconds = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, "0"));
  let offset = 0;
  if (match[8] === undefined) {
    const offsetHours = Number(match[10]);
    const offsetMinutes = Number(match[11]);
    if (offsetHours > 23 || offsetMinutes > 59) return undefined;
    offset = (match[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes) * 60_000;
  }
  const time = daysFromEpoch(year, month, day) * 86_400_000 + ((hour * 60 + minute) * 60 + second) * 1000 + milliseconds - offset;
  // A zone can move a date of year 0000 or 9999 out of the range of four-digit years in UTC.
  return isEventTime(time) ? time : undefined;
}

/** An event time as an ISO 8601 date-time in UTC, with milliseconds: `2026-11-27T10:00:00.000Z`. */
export function formatDateTime(time: number): string {
  return new Date(time).toISOString();
}

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeapYear(year) ? 29 : 28) : [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (Howard Hinnant's
 * `days_from_civil`), exact for every four-digit year without `Date`'s two-digit-year quirks.
 */
function daysFromEpoch(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
