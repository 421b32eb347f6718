import { diagnostic, LineIndex, type Diagnostic } from "@vigil/diagnostics";
import { z } from "zod";
import { OUTPUT_OBSERVATION_CAP, observeOutput, type Trace, type TraceEvent } from "./event.js";
import type { JsonValue } from "./value.js";

/**
 * The canonical event record: `{"action": …, "args": {…}, "status": "ok"|"error", "output": …}`.
 * `args`, `status` and `output` are optional; `status` defaults to ok. A non-string output is kept
 * as its JSON text.
 */
const canonicalEventSchema = z.looseObject({
  action: z.string().min(1, "must be a non-empty string"),
  args: z.record(z.string(), z.json()).optional(),
  status: z.enum(["ok", "error"]).optional(),
  output: z.json().optional(),
});

const knownFields = new Set(["action", "args", "status", "output"]);

export interface ReadTraceOptions {
  /** The file name used in diagnostics and event sources. */
  readonly file?: string;
}

export interface ReadTraceResult {
  readonly trace: Trace;
  /** Problems found; when any is an error, the trace must not be judged. */
  readonly diagnostics: Diagnostic[];
}

/**
 * Reads a trace in the canonical format: JSON Lines (one event per line; blank lines ignored) or a
 * JSON array of events. Events are numbered from 1 in file order. Never throws: every problem is a
 * diagnostic naming the line and the field.
 */
export function readTrace(text: string, options: ReadTraceOptions = {}): ReadTraceResult {
  const lines = new LineIndex(text);
  const diagnostics: Diagnostic[] = [];
  const records = text.trimStart().startsWith("[")
    ? splitJsonArray(text, lines, options.file, diagnostics)
    : splitJsonLines(text, lines, options.file, diagnostics);
  const events: TraceEvent[] = [];
  const unknownFieldsReported = new Set<string>();
  let truncated = 0;
  for (const record of records) {
    const event = toEvent(record, events.length + 1, options.file, diagnostics, unknownFieldsReported);
    if (event === undefined) continue;
    events.push(event);
    if (event.outputTruncated === true && truncated++ === 0) {
      diagnostics.push(
        diagnostic("T0005", `the output of the event on line ${record.line} is longer than ${OUTPUT_OBSERVATION_CAP} characters; only its first ${OUTPUT_OBSERVATION_CAP} are observed`, {
          span: record.span,
          ...(options.file !== undefined ? { file: options.file } : {}),
          help: "a wildcard on `output` sees the observed prefix only",
        }),
      );
    }
  }
  const trace: Trace = options.file === undefined ? { events } : { events, file: options.file };
  return { trace, diagnostics };
}

interface RawRecord {
  readonly value: unknown;
  readonly line: number;
  readonly span: ReturnType<LineIndex["span"]>;
}

function splitJsonLines(text: string, lines: LineIndex, file: string | undefined, diagnostics: Diagnostic[]): RawRecord[] {
  const records: RawRecord[] = [];
  let offset = 0;
  for (const [index, rawLine] of text.split("\n").entries()) {
    const lineStart = offset;
    offset += rawLine.length + 1;
    const line = rawLine.endsWith("\r") ? rawLine.slice(0, -1) : rawLine;
    if (line.trim() === "") continue;
    const span = lines.span(lineStart, lineStart + line.length);
    try {
      records.push({ value: JSON.parse(line), line: index + 1, span });
    } catch (error) {
      const column = jsonErrorColumn((error as Error).message, line);
      const where = column === undefined ? span : lines.span(lineStart + column, lineStart + Math.min(column + 1, line.length));
      diagnostics.push(
        diagnostic("T0001", `line ${index + 1} is not valid JSON: ${cleanJsonError((error as Error).message)}`, {
          span: where,
          ...(file !== undefined ? { file } : {}),
          help: "each line of a JSON Lines trace must hold one complete JSON object",
        }),
      );
    }
  }
  return records;
}

