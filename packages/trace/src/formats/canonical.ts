import { diagnostic, isEventTime, parseDateTime, type Diagnostic, type LineIndex, type Span } from "@vigil/diagnostics";
import { createRequire } from "node:module";
import type { z } from "zod";
import { ARGUMENT_OBSERVATION_CAP, OUTPUT_OBSERVATION_CAP, observeArguments, observeOutput, type EventSource, type TraceEvent } from "../event.js";
import type { JsonValue } from "../value.js";
import type { DiagnosticSink } from "./calls.js";
import { lineSpan } from "./lines.js";
import { LONG_STRING, maximumValueDepth, numberDiagnostic, numberProblems, OUT_OF_RANGE, TOO_DEEP, tooDeep, UNSAFE_INTEGER, valueFlags } from "./values.js";

/**
 * The canonical event record: `{"action": …, "args": {…}, "status": "ok"|"error", "output": …}`.
 * `args`, `status` and `output` are optional; `status` defaults to ok, and `"status": null` is a call
 * with no result. `"kind": "message"` makes the record a message of the conversation (no status, no
 * output). `time`, optional, is when the event happened: an ISO 8601 date-time with a time zone
 * (`"2026-11-27T10:00:00Z"`) or a whole number of epoch milliseconds. A non-string output is kept as its JSON text. The schema is what a record is checked against when the fast check below
 * fails: it says what is wrong, field by field. It is built, and zod loaded (tens of
 * milliseconds), only when a record first fails the fast check: a well-formed trace never needs it.
 */
function canonicalEventSchema() {
  if (schema === undefined) {
    const { z: zod } = createRequire(import.meta.url)("zod") as typeof import("zod");
    schema = zod.looseObject({
      action: zod.string().min(1, "must be a non-empty string"),
      args: zod.record(zod.string(), zod.json()).optional(),
      kind: zod.enum(["call", "message"]).optional(),
      status: zod.enum(["ok", "error"]).nullable().optional(),
      output: zod.json().optional(),
    }).refine((record) => record["kind"] !== "message" || (record["status"] === undefined && record["output"] === undefined), {
      message: "is a message: it has no `status` and no `output`",
      path: ["kind"],
    });
  }
  return schema;
}
let schema: z.ZodType | undefined;

const knownFields = new Set(["action", "args", "status", "output", "kind", "time"]);

/** What reading canonical records keeps from one record to the next. */
export interface CanonicalReading {
  readonly file?: string;
  readonly diagnostics: DiagnosticSink;
  /** Unknown fields are reported once each. */
  readonly unknownFieldsReported: Set<string>;
  /** A cut output, and a cut argument, are reported once per trace. */
  outputCutReported: boolean;
  argumentsCutReported: boolean;
}

export function canonicalReading(file: string | undefined, diagnostics: DiagnosticSink): CanonicalReading {
  return { ...(file !== undefined ? { file } : {}), diagnostics, unknownFieldsReported: new Set(), outputCutReported: false, argumentsCutReported: false };
}

/** Where a record is: its line, its span, and the JSON text it was parsed from (for exact integers). */
export interface RecordPlace {
  readonly line: number;
  readonly span: Span;
  readonly source: string;
}

/**
 * The event of a parsed canonical record, or undefined when the record is malformed (each problem
 * is a diagnostic naming the line and the field). Never throws.
 *
 * A record is first checked by hand, in one walk over its values (shape, depth, numbers, long
 * strings); the schema runs only for a record that fails, to say what is wrong. Arguments are
 * the parsed object itself, so every key is an own property, `__proto__` included.
 */
