import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { isJsonObject, type JsonValue } from "@vigil/trace";
import { answerClaudeCodeHook } from "./claude-code-hook.js";
import type { Enforcer } from "./enforcer.js";

/**
 * The sidecar: the enforcer over HTTP, for agents written in any language. It listens on the
 * loopback interface only (127.0.0.1), keeps one monitor per run id (in memory, and in the
 * database with the audit log), and answers JSON:
 *
 *   GET  /v1/health                  the policy's hash and its rules
 *   POST /v1/runs/{run}/decide       {id?, action, args}            → the decision, its reason, the violations
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
 */

export interface SidecarOptions {
  readonly enforcer: Enforcer;
  /** The TCP port; 0 (the default) lets the system choose one. */
  readonly port?: number;
  /** The largest request body accepted, in bytes (default 1 MiB). */
  readonly maxBodyBytes?: number;
}

export interface Sidecar {
  readonly url: string;
  readonly port: number;
  /** Stops accepting connections, lets the requests in flight finish, and resolves when all are done. */
  close(): Promise<void>;
}

const DEFAULT_MAX_BODY = 1024 * 1024;
const MAX_RUN_ID = 256;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** Close the connection after the answer (the rest of the request will not be read). */
    readonly close = false,
  ) {
    super(message);
  }
}

export function startSidecar(options: SidecarOptions): Promise<Sidecar> {
  const maxBody = options.maxBodyBytes ?? DEFAULT_MAX_BODY;
  const server = createServer((request, response) => {
    handle(options.enforcer, maxBody, request, response).catch((error: unknown) => {
      if (error instanceof HttpError) send(response, error.status, { error: { code: error.code, message: error.message } }, error.close);
      else send(response, 503, { error: { code: "enforcer_failed", message: `the enforcer failed (${(error as Error).message}); do not run the call` } });
    });
  });
  // Slow or stalled clients cannot hold the server: a request must arrive whole within a minute.
  server.requestTimeout = 60_000;
  server.headersTimeout = 10_000;
  return new Promise((resolvePromise, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      server.off("error", reject);
      const port = (server.address() as AddressInfo).port;
      resolvePromise({ url: `http://127.0.0.1:${port}`, port, close: () => closeServer(server) });
    });
  });
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolvePromise) => {
    server.close(() => resolvePromise());
    // Idle keep-alive connections would hold the close open; busy ones end after their request.
    server.closeIdleConnections();
  });
}

async function handle(enforcer: Enforcer, maxBody: number, request: IncomingMessage, response: ServerResponse): Promise<void> {
  const url = new URL(request.url ?? "/", "http://127.0.0.1");
  const path = url.pathname;
  if (path === "/v1/health") {
    allow(request, ["GET"]);
    send(response, 200, { ok: true, policy: enforcer.policy.hash, files: [...enforcer.policy.files], rules: enforcer.policy.statements.map((s) => `${s.policy}.${s.name}`) });
    return;
  }
  if (path === "/v1/hooks/claude-code") {
    allow(request, ["POST"]);
    const text = await readBody(request, maxBody);
    const explicitAllow = url.searchParams.get("explicit-allow") === "1";
    send(response, 200, answerClaudeCodeHook(text, enforcer, { explicitAllow }));
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
      const decided = enforcer.decide(runId, { ...optionalId(body), action, args: body["args"] ?? {} });
      send(response, 200, {
        decision: decided.decision,
        verdict: decided.verdict,
        callId: decided.callId,
        reason: decided.reason,
        violations: decided.violations,
        events: decided.events.length,
        ...(decided.error !== undefined ? { error: decided.error } : {}),
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
      let recorded;
      try {
        recorded = enforcer.record(runId, {
          ...optionalId(body),
          ...(typeof action === "string" ? { action } : {}),
          ...(body["args"] !== undefined ? { args: body["args"] } : {}),
          status,
          ...(output !== undefined ? { content: output } : {}),
        });
      } catch (error) {
        // A result that names no call, or arguments that cannot be read: the request is wrong.
        if (error instanceof RangeError || (error as Error).name === "CallEventsError") throw new HttpError(400, "bad_request", (error as Error).message);
        throw error;
      }
      send(response, 200, {
        callId: recorded.callId,
        positions: recorded.positions,
        violations: recorded.violations,
        ...(recorded.reason !== undefined ? { reason: recorded.reason } : {}),
        ...(recorded.duplicate === true ? { duplicate: true } : {}),
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

function send(response: ServerResponse, status: number, body: unknown, close = false): void {
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const text = JSON.stringify(body);
  response.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text), ...(close ? { connection: "close" } : {}) });
  response.end(text);
}
