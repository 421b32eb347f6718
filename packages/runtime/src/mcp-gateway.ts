import { randomUUID } from "node:crypto";
import type { Readable, Writable } from "node:stream";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type JSONRPCNotification,
  type JSONRPCRequest,
  type RequestId,
} from "@modelcontextprotocol/sdk/types.js";
import { isJsonObject, type JsonValue } from "@vigil/trace";
import type { Enforcer } from "./enforcer.js";
import { printable } from "./reason.js";

/**
 * The MCP gateway: an MCP server on standard input and output that runs the real server as its
 * child and stands between the two. Every message goes through unchanged, in both directions:
 * requests, results and errors, notifications (progress, cancellation, logging, list changes),
 * and the requests the server makes of the client (roots, sampling, elicitation), because the
 * gateway forwards JSON-RPC messages rather than re-implementing each method. It reads only
 * `tools/call`: the call is decided before it is forwarded; a blocked call never reaches the server
 * and gets a tool result with `isError: true` and the reason (the rule, its text, the remediation);
 * an allowed call's result is recorded when the server answers (its status from `isError`, its
 * output the text of its content). A call that needs a person's approval (`ask`) is refused the
 * same way, saying so: MCP has no way to ask here.
 *
 * A call's identity is the gateway's own, never the client's JSON-RPC id: a client may use an id
 * again once it has its answer (the MCP Inspector's CLI sends every call as id 1 or 2, in a new
 * process each time), and several gateways may share a run (`--run`). Each call gets an id unique
 * to this gateway (see `CallIds`), and each request of the client reaches the server under an id
 * of the gateway's too (see `Routes`), so that even two requests in flight with the same JSON-RPC
 * id are two calls, decided, recorded and answered apart.
 */

export interface McpGatewayOptions {
  readonly enforcer: Enforcer;
  /** The run the gateway's calls belong to (one per gateway process by default). */
  readonly runId: string;
  /** The real server: its command and arguments. */
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd?: string;
  /** The server's environment (default: the gateway's own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Where the agent's client is (default: this process's standard input and output). */
  readonly input?: Readable;
  readonly output?: Writable;
  /** Told about what the gateway could not do (a result it could not record, say). */
  readonly log?: (line: string) => void;
  /** Ends the gateway (on SIGTERM, say): the run's verdicts are logged and the server is closed. */
  readonly signal?: AbortSignal;
}

/** A tool call forwarded to the server, waiting for its result. */
interface ForwardedCall {
  readonly callId: string;
  readonly name: string;
}

/**
 * The ids of this gateway's calls: `mcp-<a UUID drawn when the gateway starts>-<a count>`. The
 * count keeps them in order and short to quote; the UUID keeps them apart from the calls of any
 * other gateway in the same run.
 */
export class CallIds {
  private readonly prefix = `mcp-${randomUUID()}`;
  private count = 0;

  next(): string {
    this.count += 1;
    return `${this.prefix}-${this.count}`;
  }
}

/** A request of the client sent on to the server under the gateway's own id. */
interface Route {
  /** The client's id: its answer goes back under it. */
  readonly clientId: RequestId;
  /** The tool call it is, whose result is recorded when the answer comes. */
  readonly call?: ForwardedCall;
}

/**
 * The client's requests on their way to the server. Each is sent under an id of the gateway's (a
 * count), and the server's answer goes back under the client's id; so the server never sees two
 * requests in flight with one id, whatever ids the client uses. A cancellation names the client's
 * id: it is sent on for each request in flight under it.
 */
export class Routes {
  private readonly inFlight = new Map<number, Route>();
  private count = 0;

  /** The request as the server gets it, and remembers how to route its answer. */
  out(request: JSONRPCRequest, call?: ForwardedCall): JSONRPCRequest {
    this.count += 1;
    this.inFlight.set(this.count, { clientId: request.id, ...(call !== undefined ? { call } : {}) });
    return { ...request, id: this.count };
  }

  /** The route of an answer of the server, forgotten once taken (undefined: not a request of the client's). */
  back(id: RequestId): Route | undefined {
    if (typeof id !== "number") return undefined;
    const route = this.inFlight.get(id);
    this.inFlight.delete(id);
    return route;
  }

  /** The gateway's ids of the requests in flight under the client's id. */
  idsOf(clientId: RequestId): number[] {
    return [...this.inFlight].filter(([, route]) => route.clientId === clientId).map(([id]) => id);
  }
}

