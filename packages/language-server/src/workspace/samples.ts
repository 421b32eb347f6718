import { readFile } from "node:fs/promises";
import { basename, dirname, isAbsolute, resolve } from "node:path";
import { stripByteOrderMark, type Diagnostic } from "@vigil/diagnostics";
import {
  createRecordingReader,
  isHandle,
  isJsonObject,
  keyPathId,
  mergeSignatures,
  openRegularFile,
  readRegularFileInPieces,
  signatureFromToolSchemas,
  SignatureBuilder,
  valueKey,
  type JsonValue,
  type Signature,
  type TraceEvent,
  type TraceFormat,
} from "@vigil/trace";
import { glob } from "tinyglobby";
import { configFileName, type SampleSection } from "./config.js";

/**
 * The sample traces and tool schemas a policy is edited against: their signature Σ (for completion
 * and the closed-world diagnostics), how often each action, key and value occurs (for hovers), and
 * the events themselves (for the verdict lenses), read once and kept until a file changes.
 */

/** How many events of a trace are kept for the lenses; a longer run is judged again from its file. */
const KEPT_EVENTS = 20_000;
/** How many distinct values of one key are counted (the signature keeps as many). */
const COUNTED_VALUES_PER_KEY = 10_000;

/** How many events carry each action, key and value. */
export interface TraceStatistics {
  readonly actions: ReadonlyMap<string, number>;
  /** By key path id: the events with a value under the key, and per value (by `valueKey`) its events. */
  readonly keys: ReadonlyMap<string, KeyStatistics>;
}

export interface KeyStatistics {
  readonly segments: readonly string[];
  readonly events: number;
  readonly values: ReadonlyMap<string, { readonly value: JsonValue; readonly events: number }>;
}

export interface SampleTrace {
  readonly file: string;
  readonly format?: TraceFormat;
  /** Read with the conversation's messages as events (the config's `"messages": true`): so is a judging of the file again. */
  readonly messages?: boolean;
  readonly eventCount: number;
  /** The events, when the run is short enough to keep; otherwise lenses judge the file again. */
  readonly events?: readonly TraceEvent[];
  /** Problems reading it; a trace with errors takes no part in the signature or the lenses. */
  readonly diagnostics: readonly Diagnostic[];
  readonly usable: boolean;
  readonly signature: Signature;
  readonly statistics: TraceStatistics;
}

export interface SampleSchema {
  readonly file: string;
  readonly diagnostics: readonly Diagnostic[];
  readonly usable: boolean;
  readonly signature: Signature;
}

export interface SampleSet {
  /** The config section the samples come from, when they come from a config. */
  readonly section?: SampleSection;
  readonly traces: readonly SampleTrace[];
  readonly schemas: readonly SampleSchema[];
  /** Σ of every usable trace and schema together; undefined when there is none (no closed-world check). */
  readonly signature?: Signature;
  /** Problems with the config and its globs (a glob that matches nothing, say). */
  readonly problems: readonly string[];
  /** What to watch for changes: each glob or file with the folder it is relative to. */
  readonly watched: readonly { readonly base: string; readonly pattern: string }[];
}

/** Where a sample set's files come from: a config (its section for the policy), globs from the editor's settings, or both. */
export interface SampleSources {
  readonly section?: SampleSection;
  /** What is wrong with the config file. */
  readonly configProblems?: readonly string[];
  /** `vigil.sampleTraces` from the settings, and the folder they are relative to. */
  readonly settingsTraces: readonly string[];
  readonly settingsDirectory?: string;
}

