import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, posix, resolve } from "node:path";
import type { HookGuardArguments } from "./hook.js";
import { shellQuote } from "./shell-words.js";

/**
 * `vigilc hook claude-code --print-settings` (and `--install`, which writes them): the Claude Code
 * settings that put the agent behind a boundary the operating system keeps, with the hook in the
 * call path:
 *
 * - `hooks`: the hook on every event it handles and every tool, and on `SessionStart`, where it
 *   starts the egress proxy;
 * - `sandbox`: every shell command runs in Claude Code's sandbox (bubblewrap on Linux), with no
 *   way out of it (`failIfUnavailable`, `allowUnsandboxedCommands: false`); it may not write the
 *   policy, Vigil's state, Vigil's code and every package it loads, the Node.js that runs it, the
 *   settings or the transcripts (`denyWrite`), nor read Vigil's state, tokens or key (`denyRead`);
 *   its only network is Vigil's egress proxy (`httpProxyPort`, `socksProxyPort`), where each
 *   connection is a `net` event the policy decides;
 * - `permissions.deny`: the same paths for Claude Code's own tools, which the sandbox does not
 *   cover (`Edit(…)` covers every tool that edits files, `Read(…)` the secrets).
 *
 * Hooks run outside the sandbox: what they read (the key file, the token) stays beyond the agent.
 */

export interface SettingsArguments {
  readonly policies: readonly string[];
  readonly db?: string;
  readonly server?: string;
  readonly tokenFile?: string;
  readonly explicitAllow: boolean;
  readonly guard?: HookGuardArguments;
  readonly egress?: { readonly httpPort: number; readonly socksPort: number };
  readonly auditKeyFile?: string;
}

/** The events the hook handles, and whether each names a tool (and takes the matcher `*`). */
const EVENTS: readonly [string, boolean][] = [
  ["SessionStart", false],
  ["PreToolUse", true],
  ["PostToolUse", true],
  ["PostToolUseFailure", true],
  ["UserPromptSubmit", false],
  ["Stop", false],
  ["SubagentStop", false],
  ["SessionEnd", false],
];

/** A protected path, and whether it is a directory protected with everything in it. */
interface Protected {
  readonly path: string;
  readonly tree: boolean;
}