/** Runs the gateway until either side closes; then the run's verdicts are logged. */
export async function runMcpGateway(options: McpGatewayOptions): Promise<void> {
  const { enforcer, runId } = options;
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(options.env ?? process.env)) if (value !== undefined) env[name] = value;
  const upstream = new StdioServerTransport(options.input, options.output);
  const downstream = new StdioClientTransport({ command: options.command, args: [...options.args], env, stderr: "inherit", ...(options.cwd !== undefined ? { cwd: options.cwd } : {}) });
  const routes = new Routes();
  const callIds = new CallIds();

  let closing = false;
  let done!: () => void;
  const closed = new Promise<void>((resolvePromise) => (done = resolvePromise));
  const close = async (): Promise<void> => {
    if (closing) return;
    closing = true;
    // The verdicts first: whoever ended the session may stop this process soon after.
    try {
      enforcer.finish(runId);
    } catch (error) {
      log(`vigil mcp-gateway: the run's verdicts could not be logged: ${(error as Error).message}`);
    }
    await Promise.allSettled([upstream.close(), downstream.close()]);
    done();
  };

  const send = (transport: StdioServerTransport | StdioClientTransport, message: JSONRPCMessage): void => {
    transport.send(message).catch((error: unknown) => log(`vigil mcp-gateway: a message could not be sent: ${(error as Error).message}`));
  };

  upstream.onmessage = (message: JSONRPCMessage) => {
    if (isJSONRPCRequest(message) && message.method === "tools/call") {
      const answer = decideToolCall(enforcer, runId, message, callIds.next());
      if (answer.forward) send(downstream, routes.out(message, answer.call));
      else send(upstream, { jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: answer.reason }], isError: true } });
      return;
    }
    if (isJSONRPCRequest(message)) send(downstream, routes.out(message));
    else if (isCancellation(message)) for (const id of routes.idsOf(message.params.requestId)) send(downstream, { ...message, params: { ...message.params, requestId: id } });
    else send(downstream, message);
  };

  downstream.onmessage = (message: JSONRPCMessage) => {
    const answer = isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message);
    const route = answer && message.id !== undefined ? routes.back(message.id) : undefined;
    if (!answer || route === undefined) {
      // The server's own requests and notifications, as they are.
      send(upstream, message);
      return;
    }
    const call = route.call;
    if (call !== undefined) {
      try {
        if (isJSONRPCResultResponse(message)) {
          const result = message.result as { content?: unknown; isError?: unknown };
          enforcer.record(runId, {
            id: call.callId,
            action: call.name,
            status: result.isError === true ? "error" : "ok",
            ...(Array.isArray(result.content) ? { content: result.content as JsonValue } : {}),
          });
        } else {
          // The server refused the call (an unknown tool, invalid arguments): it failed.
          enforcer.record(runId, { id: call.callId, action: call.name, status: "error", content: message.error.message });
        }
      } catch (error) {
        log(`vigil mcp-gateway: the result of the call ${call.callId} (${printable(call.name)}) could not be recorded: ${(error as Error).message}`);
      }
    }
    send(upstream, { ...message, id: route.clientId } as JSONRPCMessage);
  };

  upstream.onclose = () => void close();
  downstream.onclose = () => void close();
  // The client ends the session by closing the gateway's standard input.
  const input = options.input ?? process.stdin;
  input.once("end", () => void close());
  input.once("close", () => void close());
  if (options.signal !== undefined) {
    if (options.signal.aborted) void close();
    else options.signal.addEventListener("abort", () => void close(), { once: true });
  }
  upstream.onerror = (error) => log(`vigil mcp-gateway: client side: ${error.message}`);
  downstream.onerror = (error) => log(`vigil mcp-gateway: server side: ${error.message}`);

  await downstream.start();
  await upstream.start();
  await closed;
}

/** Forward the call (and record its result, unless it names no tool), or answer it with the reason it is refused. */
type ToolCallAnswer = { readonly forward: true; readonly call?: ForwardedCall } | { readonly forward: false; readonly reason: string };

function decideToolCall(enforcer: Enforcer, runId: string, request: JSONRPCRequest, callId: string): ToolCallAnswer {
  const params = request.params;
  const name = isJsonObject(params) ? params["name"] : undefined;
  const args = isJsonObject(params) ? (params["arguments"] ?? {}) : {};
  // Not a call the server could run either: it answers it with its own error.
  if (typeof name !== "string" || name === "") return { forward: true };
  try {
    const decided = enforcer.decide(runId, { id: callId, action: name, args });
    if (decided.decision === "allow") return { forward: true, call: { callId, name } };
    const reason = decided.decision === "ask" ? `${decided.reason}\nThis gateway cannot ask a person, so the call is refused; ask the user, who can allow it in the policy.` : decided.reason;
    return { forward: false, reason };
  } catch (error) {
    return { forward: false, reason: `Vigil failed (${(error as Error).message}); the call is refused.` };
  }
}

/** A client's `notifications/cancelled`, which names the request it cancels by the client's id. */
function isCancellation(message: JSONRPCMessage): message is JSONRPCNotification & { params: { requestId: RequestId } } {
  if (!isJSONRPCNotification(message) || message.method !== "notifications/cancelled") return false;
  const requestId = (message.params as { requestId?: unknown } | undefined)?.requestId;
  return typeof requestId === "string" || typeof requestId === "number";
}
