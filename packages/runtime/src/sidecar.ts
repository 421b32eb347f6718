import { createHash, timingSafeEqual } from "node:crypto";
import { lstatSync, statSync, unlinkSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { isAbsolute } from "node:path";
import { isJsonObject, type JsonValue } from "@vigil/trace";
import { ruleId } from "@vigil/engine";
import { tokenProblem } from "./token.js";
import { answerClaudeCodeHook } from "./claude-code-hook.js";
import type { Enforcer } from "./enforcer.js";

/**
 * The sidecar: the enforcer over HTTP, for agents written in any language. It listens on the
 * loopback interface only (127.0.0.1) or on a Unix socket only its OS user may open, keeps one
 * monitor per run id (in memory, and in the database with the audit log), and answers JSON:
 *
 *   GET  /v1/health                  the policy's hash and its rules
 *   POST /v1/runs/{run}/decide       {id?, action, args, cwd?}      → the decision (`halted` on a halted run), its reason, the violations
 *   POST /v1/runs/{run}/record       {id?, action?, args?, status, output?} → the positions, violations the result reveals
 *   POST /v1/runs/{run}/message      {text}                         → a user's message, recorded
 *   POST /v1/runs/{run}/cancel       {id}                           → a decided call that did not run
 *   POST /v1/runs/{run}/stop         {active?}                      → whether the run may stop now
 *   POST /v1/runs/{run}/finish       {}                             → every rule's verdict
 *   GET  /v1/runs/{run}/standing                                    → every rule's standing so far
 *   POST /v1/hooks/claude-code       a Claude Code hook event (`?explicit-allow=1`) → {stdout, stderr, exitCode}
 *
 * The last is what `vigilc hook claude-code --server URL` sends: the hook's process then only
 * passes the event on, and the sidecar, with the policy loaded and the runs in memory, answers it.
 *
 * A bad request gets a 4xx status and `{"error": {"code", "message"}}`; a body over the size
 * limit gets 413. A failure of the enforcer itself (the database, say) is a 503: a caller must
 * then not run the call (fail closed).
 *
 * Who may ask. The agent being policed runs shell commands on the same machine, so any local
 * process is a possible caller, and so is a web page the user has open (through DNS rebinding or a
 * cross-site request). Every request is therefore checked before anything else is done with it:
 *
 *   - its `Host` must be a loopback name (127.0.0.1, localhost, [::1], with or without a port), or
 *     403 `bad_host`: a page that rebinds its own name to 127.0.0.1 still sends its own name;
 *   - an `Origin`, when there is one, must be the sidecar's own, or 403 `bad_origin`: a browser
 *     sends one with every cross-site request, and no CORS headers are ever sent back;
 *   - every request but `GET /v1/health` carries `Authorization: Bearer <token>`, or 401
 *     `unauthorized`. The admin token may do everything; the hook token (optional) may only relay
 *     Claude Code hook events, 403 `forbidden` for anything else. With the sidecar under its own
 *     OS user, the hook (run as the agent's user) can then be given the hook token only: it can ask
 *     for decisions on the agent's calls, but not record results, cancel calls or end runs.
 *
 * How much each token may ask. A caller that floods the sidecar (hundreds of hook processes at
 * once, say) must not push every decision past the time its host waits for an answer. Each token
 * has its own caps: at most `maxConcurrentPerToken` requests in flight (default 16) and
 * `maxRequestsPerSecond` on average (default 200, with bursts of as many). A request past either
 * gets 429 `too_many_requests` with `Retry-After`, at once and without being read or decided; the
 * hook's relay refuses the call then (fail closed). One token's flood does not slow the other's.
 */

export interface SidecarOptions {
  readonly enforcer: Enforcer;
  /** The TCP port on 127.0.0.1; 0 (the default) lets the system choose one. */
  readonly port?: number;
  /**
   * A Unix socket to listen on instead of a TCP port. It is created with mode 0600 (only the
   * sidecar's OS user may connect); a stale socket left by a killed sidecar is replaced, anything
   * else at the path is refused. The socket file is removed on close.
   */
  readonly socket?: string;
  /**
   * Who may connect to the socket: `0o600` (the default: the sidecar's OS user) or `0o660` (its
   * group too: a hook run as another user, in a deployment where that user is in the socket's
   * group; put the socket in a directory the agent's user cannot write, so that nothing else can
   * take its place).
   */
  readonly socketMode?: 0o600 | 0o660;
  /** The admin token: every request but the health check must carry it (or the hook token). */
  readonly token: string;
  /** The hook token, if any: it may only relay Claude Code hook events (`POST /v1/hooks/claude-code`). */
  readonly hookToken?: string;
  /** The largest request body accepted, in bytes (default 1 MiB). */
  readonly maxBodyBytes?: number;
  /** How many requests of one token may be in flight at once (default 16); past it, 429. */
  readonly maxConcurrentPerToken?: number;
  /** How many requests one token may make per second on average, in bursts of as many (default 200); past it, 429. */
  readonly maxRequestsPerSecond?: number;
}

export interface Sidecar {
  /** `http://127.0.0.1:PORT`, or `unix:PATH` for a Unix socket. */
  readonly url: string;
  /** The TCP port; undefined on a Unix socket. */
  readonly port?: number;
  /** The Unix socket's path, when listening on one. */
  readonly socket?: string;
  /** Stops accepting connections, lets the requests in flight finish, and resolves when all are done. */
  close(): Promise<void>;
}


const DEFAULT_MAX_BODY = 1024 * 1024;
const DEFAULT_MAX_CONCURRENT = 16;
const DEFAULT_MAX_RATE = 200;

/** Who a request is: one of the two tokens, or nobody (the health check needs none). */
type Caller = "admin" | "hook" | undefined;

/**
 * The caps of one token: requests in flight, and a bucket of requests that refills at the rate per
 * second (on the monotonic clock) up to its size. What is refused is refused before it is read.
 */
class TokenLimits {
  private inFlight = 0;
  private tokens: number;
  private refilled = performance.now();

  constructor(
    private readonly maxConcurrent: number,
    private readonly ratePerSecond: number,
  ) {
    this.tokens = ratePerSecond;
  }

  /** Takes a place for one request, or throws the 429 that refuses it; the place is given back by the function returned. */
  acquire(who: string): () => void {
    const now = performance.now();
    this.tokens = Math.min(this.ratePerSecond, this.tokens + ((now - this.refilled) / 1000) * this.ratePerSecond);
    this.refilled = now;
    if (this.inFlight >= this.maxConcurrent) {
      throw new HttpError(429, "too_many_requests", `${this.maxConcurrent} requests of the ${who} token are in flight already: wait for them (do not run the call meanwhile)`, true, { "retry-after": "1" });
    }
    if (this.tokens < 1) {
      throw new HttpError(429, "too_many_requests", `the ${who} token made more than ${this.ratePerSecond} requests a second: slow down (do not run the call meanwhile)`, true, { "retry-after": "1" });
    }
    this.tokens -= 1;
    this.inFlight++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
    };
  }
}
const MAX_RUN_ID = 256;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Close the connection after the answer (the rest of the request will not be read). */
    readonly close = false,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }
}

