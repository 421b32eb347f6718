import type { HookGuardArguments } from "./claude-settings.js";
import type { CliIo } from "../io.js";

/**
 * `vigilc hook claude-code --policy FILE… [--db PATH] [--explicit-allow]`: one run of a Claude Code
 * command hook (the event on standard input, the answer on standard output and in the exit code).
 *
 * Claude Code starts the hook for every tool call, so this path loads only what a decision needs:
 * not the command tree and its renderers (the `vigilc` entry sends `hook` here directly), and not
 * the compiler, whose checked program of the policy is read from the database after the first run.
 */

const USAGE = `usage: vigilc hook claude-code --policy FILE… [--db PATH] [--explicit-allow] [guard options]
       vigilc hook claude-code --server URL [--token-file FILE] [--explicit-allow]
       vigilc hook claude-code --print-settings | --install [--settings FILE] (with the options above)

Runs as a Claude Code command hook: reads the hook's event (JSON) on standard input and answers on
standard output. Handles PreToolUse (allow, ask or deny the call), PostToolUse and
PostToolUseFailure (record the result), UserPromptSubmit (record the prompt), Stop and
SubagentStop (hold back a stop while a rule waits for a call), SessionEnd (log the verdicts).

options:
  --policy FILE…    the policy (.vigil files)
  --db PATH         the enforcement database (default: $CLAUDE_PROJECT_DIR/.vigil/audit.db)
  --server URL      pass the event to a running \`vigilc serve\` (http://127.0.0.1:PORT, or unix:/path/to.sock),
                    which answers it with its policy and database: the hook's process then loads almost nothing
  --token-file FILE with --server: the file holding the sidecar's token (its admin or hook token)
                    (default: $CLAUDE_PROJECT_DIR/.vigil/sidecar.token, else .vigil/sidecar.token here)
  --explicit-allow  answer \`allow\` when no rule objects, which skips Claude Code's own permission prompt
                    (by default the hook answers nothing then, and Claude Code's permission rules decide)
  --egress HTTP:SOCKS
                    the egress proxy's ports: when a session starts, the hook starts \`vigilc egress\` there
                    (unless it runs), and every connection of a sandboxed command is decided as a \`net\` event
  --audit-key-file FILE
                    the audit chain's key, read from this file (which the sandbox may not read), instead of
                    VIGIL_AUDIT_KEY (which every shell command of the agent would inherit)
  --daemon          keep a hook daemon for these options running (started in the background when none
                    answered; its socket in the database's \`.vigil\` directory): the command line --install
                    writes asks it first, through a relay that loads almost nothing, and runs this hook when
                    none answers (--serve-daemon: be that daemon, as the hook starts it)
  --print-settings  print the Claude Code settings that install this hook (every event, with the options
                    given), the sandbox around every shell command (no write to what enforces the policy,
                    no network but the egress proxy) and deny rules for Claude Code's own tools; read no event
  --install         write those settings into the project's .claude/settings.json (or --settings FILE),
                    keeping what else it holds; with no --egress, two free ports are chosen
  --replace-network with --install, where the sandbox is already on: let Vigil's egress proxy (which decides
                    each connection by the policy) replace Claude Code's (which asks you about each new domain)
  -h, --help        show this help

guard options (the guard refuses calls that would change Vigil's database, policy, code or Claude
Code's settings, or whose commands cannot be known, whatever the policy says):
  --protect PATH…   protect more paths (a directory with everything in it)
  --unknown-commands ask|block
                    what a call whose commands cannot be known gets (default: block)
  --no-guard        turn the guard off (every decision's audit record says so)

environment:
  VIGIL_AUDIT_KEY   key of the audit chain (HMAC-SHA-256); the database must be created with it

Any failure refuses the call: exit code 2 and the reason on standard error.
`;

