import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdirSync, openSync, closeSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ensureEditorTools, environmentWithNode24, type EditorTools } from "../../../scripts/editor-tools/install.mjs";

/**
 * code-server (VS Code in the browser) for the editor tests: installed once into a cache folder by
 * scripts/editor-tools/install.mjs, then run per test file with fresh user data, extensions and XDG
 * folders in a temporary folder, on a free port of 127.0.0.1, in its own process group so that
 * stopping it also stops its extension host, the language server and its file watchers.
 */

export type { EditorTools };

export function installEditorTools(log: (line: string) => void): EditorTools {
  return ensureEditorTools(log);
}

/** The folders of one code-server instance, all under `home`. */
export interface CodeServerFolders {
  readonly home: string;
  readonly userData: string;
  readonly extensions: string;
  readonly config: string;
  readonly log: string;
}

export function codeServerFolders(home: string): CodeServerFolders {
  const folders = {
    home,
    userData: join(home, "user-data"),
    extensions: join(home, "extensions"),
    config: join(home, "config.yaml"),
    log: join(home, "code-server.log"),
  };
  for (const folder of [folders.userData, folders.extensions, join(home, "xdg-config"), join(home, "xdg-data"), join(home, "xdg-cache")]) {
    mkdirSync(folder, { recursive: true });
  }
  return folders;
}

/** The environment code-server runs in: Node 24 first on PATH, and every XDG folder in the run's home. */
function environment(tools: EditorTools, folders: CodeServerFolders): NodeJS.ProcessEnv {
  const base = environmentWithNode24(tools, process.env);
  return {
    ...base,
    XDG_CONFIG_HOME: join(folders.home, "xdg-config"),
    XDG_DATA_HOME: join(folders.home, "xdg-data"),
    XDG_CACHE_HOME: join(folders.home, "xdg-cache"),
    // The extension host inherits this; nothing of the editor's Node should reach for the
    // repository's development settings.
    NODE_OPTIONS: "",
  };
}

/** Writes the user settings: no AI features (they start processes of their own), nothing that pops up or fetches. */
export function writeUserSettings(folders: CodeServerFolders, settings: Record<string, unknown>): void {
  const user = join(folders.userData, "User");
  mkdirSync(user, { recursive: true });
  writeFileSync(join(user, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
}

/** Installs a .vsix into the instance's extensions folder (under a second). */
export function installExtension(tools: EditorTools, folders: CodeServerFolders, vsix: string): string {
  const result = spawnSync(
    tools.node,
    [tools.codeServer, "--user-data-dir", folders.userData, "--extensions-dir", folders.extensions, "--config", folders.config, "--install-extension", vsix, "--force"],
    { env: environment(tools, folders), encoding: "utf8", timeout: 120_000 },
  );
  const output = `${result.stdout}${result.stderr}`;
  if (result.status !== 0) throw new Error(`code-server --install-extension ${vsix} failed (${result.status ?? result.signal}): ${output}`);
  return output;
}


export interface RunningCodeServer {
  readonly url: string;
  readonly process: ChildProcess;
  /** Stops the whole process group: TERM, then KILL after a grace period. */
  stop(): Promise<void>;
}

/** Starts code-server on 127.0.0.1:port with the workspace folder and waits until /healthz answers. */
export async function startCodeServer(tools: EditorTools, folders: CodeServerFolders, port: number, workspace: string): Promise<RunningCodeServer> {
  writeFileSync(folders.config, `bind-addr: 127.0.0.1:${port}\nauth: none\ncert: false\n`);
  const log = openSync(folders.log, "a");
  const child = spawn(
    tools.node,
    [
      tools.codeServer,
      "--user-data-dir", folders.userData,
      "--extensions-dir", folders.extensions,
      "--config", folders.config,
      "--bind-addr", `127.0.0.1:${port}`,
      "--auth", "none",
      "--disable-telemetry",
      "--disable-update-check",
      "--disable-workspace-trust",
      "--disable-getting-started-override",
      "--ignore-last-opened",
      // A run whose test process died without stopping it stops by itself once no browser is connected.
      "--idle-timeout-seconds", "600",
      workspace,
    ],
    // detached: the child leads a new process group (setsid), which stop() signals as a whole.
    { env: environment(tools, folders), detached: true, stdio: ["ignore", log, log] },
  );
  closeSync(log);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const pid = child.pid;
  if (pid === undefined) throw new Error("code-server did not start");

  const stop = async () => {
    const groupAlive = () => {
      try {
        process.kill(-pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    if (!groupAlive()) return;
    process.kill(-pid, "SIGTERM");
    const deadline = Date.now() + 10_000;
    while (groupAlive() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    if (groupAlive()) process.kill(-pid, "SIGKILL");
    await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 2_000))]);
  };

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`code-server exited with code ${child.exitCode} before answering; see ${folders.log}`);
    try {
      const response = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (response.ok) break;
    } catch {
      // Not listening yet.
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`code-server did not answer ${url}/healthz within 60 s; see ${folders.log}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return { url, process: child, stop };
}
