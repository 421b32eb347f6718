import { existsSync, mkdirSync, readFileSync, realpathSync, renameSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { stateToSeal } from "@vigil/runtime";
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

/** The guard options of the hook's command line. */
export interface HookGuardArguments {
  readonly off: boolean;
  readonly protect: readonly string[];
  readonly unknownCommands?: "ask" | "block";
}

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

/** The `sandbox` settings Vigil writes. */
export interface SandboxSettings {
  readonly enabled: true;
  readonly failIfUnavailable: true;
  readonly allowUnsandboxedCommands: false;
  readonly autoAllowBashIfSandboxed: false;
  readonly filesystem: { readonly denyWrite: string[]; readonly denyRead: string[] };
  readonly network?: { readonly httpProxyPort: number; readonly socksProxyPort: number };
}

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
  snapshotBlob?: string,
  relay?: { readonly script: string; readonly socket: (words: readonly string[], database: string) => { readonly path: string } | { readonly problem: string } },
): { permissions: { deny: string[] }; hooks: Record<string, object[]>; sandbox: SandboxSettings } {
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
    const state = stateToSeal(database);
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
  // The hook daemon, where its socket can be kept out of the sandbox's reach (hook-daemon.ts).
  const socket = parsed.server === undefined && relay !== undefined ? relay.socket(words.slice(1), databasePath(parsed, cwd, env)) : undefined;
  const daemon = socket !== undefined && "path" in socket && relay !== undefined ? { script: relay.script, socket: socket.path } : undefined;
  if (daemon !== undefined) words.push("--daemon");
  const command = hookCommand(words, parsed.server === undefined ? snapshotBlob : undefined, daemon);

  const hooks: Record<string, object[]> = {};
  // The relay to a sidecar gives up before Claude Code's 30 s, so that a late answer is a refusal the hook makes.
  for (const [event, tools] of EVENTS) hooks[event] = [{ ...(tools ? { matcher: "*" } : {}), hooks: [{ type: "command", command, timeout: 30 }] }];

  const home = env["HOME"] !== undefined && env["HOME"] !== "" ? env["HOME"] : homedir();
  writeProtected.push(
    ...guard.protect.map((path) => ({ path: absolute(path), tree: true })),
    ...codePaths,
    { path: join(project, ".claude", "settings.json"), tree: false },
    { path: join(project, ".claude", "settings.local.json"), tree: false },
    // The user's settings, the transcripts, the shell snapshots.
    { path: join(home, ".claude"), tree: true },
  );
  const deny = [
    ...writeProtected.flatMap((p) => (p.tree ? [`Edit(/${p.path})`, `Edit(/${p.path}/**)`] : [`Edit(/${p.path})`])),
    ...readProtected.flatMap((p) => (p.tree ? [`Read(/${p.path})`, `Read(/${p.path}/**)`] : [`Read(/${p.path})`])),
    ...["vigilc hook", "vigilc serve", "vigilc audit", "vigilc egress", "npx vigilc hook", "npx vigilc serve", "npx vigilc audit", "npx vigilc egress"].map((prefix) => `Bash(${prefix}:*)`),
  ];
  const sandbox: SandboxSettings = {
    enabled: true,
    // No sandbox, no session: a shell command never runs outside it.
    failIfUnavailable: true,
    allowUnsandboxedCommands: false,
    // Being in the sandbox is no reason to stop asking: Claude Code's permission rules decide a
    // shell command as they did without Vigil (its default would allow every sandboxed one).
    autoAllowBashIfSandboxed: false,
    filesystem: {
      denyWrite: unique(writeProtected.map((p) => p.path)),
      denyRead: unique(readProtected.map((p) => p.path)),
    },
    ...(parsed.egress !== undefined ? { network: { httpProxyPort: parsed.egress.httpPort, socksProxyPort: parsed.egress.socksPort } } : {}),
  };
  return { permissions: { deny: unique(deny) }, hooks, sandbox };
}

/** The exit codes of a hook that answered: 0 (an answer on standard output, or none) and 2 (refused). */
const ANSWERED = ["0", "2"];
/** The relay's exit code for the daemon's answer with exit code 1 (hook-relay.cts): answered too. */
const RELAYED_NOT_BLOCKING = "71";

/**
 * The hook's command line: `node vigilc.js hook claude-code …`, or, with the hook's startup snapshot
 * (hook-snapshot.ts), that command line started from the snapshot, and the plain one on the same
 * input when the first exits with anything but 0 or 2. Node.js exits with another code, before it
 * reads the input, when it cannot use the snapshot (missing, damaged, built by another Node.js),
 * and so does the snapshot when it is not what the plain command would run: the call is then
 * answered the normal way, never let through because the fast way was not there. (Should the first
 * fail after reading the input, the plain command reads none and refuses the call.)
 *
 * With a `daemon`, the relay to the hook daemon (hook-relay.cts, hook-daemon.ts) comes first, the
 * same way: it answers (0, 2, or its code for a non-blocking failure), or exits with another code
 * before reading the input (no daemon serves), and the command line goes on as above.
 */
