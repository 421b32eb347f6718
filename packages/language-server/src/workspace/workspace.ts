import { dirname, relative, resolve, sep } from "node:path";
import { defaultAnalysisDepth, type EngineName } from "@vigil/compiler";
import { configFileName, findConfigFile, readConfig, sectionFor, type VigilConfig } from "./config.js";
import { loadSampleSet, type SampleSet } from "./samples.js";

/** The editor's settings under `vigil`. */
export interface Settings {
  /** `vigil.sampleTraces`: globs of sample traces, added to the config's (relative to the workspace folder). */
  readonly sampleTraces: readonly string[];
  /** `vigil.engine`: the engine `vigil/checkTrace` uses when the request names none. */
  readonly engine: EngineName;
  /** `vigil.analysis.*`: the findings of `vigilc analyze`, computed after a pause in typing. */
  readonly analysis: AnalysisSettings;
}

export interface AnalysisSettings {
  /** `vigil.analysis.enabled`. */
  readonly enabled: boolean;
  /** `vigil.analysis.delay`: milliseconds without a change before a document is analysed. */
  readonly delayMs: number;
  /** `vigil.analysis.depth`: the longest run searched (`vigilc analyze --depth`). */
  readonly depth: number;
}

export const defaultSettings: Settings = { sampleTraces: [], engine: "eval", analysis: { enabled: true, delayMs: 1000, depth: defaultAnalysisDepth } };

/** Reads the `vigil` section of the settings, keeping the defaults for anything malformed. */
export function settingsFrom(section: unknown): Settings {
  if (typeof section !== "object" || section === null) return defaultSettings;
  const fields = section as Record<string, unknown>;
  const traces = fields["sampleTraces"];
  const engine = fields["engine"];
  const analysis = typeof fields["analysis"] === "object" && fields["analysis"] !== null ? (fields["analysis"] as Record<string, unknown>) : {};
  const { enabled, delay, depth } = analysis;
  const defaults = defaultSettings.analysis;
  return {
    sampleTraces: Array.isArray(traces) ? traces.filter((t): t is string => typeof t === "string" && t.length > 0) : [],
    engine: engine === "smt" ? "smt" : "eval",
    analysis: {
      enabled: typeof enabled === "boolean" ? enabled : defaults.enabled,
      delayMs: typeof delay === "number" && Number.isFinite(delay) && delay >= 0 ? delay : defaults.delayMs,
      depth: typeof depth === "number" && Number.isInteger(depth) && depth >= 1 && depth <= 12 ? depth : defaults.depth,
    },
  };
}

/** What a policy file is checked against: its sample set, and where that came from. */
export interface PolicyContext {
  /** The folder the policy belongs to (a workspace folder, or the policy's own folder). */
  readonly root?: string;
  readonly configFile?: string;
  /** Undefined when there is neither a config nor sample traces in the settings: syntax and structure only. */
  readonly samples?: SampleSet;
}

/**
 * The workspace as the server sees it: its folders, the settings, and the sample sets of the
 * configs, each read once and kept until one of its files changes.
 */
export class Workspace {
  private folders: string[] = [];
  private settings: Settings = defaultSettings;
  /** Sample sets by the config file and settings they come from. */
  private readonly sampleSets = new Map<string, { readonly files: Set<string>; readonly directory?: string; readonly loading: Promise<SampleSet> }>();
  /** Which config applies to each folder a policy is in (found once, forgotten when a config appears or goes). */
  private readonly configOfDirectory = new Map<string, Promise<string | undefined>>();
  /** Each config file, read once (forgotten when any config changes). */
  private readonly configs = new Map<string, Promise<VigilConfig>>();
  private generationCounter = 0;

  /** Increases whenever anything a policy is checked against changes; analyses remember the one they saw. */
  get generation(): number {
    return this.generationCounter;
  }

  get currentSettings(): Settings {
    return this.settings;
  }

  get currentFolders(): readonly string[] {
    return this.folders;
  }

