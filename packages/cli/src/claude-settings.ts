import { realpathSync } from "node:fs";
import { dirname, join, posix, resolve } from "node:path";
import type { HookGuardArguments } from "./hook.js";

/**
 * `vigilc hook claude-code --print-settings`: the Claude Code settings (`.claude/settings.json`, or
 * the managed settings of a machine) that install the hook with the options given, on every event
 * it handles and every tool, and that deny Claude Code's own tools the files Vigil protects
 * (`permissions.deny`: `Edit(…)` rules cover every tool that edits files, `Read(…)` the token). The
 * guard refuses the same in the hook; the deny rules are Claude Code's own second line, which
 * holds even for a call the hook never sees.
 */

interface SettingsArguments {
  readonly policies: readonly string[];
  readonly db?: string;
  readonly server?: string;
  readonly tokenFile?: string;
  readonly explicitAllow: boolean;
  readonly guard?: HookGuardArguments;
}

/** The events the hook handles, and whether each names a tool (and takes the matcher `*`). */
const EVENTS: readonly [string, boolean][] = [
  ["PreToolUse", true],
  ["PostToolUse", true],
  ["PostToolUseFailure", true],
  ["UserPromptSubmit", false],
  ["Stop", false],
  ["SubagentStop", false],
  ["SessionEnd", false],
];

export function claudeCodeSettings(parsed: SettingsArguments, cwd: string, env: Readonly<Record<string, string | undefined>>): object {
  const project = env["CLAUDE_PROJECT_DIR"] !== undefined && env["CLAUDE_PROJECT_DIR"] !== "" ? resolve(cwd, env["CLAUDE_PROJECT_DIR"]) : cwd;
  const absolute = (path: string) => resolve(cwd, path);
  const guard = parsed.guard ?? { off: false, protect: [] };
  // The command names the paths absolutely: a hook runs in whatever directory the session is in.
  const words = ["hook", "claude-code"];
  let protectedFiles: string[];
  if (parsed.server !== undefined) {
    const tokenFile = parsed.tokenFile !== undefined ? absolute(parsed.tokenFile) : join(project, ".vigil", "sidecar.token");
    words.push("--server", parsed.server, "--token-file", tokenFile);
    protectedFiles = [tokenFile];
  } else {
    const policies = parsed.policies.map(absolute);
    const database = parsed.db !== undefined ? absolute(parsed.db) : join(project, ".vigil", "audit.db");
    words.push("--policy", ...policies, ...(parsed.db !== undefined ? ["--db", database] : []));
    const databaseFiles = posix.basename(dirname(database)) === ".vigil" ? [`${dirname(database)}/**`] : ["", "-wal", "-shm", "-journal"].map((suffix) => `${database}${suffix}`);
    protectedFiles = [...databaseFiles, ...policies];
  }
  if (parsed.explicitAllow) words.push("--explicit-allow");
  if (guard.off) words.push("--no-guard");
  if (guard.protect.length > 0) words.push("--protect", ...guard.protect.map(absolute));
  if (guard.unknownCommands !== undefined) words.push("--unknown-commands", guard.unknownCommands);
  const command = [process.execPath, vigilcScript(), ...words].map(shellQuote).join(" ");

  const hooks: Record<string, object[]> = {};
  for (const [event, tools] of EVENTS) hooks[event] = [{ ...(tools ? { matcher: "*" } : {}), hooks: [{ type: "command", command, timeout: 30 }] }];
  const edit = [
    ...protectedFiles,
    ...guard.protect.flatMap((path) => [absolute(path), `${absolute(path)}/**`]),
    join(project, ".claude", "settings.json"),
    join(project, ".claude", "settings.local.json"),
  ].map((path) => `Edit(/${path})`);
  const deny = [
    ...edit,
    "Edit(~/.claude/settings.json)",
    "Edit(~/.claude/settings.local.json)",
    ...(parsed.server !== undefined ? [`Read(/${protectedFiles[0]!})`] : []),
    ...["vigilc hook", "vigilc serve", "vigilc audit", "npx vigilc hook", "npx vigilc serve", "npx vigilc audit"].map((prefix) => `Bash(${prefix}:*)`),
  ];
  return { permissions: { deny }, hooks };
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

/** A word for a POSIX shell: as it is when it is plain, else in single quotes. */
function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}