export function hookCommand(words: readonly string[], snapshotBlob?: string, daemon?: { readonly script: string; readonly socket: string }): string {
  const answered = (codes: readonly string[]) => `s=$?; ${codes.map((code) => `[ $s = ${code} ]`).join(" || ")} && exit $s`;
  const plain = [process.execPath, vigilcScript(), ...words].map(shellQuote).join(" ");
  const relay = daemon !== undefined ? `${[process.execPath, daemon.script, daemon.socket].map(shellQuote).join(" ")}; ${answered([...ANSWERED, RELAYED_NOT_BLOCKING])}; ` : "";
  if (snapshotBlob === undefined) return relay === "" ? plain : `${relay}exec ${plain}`;
  const fast = [process.execPath, "--snapshot-blob", snapshotBlob, vigilcScript(), ...words].map(shellQuote).join(" ");
  return `${relay}${fast}; ${answered(ANSWERED)}; exec ${plain}`;
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
 * Writes the settings into `file` (the project's `.claude/settings.json` by default), keeping what
 * else it holds and never loosening it: other hooks stay (an earlier Vigil hook is replaced); deny
 * rules are added; the sandbox keeps the user's own settings, its lists of paths joined with
 * Vigil's, with Vigil's switches on top. What the boundary cannot keep is refused rather than
 * dropped: a list of network domains (the egress proxy replaces Claude Code's, so the domains must
 * become a rule over `net`), commands excluded from the sandbox (they would run outside it), and
 * the switches that weaken it (all Unix sockets, nested user namespaces, the weaker nested sandbox).
 * A sandbox already on, whose proxy asks the user about each new domain, is replaced by Vigil's
 * proxy (which asks no one) only with `replaceNetwork`. The database's directory is created, so that the sandbox has a path to protect. Returns the
 * file written, or why it was not.
 */
export function installSettings(
  settings: ReturnType<typeof claudeCodeSettings>,
  file: string,
  database: string | undefined,
  options: { readonly replaceNetwork?: boolean } = {},
): { readonly written: string } | { readonly problem: string } {
  let existing: Record<string, unknown> = {};
  if (existsSync(file)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(file, "utf8"));
    } catch (error) {
      return { problem: `${file} is not JSON (${(error as Error).message})` };
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return { problem: `${file} does not hold a JSON object` };
    existing = parsed as Record<string, unknown>;
  }
  const sandbox = objectAt(existing, "sandbox");
  const network = objectAt(sandbox, "network");
  for (const key of ["allowedDomains", "deniedDomains"]) {
    if (Array.isArray(network[key]) && network[key].length > 0) {
      return { problem: `${file} lists sandbox.network.${key}, which Vigil's egress proxy would replace: write them as a rule over \`net\` and its \`host\` in the policy, remove them, and install again` };
    }
  }
  // A sandbox already on, with Claude Code's own proxy, asks the user about each new domain; Vigil's
  // proxy decides them by the policy and asks no one. Only the user may trade the one for the other.
  if (sandbox["enabled"] === true && network["httpProxyPort"] === undefined && settings.sandbox.network !== undefined && options.replaceNetwork !== true) {
    return {
      problem: `${file} already turns Claude Code's sandbox on, whose proxy asks you about each new domain; Vigil's egress proxy would decide every connection by the policy instead, asking no one. Write the domains you allow as a rule over \`net\` and its \`host\`, then install again with --replace-network`,
    };
  }
  if (Array.isArray(sandbox["excludedCommands"]) && sandbox["excludedCommands"].length > 0) {
    return { problem: `${file} lists sandbox.excludedCommands, which would run outside the sandbox and past the boundary: remove them, and install again` };
  }
  // Each of these lets a sandboxed command undo the sandbox's read-only mounts or reach past it.
  for (const [where, key] of [[sandbox, "enableWeakerNestedSandbox"], [sandbox, "allowNestedUserNamespaces"], [network, "allowAllUnixSockets"]] as const) {
    if (where[key] === true) return { problem: `${file} sets sandbox${where === network ? ".network" : ""}.${key}, which would let a sandboxed command past the boundary: remove it, and install again` };
  }
  const hooks = { ...(objectAt(existing, "hooks") as Record<string, unknown[]>) };
  for (const [event, entries] of Object.entries(settings.hooks)) {
    const kept = (Array.isArray(hooks[event]) ? hooks[event] : []).filter((entry) => !JSON.stringify(entry).includes(" hook claude-code"));
    hooks[event] = [...kept, ...entries];
  }
  const permissions = objectAt(existing, "permissions");
  const ours = settings.sandbox;
  const filesystem = objectAt(sandbox, "filesystem");
  const lists = (key: string, add: readonly string[]) => unique([...(Array.isArray(filesystem[key]) ? (filesystem[key] as string[]) : []), ...add]);
  const written = {
    ...existing,
    permissions: { ...permissions, deny: unique([...(Array.isArray(permissions["deny"]) ? (permissions["deny"] as string[]) : []), ...settings.permissions.deny]) },
    hooks,
    sandbox: {
      ...sandbox,
      ...ours,
      filesystem: { ...filesystem, denyWrite: lists("denyWrite", ours.filesystem.denyWrite), denyRead: lists("denyRead", ours.filesystem.denyRead) },
      ...(ours.network !== undefined ? { network: { ...network, ...ours.network } } : {}),
    },
  };
  if (database !== undefined) mkdirSync(dirname(database), { recursive: true });
  mkdirSync(dirname(file), { recursive: true });
  // Written whole or not at all: a torn settings file would leave Claude Code without the hook.
  const temporary = `${file}.vigil-${process.pid}`;
  writeFileSync(temporary, JSON.stringify(written, null, 2) + "\n");
  renameSync(temporary, file);
  return { written: file };
}

/** The object under `key`, or an empty one. */
function objectAt(record: Record<string, unknown>, key: string): Record<string, unknown> {
  const value = record[key];
  return typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
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
