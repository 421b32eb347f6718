import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { createSocket, type Socket as UdpSocket } from "node:dgram";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { cli, vigilc } from "../../packages/cli/test/support/run-vigilc.js";
import { freePort } from "./ports.js";
import { ScriptedAgent, type ToolResult, type ToolStep } from "./scripted-agent.js";

/**
 * One session of the real Claude Code behind the boundary `vigilc hook claude-code --install`
 * writes: a scratch project (a `.env` secret, notes, a git repository with one commit, the coding
 * agent's policy, an audit key file in `.vigil`), the settings `--install` writes (the hook on every
 * event, every shell command in Claude Code's sandbox, its network only through Vigil's egress
 * proxy), the egress proxy, and the real Claude Code binary (from the development dependencies)
 * driven headless by a scripted model on loopback (`ScriptedAgent`) through the given tool steps.
 *
 * The "outside world" is on this machine, where the test can see what reached it: an HTTP server on
 * 127.0.0.1 (and on ::1, same port, where the machine has IPv6 loopback), whose port the proxy is
 * told it may reach (`--allow-loopback`); a UDP socket on 127.0.0.1 (a resolver or any datagram
 * service the agent might send to); and an HTTP server on a unix socket in the scratch directory,
 * outside the project (a local service). Had anything got through, one of them would have
 * received it. Besides, a local service on 127.0.0.1 (and ::1) whose port the proxy is not told it
 * may reach (`localPort`): the proxy must never connect to it. The egress proxy runs with a preload that logs each host name it resolves
 * (`dnsLookups`): a name looked up is a query that left the machine, whatever was decided after.
 */

export const root = resolve(import.meta.dirname, "..", "..");
export const claudeBinary = join(root, "node_modules", ".bin", "claude");
export const codingPolicy = join(root, "examples", "coding-agent", "coding-agent.vigil");
/** The audit key the session's hook and proxy use, from a file the sandbox may not read. */
export const auditKey = "an-audit-key-the-agent-never-sees-0123456789";

/** Where the session runs and what the agent may aim at, known before its steps are written. */
export interface BoundaryContext {
  readonly scratch: string;
  /** The project: Claude Code's working directory. */
  readonly project: string;
  /** The user's home directory for the session (`HOME`): `~/.claude` holds the transcript. */
  readonly home: string;
  /** The policy in force, `.claude/policy.vigil` of the project (a copy of the coding agent's). */
  readonly policy: string;
  /** The outside HTTP server's port, on 127.0.0.1 (and ::1 when `outsideIpv6`). */
  readonly outsidePort: number;
  /** `http://127.0.0.1:<outsidePort>`. */
  readonly target: string;
  readonly outsideIpv6: boolean;
  /** A local service's HTTP port on 127.0.0.1 (and ::1 where it can), which the proxy is not told it may reach. */
  readonly localPort: number;
  /** The outside UDP socket's port, on 127.0.0.1. */
  readonly udpPort: number;
  /** The outside HTTP server's unix socket (outside the project). */
  readonly unixSocket: string;
  /** The egress proxy's ports on 127.0.0.1, as `--install` wrote them into the sandbox settings. */
  readonly egressPorts: { readonly http: number; readonly socks: number };
}

export interface BoundaryOptions {
  /** Claude Code's `--allowedTools`; `Bash`, `Read` and `Write` by default. */
  readonly allowedTools?: readonly string[];
  /** Claude Code's `--permission-mode`; `acceptEdits` by default. */
  readonly permissionMode?: string;
  /** Called after the install and the proxy's start, before Claude Code starts (to take a snapshot, say). */
  readonly beforeSession?: (context: BoundaryContext) => void | Promise<void>;
  /** Fail when Claude Code exits other than with 0 (the default); otherwise its exit code is returned. */
  readonly requireCleanExit?: boolean;
  /** The bound on a hung session, after which it is killed (300 s by default): a bound, not a budget. */
  readonly killAfterMs?: number;
}

/**
 * Something that reached the outside: an HTTP request (`http`: its method and path), a TCP
 * connection (`tcp`, `tcp6`; `local` for the local service: its first bytes, whatever the protocol),
 * a datagram (`udp`: its first bytes), a request on the unix socket (`unix`).
 */
export interface Arrival {
  readonly via: "http" | "tcp" | "tcp6" | "local" | "udp" | "unix";
  readonly what: string;
}