/** What every request is checked against before it is handled (see the top of this file). */
interface Admission {
  readonly token: Buffer;
  readonly hookToken: Buffer | undefined;
  /** The origins a request may come from (the sidecar's own); empty on a Unix socket. */
  origins: ReadonlySet<string>;
  /** Each token's caps. */
  readonly limits: { readonly admin: TokenLimits; readonly hook: TokenLimits };
}

export async function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const problem = tokenProblem(options.token);
  if (problem !== undefined) throw new TypeError(`the sidecar's token is refused: ${problem}`);
  if (options.hookToken !== undefined) {
    const hookProblem = tokenProblem(options.hookToken);
    if (hookProblem !== undefined) throw new TypeError(`the sidecar's hook token is refused: ${hookProblem}`);
    // The same secret in both scopes would give the hook the admin's rights.
    if (options.hookToken === options.token) throw new TypeError("the hook token must differ from the admin token");
  }
  if (options.socket !== undefined && options.port !== undefined) throw new TypeError("listen on a port or on a Unix socket, not both");
  const maxConcurrent = options.maxConcurrentPerToken ?? DEFAULT_MAX_CONCURRENT;
  const maxRate = options.maxRequestsPerSecond ?? DEFAULT_MAX_RATE;
  if (!Number.isInteger(maxConcurrent) || maxConcurrent < 1) throw new TypeError(`maxConcurrentPerToken must be a whole number of at least 1, not ${String(maxConcurrent)}`);
  if (!(maxRate >= 1) || !Number.isFinite(maxRate)) throw new TypeError(`maxRequestsPerSecond must be a number of at least 1, not ${String(maxRate)}`);
  const admission: Admission = {
    token: digest(options.token),
    hookToken: options.hookToken !== undefined ? digest(options.hookToken) : undefined,
    origins: new Set(),
    limits: { admin: new TokenLimits(maxConcurrent, maxRate), hook: new TokenLimits(maxConcurrent, maxRate) },
  };
  const server = createServer((request, response) => {
    handle(options.enforcer, maxBody, admission, request, response).catch((error: unknown) => {
      if (error instanceof HttpError) send(response, error.status, { error: { code: error.code, message: error.message } }, error.close, error.headers);
      else send(response, 503, { error: { code: "enforcer_failed", message: `the enforcer failed (${(error as Error).message}); do not run the call` } });
    });
  });
  // Slow or stalled clients cannot hold the server: a request must arrive whole within a minute.
  server.requestTimeout = 60_000;
  server.headersTimeout = 10_000;
  if (options.socket !== undefined) return listenOnSocket(server, options.socket, options.socketMode ?? 0o600);
  await new Promise<void>((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      resolvePromise();
    });
  });
  const port = (server.address() as AddressInfo).port;
  admission.origins = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]);
  return { url: `http://127.0.0.1:${port}`, port, close: () => closeServer(server) };
}