interface HookArguments {
  readonly agent: string | undefined;
  readonly policies: string[];
  readonly db?: string;
  readonly server?: string;
  readonly tokenFile?: string;
  readonly explicitAllow: boolean;
  readonly help: boolean;
  readonly problem?: string;
  readonly printSettings?: boolean;
  readonly install?: boolean;
  readonly replaceNetwork?: boolean;
  readonly settingsFile?: string;
  readonly egress?: { readonly httpPort: number; readonly socksPort: number };
  readonly auditKeyFile?: string;
  readonly guard?: HookGuardArguments;
  /** Keep a hook daemon for these options (started in the background when none answered), which the installed relay asks first. */
  readonly daemon?: boolean;
  /** Be that daemon (hook-daemon.ts): started by the hook itself, not by hand. */
  readonly serveDaemon?: boolean;
}


export function parseHookArguments(argv: readonly string[]): HookArguments {
  const policies: string[] = [];
  let db: string | undefined;
  let server: string | undefined;
  let tokenFile: string | undefined;
  let agent: string | undefined;
  let explicitAllow = false;
  let help = false;
  let printSettings = false;
  let install = false;
  let replaceNetwork = false;
  let settingsFile: string | undefined;
  let egress: { httpPort: number; socksPort: number } | undefined;
  let auditKeyFile: string | undefined;
  let guardOff = false;
  const protect: string[] = [];
  let unknownCommands: "ask" | "block" | undefined;
  let daemon = false;
  let serveDaemon = false;
  for (let index = 0; index < argv.length; index++) {
    const word = argv[index]!;
    const [flag, inline] = word.startsWith("--") && word.includes("=") ? [word.slice(0, word.indexOf("=")), word.slice(word.indexOf("=") + 1)] : [word, undefined];
    if (flag === "--policy") {
      if (inline !== undefined) policies.push(inline);
      // Every following word up to the next option is a policy file.
      while (index + 1 < argv.length && !argv[index + 1]!.startsWith("-")) policies.push(argv[++index]!);
      if (inline === undefined && policies.length === 0) return { agent, policies, explicitAllow, help, problem: "--policy needs at least one file" };
    } else if (flag === "--db") {
      db = inline ?? argv[++index];
      if (db === undefined || db === "") return { agent, policies, explicitAllow, help, problem: "--db needs a path" };
    } else if (flag === "--server") {
      server = inline ?? argv[++index];
      if (server === undefined || !(/^http:\/\/(127\.0\.0\.1|localhost|\[::1\]):\d+\/?$/.test(server) || /^unix:./.test(server))) {
        return { agent, policies, explicitAllow, help, problem: "--server takes the sidecar's local URL, http://127.0.0.1:PORT or unix:/path/to.sock" };
      }
    } else if (flag === "--token-file") {
      tokenFile = inline ?? argv[++index];
      if (tokenFile === undefined || tokenFile === "") return { agent, policies, explicitAllow, help, problem: "--token-file needs a path" };
    } else if (flag === "--protect") {
      if (inline !== undefined) protect.push(inline);
      while (index + 1 < argv.length && !argv[index + 1]!.startsWith("-")) protect.push(argv[++index]!);
      if (protect.length === 0) return { agent, policies, explicitAllow, help, problem: "--protect needs at least one path" };
    } else if (flag === "--unknown-commands") {
      const value = inline ?? argv[++index];
      if (value !== "ask" && value !== "block") return { agent, policies, explicitAllow, help, problem: "--unknown-commands takes ask or block" };
      unknownCommands = value;
    } else if (flag === "--no-guard") guardOff = true;
    else if (flag === "--print-settings") printSettings = true;
    else if (flag === "--install") install = true;
    else if (flag === "--replace-network") replaceNetwork = true;
    else if (flag === "--settings") {
      settingsFile = inline ?? argv[++index];
      if (settingsFile === undefined || settingsFile === "") return { agent, policies, explicitAllow, help, problem: "--settings needs a file" };
    } else if (flag === "--audit-key-file") {
      auditKeyFile = inline ?? argv[++index];
      if (auditKeyFile === undefined || auditKeyFile === "") return { agent, policies, explicitAllow, help, problem: "--audit-key-file needs a file" };
    } else if (flag === "--egress") {
      const value = inline ?? argv[++index] ?? "";
      const ports = /^(\d{1,5}):(\d{1,5})$/.exec(value);
      const [httpPort, socksPort] = ports !== null ? [Number(ports[1]), Number(ports[2])] : [0, 0];
      if (!(httpPort > 0 && httpPort < 65536 && socksPort > 0 && socksPort < 65536 && httpPort !== socksPort)) {
        return { agent, policies, explicitAllow, help, problem: "--egress takes the proxy's two ports, HTTP:SOCKS (two different ports from 1 to 65535)" };
      }
      egress = { httpPort, socksPort };
    }
    else if (flag === "--explicit-allow") explicitAllow = true;
    else if (flag === "--daemon") daemon = true;
    else if (flag === "--serve-daemon") serveDaemon = true;
    else if (flag === "--defer-allowed") {
      // What earlier versions needed to leave allowed calls to Claude Code; it is now the default.
    }
    else if (flag === "-h" || flag === "--help") help = true;
    else if (!word.startsWith("-") && agent === undefined) agent = word;
    else return { agent, policies, explicitAllow, help, problem: `unknown option \`${word}\`` };
  }
  return {
    agent,
    policies,
    ...(db !== undefined ? { db } : {}),
    ...(server !== undefined ? { server } : {}),
    ...(tokenFile !== undefined ? { tokenFile } : {}),
    explicitAllow,
    help,
    ...(printSettings ? { printSettings } : {}),
    ...(install ? { install } : {}),
    ...(replaceNetwork ? { replaceNetwork } : {}),
    ...(settingsFile !== undefined ? { settingsFile } : {}),
    ...(egress !== undefined ? { egress } : {}),
    ...(auditKeyFile !== undefined ? { auditKeyFile } : {}),
    guard: { off: guardOff, protect, ...(unknownCommands !== undefined ? { unknownCommands } : {}) },
    ...(daemon ? { daemon } : {}),
    ...(serveDaemon ? { serveDaemon } : {}),
  };
}