export function canonicalEvent(value: unknown, place: RecordPlace, position: number, reading: CanonicalReading): TraceEvent | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return malformed(value, place, reading, 0);
  const record = value as Record<string, unknown>;
  let flags = 0;
  let unknown = false;
  // `for…in` with an own-property test visits what `Object.keys` lists without allocating the list
  // (this runs once per event; it was a tenth of the reading's allocations).
  for (const key in record) {
    if (!hasOwn.call(record, key)) continue;
    const field = record[key];
    if (key === "args") flags |= valueFlags(field, 1);
    else if (key === "output") flags |= valueFlags(field, 1) & ~LONG_STRING;
    else {
      if (key !== "action" && key !== "status" && key !== "kind" && key !== "time") unknown = true;
      // Other fields are ignored, but a value too deep to walk is reported wherever it is.
      if (typeof field === "object" && field !== null) flags |= valueFlags(field, 1) & TOO_DEEP;
    }
  }
  const { action, args, status, output, kind } = record;
  const time = record["time"] === undefined ? undefined : eventTime(record["time"]);
  const message = kind === "message";
  const shaped =
    typeof action === "string" &&
    action.length > 0 &&
    (args === undefined || (typeof args === "object" && args !== null && !Array.isArray(args))) &&
    (status === undefined || status === null || status === "ok" || status === "error") &&
    (kind === undefined || kind === "call" || (message && status === undefined && output === undefined));
  // An integer beyond 2^53 − 1 is rejected only if its literal was rounded (2^54 written out is exact).
  const exact = (flags & UNSAFE_INTEGER) === 0 || (numberProblems(args, place.source).length === 0 && numberProblems(output, place.source).length === 0);
  if (!shaped || (flags & (TOO_DEEP | OUT_OF_RANGE)) !== 0 || !exact) {
    malformed(value, place, reading, flags);
    if (time === null) reading.diagnostics.push(timeDiagnostic(record["time"], place, reading.file));
    return undefined;
  }
  if (time === null) {
    reading.diagnostics.push(timeDiagnostic(record["time"], place, reading.file));
    return undefined;
  }

  if (unknown) {
    const where = located(place, reading.file);
    for (const field of Object.keys(record)) {
      if (knownFields.has(field) || reading.unknownFieldsReported.has(field)) continue;
      reading.unknownFieldsReported.add(field);
      reading.diagnostics.push(
        diagnostic("T0006", `the field \`${field}\` (first on line ${place.line}) is not part of the canonical event format and is ignored`, {
          ...where,
          help: "put tool arguments under `args`",
        }),
      );
    }
  }
  const source: EventSource = reading.file !== undefined ? { file: reading.file, line: place.line, span: place.span } : { line: place.line, span: place.span };
  const name = action as string;
  const given = (args ?? {}) as { readonly [key: string]: JsonValue };
  // An event is built whole in one object literal, with or without an output, so that events have
  // few shapes (hidden classes) and the engine's reads of their fields stay fast.
  let event: { -readonly [K in keyof TraceEvent]: TraceEvent[K] };
  if (message) event = { position, kind: "message", action: name, args: given, source };
  else if (status === null) event = { position, action: name, args: given, ...(output !== undefined && output !== null ? { output: typeof output === "string" ? output : JSON.stringify(output) } : {}), source };
  else if (output === undefined || output === null) event = { position, action: name, args: given, status: (status as "ok" | "error" | undefined) ?? "ok", source };
  else {
    const outcome = (status as "ok" | "error" | undefined) ?? "ok";
    const text = typeof output === "string" ? output : JSON.stringify(output);
    if (text.length <= OUTPUT_OBSERVATION_CAP) event = { position, action: name, args: given, status: outcome, output: text, source };
    else {
      event = { position, action: name, args: given, status: outcome, output: observeOutput(text).output, outputTruncated: true, source };
      if (!reading.outputCutReported) {
        reading.outputCutReported = true;
        reading.diagnostics.push(
          diagnostic("T0005", `the output of the event on line ${place.line} is longer than ${OUTPUT_OBSERVATION_CAP} characters; only its first ${OUTPUT_OBSERVATION_CAP} are observed`, {
            ...located(place, reading.file),
            help: "a wildcard on `output` sees the observed prefix only",
          }),
        );
      }
    }
  }
  if (time !== undefined) event.time = time;
  if ((flags & LONG_STRING) !== 0) {
    event.args = observeArguments(event.args).args;
    event.argsTruncated = true;
    if (!reading.argumentsCutReported) {
      reading.argumentsCutReported = true;
      reading.diagnostics.push(
        diagnostic("T0014", `an argument of the event on line ${place.line} is longer than ${ARGUMENT_OBSERVATION_CAP} characters; only its first ${ARGUMENT_OBSERVATION_CAP} are observed`, {
          ...located(place, reading.file),
          help: "a condition on that argument sees the observed prefix only",
        }),
      );
    }
  }
  return event;
}

