import { Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { parsePort, parsePositiveInteger } from "./shared.js";

/**
 * The commands over the runtime (docs/enforcement.md): `hook`, `audit verify`, `replay`, `serve`
 * and `mcp-gateway`. Each loads its module (and the runtime) only when it runs.
 */

/**
 * `vigilc hook`, as `--help` lists it. The hook never runs through the command tree: it parses its
 * own arguments and loads only what a decision needs (see enforcement/hook.ts), so this only describes it.
 */
export function registerHook(program: Command): void {
  program
    .command("hook")
    .description("run as an agent's hook: `vigilc hook claude-code --policy FILE…` decides each tool call before it runs and records its result (see `vigilc hook --help`)")
    .helpOption(false)
    .allowUnknownOption()
    .allowExcessArguments();
}

/** `vigilc audit verify DB`: the audit log's hash chain and the runs' state checked against it. */
export function registerAudit(program: Command, context: CommandContext): void {
  const audit = program.command("audit").description("the audit log of an enforcement database (see docs/enforcement.md)");
  audit
    .command("verify")
    .description("check every link of the audit log's hash chain and the runs' state against it: exit 0 when it verifies, 1 at the first broken link")
    .argument("<db>", "the enforcement database (.vigil/audit.db)")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (database: string, options: { format: "human" | "json" }) => {
      const { auditVerifyCommand } = await import("../enforcement/audit.js");
      context.exitCode = await auditVerifyCommand(database, options, context.io);
    });
}

/** `vigilc replay --audit DB --policy FILE…`: the runs of an audit log decided again under another policy. */
export function registerReplay(program: Command, context: CommandContext): void {
  program
    .command("replay")
    .description("what-if: decide every run of an audit log again under another policy; exit 0 when no decision changes, 1 when some do")
    .requiredOption("--audit <db>", "the enforcement database whose audit log is replayed")
    .requiredOption("--policy <files...>", "the other policy (.vigil files)")
    .option("--run <id>", "only this run (a session id)")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (options: { audit: string; policy: string[]; run?: string; format: "human" | "json" }) => {
      const { replayCommand } = await import("../enforcement/audit.js");
      context.exitCode = await replayCommand(options, context.io);
    });
}

/** The guard's options, as commander gives them (`--no-guard` makes `guard` false). */
type GuardFlags = { guard: boolean; protect?: string[]; unknownCommands: "block" | "ask" };

/** `vigilc serve --policy FILE…`: the HTTP sidecar. */
export function registerServe(program: Command, context: CommandContext): void {
  program
    .command("serve")
    .description("the sidecar: decide, record and finish over HTTP on 127.0.0.1 or a Unix socket, one monitor per run id, every decision in the audit log (until SIGTERM or SIGINT); every request but /v1/health needs `Authorization: Bearer <token>`")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .addOption(new Option("--port <n>", "the TCP port on 127.0.0.1 (0: any free port; the URL is printed) (default: 8787)").argParser(parsePort).conflicts("socket"))
    .option("--socket <path>", "listen on this Unix socket instead of a TCP port (created with mode 0600; a stale one is replaced)")
    .option("--db <path>", "the enforcement database (default: .vigil/audit.db)")
    .option("--token-file <file>", "the admin token, allowed every request: read from this file (mode 0600, owned by you), or created there with a random 256-bit token (default: sidecar.token next to the database)")
    .option("--hook-token-file <file>", "a second token, allowed only to relay Claude Code hook events (POST /v1/hooks/claude-code): read from this file, or created there")
    .addOption(new Option("--socket-mode <mode>", "who may connect to the socket: 600 (the sidecar's user) or 660 (its group too: a hook run as another user in that group)").choices(["600", "660"]).default("600"))
    .addOption(new Option("--max-concurrent <n>", "requests of one token in flight at once; past it, 429 (the hook's relay then refuses the call)").argParser(parsePositiveInteger).default(16))
    .addOption(new Option("--max-rate <n>", "requests of one token per second on average, in bursts of as many; past it, 429").argParser(parsePositiveInteger).default(200))
    .option("--protect <paths...>", "guard: protect more paths (a directory with everything in it)")
    .addOption(new Option("--unknown-commands <response>", "guard: what a call whose commands cannot be known gets").choices(["block", "ask"]).default("block"))
    .option("--no-guard", "turn the guard of Vigil's own state off (every decision's audit record says so)")
    .action(async (options: { policy: string[]; port?: number; socket?: string; db?: string; tokenFile?: string; hookTokenFile?: string; socketMode: "600" | "660"; maxConcurrent: number; maxRate: number } & GuardFlags) => {
      const { serveCommand } = await import("../enforcement/serve.js");
      context.exitCode = await serveCommand(options, context.io);
    });
}