export interface BoundarySession extends BoundaryContext {
  readonly agent: ScriptedAgent;
  /** Each step's result as the agent saw it, by step. */
  readonly results: readonly (ToolResult | undefined)[];
  /** A step's result text, or a note that it had none. */
  result(step: number): string;
  /** The paths of the HTTP requests the outside server received (over IPv4 or IPv6), in order. */
  readonly received: readonly string[];
  /** Everything that reached the outside, in order: requests, connections (with their first bytes), datagrams. */
  readonly arrivals: readonly Arrival[];
  /** The host names the egress proxy resolved, in order. */
  dnsLookups(): string[];
  /** Claude Code's stream-json output, its standard error and its exit code (null when killed). */
  readonly transcript: string;
  readonly stderr: string;
  readonly sessionCode: number | null;
  /** The egress proxy the test started (its pid, whether it still runs). */
  readonly egress: ChildProcess;
  /** The audit database of the session. */
  readonly database: string;
  /** Stops the proxy, the servers and the scripted model, and removes the scratch directory (once; again, it does nothing). */
  close(): Promise<void>;
}

/** Logs each name the process resolves, to `VIGIL_TEST_DNS_LOG` (a preload of the egress proxy). */
const dnsRecorder = `
import dns from "node:dns";
import { appendFileSync } from "node:fs";
const log = process.env.VIGIL_TEST_DNS_LOG;
const note = (host) => { try { appendFileSync(log, String(host) + "\\n"); } catch {} };
for (const name of ["lookup", "resolve", "resolve4", "resolve6", "resolveAny"]) {
  const original = dns[name];
  dns[name] = function (host, ...rest) { note(host); return original.call(this, host, ...rest); };
  const promised = dns.promises[name];
  dns.promises[name] = function (host, ...rest) { note(host); return promised.call(this, host, ...rest); };
}
`;

