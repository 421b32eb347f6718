/** A JSON value as it appears in a trace event's arguments. */
export type JsonValue = string | number | boolean | null | readonly JsonValue[] | { readonly [key: string]: JsonValue };

export function isJsonObject(value: unknown): value is { readonly [key: string]: JsonValue } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** JSON text with object keys sorted, so equal values always print the same. */
export function stableStringify(value: JsonValue): string {
  if (Array.isArray(value)) return `[${value.map(stableStringify).join(",")}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${stableStringify(value[k]!)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

/**
 * The identity of a value under the language's equality: JSON values compare by type and content,
 * so the number 6 and the string "6" are different values, while 6 and 6.0 are the same number.
 * Two values are equal exactly when their keys are equal strings.
 */
export function valueKey(value: JsonValue): string {
  switch (typeof value) {
    case "string":
      return `s:${value}`;
    case "number":
      return `n:${Object.is(value, -0) ? 0 : value}`;
    case "boolean":
      return `b:${value}`;
    default:
      return value === null ? "null" : `j:${stableStringify(value)}`;
  }
}

/** How a value is shown to people: strings quoted, everything else as JSON. */
export function displayValue(value: JsonValue): string {
  return typeof value === "string" ? JSON.stringify(value) : stableStringify(value);
}

/**
 * The values an event carries under a key path (the documented list extension): follow each
 * segment into objects; wherever a list is met, continue with each of its elements. So
 * `recipients` on `["a", "b"]` yields both strings, and `items.name` on a list of objects yields
 * every element's name. An absent key yields no values, which makes every condition on it false
 * (the closed world of the paper's Definition 1).
 */
export function valuesAtPath(args: { readonly [key: string]: JsonValue }, segments: readonly string[]): JsonValue[] {
  let current: JsonValue[] = [args];
  for (const segment of segments) {
    const next: JsonValue[] = [];
    for (const value of current) {
      if (isJsonObject(value) && Object.prototype.hasOwnProperty.call(value, segment)) {
        flattenInto(value[segment]!, next);
      }
    }
    current = next;
    if (current.length === 0) break;
  }
  return current;
}

function flattenInto(value: JsonValue, out: JsonValue[]): void {
  if (Array.isArray(value)) for (const element of value) flattenInto(element, out);
  else out.push(value);
}

/** The display form of a key path: segments joined by dots, quoted where they are not plain names. */
export function keyPathDisplay(segments: readonly string[]): string {
  return segments.map((s) => (/^[A-Za-z_][A-Za-z0-9_]*$/.test(s) ? s : JSON.stringify(s))).join(".");
}

/** The identity of a key path (segments may contain dots, so they are joined by a separator no name has). */
export function keyPathId(segments: readonly string[]): string {
  return segments.join("\u0000");
}