/** Runs `vigilc hook …` (`argv` starts with `hook`) and returns the exit code. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseHookArguments(argv.slice(1));
  if (parsed.help) {
    io.stdout(USAGE);
    return 0;
  }
  // A hook that cannot run refuses: exit code 2 is what Claude Code treats as blocking.
  const usageError = (message: string): number => {
    io.stderr(`error: ${message}; the call is refused\n${USAGE}`);
    return 2;
  };
  if (parsed.problem !== undefined) return usageError(parsed.problem);
  if (parsed.agent !== "claude-code") return usageError(parsed.agent === undefined ? "name the agent whose hook this is: `vigilc hook claude-code`" : `no hook for \`${parsed.agent}\` (there is one for claude-code)`);
  const guard = parsed.guard ?? { off: false, protect: [] };
  if (parsed.server !== undefined && (guard.off || guard.protect.length > 0 || guard.unknownCommands !== undefined)) {
    return usageError("with --server, the sidecar's guard applies: give the guard options to `vigilc serve`");
  }
  if (parsed.server !== undefined && (parsed.daemon === true || parsed.serveDaemon === true)) {
    return usageError("--daemon is for a hook that answers with its own policy: with --server, the sidecar is the long-running process");
  }
  if (parsed.printSettings === true || parsed.install === true) {
    // Settings whose hook has no policy would refuse every call of the agent.
    if (parsed.policies.length === 0 && parsed.server === undefined) {
      io.stderr(`error: --policy FILE (or --server URL) is required: it is what the installed hook enforces\n${USAGE}`);
      return 2;
    }
    return settingsCommand(parsed, io);
  }
  if (parsed.settingsFile !== undefined) return usageError("--settings goes with --install");
  if (io.stdin === undefined) return usageError("the hook reads its event on standard input, which this caller does not provide");
  if (parsed.server !== undefined) {
    if (parsed.policies.length > 0 || parsed.db !== undefined) return usageError("with --server, the sidecar's policy and database apply: give no --policy or --db");
    const { join, resolve } = await import("node:path");
    const projectDir = process.env["CLAUDE_PROJECT_DIR"];
    const tokenFile =
      parsed.tokenFile !== undefined
        ? resolve(io.cwd, parsed.tokenFile)
        : join(projectDir !== undefined && projectDir !== "" ? resolve(io.cwd, projectDir) : io.cwd, ".vigil", "sidecar.token");
    return answerThroughSidecar(parsed.server, tokenFile, await io.stdin(), parsed.explicitAllow, io);
  }
  if (parsed.tokenFile !== undefined) return usageError("--token-file goes with --server (the token of the sidecar the event is passed to)");
  if (parsed.policies.length === 0) return usageError("--policy FILE (or --server URL) is required");
  const { resolve } = await import("node:path");
  const { ClaudeCodeHookHost } = await import("@vigil/runtime");
  const { databasePath } = await import("./claude-settings.js");
  const daemon = parsed.daemon === true || parsed.serveDaemon === true ? await import("./hook-daemon.js") : undefined;
  const socket = daemon?.daemonSocket(argv.slice(1), databasePath(parsed, io.cwd, process.env));
  if (parsed.serveDaemon === true) {
    if (daemon === undefined || socket === undefined || "problem" in socket) return usageError(`no hook daemon for these options: ${socket !== undefined && "problem" in socket ? socket.problem : "?"}`);
    return daemon.serveHookDaemon(socket.path, (event, context, host) => answerHookEvent(parsed, event, context, host), io);
  }
  const event = await io.stdin();
  const host = new ClaudeCodeHookHost();
  let answer;
  try {
    answer = await answerHookEvent(parsed, event, { cwd: io.cwd, env: process.env }, host);
  } finally {
    host.close();
  }
  // No daemon answered this event (the relay found none, or this hook ran without it): one is
  // started for the next ones. The event was answered the normal way already.
  if (daemon !== undefined && socket !== undefined && !("problem" in socket)) await daemon.ensureHookDaemon(argv.slice(1), socket.path, process.env);
  if (answer.stdout !== "") io.stdout(answer.stdout);
  if (answer.stderr !== "") io.stderr(answer.stderr);
  return answer.exitCode;
}

/**
 * Answers one event as the hook with these options does, in the working directory and with the
 * environment given (the hook process's own, or those of the process that relayed the event to
 * the daemon): at a session's start, the egress proxy is started when it is not running; then the
 * runtime answers, through `host`.
 */
