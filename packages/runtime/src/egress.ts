import { createServer as createHttpServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { lookup } from "node:dns/promises";
import { connect as netConnect, isIP, isIPv4, isIPv6, type Socket } from "node:net";
import { networkInterfaces } from "node:os";
import type { Duplex } from "node:stream";
import { createServer as createSocksServer } from "@pondwader/socks5-server";
import { Enforcer, IN_FLIGHT_MS, type EnforcerOptions } from "./enforcer.js";
import { EGRESS_IDENTITY_HOST, EGRESS_IDENTITY_PATH } from "./egress-identity.js";
import { loadPolicy } from "./policy.js";
import { RunQueries } from "./run-queries.js";
import type { Store } from "./store.js";

/**
 * Egress as events: the network proxy that a sandbox sends every connection of its commands
 * through (Claude Code's `sandbox.network.httpProxyPort` and `socksProxyPort`, `vigilc run`). The
 * sandbox has no network of its own, so whatever program opens a connection (a copied `curl`, an
 * interpreter, a script, a git hook), the connection arrives here first, as one `net` event:
 *
 *     net {host, port, via, method?, url?}
 *
 * `via` is `http` (a plain HTTP request, whose `method` and `url` are known), `connect` (an HTTP
 * CONNECT tunnel: TLS, only the host and port are known) or `socks` (SOCKS5). The event is decided
 * by the policy before the connection opens, in the run it belongs to, through the enforcer, so it
 * is recorded and audited as a tool call is; a refused connection never opens. A connection that
 * belongs to no run, or that cannot be decided, is refused: there is no other way out.
 */

/** The action of an egress event. */
export const EGRESS_ACTION = "net";
export { EGRESS_IDENTITY_HOST, EGRESS_IDENTITY_PATH };

export interface EgressRequest {
  readonly host: string;
  readonly port: number;
  readonly via: "http" | "connect" | "socks";
  /** A plain HTTP request's method and absolute URL. */
  readonly method?: string;
  readonly url?: string;
}

/** Which run a connection belongs to, and the enforcer of its policy; or why it belongs to none. */
export type EgressAttribution = { readonly runId: string; readonly enforcer: Enforcer } | { readonly refuse: string };

export interface EgressProxyOptions {
  /** The run and the policy a connection is decided in (called for each connection). */
  readonly attribute: (request: EgressRequest) => EgressAttribution | Promise<EgressAttribution>;
  /** The ports to listen on, on 127.0.0.1 (0: any free one). */
  readonly httpPort?: number;
  readonly socksPort?: number;
  /**
   * Opens the connection to the destination once allowed (default: `connectOutside`, a TCP
   * connection to the address the name resolves to, never to this machine's own loopback).
   */
  readonly connect?: Connector;
  /** Ports on this machine's loopback that connections may reach (a local development server); none by default. */
  readonly loopbackPorts?: readonly number[];
  /** Told of each decision (for a log line). */
  readonly onDecision?: (decision: EgressDecision) => void;
  /**
   * What the proxy says it is, at `GET /.well-known/vigil-egress` on its HTTP port (a request that is
   * not a proxy's) and to a SOCKS CONNECT to `vigil-egress.invalid` on its SOCKS port: so that whoever
   * starts it can tell it from another program listening on its ports.
   */
  readonly identity?: { readonly [key: string]: string };
}


export interface EgressDecision {
  readonly request: EgressRequest;
  readonly allowed: boolean;
  readonly runId?: string;
  readonly reason: string;
}

export interface EgressProxy {
  readonly httpPort: number;
  readonly socksPort: number;
  close(): Promise<void>;
}

/** Opens a connection to an allowed destination; rejects when it cannot (the reason is the error's message). */
export type Connector = (host: string, port: number) => Promise<Socket>;

/**
 * The default connector: resolves the name once and connects to that address (so the name cannot
 * point elsewhere between the check and the connection). This machine's own loopback is not the
 * outside: the sandbox has no loopback of the host, and reaching it through the proxy would reach
 * every local service (Vigil's sidecar, databases), so it is refused but on the ports allowed:
 * every spelling of it (`127.0.0.0/8`, `0.0.0.0/8`, `::1`, `::`, IPv4 written in IPv6 as
 * `::ffff:127.0.0.1` or `::ffff:7f00:1`) and every address of this machine's own interfaces (a
 * service listening on all of them answers on each).
 */
export function connectOutside(loopbackPorts: readonly number[] = []): Connector {
  return async (host, port) => {
    const addresses = isIP(host) !== 0 ? [{ address: host, family: isIP(host) }] : await lookup(host, { all: true });
    const address = addresses[0];
    if (address === undefined) throw new Error(`${host} has no address`);
    if (addresses.some((a) => isThisMachine(a.address)) && !loopbackPorts.includes(port)) {
      throw new Error(`${host}:${port} is this machine itself (${address.address}), which the sandbox may not reach through the proxy`);
    }
    return await new Promise<Socket>((resolve, reject) => {
      const socket = netConnect({ host: address.address, port });
      socket.once("connect", () => resolve(socket));
      socket.once("error", reject);
    });
  };
}

/** Whether an address (as resolved, or as written) reaches this machine: its loopback, "any", or one of its interfaces' addresses. */
export function isThisMachine(address: string): boolean {
  const bytes = addressBytes(address);
  if (bytes === undefined) return true; // Not an address that can be read: refused, not guessed at.
  const v4 = bytes.length === 4 ? bytes : embeddedIPv4(bytes);
  if (v4 !== undefined && (v4[0] === 127 || v4[0] === 0)) return true;
  if (bytes.length === 16 && bytes.slice(0, 15).every((b) => b === 0) && (bytes[15] === 0 || bytes[15] === 1)) return true;
  return ownAddressKeys().has(addressKey(bytes));
}

/** An address's bytes as one comparable text, IPv4 written in IPv6 taken as the IPv4 address it carries. */
function addressKey(bytes: readonly number[]): string {
  return (bytes.length === 4 ? bytes : (embeddedIPv4(bytes) ?? bytes)).join(".");
}

/** The addresses of this machine's interfaces, read at each connection (an interface may come or go). */
function ownAddressKeys(): Set<string> {
  const keys = new Set<string>();
  for (const own of Object.values(networkInterfaces()).flatMap((list) => list ?? [])) {
    const bytes = addressBytes(own.address);
    if (bytes !== undefined) keys.add(addressKey(bytes));
  }
  return keys;
}

/** The bytes of an IPv4 (4) or IPv6 (16) address; undefined for anything else. A zone (`%eth0`) is dropped. */
function addressBytes(written: string): number[] | undefined {
  const address = written.replace(/^\[|\]$/g, "").replace(/%.*$/, "");
  if (isIPv4(address)) return address.split(".").map(Number);
  if (!isIPv6(address)) return undefined;
  // An IPv4 address written at the end (`::ffff:127.0.0.1`) is its two last groups (`::ffff:7f00:1`).
  const text = address.replace(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/, (_, a: string, b: string, c: string, d: string) =>
    `${((Number(a) << 8) | Number(b)).toString(16)}:${((Number(c) << 8) | Number(d)).toString(16)}`,
  );
  const halves = text.split("::");
  const parse = (part: string | undefined): number[] => (part === undefined || part === "" ? [] : part.split(":").map((group) => parseInt(group, 16)));
  const before = parse(halves[0]);
  const after = parse(halves[1]);
  const groups = halves.length === 2 ? [...before, ...Array<number>(Math.max(0, 8 - before.length - after.length)).fill(0), ...after] : before;
  if (groups.length !== 8 || groups.some((g) => !(g >= 0 && g <= 0xffff))) return undefined;
  return groups.flatMap((g) => [g >> 8, g & 0xff]);
}

/** The IPv4 address an IPv6 one carries: mapped (`::ffff:a.b.c.d`) or compatible (`::a.b.c.d`). */
function embeddedIPv4(bytes: readonly number[]): number[] | undefined {
  if (bytes.length !== 16 || !bytes.slice(0, 10).every((b) => b === 0)) return undefined;
  const marker = (bytes[10]! << 8) | bytes[11]!;
  if (marker !== 0xffff && marker !== 0) return undefined;
  // `::` and `::1` are IPv6's own, not IPv4 addresses.
  if (marker === 0 && bytes.slice(12, 15).every((b) => b === 0)) return undefined;
  return bytes.slice(12);
}

/** The arguments of a request's `net` event. */
export function egressArgs(request: EgressRequest): { readonly [key: string]: string | number } {
  return {
    host: request.host,
    port: request.port,
    via: request.via,
    ...(request.method !== undefined ? { method: request.method } : {}),
    ...(request.url !== undefined ? { url: request.url } : {}),
  };
}

/** A connection let through: the caller opens it, then says how that went. */
interface Allowed {
  readonly allowed: true;
  readonly opened: (ok: boolean, detail?: string) => void;
}

/**
 * Decides one connection: the run it belongs to, then the policy in that run. Never throws: what
 * cannot be decided is refused with the reason.
 */
async function decide(options: EgressProxyOptions, request: EgressRequest): Promise<Allowed | { readonly allowed: false; readonly reason: string }> {
  const refuse = (reason: string, runId?: string) => {
    options.onDecision?.({ request, allowed: false, reason, ...(runId !== undefined ? { runId } : {}) });
    return { allowed: false as const, reason };
  };
  let attribution: EgressAttribution;
  try {
    attribution = await options.attribute(request);
  } catch (error) {
    return refuse(`Vigil could not tell which run the connection belongs to (${(error as Error).message}); it is refused`);
  }
  if ("refuse" in attribution) return refuse(attribution.refuse);
  const { runId, enforcer } = attribution;
  let decided;
  try {
    decided = enforcer.decide(runId, { action: EGRESS_ACTION, args: egressArgs(request) });
  } catch (error) {
    return refuse(`Vigil could not decide the connection (${(error as Error).message}); it is refused`, runId);
  }
  // No person stands behind a connection to answer `ask`: it is refused, saying so.
  if (decided.decision !== "allow") {
    try {
      enforcer.cancel(runId, decided.callId);
    } catch {
      // A refused call is not in flight; nothing is lost when the cancellation cannot be logged.
    }
    const asked = decided.decision === "ask" ? "\n(The rule asks a person, and a connection has no one to ask: it is refused.)" : "";
    return refuse(decided.reason + asked, runId);
  }
  options.onDecision?.({ request, allowed: true, runId, reason: decided.reason });
  return {
    allowed: true,
    opened: (ok, detail) => {
      try {
        enforcer.record(runId, { id: decided.callId, status: ok ? "ok" : "error", ...(detail !== undefined ? { content: detail } : {}) });
      } catch {
        // Not recorded: the call stays in flight, which counts against the run (fail closed).
      }
    },
  };
}

function identityOf(identity: { readonly [key: string]: string }): string {
  return JSON.stringify({ vigil: "egress", ...identity });
}

/** Starts the proxy's two listeners on 127.0.0.1. */
export async function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const connect = options.connect ?? connectOutside(options.loopbackPorts);
  const http = createHttpServer((request, response) => void forwardHttp(options, connect, request, response));
  http.on("connect", (request: IncomingMessage, client: Duplex, head: Buffer) => void tunnel(options, connect, request, client, head));
  http.on("clientError", (_error, socket) => socket.destroy());
  const socks = createSocksServer();
  socks.setConnectionHandler((connection, sendStatus) => {
    void (async () => {
      const request: EgressRequest = { host: connection.destAddress, port: connection.destPort, via: "socks" };
      if (connection.command !== "connect") return sendStatus("COMMAND_NOT_SUPPORTED");
      if (request.host === EGRESS_IDENTITY_HOST && options.identity !== undefined) {
        sendStatus("REQUEST_GRANTED");
        connection.socket.end(identityOf(options.identity));
        return;
      }
      const decided = await decide(options, request);
      if (!decided.allowed) return sendStatus("CONNECTION_NOT_ALLOWED");
      let upstream: Socket;
      try {
        upstream = await connect(request.host, request.port);
      } catch (error) {
        decided.opened(false, (error as Error).message);
        return sendStatus("HOST_UNREACHABLE");
      }
      decided.opened(true);
      sendStatus("REQUEST_GRANTED");
      upstream.on("error", () => connection.socket.destroy());
      connection.socket.on("error", () => upstream.destroy());
      connection.socket.pipe(upstream).pipe(connection.socket);
    })();
  });
  const httpPort = await listen(http, options.httpPort ?? 0);
  const socksServer = (socks as unknown as { server: Server }).server;
  const socksPort = await listen(socksServer, options.socksPort ?? 0).catch(async (error: unknown) => {
    await closeServer(http);
    throw error;
  });
  return {
    httpPort,
    socksPort,
    close: async () => {
      await Promise.all([closeServer(http), closeServer(socksServer)]);
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address !== null ? address.port : port);
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections?.();
  });
}