const hasOwn = Object.prototype.hasOwnProperty;

/**
 * The epoch milliseconds of a record's `time`: an ISO 8601 date-time with a time zone, or a whole
 * number of milliseconds (both within the years 0000–9999); null when it is neither.
 */
function eventTime(value: unknown): number | null {
  if (typeof value === "string") return parseDateTime(value) ?? null;
  return isEventTime(value) ? value : null;
}

/** The T0016 diagnostic of a `time` that is not an event time. */
function timeDiagnostic(value: unknown, place: RecordPlace, file: string | undefined): Diagnostic {
  const what =
    typeof value === "string"
      ? /^[0-9]{4}-[0-9]{2}-[0-9]{2}$/.test(value)
        ? `the date \`${shortText(value)}\`, which has no time of day and no time zone`
        : /^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]+$/.test(value)
          ? `the date-time \`${shortText(value)}\`, which has no time zone`
          : `the string \`${shortText(value)}\`, which is not an ISO 8601 date-time with a time zone`
      : typeof value === "number"
        ? Number.isInteger(value)
          ? `the number ${value}, beyond the years 0000–9999`
          : `the number ${value}, which is not a whole number of milliseconds`
        : value === null
          ? "`null`"
          : Array.isArray(value)
            ? "a list"
            : typeof value === "object"
              ? "an object"
              : `\`${String(value)}\``;
  return diagnostic("T0016", `the field \`time\` of the event on line ${place.line} is ${what}`, {
    ...located(place, file),
    help: 'write the time as an ISO 8601 date-time with a time zone ("2026-11-27T10:00:00Z", "2026-11-27T11:00:00+01:00") or as whole milliseconds since 1970-01-01T00:00:00Z; leave the field out when the time is not known',
  });
}

/** A value quoted in a message: its first 40 characters. */
function shortText(text: string): string {
  return text.length <= 40 ? text : `${text.slice(0, 40)}…`;
}

/** The diagnostics of a record that is not a well-formed event, in the order a reader meets them. */
function malformed(value: unknown, place: RecordPlace, reading: CanonicalReading, flags: number): undefined {
  const where = located(place, reading.file);
  const deep = tooDeep(value);
  if (deep !== undefined) {
    reading.diagnostics.push(
      diagnostic("T0002", `the field \`${deep}\` of the event on line ${place.line} nests values more than ${maximumValueDepth} levels deep`, {
        ...where,
        help: "tool arguments this deep are not supported; flatten the value",
      }),
    );
    return undefined;
  }
  const outOfRange = new Set<string>();
  if ((flags & (OUT_OF_RANGE | UNSAFE_INTEGER)) !== 0) {
    const record = value as Record<string, unknown>;
    for (const field of ["args", "output"]) {
      if (record[field] === undefined) continue;
      for (const problem of numberProblems(record[field], place.source, field)) {
        if (problem.kind === "out-of-range") outOfRange.add(problem.path);
        reading.diagnostics.push(numberDiagnostic(problem, `the field \`${problem.path}\` of the event on line ${place.line}`, where));
      }
    }
  }
  const parsed = canonicalEventSchema().safeParse(value);
  if (parsed.success) return undefined;
  for (const issue of parsed.error.issues) {
    const field = issue.path.length > 0 ? issue.path.map(String).join(".") : undefined;
    // A number out of range is not JSON to the schema; it was reported above, with its reason.
    if (field !== undefined && outOfRange.has(field)) continue;
    const message =
      field === undefined
        ? `the event on line ${place.line} is not a JSON object`
        : issue.code === "invalid_type" && !hasPath(value, issue.path)
          ? `the event on line ${place.line} has no \`${field}\` field`
          : `the field \`${field}\` of the event on line ${place.line} ${describeIssue(issue)}`;
    reading.diagnostics.push(
      diagnostic("T0002", message, {
        ...where,
        help: 'a canonical event is {"action": "name", "args": {…}, "status": "ok" | "error", "output": "…"}',
      }),
    );
  }
  return undefined;
}

