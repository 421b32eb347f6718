import type { TraceEvent } from "./event.js";
import { displayValue, isJsonObject, keyPathDisplay, keyPathId, valueKey, type JsonValue } from "./value.js";

/** What the signature knows of one argument name (a key path into the events' arguments). */
export interface KeyInfo {
  readonly segments: readonly string[];
  /** The distinct values seen under the key, by {@link valueKey}, with list elements flattened. */
  readonly values: ReadonlyMap<string, JsonValue>;
  /** True when the values are not all known (a schema without an enumeration): none is reported as absent. */
  readonly openValues?: boolean;
}

/**
 * The signature Σ = (A, K, V) of a trace (Definition 1): the actions, argument names and values the
 * run exhibits. Argument names include dotted paths into nested objects (`headers.host`), so that
 * every key a policy may write is known. V is kept per key, which is what the checker needs to say
 * "this value never occurs under this argument".
 */
export interface Signature {
  readonly actions: ReadonlySet<string>;
  /** By {@link keyPathId}. */
  readonly keys: ReadonlyMap<string, KeyInfo>;
  /** How many events carry an output (outputs belong to V; they are not listed one by one). */
  readonly outputCount: number;
  /** Where Σ was read: a trace (the default) or tool schemas; diagnostics say which. */
  readonly origin?: "trace" | "schemas";
}

export function emptySignature(): Signature {
  return { actions: new Set(), keys: new Map(), outputCount: 0 };
}

export function signatureOf(events: readonly TraceEvent[]): Signature {
  const actions = new Set<string>();
  const keys = new Map<string, { segments: string[]; values: Map<string, JsonValue> }>();
  let outputCount = 0;
  const record = (segments: string[], value: JsonValue): void => {
    const id = keyPathId(segments);
    let info = keys.get(id);
    if (info === undefined) {
      info = { segments: [...segments], values: new Map() };
      keys.set(id, info);
    }
    if (Array.isArray(value)) {
      for (const element of value) record(segments, element);
      return;
    }
    info.values.set(valueKey(value), value);
    if (isJsonObject(value)) {
      for (const [name, inner] of Object.entries(value)) record([...segments, name], inner);
    }
  };
  for (const event of events) {
    actions.add(event.action);
    for (const [name, value] of Object.entries(event.args)) record([name], value);
    if (event.output !== undefined) outputCount++;
  }
  return { actions, keys, outputCount };
}

/** A plain, stable rendering of a signature (what `vigilc signature` prints). */
export function signatureToJson(signature: Signature): {
  actions: string[];
  keys: { key: string; values: string[]; distinctValues: number }[];
  outputs: number;
} {
  const limit = 20;
  return {
    actions: [...signature.actions].sort(),
    keys: [...signature.keys.values()]
      .map((info) => {
        const values = [...info.values.values()].map(displayValue).sort();
        return { key: keyPathDisplay(info.segments), values: values.slice(0, limit), distinctValues: values.length };
      })
      .sort((a, b) => a.key.localeCompare(b.key)),
    outputs: signature.outputCount,
  };
}