/** A plain HTTP request through the proxy (`GET http://host/path`): decided with its method and URL, then forwarded. */
async function forwardHttp(options: EgressProxyOptions, connect: Connector, request: IncomingMessage, response: ServerResponse): Promise<void> {
  if (request.url === EGRESS_IDENTITY_PATH && options.identity !== undefined) {
    response.writeHead(200, { "content-type": "application/json" }).end(identityOf(options.identity));
    return;
  }
  let url: URL;
  try {
    url = new URL(request.url ?? "");
    if (url.protocol !== "http:") throw new Error(`not an http: URL`);
  } catch {
    return refuseHttp(response, 400, `Vigil's egress proxy takes absolute http:// URLs; \`${String(request.url).slice(0, 200)}\` is not one`);
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  const port = url.port === "" ? 80 : Number(url.port);
  const decided = await decide(options, { host, port, via: "http", method: request.method ?? "GET", url: url.href });
  if (!decided.allowed) return refuseHttp(response, 403, decided.reason);
  let socket: Socket;
  try {
    socket = await connect(host, port);
  } catch (error) {
    decided.opened(false, (error as Error).message);
    return refuseHttp(response, 502, `Vigil's egress proxy could not reach ${host}:${port}: ${(error as Error).message}`);
  }
  const headers = { ...request.headers };
  for (const name of Object.keys(headers)) if (name.startsWith("proxy-")) delete headers[name];
  const outgoing = httpRequest({ host, port, method: request.method, path: url.pathname + url.search, headers, createConnection: () => socket }, (upstream) => {
    decided.opened(true, `HTTP ${upstream.statusCode ?? "?"}`);
    response.writeHead(upstream.statusCode ?? 502, upstream.headers);
    upstream.pipe(response);
  });
  outgoing.on("error", (error) => {
    decided.opened(false, error.message);
    if (!response.headersSent) refuseHttp(response, 502, `Vigil's egress proxy could not reach ${host}:${port}: ${error.message}`);
    else response.destroy();
  });
  request.pipe(outgoing);
}

/** An HTTP CONNECT tunnel (`CONNECT host:443`): decided with the host and port, then spliced. */
async function tunnel(options: EgressProxyOptions, connect: Connector, request: IncomingMessage, client: Duplex, head: Buffer): Promise<void> {
  client.on("error", () => client.destroy());
  const target = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(request.url ?? "");
  const port = target !== null ? Number(target[3]) : NaN;
  if (target === null || !(port > 0 && port < 65536)) {
    client.end(statusLine(400, `Vigil's egress proxy takes CONNECT host:port, not \`${String(request.url).slice(0, 200)}\``));
    return;
  }
  const host = target[1] ?? target[2]!;
  const decided = await decide(options, { host, port, via: "connect" });
  if (!decided.allowed) {
    client.end(statusLine(403, decided.reason));
    return;
  }
  let upstream: Socket;
  try {
    upstream = await connect(host, port);
  } catch (error) {
    decided.opened(false, (error as Error).message);
    client.end(statusLine(502, `Vigil's egress proxy could not reach ${host}:${port}: ${(error as Error).message}`));
    return;
  }
  decided.opened(true);
  client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
  if (head.length > 0) upstream.write(head);
  upstream.on("error", () => client.destroy());
  client.on("close", () => upstream.destroy());
  client.pipe(upstream).pipe(client);
}

function refuseHttp(response: ServerResponse, status: number, reason: string): void {
  response.writeHead(status, { "content-type": "text/plain; charset=utf-8", connection: "close" });
  response.end(reason.endsWith("\n") ? reason : reason + "\n");
}

function statusLine(status: number, reason: string): string {
  const text = { 400: "Bad Request", 403: "Forbidden", 502: "Bad Gateway" }[status] ?? "Error";
  const body = Buffer.from(reason.endsWith("\n") ? reason : reason + "\n");
  return `HTTP/1.1 ${status} ${text}\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: ${body.length}\r\nconnection: close\r\n\r\n${body.toString()}`;
}

/**
 * The runs of an enforcement database that a connection may come from, for a proxy shared by
 * the sessions that write the database (Claude Code's hooks): a sandboxed command connects only
 * while its call runs, so the connection belongs to the run with a call in flight (let run, its
 * result not come, decided within `IN_FLIGHT_MS`). No such run: the connection comes from no call
 * (a process left in the background, say) and is refused. Several: which one cannot be known, and
 * deciding it in the wrong one could meet another run's prerequisite, so it is refused too (give
 * concurrent sessions their own database and proxy).
 */
export function attributeToCallInFlight(store: Store, policyFiles: readonly string[], options: EnforcerOptions = {}): (request: EgressRequest) => Promise<EgressAttribution> {
  let current: Enforcer | undefined;
  const queries = new RunQueries(store.db);
  const now = options.now ?? Date.now;
  return async () => {
    // The policy's files are read for each connection: a changed policy applies from the next one, as in the hook.
    const policy = await loadPolicy(policyFiles, store, current?.policy);
    if (current === undefined || current.policy !== policy) current = new Enforcer(store, policy, options);
    const runs = queries.runsWithCallsInFlight(now() - IN_FLIGHT_MS);
    if (runs.length === 0) return { refuse: "Vigil refused the connection: no tool call of an agent is running, so it comes from no call that was decided (a process left in the background?)" };
    if (runs.length > 1) {
      return { refuse: `Vigil refused the connection: calls of ${runs.length} runs are running at once (${runs.slice(0, 3).map((r) => `\`${r}\``).join(", ")}), and which one made it cannot be known; give concurrent sessions their own database and proxy` };
    }
    return { runId: runs[0]!, enforcer: current };
  };
}