  setFolders(folders: readonly string[]): void {
    this.folders = [...folders].map((folder) => resolve(folder));
    this.forgetAll();
  }

  /** Takes new settings; what the policies are checked against changes (a new generation) only when the samples or the engine do. */
  setSettings(settings: Settings): void {
    const checkedAgainst = (s: Settings) => JSON.stringify([s.sampleTraces, s.engine]);
    const changed = checkedAgainst(settings) !== checkedAgainst(this.settings);
    this.settings = settings;
    if (!changed) return;
    this.sampleSets.clear();
    this.generationCounter++;
  }

  /** The workspace folder holding a path (the innermost one). */
  folderOf(path: string): string | undefined {
    let best: string | undefined;
    for (const folder of this.folders) {
      const inside = relative(folder, path);
      if (!inside.startsWith("..") && !inside.startsWith(sep) && (best === undefined || folder.length > best.length)) best = folder;
    }
    return best;
  }

  async contextOf(policyFile: string | undefined): Promise<PolicyContext> {
    if (policyFile === undefined) return {};
    const root = this.folderOf(policyFile);
    const directory = dirname(resolve(policyFile));
    let config = this.configOfDirectory.get(directory);
    if (config === undefined) {
      config = findConfigFile(policyFile, root);
      this.configOfDirectory.set(directory, config);
    }
    const configFile = await config;
    const settingsDirectory = root ?? (configFile !== undefined ? dirname(configFile) : directory);
    const settingsTraces = this.settings.sampleTraces;
    if (configFile === undefined && settingsTraces.length === 0) return root !== undefined ? { root } : {};
    let read: VigilConfig | undefined;
    if (configFile !== undefined) {
      let reading = this.configs.get(configFile);
      if (reading === undefined) {
        reading = readConfig(configFile);
        this.configs.set(configFile, reading);
      }
      read = await reading;
    }
    const section = read !== undefined ? sectionFor(read, policyFile) : undefined;
    const key = `${configFile ?? ""}\u0000${section?.directory ?? ""}\u0000${settingsDirectory}`;
    let entry = this.sampleSets.get(key);
    if (entry === undefined) {
      const files = new Set<string>();
      const loading = (async () => {
        const samples = await loadSampleSet({
          ...(section !== undefined ? { section, configProblems: read!.problems } : {}),
          settingsTraces,
          settingsDirectory,
        });
        for (const trace of samples.traces) files.add(trace.file);
        for (const schema of samples.schemas) files.add(schema.file);
        return samples;
      })();
      entry = { files, ...(section !== undefined ? { directory: section.directory } : {}), loading };
      this.sampleSets.set(key, entry);
    }
    const samples = await entry.loading;
    return { ...(root !== undefined ? { root } : {}), ...(configFile !== undefined ? { configFile } : {}), samples };
  }

  /** Every sample set read so far (for the file watchers to register). */
  async loadedSampleSets(): Promise<SampleSet[]> {
    return Promise.all([...this.sampleSets.values()].map((entry) => entry.loading));
  }

  /**
   * A file changed on disk: forgets what depended on it. Returns whether anything did, in which case
   * every open policy must be checked again.
   */
  fileChanged(path: string, kind: "created" | "changed" | "deleted"): boolean {
    const file = resolve(path);
    if (file.endsWith(`${sep}${configFileName}`) || file === configFileName) {
      this.forgetAll();
      return true;
    }
    let changed = false;
    for (const [key, entry] of this.sampleSets) {
      const inside = entry.directory !== undefined && !relative(entry.directory, file).startsWith("..");
      // A changed sample file; or a file created or deleted where the config's globs may reach it.
      if (entry.files.has(file) || (kind !== "changed" && (inside || this.settings.sampleTraces.length > 0))) {
        this.sampleSets.delete(key);
        changed = true;
      }
    }
    if (changed) this.generationCounter++;
    return changed;
  }

  private forgetAll(): void {
    this.sampleSets.clear();
    this.configs.clear();
    this.configOfDirectory.clear();
    this.generationCounter++;
  }
}
