import * as vscode from "vscode";
import { splitGlob } from "./globs.js";

/** A file event as the LSP's workspace/didChangeWatchedFiles carries it (type: 1 created, 2 changed, 3 deleted). */
export interface WatchedFileChange {
  readonly uri: string;
  readonly type: 1 | 2 | 3;
}

/**
 * Watches every `vigil.config.json` of the workspace and the sample traces the policies are
 * checked against (the `traces` globs of each config file, relative to it, and the `vigil.sampleTraces`
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
    for (const glob of await tracesOf(config)) patterns.push(relativePattern(folder, glob));
  }
  return patterns;
}

/** The `traces` of one config file; nothing when it cannot be read (the server reports that). */
async function tracesOf(config: vscode.Uri): Promise<string[]> {
  try {
    const parsed: unknown = JSON.parse(new TextDecoder().decode(await vscode.workspace.fs.readFile(config)));
    const traces = (parsed as { traces?: unknown } | null)?.traces;
    return Array.isArray(traces) ? traces.filter((glob): glob is string => typeof glob === "string" && glob.trim() !== "") : [];
  } catch {
    return [];
  }
}

function relativePattern(folder: string, glob: string): vscode.RelativePattern {
  const { base, pattern } = splitGlob(folder, glob);
  return new vscode.RelativePattern(vscode.Uri.file(base), pattern);
}
