import { mergeSignatures, readRunEvents, signatureOf, type Diagnostic, type JsonValue, type Signature, type TraceEvent } from "@vigil/compiler";

/**
 * The vocabulary a draft is written in, per action: what the runs show of each action (how many
 * events, its argument keys with their JSON types and sample values, its outputs and the paths into
 * those that are JSON objects). The model is given it (`vocabularyText`) so that it does not guess
 * which key belongs to which tool, and the draft's closed-world check reads it to catch a key
 * written on an action that never has it, or an output path no output has. One place builds it:
 * `readRunsVocabulary`, from the runs' events, as `vigilc check` reads them.
 */

/** A JSON type as the vocabulary says it; `list` for an array. */
export type JsonType = "string" | "number" | "boolean" | "null" | "object" | "list";

/** What the runs show under one path of an action's arguments or outputs. */
export interface PathVocabulary {
  /** The path's names: nested objects' members in order; a list's elements are under the list's own name (no indexes). */
  readonly path: readonly string[];
  /** How many of the action's events (with a JSON-object output, for an output path) have it. */
  readonly events: number;
  /** The JSON types of the values under it (a list is `list`; its elements' types are `elementTypes`). */
  readonly types: readonly JsonType[];
  readonly elementTypes?: readonly JsonType[];
  /** The longest list under it, when it holds lists. */
  readonly longestList?: number;
  /** Some of its scalar values (texts cut short), in order: numbers, then texts, then the rest. */
  readonly samples: readonly JsonValue[];
  /** How many distinct scalar values it has, counted up to {@link DISTINCT_COUNTED}. */
  readonly distinct: number;
}

/** What the runs show of one action. */
export interface ActionVocabulary {
  readonly action: string;
  readonly events: number;
  /** A message of the conversation (`user_message`, `agent_message`): no status, no output. */
  readonly message: boolean;
  /** Every argument path its events have (up to {@link PATHS_KEPT}), sorted. */
  readonly args: readonly PathVocabulary[];
  /** How many of its events have an output, and how many of those outputs are JSON objects. */
  readonly outputs: number;
  readonly jsonOutputs: number;
  /** Every path into its JSON-object outputs (up to {@link PATHS_KEPT}), sorted. */
  readonly outputPaths: readonly PathVocabulary[];
  /**
   * True when not every path is known: more than {@link PATHS_KEPT}, deeper than
   * {@link DEPTH_READ}, or an output cut at the observation cap that may hold more: no path is then
   * reported as one no output has.
   */
  readonly argsCut?: boolean;
  readonly outputPathsCut?: boolean;
}

export interface Vocabulary {
  readonly runs: number;
  readonly events: number;
  /** Whether the conversation's messages are events among them (`user_message`, `agent_message`). */
  readonly messages: boolean;
  /** By action name. */
  readonly actions: readonly ActionVocabulary[];
}

/** How many distinct values of a path are counted (and kept, for samples). */
export const DISTINCT_COUNTED = 100;
/** How many paths of an action's arguments, or of its outputs, are kept. */
export const PATHS_KEPT = 2000;
/** How deep into an argument or an output paths are read. */
export const DEPTH_READ = 12;
/** How much of a text value a sample keeps (a message's text: {@link MESSAGE_SAMPLE_LENGTH}). */
const SAMPLE_LENGTH = 48;
const MESSAGE_SAMPLE_LENGTH = 80;

/** A path's identity: its names joined by a character no name has. */
export function pathId(path: readonly string[]): string {
  return path.join("\u0000");
}

interface PathBuilding {
  readonly path: readonly string[];
  events: number;
  lastEvent: number;
  readonly types: Set<JsonType>;
  readonly elementTypes: Set<JsonType>;
  longestList: number;
  readonly values: Map<string, JsonValue>;
  distinct: number;
}