/** Why a Unix socket cannot be listened on (the path is taken, say), for the caller to report. */
export class SidecarSocketError extends Error {
  override name = "SidecarSocketError";
}

/**
 * Listens on a Unix socket that only the sidecar's OS user may connect to. The socket is created
 * with mode 0600 from the start: the process's umask is narrowed around the call that creates it
 * and restored right after, so there is no moment when another user could connect.
 */
async function listenOnSocket(server: Server, path: string, mode: 0o600 | 0o660): Promise<Sidecar> {
  // On Windows the path would name a pipe, which file modes do not protect.
  if (process.platform === "win32") throw new SidecarSocketError("Unix sockets are not available on Windows; listen on a port of 127.0.0.1 instead");
  // A longer path would be cut short by the system, and the socket made at another path.
  const longest = process.platform === "linux" ? 107 : 103;
  if (Buffer.byteLength(path) > longest) throw new SidecarSocketError(`the socket path ${path} is ${Buffer.byteLength(path)} bytes; a Unix socket's path has at most ${longest} here (choose a shorter one)`);
  await clearStaleSocket(path);
  await new Promise<void>((resolvePromise, reject) => {
    const failed = (error: NodeJS.ErrnoException): void =>
      reject(error.code === "EADDRINUSE" ? new SidecarSocketError(`cannot listen on the socket ${path}: something was created at that path meanwhile`) : error);
    server.once("error", failed);
    const umask = process.umask(0o777 & ~mode);
    try {
      // Node creates the socket file within this call (bind happens before it returns).
      server.listen(path, () => {
        server.off("error", failed);
        resolvePromise();
      });
    } finally {
      process.umask(umask);
    }
  });
  // Fail closed if the socket came out wider than 0600 after all (or not where it was asked for).
  let created;
  try {
    created = statSync(path);
  } catch (error) {
    await closeServer(server);
    throw new SidecarSocketError(`the socket ${path} is not there after listening on it: ${(error as Error).message}`);
  }
  if (!created.isSocket() || (created.mode & 0o777) !== mode) {
    await closeServer(server);
    throw new SidecarSocketError(`the socket ${path} was created with mode ${(created.mode & 0o777).toString(8)}, not ${mode.toString(8)}; refusing to serve on it`);
  }
  return {
    url: `unix:${path}`,
    socket: path,
    close: async () => {
      await closeServer(server);
      // Node removes the socket file when the server closes; remove it here if it did not, but only
      // if it is still ours (not a file someone put there since).
      try {
        const now = lstatSync(path);
        if (now.isSocket() && now.ino === created.ino && now.dev === created.dev) unlinkSync(path);
      } catch {
        // Gone already.
      }
    },
  };
}

