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
 * One step of a key path: a member name (a string) leads into an object; an index (a non-negative
 * integer, written `argv.0`) picks one element of a list. A path never starts with an index: it
 * starts at the event's arguments (or the output's object), an object.
 */
export type PathSegment = string | number;

/**
 * The values an event carries under a key path (the documented list extension, docs/semantics.md
 * "The values of e at k"). The path is followed from the arguments, one segment at a time, over
 * the values reached so far:
 *
 * - a name, on an object, leads to its member of that name (none when it has none); on a list, to
 *   that name applied to each element (nested lists included): `items.name` on a list of objects
 *   reaches every element's name;
 * - an index, on a list, leads to its element at that position (none past its end), the list taken
 *   as it is, not flattened: `argv.0` on `["rm", "-rf"]` is `"rm"`, and `m.0` on `[[1, 2], [3]]`
 *   is `[1, 2]`; on anything else, to nothing;
 * - every other value (a scalar) leads nowhere.
 *
 * The values at the end are flattened: a list there stands for its elements, at any depth, so
 * `argv` yields every word and `m.0` above yields 1 and 2. An absent key yields no values, which
 * makes every condition on it false (the closed world of the paper's Definition 1). Linear in the
 * values visited; a path of names alone reads as it always did (a list is its elements).
 */
export function valuesAtPath(args: { readonly [key: string]: JsonValue }, segments: readonly PathSegment[]): JsonValue[] {
  let current: JsonValue[] = [args];
  for (const segment of segments) {
    const next: JsonValue[] = [];
    if (typeof segment === "number") {
      for (const value of current) if (Array.isArray(value) && segment < value.length) next.push(value[segment]!);
    } else {
      for (const value of current) memberInto(value, segment, next);
    }
    current = next;
    if (current.length === 0) return current;
  }
  // Most paths end at scalars: the values are returned as they are, with no copy.
  for (const value of current) {
    if (Array.isArray(value)) {
      const flat: JsonValue[] = [];
      for (const each of current) flattenInto(each, flat);
      return flat;
    }
  }
  return current;
}

/** A name applied to a value: an object's own member of that name, or the name applied to each element of a list. */
function memberInto(value: JsonValue, name: string, out: JsonValue[]): void {
  if (Array.isArray(value)) {
    for (const element of value) memberInto(element, name, out);
  } else if (isJsonObject(value) && Object.prototype.hasOwnProperty.call(value, name)) {
    out.push(value[name]!);
  }
}

function flattenInto(value: JsonValue, out: JsonValue[]): void {
  if (Array.isArray(value)) for (const element of value) flattenInto(element, out);
  else out.push(value);
}

const plainName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * The display form of a key path: segments joined by dots, names quoted where they are not plain
 * names (so the name "0" shows as `"0"`), indexes as their digits (`argv.0`).
 */
export function keyPathDisplay(segments: readonly PathSegment[]): string {
  return segments.map((s) => (typeof s === "number" ? String(s) : plainName.test(s) ? s : JSON.stringify(s))).join(".");
}

/**
 * The identity of a key path. Segments are joined by a separator no name has (names may contain
 * dots); an index is marked, so that the index 0 and the name "0" differ. A path of one name is
 * identified by the name itself.
 */
export function keyPathId(segments: readonly PathSegment[]): string {
  let id = "";
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i]!;
    if (i > 0) id += "\u0000";
    id += typeof segment === "number" ? `\u0001${segment}` : segment;
  }
  return id;
}

/** The names of a key path, its indexes left out: where its values live in a signature (a list's elements live under its own name). */
export function keyPathNames(segments: readonly PathSegment[]): string[] {
  const names: string[] = [];
  for (const segment of segments) if (typeof segment === "string") names.push(segment);
  return names;
}