interface ActionBuilding {
  events: number;
  message: boolean;
  outputs: number;
  jsonOutputs: number;
  readonly args: Map<string, PathBuilding>;
  readonly outputPaths: Map<string, PathBuilding>;
  argsCut: boolean;
  outputPathsCut: boolean;
}

/** The vocabulary of events given one at a time. */
export class VocabularyBuilder {
  private readonly actions = new Map<string, ActionBuilding>();
  private eventCount = 0;
  private messageEvents = 0;

  add(event: TraceEvent): void {
    const serial = ++this.eventCount;
    let action = this.actions.get(event.action);
    if (action === undefined) {
      action = { events: 0, message: false, outputs: 0, jsonOutputs: 0, args: new Map(), outputPaths: new Map(), argsCut: false, outputPathsCut: false };
      this.actions.set(event.action, action);
    }
    action.events++;
    const message = event.kind === "message";
    if (message) {
      action.message = true;
      this.messageEvents++;
    }
    const sampleLength = message ? MESSAGE_SAMPLE_LENGTH : SAMPLE_LENGTH;
    for (const [name, value] of Object.entries(event.args)) {
      if (this.record(action.args, [name], value, serial, sampleLength, false, 1)) action.argsCut = true;
    }
    if (event.output === undefined) return;
    action.outputs++;
    const object = jsonObjectOf(event.output);
    if (object === undefined) {
      // A cut output that begins as an object may hold paths no other output shows.
      if (event.outputTruncated === true && event.output.trimStart().startsWith("{")) action.outputPathsCut = true;
      return;
    }
    action.jsonOutputs++;
    for (const [name, value] of Object.entries(object)) {
      if (this.record(action.outputPaths, [name], value, serial, SAMPLE_LENGTH, false, 1)) action.outputPathsCut = true;
    }
  }

  /** Records a value under a path (and the paths inside it); true when some path was left out (too many, too deep). */
  private record(paths: Map<string, PathBuilding>, path: string[], value: JsonValue, serial: number, sampleLength: number, element: boolean, depth: number): boolean {
    if (depth > DEPTH_READ) return true;
    const id = pathId(path);
    let info = paths.get(id);
    if (info === undefined) {
      if (paths.size >= PATHS_KEPT) return true;
      info = { path: [...path], events: 0, lastEvent: 0, types: new Set(), elementTypes: new Set(), longestList: -1, values: new Map(), distinct: 0 };
      paths.set(id, info);
    }
    if (info.lastEvent !== serial) {
      info.lastEvent = serial;
      info.events++;
    }
    const type = jsonTypeOf(value);
    (element ? info.elementTypes : info.types).add(type);
    let cut = false;
    if (Array.isArray(value)) {
      if (value.length > info.longestList) info.longestList = value.length;
      for (const item of value) cut = this.record(paths, path, item, serial, sampleLength, true, depth + 1) || cut;
      return cut;
    }
    if (value !== null && typeof value === "object") {
      for (const [name, inner] of Object.entries(value)) cut = this.record(paths, [...path, name], inner, serial, sampleLength, false, depth + 1) || cut;
      return cut;
    }
    const sample = typeof value === "string" && value.length > sampleLength ? `${value.slice(0, sampleLength)}…` : value;
    const key = JSON.stringify(sample);
    if (!info.values.has(key) && info.distinct < DISTINCT_COUNTED) {
      info.values.set(key, sample);
      info.distinct++;
    }
    return false;
  }

  vocabulary(runs: number): Vocabulary {
    const actions = [...this.actions]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, info]): ActionVocabulary => ({
        action: name,
        events: info.events,
        message: info.message,
        args: finished(info.args),
        outputs: info.outputs,
        jsonOutputs: info.jsonOutputs,
        outputPaths: finished(info.outputPaths),
        ...(info.argsCut ? { argsCut: true } : {}),
        ...(info.outputPathsCut ? { outputPathsCut: true } : {}),
      }));
    return { runs, events: this.eventCount, messages: this.messageEvents > 0, actions };
  }
}