/** `vigilc mcp-gateway --policy FILE… (-- COMMAND… | --server-command LINE | --server-config FILE)`: an MCP server in front of a real one. */
export function registerMcpGateway(program: Command, context: CommandContext): void {
  program
    .command("mcp-gateway")
    .description("an MCP server (stdio) in front of a real one: every tools/call is decided before it is forwarded, every decision logged; vigilc mcp-gateway --policy FILE -- node server.js …")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .option("--db <path>", "the enforcement database (default: .vigil/audit.db)")
    .option("--run <id>", "the run id of the session (default: one per gateway process)")
    .option("--protect <paths...>", "guard: protect more paths (a directory with everything in it)")
    .addOption(new Option("--unknown-commands <response>", "guard: what a call whose commands cannot be known gets (the gateway cannot ask: ask refuses too, saying so)").choices(["block", "ask"]).default("block"))
    .option("--no-guard", "turn the guard of Vigil's own state off (every decision's audit record says so)")
    .option("--server-command <line>", "the MCP server to run, as one command line split into words with no shell ('…' and \"…\" quote, \\ escapes), for clients that keep -- for themselves")
    .option("--server-config <file>", "the MCP server to run, from a JSON file: {command, args, env, cwd}, or an MCP client's {mcpServers: {NAME: …}}")
    .option("--server-name <name>", "the server of --server-config's mcpServers to run (default: its only one)")
    .argument("[command...]", "the MCP server to run, after -- (or name it with --server-command or --server-config)")
    .action(async (command: string[], options: { policy: string[]; db?: string; run?: string; serverCommand?: string; serverConfig?: string; serverName?: string } & GuardFlags) => {
      const { mcpGatewayCommand } = await import("../enforcement/mcp-gateway.js");
      context.exitCode = await mcpGatewayCommand(command, options, context.io);
    });
}

/** `vigilc egress --policy FILE… --http-port N --socks-port M`: the sandbox's network proxy, every connection a `net` event. */
export function registerEgress(program: Command, context: CommandContext): void {
  program
    .command("egress")
    .description("the sandbox's network proxy (HTTP and SOCKS5 on 127.0.0.1): every connection a sandboxed command opens is a `net` event decided by the policy in the run whose call is running, recorded and audited; a refused one never opens (until SIGTERM or SIGINT)")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .option("--db <path>", "the enforcement database the hooks write (default: .vigil/audit.db)")
    .addOption(new Option("--http-port <n>", "the HTTP proxy's port (Claude Code's sandbox.network.httpProxyPort)").argParser(parsePort).makeOptionMandatory())
    .addOption(new Option("--socks-port <n>", "the SOCKS5 proxy's port (sandbox.network.socksProxyPort)").argParser(parsePort).makeOptionMandatory())
    .addOption(auditKeyFileOption())
    .addOption(allowLoopbackOption())
    .action(async (options: { policy: string[]; db?: string; httpPort: number; socksPort: number; auditKeyFile?: string; allowLoopback?: number[] }) => {
      const { egressCommand } = await import("../enforcement/egress.js");
      context.exitCode = await egressCommand(options, context.io);
    });
}

/** `vigilc run --policy FILE… -- COMMAND…`: any agent inside the sandbox, its network through the egress proxy. */
export function registerRun(program: Command, context: CommandContext): void {
  program
    .command("run")
    .description("run an agent (or any program) in the sandbox Claude Code gets from `vigilc hook claude-code --install`: no write to the policy or Vigil's state and code, and its only network Vigil's egress proxy, where each connection is a `net` event the policy decides; vigilc run --policy FILE -- COMMAND …")
    .requiredOption("--policy <files...>", "the policy (.vigil files)")
    .option("--db <path>", "the enforcement database (default: .vigil/audit.db)")
    .option("--run <id>", "the run id (default: a new one)")
    .addOption(auditKeyFileOption())
    .addOption(allowLoopbackOption())
    .argument("<command...>", "the command to run, after --")
    .action(async (command: string[], options: { policy: string[]; db?: string; run?: string; auditKeyFile?: string; allowLoopback?: number[] }) => {
      const { runSandboxedCommand } = await import("../enforcement/run-sandboxed.js");
      context.exitCode = await runSandboxedCommand(command, options, context.io);
    });
}

/** `--audit-key-file`, the same for every command that keeps the key out of the environment. */
function auditKeyFileOption(): Option {
  return new Option("--audit-key-file <file>", "the audit chain's key, read from this file (instead of VIGIL_AUDIT_KEY)");
}

/** `--allow-loopback`, the same for every command that runs an egress proxy. */
function allowLoopbackOption(): Option {
  return new Option("--allow-loopback <ports...>", "ports of this machine's loopback that connections may reach (a local server); any other connection to this machine is refused").argParser(
    (value: string, previous: number[] = []) => [...previous, parsePort(value)],
  );
}
