import { diagnostic, LineIndex, type Diagnostic } from "@vigil/diagnostics";
import type { KeyInfo, Signature } from "./signature.js";
import { isJsonObject, keyPathId, valueKey, type JsonValue } from "./value.js";

/**
 * A signature read off tool schemas instead of a trace, so that a policy can be checked before any
 * run exists: the tools are the actions, their input schemas' properties (nested objects as dotted
 * paths, array items under the array's name) are the argument names, and `enum`/`const` give the
 * only values an argument can take. An array's length is bounded by its `maxItems` (an index path
 * `k.i` is in Σ when i is below it), and otherwise unbounded. An argument without an enumeration has open values: no value
 * written for it is reported.
 *
 * Accepted documents: an MCP `tools/list` result (`{tools: [{name, inputSchema}]}`, bare or as the
 * JSON-RPC response), a list of such tools, or OpenAI function definitions
 * (`[{type: "function", function: {name, parameters}}]`).
 */
export function signatureFromToolSchemas(text: string, options: { file?: string } = {}): { signature: Signature; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const lines = new LineIndex(text);
  const where = { span: lines.span(0, Math.min(1, text.length)), ...(options.file !== undefined ? { file: options.file } : {}) };
  const actions = new Set<string>();
  const keys = new Map<string, KeyInfo>();
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    diagnostics.push(diagnostic("T0001", `the tool schemas are not valid JSON: ${(error as Error).message}`, where));
    return { signature: { actions, keys, outputCount: 0, origin: "schemas" }, diagnostics };
  }
  const tools = toolList(document);
  if (tools === undefined) {
    diagnostics.push(
      diagnostic("T0008", "the file is not a list of tool schemas", {
        ...where,
        help: "give an MCP tools/list result ({\"tools\": [{\"name\", \"inputSchema\"}]}) or OpenAI function definitions",
      }),
    );
    return { signature: { actions, keys, outputCount: 0, origin: "schemas" }, diagnostics };
  }
  for (const { name, schema } of tools) {
    actions.add(name);
    collectProperties(schema, [], keys, 0);
  }
  return { signature: { actions, keys, outputCount: 0, origin: "schemas" }, diagnostics };
}

function toolList(document: unknown): { name: string; schema: unknown }[] | undefined {
  let list: unknown = document;
  if (isJsonObject(list) && isJsonObject(list["result"])) list = list["result"];
  if (isJsonObject(list) && Array.isArray(list["tools"])) list = list["tools"];
  if (!Array.isArray(list)) return undefined;
  const tools: { name: string; schema: unknown }[] = [];
  for (const entry of list) {
    if (!isJsonObject(entry)) return undefined;
    const fn = isJsonObject(entry["function"]) ? entry["function"] : entry;
    const name = fn["name"];
    if (typeof name !== "string") return undefined;
    tools.push({ name, schema: fn["inputSchema"] ?? fn["input_schema"] ?? fn["parameters"] ?? {} });
  }
  return tools;
}

function collectProperties(schema: unknown, path: string[], keys: Map<string, KeyInfo>, depth: number): void {
  if (!isJsonObject(schema) || depth > 32) return;
  // Arrays: the items' values and properties live under the array's own name (list flattening).
  if (isJsonObject(schema["items"])) collectProperties(schema["items"], path, keys, depth + 1);
  for (const combinator of ["anyOf", "oneOf", "allOf"]) {
    const options = schema[combinator];
    if (Array.isArray(options)) for (const option of options) collectProperties(option, path, keys, depth + 1);
  }
  if (path.length > 0) {
    const id = keyPathId(path);
    const enumerated = Array.isArray(schema["enum"]) ? (schema["enum"] as JsonValue[]) : "const" in schema ? [schema["const"] as JsonValue] : undefined;
    const previous = keys.get(id);
    const values = new Map(previous?.values ?? []);
    for (const value of enumerated ?? []) values.set(valueKey(value), value);
    const open = (previous?.openValues ?? false) || (enumerated === undefined && !isJsonObject(schema["properties"]) && !isJsonObject(schema["items"]));
    const listLength = Math.max(previous?.listLength ?? -1, arrayLength(schema));
    keys.set(id, { segments: [...path], values, ...(open ? { openValues: true } : {}), ...(listLength >= 0 ? { listLength } : {}) });
  }
  const properties = schema["properties"];
  if (isJsonObject(properties)) {
    for (const [name, property] of Object.entries(properties)) collectProperties(property, [...path, name], keys, depth + 1);
  }
}

/** How long a list the schema admits: its `maxItems`, Infinity without one, -1 when it is not an array. */
function arrayLength(schema: { readonly [key: string]: JsonValue }): number {
  const type = schema["type"];
  const isArray = isJsonObject(schema["items"]) || Array.isArray(schema["items"]) || type === "array" || (Array.isArray(type) && type.includes("array"));
  if (!isArray) return -1;
  const maxItems = schema["maxItems"];
  return typeof maxItems === "number" && Number.isInteger(maxItems) && maxItems >= 0 ? maxItems : Number.POSITIVE_INFINITY;
}
