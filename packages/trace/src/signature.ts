import type { TraceEvent } from "./event.js";
import { displayValue, isJsonObject, keyPathDisplay, keyPathId, valueKey, type JsonValue, type PathSegment } from "./value.js";

/**
 * What the signature knows of one argument name (a key path of names into the events' arguments;
 * a list's elements live under the list's own name, so Σ's keys have no indexes).
 */
export interface KeyInfo {
  readonly segments: readonly string[];
  /** The distinct values seen under the key, by {@link valueKey}, with list elements flattened. */
  readonly values: ReadonlyMap<string, JsonValue>;
  /** True when the values are not all known (a schema without an enumeration): none is reported as absent. */
  readonly openValues?: boolean;
  /**
   * When some event has a list under the key: the length of the longest (lists nested in it
   * included; a schema's array without `maxItems` has no bound: Infinity). An index path `k.i`
   * is in Σ only when some list under k is longer than i.
   */
  readonly listLength?: number;
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
  /**
   * Where Σ was read: a trace (the default), tool schemas, or every run of a corpus together (the
   * union of their signatures: a name is known when some run shows it); diagnostics say which.
   */
  readonly origin?: "trace" | "schemas" | "corpus";
}

export function emptySignature(): Signature {
  return { actions: new Set(), keys: new Map(), outputCount: 0 };
}

export function signatureOf(events: Iterable<TraceEvent>): Signature {
  const builder = new SignatureBuilder();
  for (const event of events) builder.add(event);
  return builder.signature();
}

/**
 * The signature of a trace read one event at a time. With `maxValuesPerKey`, a key keeps at most
 * that many distinct values and is then marked as having open values (no value is reported as
 * absent under it), so that a long trace of ever-new values (ids, timestamps) costs bounded memory.
 */
export class SignatureBuilder {
  private readonly actions = new Set<string>();
  /** Per key: its values, whether they are open, and whether they are collected at all (`valuesOf`). */
  private readonly keys = new Map<string, { segments: string[]; values: Map<string, JsonValue>; open: boolean; collected: boolean; listLength: number }>();
  private outputCount = 0;

  /**
   * @param options.valuesOf when given, the only keys (by keyPathId) whose values are collected:
   *   the closed-world check reads the values of the keys a policy compares with a set, and every
   *   other key needs only its name. The other keys' values are open (none reported as absent).
   */
  constructor(private readonly options: { readonly maxValuesPerKey?: number; readonly valuesOf?: ReadonlySet<string> } = {}) {}

  add(event: TraceEvent): void {
    this.actions.add(event.action);
    const args = event.args;
    for (const name in args) {
      if (!Object.prototype.hasOwnProperty.call(args, name)) continue;
      const value = args[name]!;
      // The common case, a top-level scalar, without the arrays a key path needs (a key path of
      // one segment is identified by the segment itself).
      if (typeof value !== "object" || value === null) this.recordScalar(name, value);
      else this.record([name], value);
    }
    if (event.output !== undefined) this.outputCount++;
  }

  private recordScalar(name: string, value: JsonValue): void {
    let info = this.keys.get(name);
    if (info === undefined) {
      info = { segments: [name], values: new Map(), open: false, collected: this.collects(name), listLength: -1 };
      this.keys.set(name, info);
    }
    if (info.collected) this.recordValue(info, value);
    else info.open = true;
  }

  private record(segments: string[], value: JsonValue): void {
    const id = keyPathId(segments);
    let info = this.keys.get(id);
    if (info === undefined) {
      info = { segments: [...segments], values: new Map(), open: false, collected: this.collects(id), listLength: -1 };
      this.keys.set(id, info);
    }
    if (Array.isArray(value)) {
      if (value.length > info.listLength) info.listLength = value.length;
      for (const element of value) this.record(segments, element);
      return;
    }
    if (info.collected) this.recordValue(info, value);
    else info.open = true;
    if (isJsonObject(value)) {
      for (const [name, inner] of Object.entries(value)) this.record([...segments, name], inner);
    }
  }

  /** Whether the values of a key (by keyPathId) are collected; decided once, when the key is first seen. */
  private collects(id: string): boolean {
    return this.options.valuesOf === undefined || this.options.valuesOf.has(id);
  }

  private recordValue(info: { values: Map<string, JsonValue>; open: boolean }, value: JsonValue): void {
    const key = valueKey(value);
    if (!info.values.has(key)) {
      if (info.values.size < (this.options.maxValuesPerKey ?? Infinity)) info.values.set(key, value);
      else info.open = true;
    }
  }