/** Splits a top-level JSON array into its elements, remembering the line where each starts. */
function splitJsonArray(text: string, lines: LineIndex, file: string | undefined, diagnostics: Diagnostic[]): RawRecord[] {
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

function toEvent(
  record: RawRecord,
  position: number,
  file: string | undefined,
  diagnostics: Diagnostic[],
  unknownFieldsReported: Set<string>,
): TraceEvent | undefined {
  const where = { span: record.span, ...(file !== undefined ? { file } : {}) };
  const deep = tooDeep(record.value);
  if (deep !== undefined) {
    diagnostics.push(
      diagnostic("T0002", `the field \`${deep}\` of the event on line ${record.line} nests values more than ${maximumValueDepth} levels deep`, {
        ...where,
        help: "tool arguments this deep are not supported; flatten the value",
      }),
    );
    return undefined;
  }
  const parsed = canonicalEventSchema.safeParse(record.value);
  if (!parsed.success) {
    for (const issue of parsed.error.issues) {
      const field = issue.path.length > 0 ? issue.path.map(String).join(".") : undefined;
      const message =
        field === undefined
          ? `the event on line ${record.line} is not a JSON object`
          : issue.code === "invalid_type" && !hasPath(record.value, issue.path)
            ? `the event on line ${record.line} has no \`${field}\` field`
            : `the field \`${field}\` of the event on line ${record.line} ${describeIssue(issue)}`;
      diagnostics.push(
        diagnostic("T0002", message, {
          ...where,
          help: 'a canonical event is {"action": "name", "args": {…}, "status": "ok" | "error", "output": "…"}',
        }),
      );
    }
    return undefined;
  }
  const data = parsed.data;
  for (const field of Object.keys(data)) {
    if (!knownFields.has(field) && !unknownFieldsReported.has(field)) {
      unknownFieldsReported.add(field);
      diagnostics.push(
        diagnostic("T0006", `the field \`${field}\` (first on line ${record.line}) is not part of the canonical event format and is ignored`, {
          ...where,
          help: "put tool arguments under `args`",
        }),
      );
    }
  }
  let output: string | undefined;
  let outputTruncated = false;
  if (data.output !== undefined && data.output !== null) {
    const text = typeof data.output === "string" ? data.output : JSON.stringify(data.output);
    const observed = observeOutput(text);
    output = observed.output;
    outputTruncated = observed.truncated;
  }
  return {
    position,
    action: data.action,
    args: (data.args ?? {}) as { readonly [key: string]: JsonValue },
    status: data.status ?? "ok",
    ...(output !== undefined ? { output } : {}),
    ...(outputTruncated ? { outputTruncated } : {}),
    source: { ...(file !== undefined ? { file } : {}), line: record.line, span: record.span },
  };
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

/** Whether the raw record has a value at `path` (zod does not report the offending input). */
function hasPath(value: unknown, path: readonly PropertyKey[]): boolean {
  let current = value;
  for (const segment of path) {
    if (typeof current !== "object" || current === null || !Object.prototype.hasOwnProperty.call(current, segment)) return false;
    current = (current as Record<PropertyKey, unknown>)[segment];
  }
  return true;
}

/** How deeply an event's values may nest (every later stage walks values recursively). */
export const maximumValueDepth = 64;

/** The dotted path of the first value nested deeper than `maximumValueDepth`, if any (iterative: never overflows). */
export function tooDeep(value: unknown): string | undefined {
  const stack: { value: unknown; depth: number; path: string }[] = [{ value, depth: 0, path: "" }];
  while (stack.length > 0) {
    const { value: current, depth, path } = stack.pop()!;
    if (typeof current !== "object" || current === null) continue;
    if (depth > maximumValueDepth) return path;
    const entries: [string, unknown][] = Array.isArray(current) ? current.map((v, i) => [String(i), v]) : Object.entries(current);
    for (const [key, child] of entries) stack.push({ value: child, depth: depth + 1, path: path === "" ? key : `${path}.${key}` });
  }
  return undefined;
}