export async function answerHookEvent(
  parsed: HookArguments,
  event: string,
  context: { readonly cwd: string; readonly env: Readonly<Record<string, string | undefined>> },
  host: import("@vigil/runtime").ClaudeCodeHookHost,
): Promise<import("@vigil/runtime").HookAnswer> {
  const { resolve } = await import("node:path");
  const { auditKey } = await import("./audit-key.js");
  const { databasePath } = await import("./claude-settings.js");
  const keyFile = parsed.auditKeyFile !== undefined ? resolve(context.cwd, parsed.auditKeyFile) : undefined;
  const key = auditKey(keyFile, context.env);
  if (typeof key === "object") {
    const reason = `Vigil cannot run its hook (${key.problem}); the call is refused.`;
    return { stdout: JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }) + "\n", stderr: reason + "\n", exitCode: 2 };
  }
  const database = databasePath(parsed, context.cwd, context.env);
  let note = "";
  if (parsed.egress !== undefined && hookEventName(event) === "SessionStart") {
    // The sandbox's only network is the egress proxy: it runs outside the sandbox, as the hook does.
    const { ensureEgressProxy } = await import("./egress.js");
    const problem = await ensureEgressProxy({
      policies: parsed.policies.map((file) => resolve(context.cwd, file)),
      db: database,
      ...parsed.egress,
      ...(keyFile !== undefined ? { keyFile } : {}),
      env: context.env,
    });
    // The session goes on without the proxy: its commands then have no network at all (closed).
    if (problem !== undefined) note = `Vigil's egress proxy is not serving this session: ${problem}\n`;
  }
  const beforeShellCall = parsed.egress !== undefined ? (await import("./egress-listener.js")).proxyIsOurs(parsed.egress, database) : undefined;
  const guard = parsed.guard ?? { off: false, protect: [] };
  const answer = await host.answer(event, {
    ...(beforeShellCall !== undefined ? { beforeShellCall } : {}),
    policyFiles: parsed.policies,
    ...(parsed.db !== undefined ? { db: parsed.db } : {}),
    ...(key !== undefined && key !== "" ? { key } : {}),
    explicitAllow: parsed.explicitAllow,
    env: context.env,
    cwd: context.cwd,
    guard: guard.off
      ? false
      : {
          protect: guard.protect.map((path) => ({ path: resolve(context.cwd, path), what: "a path protected with --protect", tree: true })),
          ...(guard.unknownCommands !== undefined ? { unknownCommands: guard.unknownCommands } : {}),
        },
  });
  return note === "" ? answer : { ...answer, stderr: note + answer.stderr };
}

