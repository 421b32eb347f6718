import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { EARLIEST_EVENT_TIME, formatDateTime, isEventTime, LATEST_EVENT_TIME, parseDateTime } from "../src/index.js";

describe("parseDateTime", () => {
  it("reads a date-time with a zone to epoch milliseconds", () => {
    expect(parseDateTime("1970-01-01T00:00:00Z")).toBe(0);
    expect(parseDateTime("2026-11-27T10:00:00Z")).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseDateTime("2026-11-27T11:00:00+01:00")).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseDateTime("2026-11-27T05:30:00-04:30")).toBe(Date.UTC(2026, 10, 27, 10));
    expect(parseDateTime("2026-11-27T10:00:00.5Z")).toBe(Date.UTC(2026, 10, 27, 10) + 500);
    expect(parseDateTime("2026-11-27T10:00:00.123Z")).toBe(Date.UTC(2026, 10, 27, 10) + 123);
    // Beyond milliseconds the fraction is cut, not rounded.
    expect(parseDateTime("2026-11-27T10:00:00.999999Z")).toBe(Date.UTC(2026, 10, 27, 10) + 999);
    expect(parseDateTime("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29));
    expect(parseDateTime("2000-02-29T00:00:00Z")).toBe(Date.UTC(2000, 1, 29));
    expect(parseDateTime("1969-12-31T23:59:59.999Z")).toBe(-1);
    expect(parseDateTime("0000-01-01T00:00:00Z")).toBe(EARLIEST_EVENT_TIME);
    expect(parseDateTime("9999-12-31T23:59:59.999Z")).toBe(LATEST_EVENT_TIME);
  });

  it("refuses what is not a date-time with a zone", () => {
    for (const text of [
      "2026-11-27",
      "2026-11-27T10:00:00",
      "2026-11-27T10:00Z",
      "2026-11-27 10:00:00Z",
      "2026-11-27t10:00:00Z",
      "2026-11-27T10:00:00z",
      "2026-11-27T10:00:00+0100",
      "2026-11-27T10:00:00+01",
      "2026-11-27T10:00:00.Z",
      "2026-13-01T00:00:00Z",
      "2026-00-01T00:00:00Z",
      "2026-02-29T00:00:00Z",
      "1900-02-29T00:00:00Z",
      "2026-04-31T00:00:00Z",
      "2026-11-27T24:00:00Z",
      "2026-11-27T10:60:00Z",
      "2026-11-27T23:59:60Z",
      "2026-11-27T10:00:00+24:00",
      "+02026-11-27T10:00:00Z",
      "26-11-27T10:00:00Z",
      " 2026-11-27T10:00:00Z",
      "2026-11-27T10:00:00Z ",
      "0000-01-01T00:00:00+00:01",
      "9999-12-31T23:59:59-00:01",
      "Fri, 27 Nov 2026 10:00:00 GMT",
      "1764237600000",
      "",
    ]) {
      expect({ text, time: parseDateTime(text) }).toEqual({ text, time: undefined });
    }
  });

  it("agrees with Date on every valid date-time, and formatting reads back", () => {
    fc.assert(
      fc.property(fc.integer({ min: EARLIEST_EVENT_TIME + 86_400_000, max: LATEST_EVENT_TIME - 86_400_000 }), fc.integer({ min: -23 * 60 - 59, max: 23 * 60 + 59 }), (time, zoneMinutes) => {
        const iso = formatDateTime(time);
        expect(parseDateTime(iso)).toBe(time);
        // The same instant written in another zone.
        const local = new Date(time + zoneMinutes * 60_000).toISOString().slice(0, -1);
        const sign = zoneMinutes < 0 ? "-" : "+";
        const zone = `${sign}${String(Math.floor(Math.abs(zoneMinutes) / 60)).padStart(2, "0")}:${String(Math.abs(zoneMinutes) % 60).padStart(2, "0")}`;
        expect(parseDateTime(`${local}${zone}`)).toBe(time);
        expect(Date.parse(`${local}${zone}`)).toBe(time);
      }),
      { numRuns: cases(100, 1000) },
    );
  });
});

describe("isEventTime", () => {
  it("takes whole milliseconds in the range of four-digit years", () => {
    expect(isEventTime(0)).toBe(true);
    expect(isEventTime(1_764_237_600_000)).toBe(true);
    expect(isEventTime(-1)).toBe(true);
    expect(isEventTime(LATEST_EVENT_TIME)).toBe(true);
    expect(isEventTime(LATEST_EVENT_TIME + 1)).toBe(false);
    expect(isEventTime(EARLIEST_EVENT_TIME - 1)).toBe(false);
    expect(isEventTime(1.5)).toBe(false);
    expect(isEventTime(Number.NaN)).toBe(false);
    expect(isEventTime("0")).toBe(false);
    expect(isEventTime(true)).toBe(false);
  });
});