export function claudeCodeSettings(
  parsed: SettingsArguments,
  cwd: string,
  env: Readonly<Record<string, string | undefined>>,
  codePaths: readonly Protected[],
): { permissions: { deny: string[] }; hooks: Record<string, object[]>; sandbox: object } {
  const project = projectDirectory(cwd, env);
  const absolute = (path: string) => resolve(cwd, path);
  const guard = parsed.guard ?? { off: false, protect: [] };
  // The command names the paths absolutely: a hook runs in whatever directory the session is in.
  const words = ["hook", "claude-code"];
  const writeProtected: Protected[] = [];
  const readProtected: Protected[] = [];
  if (parsed.server !== undefined) {
    const tokenFile = parsed.tokenFile !== undefined ? absolute(parsed.tokenFile) : join(project, ".vigil", "sidecar.token");
    words.push("--server", parsed.server, "--token-file", tokenFile);
    writeProtected.push({ path: tokenFile, tree: false });
    readProtected.push({ path: tokenFile, tree: false });
  } else {
    const policies = parsed.policies.map(absolute);
    const database = databasePath(parsed, cwd, env);
    words.push("--policy", ...policies, ...(parsed.db !== undefined ? ["--db", database] : []));
    const state: Protected[] =
      posix.basename(dirname(database)) === ".vigil" ? [{ path: dirname(database), tree: true }] : ["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${database}${suffix}`, tree: false }));
    writeProtected.push(...state, ...policies.map((path) => ({ path, tree: false })));
    readProtected.push(...state);
  }
  if (parsed.egress !== undefined) words.push("--egress", `${parsed.egress.httpPort}:${parsed.egress.socksPort}`);
  if (parsed.auditKeyFile !== undefined) {
    const keyFile = absolute(parsed.auditKeyFile);
    words.push("--audit-key-file", keyFile);
    writeProtected.push({ path: keyFile, tree: false });
    readProtected.push({ path: keyFile, tree: false });
  }
  if (parsed.explicitAllow) words.push("--explicit-allow");
  if (guard.off) words.push("--no-guard");
  if (guard.protect.length > 0) words.push("--protect", ...guard.protect.map(absolute));
  if (guard.unknownCommands !== undefined) words.push("--unknown-commands", guard.unknownCommands);
  const command = [process.execPath, vigilcScript(), ...words].map(shellQuote).join(" ");

  const hooks: Record<string, object[]> = {};
  // The relay to a sidecar gives up before Claude Code's 30 s, so that a late answer is a refusal the hook makes.
  for (const [event, tools] of EVENTS) hooks[event] = [{ ...(tools ? { matcher: "*" } : {}), hooks: [{ type: "command", command, timeout: 30 }] }];

  const home = env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : homedir();
  writeProtected.push(
    ...guard.protect.map((path) => ({ path: absolute(path), tree: true })),
    ...codePaths,
    { path: join(project, ".claude", "settings.json"), tree: false },
    { path: join(project, ".claude", "settings.local.json"), tree: false },
    // The user's settings, the transcripts the hook may rebuild a run from, the shell snapshots.
    { path: join(home, ".claude"), tree: true },
  );
  const deny = [
    ...writeProtected.flatMap((p) => (p.tree ? [`Edit(/${p.path})`, `Edit(/${p.path}/**)`] : [`Edit(/${p.path})`])),
    ...readProtected.flatMap((p) => (p.tree ? [`Read(/${p.path})`, `Read(/${p.path}/**)`] : [`Read(/${p.path})`])),
    ...["vigilc hook", "vigilc serve", "vigilc audit", "vigilc egress", "npx vigilc hook", "npx vigilc serve", "npx vigilc audit", "npx vigilc egress"].map((prefix) => `Bash(${prefix}:*)`),
  ];
  const sandbox = {
    enabled: true,
    // No sandbox, no session: a shell command never runs outside it.
    failIfUnavailable: true,
    allowUnsandboxedCommands: false,
    filesystem: {
      denyWrite: unique(writeProtected.map((p) => p.path)),
      denyRead: unique(readProtected.map((p) => p.path)),
    },
    ...(parsed.egress !== undefined ? { network: { httpProxyPort: parsed.egress.httpPort, socksProxyPort: parsed.egress.socksPort } } : {}),
  };
  return { permissions: { deny: unique(deny) }, hooks, sandbox };
}

/** The project: `CLAUDE_PROJECT_DIR`, else the working directory. */
function projectDirectory(cwd: string, env: Readonly<Record<string, string | undefined>>): string {
  return env["CLAUDE_PROJECT_DIR"] !== undefined && env["CLAUDE_PROJECT_DIR"] !== "" ? resolve(cwd, env["CLAUDE_PROJECT_DIR"]) : cwd;
}

/** The enforcement database the hook will use. */
export function databasePath(parsed: Pick<SettingsArguments, "db">, cwd: string, env: Readonly<Record<string, string | undefined>>): string {
  return parsed.db !== undefined ? resolve(cwd, parsed.db) : join(projectDirectory(cwd, env), ".vigil", "audit.db");
}

/**
 * Writes the settings into `file` (the project's `.claude/settings.json` by default), keeping
 * what else it holds: other hooks stay (an earlier Vigil hook is replaced), deny rules are added,
 * the sandbox's settings are Vigil's. The database's directory is created, so that the sandbox
 * has a path to protect. Returns the file written.
 */
export function installSettings(settings: ReturnType<typeof claudeCodeSettings>, file: string, database: string | undefined): string {
  let existing: Record<string, unknown> = {};
  if (existsSync(file)) {
    const parsed = JSON.parse(readFileSync(file, "utf8")) as unknown;
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new Error(`${file} does not hold a JSON object`);
    existing = parsed as Record<string, unknown>;
  }
  const hooks = { ...((existing["hooks"] as Record<string, unknown[]> | undefined) ?? {}) };
  for (const [event, entries] of Object.entries(settings.hooks)) {
    const kept = (hooks[event] ?? []).filter((entry) => !JSON.stringify(entry).includes(" hook claude-code"));
    hooks[event] = [...kept, ...entries];
  }
  const permissions = { ...((existing["permissions"] as Record<string, unknown> | undefined) ?? {}) };
  permissions["deny"] = unique([...((permissions["deny"] as string[] | undefined) ?? []), ...settings.permissions.deny]);
  const written = { ...existing, permissions, hooks, sandbox: settings.sandbox };
  if (database !== undefined) mkdirSync(dirname(database), { recursive: true });
  mkdirSync(dirname(file), { recursive: true });
  // Written whole or not at all: a torn settings file would leave Claude Code without the hook.
  const temporary = `${file}.vigil-${process.pid}`;
  writeFileSync(temporary, JSON.stringify(written, null, 2) + "\n");
  renameSync(temporary, file);
  return file;
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}

/** The script this `vigilc` runs from (so that the hook runs this very installation). */
function vigilcScript(): string {
  const script = process.argv[1] ?? "vigilc";
  try {
    return realpathSync(script);
  } catch {
    return script;
  }
}