export async function loadSampleSet(sources: SampleSources, signal?: AbortSignal): Promise<SampleSet> {
  const problems: string[] = [...(sources.configProblems ?? [])];
  const watched: { base: string; pattern: string }[] = [];
  const traceFiles = new Set<string>();
  const expand = async (patterns: readonly string[], directory: string, origin: string): Promise<void> => {
    for (const pattern of patterns) {
      watched.push(isAbsolute(pattern) ? { base: dirname(pattern), pattern: basename(pattern) } : { base: directory, pattern });
      let matches: string[];
      try {
        matches = isAbsolute(pattern) && !/[*?[{]/.test(pattern) ? [pattern] : await glob(pattern, { cwd: directory, absolute: true, onlyFiles: true, dot: true });
      } catch (error) {
        problems.push(`${origin}: "${pattern}" cannot be read: ${(error as Error).message}`);
        continue;
      }
      if (matches.length === 0) problems.push(`${origin}: "${pattern}" matches no file`);
      for (const match of matches.sort()) traceFiles.add(resolve(match));
    }
  };
  if (sources.section !== undefined) await expand(sources.section.traces, sources.section.directory, configFileName);
  if (sources.settingsDirectory !== undefined) await expand(sources.settingsTraces, sources.settingsDirectory, "vigil.sampleTraces");
  signal?.throwIfAborted();

  const traces: SampleTrace[] = [];
  const messages = sources.section?.messages === true;
  for (const file of traceFiles) {
    traces.push(await readSampleTrace(file, { messages }));
    signal?.throwIfAborted();
  }
  const schemas: SampleSchema[] = [];
  for (const schema of sources.section?.schemas ?? []) {
    const file = resolve(sources.section!.directory, schema);
    watched.push({ base: dirname(file), pattern: basename(file) });
    schemas.push(await readSampleSchema(file));
  }
  const usable = [...traces.filter((t) => t.usable).map((t) => t.signature), ...schemas.filter((s) => s.usable).map((s) => s.signature)];
  return {
    ...(sources.section !== undefined ? { section: sources.section } : {}),
    traces,
    schemas,
    ...(usable.length > 0 ? { signature: mergeSignatures(usable) } : {}),
    problems,
    watched,
  };
}

/**
 * Reads a trace piece by piece (any format `vigilc` reads, grounded as `vigilc` grounds it), with
 * its messages as events when `messages` (as `vigilc check --messages`).
 */
export async function readSampleTrace(file: string, { messages = false }: { readonly messages?: boolean } = {}): Promise<SampleTrace> {
  const builder = new SignatureBuilder({ maxValuesPerKey: COUNTED_VALUES_PER_KEY });
  const counter = new StatisticsCounter();
  const handle = await openRegularFile(file);
  if (!isHandle(handle)) return unusableTrace(file, [handle]);
  const reader = createRecordingReader({ file, format: "auto", ...(messages ? { messages: true } : {}) });
  let kept: TraceEvent[] | undefined = [];
  let eventCount = 0;
  const take = (events: readonly TraceEvent[]): void => {
    for (const event of events) {
      eventCount++;
      builder.add(event);
      counter.add(event);
      if (kept !== undefined) {
        if (kept.length < KEPT_EVENTS) kept.push(event);
        else kept = undefined;
      }
    }
  };
  try {
    for await (const piece of readRegularFileInPieces(handle)) take(reader.push(piece));
    take(reader.end());
  } catch (error) {
    return unusableTrace(file, [{ code: "T0004", severity: "error", message: `cannot read the trace \`${file}\`: ${(error as Error).message}`, file }]);
  } finally {
    await handle.close();
  }
  const usable = !reader.diagnostics.some((d) => d.severity === "error");
  return {
    file,
    ...(reader.format !== undefined ? { format: reader.format } : {}),
    ...(messages ? { messages: true } : {}),
    eventCount,
    ...(kept !== undefined && usable ? { events: kept } : {}),
    diagnostics: reader.diagnostics,
    usable,
    signature: builder.signature(),
    statistics: counter.statistics(),
  };
}

function unusableTrace(file: string, diagnostics: readonly Diagnostic[]): SampleTrace {
  return { file, eventCount: 0, diagnostics, usable: false, signature: new SignatureBuilder().signature(), statistics: { actions: new Map(), keys: new Map() } };
}

async function readSampleSchema(file: string): Promise<SampleSchema> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message;
    return {
      file,
      diagnostics: [{ code: "T0004", severity: "error", message: `cannot read the tool schemas \`${file}\`: ${reason}`, file }],
      usable: false,
      signature: new SignatureBuilder().signature(),
    };
  }
  const { signature, diagnostics } = signatureFromToolSchemas(stripByteOrderMark(text), { file });
  return { file, diagnostics, usable: !diagnostics.some((d) => d.severity === "error"), signature };
}

/** Counts events per action, per key and per value under a key (each event once per key and value). */
class StatisticsCounter {
  private readonly actions = new Map<string, number>();
  private readonly keys = new Map<string, { segments: string[]; events: number; values: Map<string, { value: JsonValue; events: number }> }>();

  add(event: TraceEvent): void {
    this.actions.set(event.action, (this.actions.get(event.action) ?? 0) + 1);
    // The keys and values this event has, each once, found by an explicit walk (no recursion on input depth).
    const seenKeys = new Set<string>();
    const seenValues = new Set<string>();
    const stack: { segments: string[]; value: JsonValue }[] = [];
    for (const name of Object.keys(event.args)) stack.push({ segments: [name], value: event.args[name]! });
    while (stack.length > 0) {
      const { segments, value } = stack.pop()!;
      if (Array.isArray(value)) {
        for (const element of value as readonly JsonValue[]) stack.push({ segments, value: element });
        continue;
      }
      const id = keyPathId(segments);
      let info = this.keys.get(id);
      if (info === undefined) {
        info = { segments, events: 0, values: new Map() };
        this.keys.set(id, info);
      }
      if (!seenKeys.has(id)) {
        seenKeys.add(id);
        info.events++;
      }
      if (isJsonObject(value)) {
        for (const name of Object.keys(value)) stack.push({ segments: [...segments, name], value: value[name]! });
        continue;
      }
      const key = valueKey(value);
      const seen = `${id}\u0001${key}`;
      if (seenValues.has(seen)) continue;
      seenValues.add(seen);
      const counted = info.values.get(key);
      if (counted !== undefined) counted.events++;
      else if (info.values.size < COUNTED_VALUES_PER_KEY) info.values.set(key, { value, events: 1 });
    }
  }

  statistics(): TraceStatistics {
    return { actions: this.actions, keys: this.keys };
  }
}