/**
 * How long the sidecar may take to answer before the call is refused: well within Claude Code's
 * hook timeout (30 s in the printed settings), so that the refusal is the hook's answer and not a
 * timeout, which Claude Code treats as a hook that failed and lets the call run.
 */
const SIDECAR_TIMEOUT_MS = 20_000;

/** The event's \`hook_event_name\`, if it is a JSON object that has one. */
function hookEventName(event: string): string | undefined {
  // Read whole only when it may be a session's start: a tool's result can be long, and the runtime reads it anyway.
  if (!event.includes("SessionStart")) return undefined;
  try {
    const parsed = JSON.parse(event) as { hook_event_name?: unknown };
    return typeof parsed.hook_event_name === "string" ? parsed.hook_event_name : undefined;
  } catch {
    return undefined;
  }
}

/** \`--print-settings\` and \`--install\`. */
async function settingsCommand(parsed: HookArguments, io: CliIo): Promise<number> {
  const { claudeCodeSettings, databasePath, installSettings } = await import("./claude-settings.js");
  const { vigilCodePaths } = await import("@vigil/runtime");
  const { resolve, join, dirname } = await import("node:path");
  let egress = parsed.egress;
  if (egress === undefined && parsed.install === true) egress = await freePorts();
  // The hook starts from its startup snapshot where this install has one for this Node.js (built
  // with the install, or here); without, it runs the normal way.
  const snapshot = parsed.server === undefined ? await hookSnapshot(parsed.install === true) : undefined;
  const snapshotBlob = snapshot !== undefined && "blob" in snapshot ? snapshot.blob : undefined;
  const { daemonSocket, relayScript } = await import("./hook-daemon.js");
  const { existsSync } = await import("node:fs");
  const relay = existsSync(relayScript()) ? { script: relayScript(), socket: daemonSocket } : undefined;
  const settings = claudeCodeSettings(
    { ...parsed, ...(egress !== undefined ? { egress } : {}) },
    io.cwd,
    process.env,
    vigilCodePaths().map((p) => ({ path: p.path, tree: p.tree === true })),
    snapshotBlob,
    relay,
  );
  if (parsed.install !== true) {
    io.stdout(JSON.stringify(settings, null, 2) + "\n");
    return 0;
  }
  const project = process.env["CLAUDE_PROJECT_DIR"] !== undefined && process.env["CLAUDE_PROJECT_DIR"] !== "" ? resolve(io.cwd, process.env["CLAUDE_PROJECT_DIR"]) : io.cwd;
  const file = parsed.settingsFile !== undefined ? resolve(io.cwd, parsed.settingsFile) : join(project, ".claude", "settings.json");
  let installed;
  try {
    installed = installSettings(settings, file, parsed.server === undefined ? databasePath(parsed, io.cwd, process.env) : undefined, { replaceNetwork: parsed.replaceNetwork === true });
  } catch (error) {
    installed = { problem: (error as Error).message };
  }
  if ("problem" in installed) {
    io.stderr(`error: the settings were not installed: ${installed.problem}\n`);
    return 2;
  }
  io.stdout(
    `installed Vigil in ${file}: the hook on every event, every shell command in the sandbox` +
      (egress !== undefined ? ` with the egress proxy on 127.0.0.1:${egress.httpPort} (HTTP) and :${egress.socksPort} (SOCKS5)` : "") +
      `, deny rules for Claude Code's own tools\n`,
  );
  if (parsed.server === undefined) {
    const socket = relay === undefined ? { problem: `the relay ${relayScript()} is missing` } : daemonSocket(["claude-code"], databasePath(parsed, io.cwd, process.env));
    io.stdout("path" in socket ? `the hook answers through its daemon, started at the first event (socket in ${dirname(socket.path)})\n` : `the hook runs without a daemon (slower to answer): ${socket.problem}\n`);
  }
  if (snapshot !== undefined) {
    io.stdout("blob" in snapshot ? `the hook starts from its startup snapshot ${snapshot.blob}\n` : `the hook runs without a startup snapshot (slower to start): ${snapshot.problem}\n`);
  }
  // Relaying to a sidecar, the hook has no policy to start the proxy with: whoever runs the sidecar runs it too.
  if (parsed.server !== undefined && egress !== undefined) {
    io.stdout(`the sandbox's only network is the egress proxy: run \`vigilc egress --policy FILE… --db DB --http-port ${egress.httpPort} --socks-port ${egress.socksPort}\` beside the sidecar, with its policy and database; until then sandboxed commands have no network\n`);
  }
  return 0;
}