/**
 * Makes the path free for a new socket: nothing there is fine; a socket nobody listens on (left by
 * a sidecar that was killed) is removed; anything else, a live socket or a file of any other kind,
 * is refused rather than replaced.
 */
async function clearStaleSocket(path: string): Promise<void> {
  let existing;
  try {
    existing = lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw new SidecarSocketError(`cannot use the socket path ${path}: ${(error as Error).message}`);
  }
  if (!existing.isSocket()) throw new SidecarSocketError(`cannot listen on the socket ${path}: a file that is not a socket is there (remove it, or choose another path)`);
  const live = await new Promise<string | undefined>((resolvePromise) => {
    const probe = connect({ path });
    const timer = setTimeout(() => {
      probe.destroy();
      resolvePromise("it did not answer within 1 s");
    }, 1000);
    probe.once("connect", () => {
      clearTimeout(timer);
      probe.destroy();
      resolvePromise("another process is listening on it");
    });
    probe.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      resolvePromise(error.code === "ECONNREFUSED" || error.code === "ENOENT" ? undefined : error.message);
    });
  });
  if (live !== undefined) throw new SidecarSocketError(`cannot listen on the socket ${path}: ${live}`);
  try {
    unlinkSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw new SidecarSocketError(`cannot remove the stale socket ${path}: ${(error as Error).message}`);
  }
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolvePromise) => {
    server.close(() => resolvePromise());
    // Idle keep-alive connections would hold the close open; busy ones end after their request.
    server.closeIdleConnections();
  });
}

/**
 * Tokens are compared as SHA-256 digests: equal-length buffers, so `timingSafeEqual` compares them
 * in constant time and not even a token's length shows in how long a refusal takes.
 */
function digest(token: string): Buffer {
  return createHash("sha256").update(token, "utf8").digest();
}

/** A loopback name, with or without a port: what a local client puts in `Host`. */
const LOOPBACK_HOST = /^(?:127\.0\.0\.1|localhost|\[::1\])(?::\d{1,5})?$/i;

/**
 * Checks the request's Host, Origin and token (see the top of this file), and throws the refusal
 * when one does not pass; gives the token's name. The health check needs no token.
 */
function admit(admission: Admission, request: IncomingMessage, path: string): Caller {
  const host = request.headers.host;
  if (host === undefined || !LOOPBACK_HOST.test(host)) {
    const what = host === undefined ? "the request has no Host header" : `the Host header \`${printableHeader(host)}\` is not a loopback name`;
    throw new HttpError(403, "bad_host", `${what}: the sidecar answers only requests addressed to 127.0.0.1, localhost or [::1]`, true);
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !admission.origins.has(origin.toLowerCase())) {
    throw new HttpError(403, "bad_origin", `the Origin header \`${printableHeader(origin)}\` is not this sidecar's own: requests from web pages are refused`, true);
  }
  if (path === "/v1/health") return undefined;
  const presented = /^Bearer +([\x21-\x7e]+) *$/i.exec(request.headers.authorization ?? "")?.[1];
  if (presented === undefined) {
    throw new HttpError(401, "unauthorized", "the Authorization header is missing or not `Bearer <token>`: give the sidecar's token (its file is named when the sidecar starts)", true, UNAUTHORIZED_HEADERS);
  }
  const given = digest(presented);
  // Both comparisons are always made, so that which token matched does not show in the timing.
  const admin = timingSafeEqual(given, admission.token);
  const hook = admission.hookToken !== undefined && timingSafeEqual(given, admission.hookToken);
  if (admin) return "admin";
  if (hook) {
    if (path === "/v1/hooks/claude-code") return "hook";
    throw new HttpError(403, "forbidden", `the hook token may only relay Claude Code hook events (POST /v1/hooks/claude-code), not ${printableHeader(request.method ?? "?")} ${printableHeader(path)}`, true);
  }
  throw new HttpError(401, "unauthorized", "the token in the Authorization header is not the sidecar's", true, UNAUTHORIZED_HEADERS);
}

const UNAUTHORIZED_HEADERS = { "www-authenticate": 'Bearer realm="vigil"' };