function located(place: RecordPlace, file: string | undefined): { span: Span; file?: string } {
  return file !== undefined ? { span: place.span, file } : { span: place.span };
}

function describeIssue(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type":
      return `must be ${article(issue.expected)}`;
    case "invalid_value":
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")}`;
    default:
      return issue.message.toLowerCase();
  }
}

function article(type: string): string {
  if (type === "record" || type === "object") return "an object";
  if (type === "array") return "a list";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** Whether the raw record has a value at `path` (zod does not report the offending input). */
function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current = value;
  for (const segment of path) {
    if (typeof current !== "object" || current === null || !Object.prototype.hasOwnProperty.call(current, segment)) return false;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return true;
}

/** The T0001 diagnostic of a canonical JSON Lines record that does not parse, at the column where parsing failed. */
export function invalidCanonicalLine(message: string, text: string, line: number, offset: number, file: string | undefined): Diagnostic {
  const column = jsonErrorColumn(message, text);
  const span = column === undefined ? lineSpan(line, offset, 0, text.length) : lineSpan(line, offset, column, Math.min(column + 1, text.length));
  return diagnostic("T0001", `line ${line} is not valid JSON: ${cleanJsonError(message)}`, {
    span,
    ...(file !== undefined ? { file } : {}),
    help: "each line of a JSON Lines trace must hold one complete JSON object",
  });
}

/** A parsed element of a canonical JSON array, with the line where it starts. */
export interface ArrayElement {
  readonly value: unknown;
  readonly line: number;
  readonly span: Span;
}

/** Splits a top-level JSON array into its elements, remembering the line where each starts. */
export function splitJsonArray(text: string, lines: LineIndex, file: string | undefined, diagnostics: DiagnosticSink): ArrayElement[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    const column = jsonErrorColumn((error as Error).message, text);
    const at = column ?? 0;
    diagnostics.push(
      diagnostic("T0001", `the trace is not valid JSON: ${cleanJsonError((error as Error).message)}`, {
        span: lines.span(at, Math.min(at + 1, text.length)),
        ...(file !== undefined ? { file } : {}),
      }),
    );
    return [];
  }
  if (!Array.isArray(parsed)) {
    diagnostics.push(
      diagnostic("T0003", "the trace is a JSON value but not an array of events", {
        span: lines.span(0, Math.min(1, text.length)),
        ...(file !== undefined ? { file } : {}),
      }),
    );
    return [];
  }
  const starts = topLevelElementOffsets(text);
  return parsed.map((value, index) => {
    const start = starts[index] ?? 0;
    const position = lines.position(start);
    return { value, line: position.line, span: lines.span(start, start + 1) };
  });
}

/** Offsets of the first character of each element of the top-level array in `text`. */
function topLevelElementOffsets(text: string): number[] {
  const offsets: number[] = [];
  let depth = 0;
  let inString = false;
  let expectElement = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === " " || c === "\n" || c === "\r" || c === "\t") continue;
    if (expectElement && c !== "]") {
      offsets.push(i);
      expectElement = false;
    }
    if (c === '"') inString = true;
    else if (c === "[" || c === "{") {
      depth++;
      if (depth === 1 && c === "[") expectElement = true;
    } else if (c === "]" || c === "}") depth--;
    else if (c === "," && depth === 1) expectElement = true;
  }
  return offsets;
}

/** Node's JSON.parse messages carry a position; map it to a column of the line, if present. */
function jsonErrorColumn(message: string, line: string): number | undefined {
  const match = /position (\d+)/.exec(message);
  if (match === null) return /Unexpected end/.test(message) ? line.length : undefined;
  return Math.min(Number(match[1]), line.length);
}

function cleanJsonError(message: string): string {
  const cleaned = message.replace(/ in JSON at position \d+.*$/s, "").replace(/^JSON\.parse: /, "");
  return cleaned.charAt(0).toLowerCase() + cleaned.slice(1);
}