/** The paths of an action, sorted, each with its samples in a stable order (not the order the runs came in). */
function finished(paths: ReadonlyMap<string, PathBuilding>): PathVocabulary[] {
  return [...paths.values()]
    .map((info) => ({
      path: info.path,
      events: info.events,
      types: sortedTypes(info.types),
      ...(info.elementTypes.size > 0 ? { elementTypes: sortedTypes(info.elementTypes) } : {}),
      ...(info.longestList >= 0 ? { longestList: info.longestList } : {}),
      samples: [...info.values.values()].sort(compareSamples),
      distinct: info.distinct,
    }))
    .sort((a, b) => comparePaths(a.path, b.path));
}

const typeOrder: readonly JsonType[] = ["string", "number", "boolean", "null", "object", "list"];

function sortedTypes(types: ReadonlySet<JsonType>): JsonType[] {
  return typeOrder.filter((type) => types.has(type));
}

function comparePaths(a: readonly string[], b: readonly string[]): number {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    if (a[index] !== b[index]) return a[index]! < b[index]! ? -1 : 1;
  }
  return a.length - b.length;
}

/** Numbers first (by value), then texts, then `true`, `false` and `null`. */
function compareSamples(a: JsonValue, b: JsonValue): number {
  const rank = (value: JsonValue) => (typeof value === "number" ? 0 : typeof value === "string" ? 1 : 2);
  if (rank(a) !== rank(b)) return rank(a) - rank(b);
  if (typeof a === "number" && typeof b === "number") return a - b;
  const [x, y] = [String(a), String(b)];
  return x < y ? -1 : x > y ? 1 : 0;
}

function jsonTypeOf(value: JsonValue): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "list";
  return typeof value === "object" ? "object" : (typeof value as "string" | "number" | "boolean");
}

/** An output read as JSON, when it is an object (the only outputs `output.PATH` reads into). */
function jsonObjectOf(output: string): Record<string, JsonValue> | undefined {
  const text = output.trimStart();
  if (!text.startsWith("{")) return undefined;
  try {
    const value = JSON.parse(text) as JsonValue;
    return value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, JsonValue>) : undefined;
  } catch {
    return undefined;
  }
}

/** How many signatures of pieces of runs are kept before they are merged into one. */
const SIGNATURES_MERGED = 256;

/** How the runs were read: the closed world's signature, the vocabulary, and each file's diagnostics. */
export interface RunsRead {
  readonly signature: Signature;
  readonly vocabulary: Vocabulary;
  readonly files: readonly { readonly file: string; readonly diagnostics: readonly Diagnostic[]; readonly messageEvents: number }[];
}

/**
 * The runs of the files given, read as `vigilc check` reads them (any format, shell calls grounded,
 * a file of several runs run by run), into the signature Σ of the closed-world check and the
 * per-action vocabulary, in one pass. The conversation's messages are events too unless
 * `messages` is false: a run that carries none gives none, and the vocabulary says whether any did.
 */
export async function readRunsVocabulary(files: readonly string[], options: { readonly messages?: boolean } = {}): Promise<RunsRead> {
  const builder = new VocabularyBuilder();
  const signatures: Signature[] = [];
  const read: { file: string; diagnostics: readonly Diagnostic[]; messageEvents: number }[] = [];
  let runs = 0;
  for (const file of files) {
    const counts = await readRunEvents({ file }, options.messages === false ? {} : { messages: true }, (events) => {
      signatures.push(signatureOf(events));
      // Merged as they come, a few hundred at a time: memory holds one signature per batch of runs, not per run.
      if (signatures.length >= SIGNATURES_MERGED) signatures.splice(0, signatures.length, mergeSignatures(signatures));
      for (const event of events) builder.add(event);
    });
    runs += counts.runs ?? 1;
    read.push({ file, diagnostics: counts.traceDiagnostics, messageEvents: counts.messageEvents });
  }
  return { signature: mergeSignatures(signatures), vocabulary: builder.vocabulary(runs), files: read };
}