export async function startBoundarySession(steps: (context: BoundaryContext) => readonly ToolStep[], options: BoundaryOptions = {}): Promise<BoundarySession> {
  const scratch = mkdtempSync(join(tmpdir(), "vigil-boundary-"));
  const project = join(scratch, "project");
  const home = join(scratch, "home");
  const policy = join(project, ".claude", "policy.vigil");
  const received: string[] = [];
  const arrivals: Arrival[] = [];
  const servers: Server[] = [];
  const rawServers: TcpServer[] = [];
  const sockets = new Set<Socket>();
  let udp: UdpSocket | undefined;
  let egress: ChildProcess | undefined;
  let agent: ScriptedAgent | undefined;

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    if (egress !== undefined && egress.exitCode === null && egress.signalCode === null) {
      const exited = new Promise((done) => egress!.once("exit", done));
      egress.kill("SIGTERM");
      const limit = setTimeout(() => egress!.kill("SIGKILL"), 10_000);
      await exited;
      clearTimeout(limit);
    }
    await agent?.close();
    for (const socket of sockets) socket.destroy();
    for (const server of servers) if (server.listening) server.closeAllConnections();
    for (const server of [...servers, ...rawServers]) await new Promise((done) => server.close(done));
    udp?.close();
    rmSync(scratch, { recursive: true, force: true });
  };

  try {
    mkdirSync(join(project, ".claude"), { recursive: true });
    mkdirSync(join(project, ".vigil"), { recursive: true });
    mkdirSync(home, { recursive: true });
    copyFileSync(codingPolicy, policy);
    writeFileSync(join(project, ".env"), "API_TOKEN=s3cr3t-value\n");
    writeFileSync(join(project, "notes.txt"), "meeting notes\n");
    // A repository with one commit, made by the user before the session.
    execFileSync("git", ["init", "-q", join(project, "repo")]);
    execFileSync("git", ["-C", join(project, "repo"), "-c", "user.email=u@example.com", "-c", "user.name=u", "commit", "-q", "--allow-empty", "-m", "start"]);
    writeFileSync(join(project, ".vigil", "audit.key"), `${auditKey}\n`, { mode: 0o600 });

    const outside = (via: "http" | "unix"): Server => {
      const server = createServer((request, response) => {
        received.push(request.url ?? "");
        arrivals.push({ via, what: `${request.method ?? ""} ${request.url ?? ""}` });
        request.resume();
        response.end("upstream ok\n");
      });
      servers.push(server);
      return server;
    };
    // Each TCP connection is logged with its first bytes (whatever the protocol: a TLS hello, an SSH
    // banner), then handed to the HTTP server.
    const http = outside("http");
    const tcp = (via: "tcp" | "tcp6" | "local", to: Server): TcpServer => {
      const server = createTcpServer((socket) => {
        sockets.add(socket);
        socket.once("close", () => sockets.delete(socket));
        const arrival = { via, what: "" };
        arrivals.push(arrival);
        socket.once("data", (chunk: Buffer) => {
          arrival.what = chunk.toString("latin1").slice(0, 300);
          socket.pause();
          socket.unshift(chunk);
          to.emit("connection", socket);
          socket.resume();
        });
      });
      rawServers.push(server);
      return server;
    };
    const tcp4 = tcp("tcp", http);
    await new Promise<void>((done) => tcp4.listen(0, "127.0.0.1", done));
    const outsidePort = (tcp4.address() as { port: number }).port;
    // The same server on ::1, where the machine has IPv6 loopback.
    const tcp6 = tcp("tcp6", http);
    const outsideIpv6 = await new Promise<boolean>((done) => {
      tcp6.once("error", () => done(false));
      tcp6.listen(outsidePort, "::1", () => done(true));
    });
    const localService = createServer((request, response) => response.end("local service\n"));
    const local = tcp("local", localService);
    await new Promise<void>((done) => local.listen(0, "127.0.0.1", done));
    const localPort = (local.address() as { port: number }).port;
    const local6 = tcp("local", localService);
    await new Promise<boolean>((done) => {
      local6.once("error", () => done(false));
      local6.listen(localPort, "::1", () => done(true));
    });
    const unixSocket = join(scratch, "service.sock");
    const service = outside("unix");
    await new Promise<void>((done) => service.listen(unixSocket, done));
    udp = createSocket("udp4");
    udp.on("message", (message) => arrivals.push({ via: "udp", what: message.toString("latin1").slice(0, 200) }));
    await new Promise<void>((done) => udp!.bind(0, "127.0.0.1", done));
    const udpPort = udp.address().port;

    const egressPorts = { http: await freePort(), socks: await freePort() };
    const context: BoundaryContext = { scratch, project, home, policy, outsidePort, target: `http://127.0.0.1:${outsidePort}`, outsideIpv6, localPort, udpPort, unixSocket, egressPorts };

    const env = { HOME: home, CLAUDE_PROJECT_DIR: project };
    const installed = await vigilc(
      ["hook", "claude-code", "--install", "--policy", ".claude/policy.vigil", "--audit-key-file", ".vigil/audit.key", "--egress", `${egressPorts.http}:${egressPorts.socks}`],
      { cwd: project, env },
    );
    if (installed.code !== 0 || installed.stderr !== "") throw new Error(`vigilc hook claude-code --install exited with ${String(installed.code)}: ${installed.stderr}`);

    // The proxy, started here to let it reach the loopback server; the session's SessionStart hook finds it running.
    const dnsLog = join(scratch, "dns.log");
    writeFileSync(dnsLog, "");
    const recorder = join(scratch, "dns-recorder.mjs");
    writeFileSync(recorder, dnsRecorder);
    egress = spawn(
      process.execPath,
      ["--import", recorder, cli, "egress", "--policy", ".claude/policy.vigil", "--audit-key-file", ".vigil/audit.key", "--http-port", String(egressPorts.http), "--socks-port", String(egressPorts.socks), "--allow-loopback", String(outsidePort)],
      { cwd: project, env: { ...process.env, ...env, VIGIL_TEST_DNS_LOG: dnsLog }, stdio: ["ignore", "pipe", "inherit"] },
    );
    await new Promise<void>((done, fail) => {
      egress!.stdout!.once("data", () => done());
      egress!.once("exit", (code) => fail(new Error(`vigilc egress exited with ${String(code)}`)));
    });
    egress.stdout!.resume();

    await options.beforeSession?.(context);

    agent = await ScriptedAgent.start(steps(context));
    const session = spawn(
      claudeBinary,
      ["-p", "Do the task.", "--output-format", "stream-json", "--verbose", "--permission-mode", options.permissionMode ?? "acceptEdits", "--allowedTools", ...(options.allowedTools ?? ["Bash", "Read", "Write"])],
      {
        cwd: project,
        env: { PATH: process.env["PATH"] ?? "/usr/bin:/bin", HOME: home, ANTHROPIC_BASE_URL: agent.url, ANTHROPIC_API_KEY: "scripted", DISABLE_AUTOUPDATER: "1", CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stdout = "";
    let stderr = "";
    session.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    session.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    // A bound on a hang, not a budget: the session normally ends in seconds.
    const limit = setTimeout(() => session.kill("SIGKILL"), options.killAfterMs ?? 300_000);
    const sessionCode = await new Promise<number | null>((done) => session.once("exit", (code) => done(code)));
    clearTimeout(limit);
    if (sessionCode !== 0 && options.requireCleanExit !== false) throw new Error(`claude exited with ${String(sessionCode)}:\n${stderr.slice(-3000)}\n${stdout.slice(-3000)}`);

    const scripted = agent;
    return {
      ...context,
      agent: scripted,
      results: scripted.results,
      result: (step) => scripted.results[step]?.content ?? `(no result for step ${step})`,
      received,
      arrivals,
      dnsLookups: () => (existsSync(dnsLog) ? readFileSync(dnsLog, "utf8").split("\n").filter((line) => line !== "") : []),
      transcript: stdout,
      stderr,
      sessionCode,
      egress,
      database: join(project, ".vigil", "audit.db"),
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