/** A header's value as it may be quoted in a message: cut short, control characters escaped. */
function printableHeader(text: string): string {
  const cut = text.length > 100 ? `${text.slice(0, 100)}…` : text;
  return cut.replace(/[\x00-\x1f\x7f]/g, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

async function handle(enforcer: Enforcer, maxBody: number, admission: Admission, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const path = url.pathname;
  // Nothing is read, decided or recorded for a request that does not pass, or past its token's caps.
  const caller = admit(admission, request, path);
  const release = caller !== undefined ? admission.limits[caller].acquire(caller) : undefined;
  try {
    await handleAdmitted(enforcer, maxBody, url, request, response);
  } finally {
    release?.();
  }
}

async function handleAdmitted(enforcer: Enforcer, maxBody: number, url: URL, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const path = url.pathname;
  if (path === "/v1/health") {
    allow(request, ["GET"]);
    send(response, 200, { ok: true, policy: enforcer.policy.hash, files: [...enforcer.policy.files], rules: enforcer.policy.statements.map(ruleId) });
    return;
  }
  if (path === "/v1/hooks/claude-code") {
    allow(request, ["POST"]);
    const text = await readBody(request, maxBody);
    const explicitAllow = url.searchParams.get("explicit-allow") === "1";
    send(response, 200, await answerClaudeCodeHook(text, enforcer, { explicitAllow }));
    return;
  }
  const match = /^\/v1\/runs\/([^/]+)\/(decide|record|message|cancel|stop|finish|standing)$/.exec(path);
  if (match === null) throw new HttpError(404, "not_found", `no such endpoint: ${request.method ?? "?"} ${path} (see /v1/health and /v1/runs/{run}/decide)`);
  let runId: string;
  try {
    runId = decodeURIComponent(match[1]!);
  } catch {
    throw new HttpError(400, "bad_run_id", "the run id in the path is not valid percent-encoding");
  }
  if (runId === "" || runId.length > MAX_RUN_ID) throw new HttpError(400, "bad_run_id", `a run id has 1 to ${MAX_RUN_ID} characters`);
  const operation = match[2]!;
  if (operation === "standing") {
    allow(request, ["GET"]);
    send(response, 200, enforcer.standing(runId));
    return;
  }
  allow(request, ["POST"]);
  const body = await readJson(request, maxBody);
  switch (operation) {
    case "decide": {
      const action = body["action"];
      if (typeof action !== "string" || action === "") throw new HttpError(400, "bad_request", "`action` must be a non-empty string (the tool's name)");
      if (!isJsonObject(body["args"] ?? {})) throw new HttpError(400, "bad_request", "`args` must be an object (the call's named arguments)");
      // The directory the call runs in: the guard reads the call's relative paths against it.
      const cwd = body["cwd"];
      if (cwd !== undefined && (typeof cwd !== "string" || !isAbsolute(cwd))) throw new HttpError(400, "bad_request", "`cwd` must be an absolute path (the directory the call runs in)");
      const decided = enforcer.decide(runId, { ...optionalId(body), action, args: body["args"] ?? {}, ...(typeof cwd === "string" ? { cwd } : {}) });
      send(response, 200, {
        // A refusal on a halted run (this call halted it, or an earlier one) says so: the caller stops the run.
        decision: decided.decision === "block" && decided.containment?.state === "halted" ? "halted" : decided.decision,
        verdict: decided.verdict,
        callId: decided.callId,
        reason: decided.reason,
        violations: decided.violations,
        events: decided.events.length,
        ...(decided.error !== undefined ? { error: decided.error } : {}),
        ...(decided.containment !== undefined ? { containment: decided.containment } : {}),
        audit: decided.audit.seq,
      });
      return;
    }
    case "record": {
      const status = body["status"];
      if (status !== "ok" && status !== "error") throw new HttpError(400, "bad_request", '`status` must be "ok" or "error"');
      const output = body["output"];
      if (output !== undefined && typeof output !== "string" && !Array.isArray(output)) throw new HttpError(400, "bad_request", "`output` must be a string or a list of content blocks");
      const action = body["action"];
      if (action !== undefined && (typeof action !== "string" || action === "")) throw new HttpError(400, "bad_request", "`action` must be a non-empty string");
      // A result of no call this sidecar let run is not an error of the request: it is logged, and `anomaly` says why.
      const recorded = enforcer.record(runId, {
        ...optionalId(body),
        ...(typeof action === "string" ? { action } : {}),
        status,
        ...(output !== undefined ? { content: output } : {}),
      });
      send(response, 200, {
        callId: recorded.callId,
        positions: recorded.positions,
        violations: recorded.violations,
        ...(recorded.reason !== undefined ? { reason: recorded.reason } : {}),
        ...(recorded.containment !== undefined ? { containment: recorded.containment } : {}),
        ...(recorded.duplicate === true ? { duplicate: true } : {}),
        // A result of no call the enforcer let run is not recorded (it is logged): the caller is told why.
        ...(recorded.anomaly !== undefined ? { anomaly: recorded.anomaly } : {}),
      });
      return;
    }
    case "message": {
      const text = body["text"];
      if (typeof text !== "string") throw new HttpError(400, "bad_request", "`text` must be a string (what the user said)");
      const recorded = enforcer.message(runId, text);
      send(response, 200, { positions: recorded.positions, violations: recorded.violations });
      return;
    }
    case "cancel": {
      const id = body["id"];
      if (typeof id !== "string" || id === "") throw new HttpError(400, "bad_request", "`id` must name the decided call that did not run");
      const cancelled = enforcer.cancel(runId, id);
      if (!cancelled) throw new HttpError(404, "no_such_call", `no decided call \`${id}\` waits for its result in run \`${runId}\``);
      send(response, 200, { cancelled: true });
      return;
    }
    case "stop": {
      const stop = enforcer.stop(runId, body["active"] === true);
      send(response, 200, { block: stop.block, open: stop.open, ...(stop.reason !== undefined ? { reason: stop.reason } : {}) });
      return;
    }
    case "finish": {
      const finished = enforcer.finish(runId);
      send(response, 200, { verdict: finished.verdict, verdicts: finished.verdicts });
      return;
    }
  }
}

function allow(request: IncomingMessage, methods: readonly string[]): void {
  if (!methods.includes(request.method ?? "")) throw new HttpError(405, "method_not_allowed", `use ${methods.join(" or ")} here`);
}

function optionalId(body: { readonly [key: string]: JsonValue }): { id?: string } {
  const id = body["id"];
  if (id === undefined || id === null) return {};
  if (typeof id === "string" && id !== "") return { id };
  if (typeof id === "number" && Number.isSafeInteger(id)) return { id: String(id) };
  throw new HttpError(400, "bad_request", "`id` must be a non-empty string (or an integer)");
}

/** The request's body as a JSON object, read up to `limit` bytes (413 past it). */
async function readJson(request: IncomingMessage, limit: number): Promise<{ readonly [key: string]: JsonValue }> {
  const text = await readBody(request, limit);
  if (text.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new HttpError(400, "bad_json", `the body is not valid JSON: ${(error as Error).message}`);
  }
  if (!isJsonObject(value)) throw new HttpError(400, "bad_json", "the body must be a JSON object");
  return value;
}

/** The request's body as text, read up to `limit` bytes (413 past it). */
async function readBody(request: IncomingMessage, limit: number): Promise<string> {
  const type = request.headers["content-type"];
  if (type !== undefined && !/^application\/json\b/i.test(type)) throw new HttpError(415, "unsupported_media_type", "send the body as application/json");
  const declared = Number(request.headers["content-length"]);
  if (Number.isFinite(declared) && declared > limit) {
    throw new HttpError(413, "payload_too_large", `the body is ${declared} bytes; at most ${limit} are accepted`, true);
  }
  const body = await new Promise<Buffer>((resolvePromise, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    request.on("data", (chunk: Buffer) => {
      if (refused) return;
      size += chunk.length;
      // Past the limit the rest is read and dropped (the request's time limit bounds how long), so
      // that the client, still sending, reads the answer instead of a broken connection.
      if (size > limit) {
        refused = true;
        reject(new HttpError(413, "payload_too_large", `the body is over ${limit} bytes, the most accepted`));
      } else chunks.push(chunk);
    });
    request.on("end", () => {
      if (!refused) resolvePromise(Buffer.concat(chunks));
    });
    request.on("error", reject);
  });
  return body.toString("utf8");
}

function send(response: ServerResponse, status: number, body: unknown, close = false, headers: Readonly<Record<string, string>> = {}): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...headers, ...(close ? { connection: "close" } : {}) });
  response.end(text);
}
