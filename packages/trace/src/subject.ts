import type { TraceEvent } from "./event.js";
import { isJsonObject, valuesAtPath, type JsonValue, type PathSegment } from "./value.js";

/**
 * What a key path reaches on an event, for both of its subjects: the arguments e[k], and the
 * output o(e). In the output, the empty path is the output's text, and a longer path leads into
 * the JSON object the text holds, like an argument path. An output that is not a JSON object (plain
 * text, a list, a document the observation cap cut) has no fields: every condition on one is false.
 */
export function valuesAtSubject(event: TraceEvent, subject: "args" | "output", key: readonly PathSegment[]): JsonValue[] {
  if (subject === "args") return valuesAtPath(event.args, key);
  const output = event.output;
  if (output === undefined) return [];
  if (key.length === 0) return [output];
  const object = outputObject(event);
  return object === undefined ? [] : valuesAtPath(object, key);
}

const parsedOutputs = new WeakMap<TraceEvent, { readonly [key: string]: JsonValue } | null>();

/** The JSON object an event's output holds, parsed once per event; undefined when it holds none. */
export function outputObject(event: TraceEvent): { readonly [key: string]: JsonValue } | undefined {
  let parsed = parsedOutputs.get(event);
  if (parsed === undefined) {
    parsed = null;
    const output = event.output;
    // Only a text that can be an object is parsed: most outputs are not.
    if (output !== undefined && !event.outputTruncated && output.trimStart().startsWith("{")) {
      try {
        const value = JSON.parse(output) as JsonValue;
        if (isJsonObject(value)) parsed = value;
      } catch {
        // Not JSON: no fields.
      }
    }
    parsedOutputs.set(event, parsed);
  }
  return parsed ?? undefined;
}

/**
 * A value as the text that `matches` and `contains` search, and `~` matches: a string itself, a
 * number or a boolean by its JSON text; undefined for other values (null, lists, objects), on
 * which those conditions are false.
 */
export function searchableText(value: JsonValue): string | undefined {
  switch (typeof value) {
    case "string":
      return value;
    case "number":
    case "boolean":
      return JSON.stringify(value);
    default:
      return undefined;
  }
}

/**
 * The text of a bound value that `contains` looks for: a string as itself, any other JSON value as
 * its JSON text (object keys sorted), from the value's key (see `valueKey`).
 */
export function boundValueText(valueKey: string): string {
  if (valueKey === "null") return "null";
  // `s:…`, `n:…`, `b:…`, `j:…`: the text after the tag is the string, or the JSON text.
  return valueKey.slice(2);
}