  signature(): Signature {
    const keys = new Map<string, KeyInfo>();
    for (const [id, info] of this.keys) {
      keys.set(id, { segments: info.segments, values: info.values, ...(info.open ? { openValues: true } : {}), ...(info.listLength >= 0 ? { listLength: info.listLength } : {}) });
    }
    return { actions: this.actions, keys, outputCount: this.outputCount };
  }
}

/**
 * Where a key path stands in Σ. Σ's keys are paths of names, so a path with indexes is read through
 * its names (`argv.0` through `argv`, `items.0.id` through `items.id`): it is in Σ when its names
 * are a key of Σ and, at each index i, the names before it lead to a list longer than i in some
 * event (`argv.0` needs a non-empty list under `argv`). The info is that of the names, whose values
 * include every value the path can reach. This admits a path that no single event has (`m.1.0` when
 * the lists under `m` that are long enough hold no lists), never rejects one that some event has.
 */
export type KeyLookup =
  | { readonly found: true; readonly info: KeyInfo }
  /** The names are not a key of Σ. */
  | { readonly found: false; readonly reason: "key" }
  /** The names before an index (`list`) lead to no list, or to none longer than the index. */
  | { readonly found: false; readonly reason: "index"; readonly list: readonly string[]; readonly index: number; readonly listLength: number | undefined };

export function lookUpKey(signature: Signature, segments: readonly PathSegment[]): KeyLookup {
  const names: string[] = [];
  for (const segment of segments) {
    if (typeof segment === "string") {
      names.push(segment);
      continue;
    }
    const list = signature.keys.get(keyPathId(names));
    // The names before the index are checked as a key in their own right first: a misspelled list is a key problem.
    if (list === undefined) return { found: false, reason: "key" };
    if (list.listLength === undefined || list.listLength <= segment) return { found: false, reason: "index", list: [...names], index: segment, listLength: list.listLength };
  }
  const info = signature.keys.get(keyPathId(names));
  return info === undefined ? { found: false, reason: "key" } : { found: true, info };
}

/** A plain, stable rendering of a signature (what `vigilc signature` prints). */
export function signatureToJson(signature: Signature): {
  actions: string[];
  keys: { key: string; values: string[]; distinctValues: number; longestList?: number }[];
  outputs: number;
} {
  const limit = 20;
  return {
    actions: [...signature.actions].sort(),
    keys: [...signature.keys.values()]
      .map((info) => {
        const values = [...info.values.values()].map(displayValue).sort();
        const list = info.listLength !== undefined && Number.isFinite(info.listLength) ? { longestList: info.listLength } : {};
        return { key: keyPathDisplay(info.segments), values: values.slice(0, limit), distinctValues: values.length, ...list };
      })
      .sort((a, b) => a.key.localeCompare(b.key)),
    outputs: signature.outputCount,
  };
}

/**
 * The union of signatures: every action, key and value any of them has. A key whose values are
 * open in one (a schema without an enumeration, a key past the value limit) is open in the union;
 * its longest list is the longest in any.
 * The union is a trace's signature when any trace takes part, so messages speak of the trace.
 */
export function mergeSignatures(signatures: readonly Signature[]): Signature {
  if (signatures.length === 1) return signatures[0]!;
  const actions = new Set<string>();
  const keys = new Map<string, { segments: readonly string[]; values: Map<string, JsonValue>; open: boolean; listLength: number }>();
  let outputCount = 0;
  for (const signature of signatures) {
    for (const action of signature.actions) actions.add(action);
    for (const [id, info] of signature.keys) {
      let merged = keys.get(id);
      if (merged === undefined) {
        merged = { segments: info.segments, values: new Map(), open: false, listLength: -1 };
        keys.set(id, merged);
      }
      for (const [key, value] of info.values) merged.values.set(key, value);
      if (info.openValues === true) merged.open = true;
      if (info.listLength !== undefined && info.listLength > merged.listLength) merged.listLength = info.listLength;
    }
    outputCount += signature.outputCount;
  }
  const result = new Map<string, KeyInfo>();
  for (const [id, info] of keys) {
    result.set(id, { segments: info.segments, values: info.values, ...(info.open ? { openValues: true } : {}), ...(info.listLength >= 0 ? { listLength: info.listLength } : {}) });
  }
  const origin = signatures.every((s) => s.origin === "schemas") ? { origin: "schemas" as const } : {};
  return { actions, keys: result, outputCount, ...origin };
}
