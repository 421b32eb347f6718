import * as vscode from "vscode";
import { splitGlob } from "./globs.js";

/** A file event as the LSP's workspace/didChangeWatchedFiles carries it (type: 1 created, 2 changed, 3 deleted). */
export interface WatchedFileChange {
  readonly uri: string;
  readonly type: 1 | 2 | 3;
}

/**
 * Watches every `vigil.config.json` of the workspace and the sample traces the policies are
 * checked against (the `traces` globs of each config file and of its `folders`, and the `vigil.sampleTraces`
 * setting, relative to each workspace folder), and tells the server of each change, so that the
 * diagnostics and verdicts follow the traces on disk. The trace globs are read again when a config
 * file or the setting changes.
 */
export class TraceWatchers implements vscode.Disposable {
  private readonly configWatcher: vscode.FileSystemWatcher;
  private traceWatchers: vscode.FileSystemWatcher[] = [];
  private watchedGlobs = "";
  private refreshing: Promise<void> = Promise.resolve();

  constructor(private readonly notify: (changes: WatchedFileChange[]) => void) {
    this.configWatcher = vscode.workspace.createFileSystemWatcher("**/vigil.config.json");
    const configChanged = (type: 1 | 2 | 3) => (uri: vscode.Uri) => {
      this.notify([{ uri: uri.toString(), type }]);
      void this.refresh();
    };
    this.configWatcher.onDidCreate(configChanged(1));
    this.configWatcher.onDidChange(configChanged(2));
    this.configWatcher.onDidDelete(configChanged(3));
  }

  /** Reads the globs again and replaces the trace watchers when they changed. Calls run one after another. */
  refresh(): Promise<void> {
    this.refreshing = this.refreshing.then(() => this.replaceWatchers()).catch(() => undefined);
    return this.refreshing;
  }

  private async replaceWatchers(): Promise<void> {
    const patterns = await traceGlobs();
    const key = JSON.stringify(patterns.map((pattern) => [pattern.baseUri.toString(), pattern.pattern]));
    if (key === this.watchedGlobs) return;
    this.watchedGlobs = key;
    for (const watcher of this.traceWatchers) watcher.dispose();
    this.traceWatchers = patterns.map((pattern) => {
      const watcher = vscode.workspace.createFileSystemWatcher(pattern);
      watcher.onDidCreate((uri) => this.notify([{ uri: uri.toString(), type: 1 }]));
      watcher.onDidChange((uri) => this.notify([{ uri: uri.toString(), type: 2 }]));
      watcher.onDidDelete((uri) => this.notify([{ uri: uri.toString(), type: 3 }]));
      return watcher;
    });
  }

  dispose(): void {
    this.configWatcher.dispose();
    for (const watcher of this.traceWatchers) watcher.dispose();
  }
}

/** The trace globs of the config files and of the setting, each relative to its folder. */
async function traceGlobs(): Promise<vscode.RelativePattern[]> {
  const patterns: vscode.RelativePattern[] = [];
  for (const folder of vscode.workspace.workspaceFolders ?? []) {
    for (const glob of vscode.workspace.getConfiguration("vigil", folder.uri).get<string[]>("sampleTraces", [])) {
      if (typeof glob === "string" && glob.trim() !== "") patterns.push(relativePattern(folder.uri.fsPath, glob.trim()));
    }
  }
  const configs = await vscode.workspace.findFiles("**/vigil.config.json", "**/node_modules/**", 100);
  for (const config of configs) {
    const folder = vscode.Uri.joinPath(config, "..").fsPath;
    for (const { directory, glob } of await tracesOf(config, folder)) patterns.push(relativePattern(directory, glob));
  }
  return patterns;
}

/**
 * The trace globs of one config file with the folder each is relative to: its own `traces`, and
 * those of each entry of `folders` (relative to that subfolder). Nothing when the file cannot be
 * read (the server reports why).
 */
async function tracesOf(config: vscode.Uri, folder: string): Promise<{ directory: string; glob: string }[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(config)));
  } catch {
    return [];
  }
  const globsOf = (section: unknown, directory: string) => {
    const traces = isObject(section) ? section["traces"] : undefined;
    return Array.isArray(traces) ? traces.filter((glob): glob is string => typeof glob === "string" && glob.trim() !== "").map((glob) => ({ directory, glob: glob.trim() })) : [];
  };
  const found = globsOf(parsed, folder);
  const folders = isObject(parsed) ? parsed["folders"] : undefined;
  if (isObject(folders)) {
    for (const [subfolder, section] of Object.entries(folders)) found.push(...globsOf(section, vscode.Uri.joinPath(vscode.Uri.file(folder), subfolder).fsPath));
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function relativePattern(folder: string, glob: string): vscode.RelativePattern {
  const { base, pattern } = splitGlob(folder, glob);
  return new vscode.RelativePattern(vscode.Uri.file(base), pattern);
}