/**
 * This install's startup snapshot of the hook for this Node.js, up to date (see hook-snapshot.ts);
 * with `build`, built when it is missing or out of date, where the install can build it (a checkout
 * with its dev dependencies: packages/cli/scripts/build-hook-snapshot.mjs and esbuild).
 */
async function hookSnapshot(build: boolean): Promise<{ readonly blob: string } | { readonly problem: string }> {
  // The command line that falls back to the normal path is a POSIX shell's.
  if (process.platform === "win32") return { problem: "not on Windows" };
  const { usableHookSnapshot } = await import("./hook-snapshot.js");
  const usable = usableHookSnapshot();
  if ("blob" in usable || !build) return usable;
  const { existsSync } = await import("node:fs");
  const { fileURLToPath } = await import("node:url");
  const builder = fileURLToPath(new URL("../../scripts/build-hook-snapshot.mjs", import.meta.url));
  if (!existsSync(builder)) return usable;
  const { spawnSync } = await import("node:child_process");
  const built = spawnSync(process.execPath, [builder, "--quiet"], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  if (built.status !== 0) return { problem: `${usable.problem}; building it failed: ${(built.stderr ?? "").trim().replace(/^error: /, "")}` };
  return usableHookSnapshot();
}

/** Two ports free on 127.0.0.1 now, for the egress proxy. */
async function freePorts(): Promise<{ httpPort: number; socksPort: number }> {
  const { createServer } = await import("node:net");
  const one = (): Promise<{ port: number; close: () => void }> =>
    new Promise((resolvePromise, reject) => {
      const server = createServer();
      server.once("error", reject);
      server.listen(0, "127.0.0.1", () => resolvePromise({ port: (server.address() as { port: number }).port, close: () => server.close() }));
    });
  const [http, socks] = [await one(), await one()];
  http.close();
  socks.close();
  return { httpPort: http.port, socksPort: socks.port };
}

/**
 * Passes the event to the sidecar, with the token from `tokenFile`, and relays its answer. When the
 * token cannot be read, the sidecar refuses it, cannot be reached or does not answer, the call is
 * refused (exit 2), saying so: a hook that cannot ask must not let the call through.
 */
async function answerThroughSidecar(server: string, tokenFile: string, event: string, explicitAllow: boolean, io: CliIo): Promise<number> {
  const refuse = (why: string, hint = "Start it with `vigilc serve --policy FILE`.", what = "did not answer"): number => {
    const reason = `Vigil's sidecar at ${server} ${what} (${why}); the call is refused. ${hint}`;
    io.stdout(JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } }) + "\n");
    io.stderr(reason + "\n");
    return 2;
  };
  const tokenHint = "Give the sidecar's token file with --token-file (`vigilc serve` names it when it starts).";
  // Symbolic links are followed here: a wrong token only makes the hook refuse, never allow.
  const { readTokenFile } = await import("./token-file.js");
  const token = readTokenFile(tokenFile, { private: false, followLinks: true });
  if (token === "missing") return refuse(`the token file ${tokenFile} does not exist`, tokenHint, "was not asked");
  if ("problem" in token) return refuse(token.problem, tokenHint, "was not asked");
  const { request } = await import("node:http");
  const query = `/v1/hooks/claude-code${explicitAllow ? "?explicit-allow=1" : ""}`;
  // A Unix socket's path follows `unix:`; node's client then sends `Host: localhost`.
  const target = server.startsWith("unix:")
    ? { socketPath: (await import("node:path")).resolve(io.cwd, server.slice("unix:".length)), path: query }
    : new URL(query, server);
  // The system would cut a longer socket path short, and the token would go to whatever is there.
  const longest = process.platform === "linux" ? 107 : 103;
  if (!(target instanceof URL) && Buffer.byteLength(target.socketPath) > longest) {
    return refuse(`the socket path ${target.socketPath} is longer than the ${longest} bytes a Unix socket's path may have`, "Choose a shorter --socket path for the sidecar.", "was not asked");
  }
  const headers = { "content-type": "application/json", authorization: `Bearer ${token.token}` };
  return new Promise((resolvePromise) => {
    const answered = (response: import("node:http").IncomingMessage): void => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => {
        if (response.statusCode === 401 || response.statusCode === 403) {
          return resolvePromise(refuse(`status ${response.statusCode} for the token in ${tokenFile}: ${body.slice(0, 300)}`, tokenHint, "refused the hook's token"));
        }
        if (response.statusCode !== 200) return resolvePromise(refuse(`status ${response.statusCode ?? "?"}: ${body.slice(0, 300)}`));
        try {
          const answer = JSON.parse(body) as { stdout: unknown; stderr: unknown; exitCode: unknown };
          // Anything but a whole answer refuses: an exit code missing would end the hook with 0.
          if (typeof answer.stdout !== "string" || typeof answer.stderr !== "string" || !Number.isInteger(answer.exitCode)) {
            return resolvePromise(refuse("its answer is not a hook's answer {stdout, stderr, exitCode}"));
          }
          if (answer.stdout !== "") io.stdout(answer.stdout);
          if (answer.stderr !== "") io.stderr(answer.stderr);
          resolvePromise(answer.exitCode as number);
        } catch (error) {
          resolvePromise(refuse(`its answer is not JSON: ${(error as Error).message}`));
        }
      });
      response.on("error", (error) => resolvePromise(refuse(error.message)));
    };
    const outgoing =
      target instanceof URL
        ? request(target, { method: "POST", headers, timeout: SIDECAR_TIMEOUT_MS }, answered)
        : request({ ...target, method: "POST", headers, timeout: SIDECAR_TIMEOUT_MS }, answered);
    outgoing.on("timeout", () => outgoing.destroy(new Error(`no answer within ${SIDECAR_TIMEOUT_MS / 1000} s`)));
    outgoing.on("error", (error) => resolvePromise(refuse(error.message)));
    outgoing.end(event);
  });
}
