import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { pieces, writeAnthropicMessage } from "./anthropic-wire.js";

/**
 * A model endpoint on 127.0.0.1 speaking the two wire formats the providers use: Anthropic's
 * Messages API (`POST /v1/messages`) and OpenAI's chat completions (`POST /v1/chat/completions`),
 * each plain or streamed as server-sent events, exactly as the SDKs read them. It answers from a
 * script, one step per request, and records every request it got.
 */

export type Step =
  /** An answer with this text (streamed when the request asks for a stream). */
  | { readonly text: string; readonly stopReason?: string }
  /** An error status with a body (and `retry-after: 0` for 429). */
  | { readonly status: number; readonly body?: string }
  /** No answer for this long (the client's time-out ends it first). */
  | { readonly hangMs: number }
  /** A body that is not what the format says. */
  | { readonly raw: string };

export interface RecordedRequest {
  readonly path: string;
  readonly headers: IncomingMessage["headers"];
  readonly body: any;
}

export class ModelServer {
  readonly requests: RecordedRequest[] = [];
  private script: Step[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<ModelServer> {
    let self: ModelServer | undefined;
    const server = createServer((request, response) => void self!.handle(request, response));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new ModelServer(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    return self;
  }

  /** The answers to give, in order; a request past the end gets a 500. */
  answer(...steps: Step[]): void {
    this.script = [...steps];
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    let body: any;
    try {
      body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
    } catch {
      body = undefined;
    }
    const path = (request.url ?? "").replace(/\?.*$/, "");
    this.requests.push({ path, headers: request.headers, body });
    const step = this.script.shift();
    const anthropic = path === "/v1/messages";
    if (!anthropic && path !== "/v1/chat/completions") return void response.writeHead(404).end();
    if (step === undefined) return void response.writeHead(500, { "content-type": "application/json" }).end(JSON.stringify({ error: { message: "no more scripted answers" } }));
    if ("hangMs" in step) {
      const timer = setTimeout(() => response.writeHead(200, { "content-type": "application/json" }).end("{}"), step.hangMs);
      response.on("close", () => clearTimeout(timer));
      return;
    }
    if ("raw" in step) return void response.writeHead(200, { "content-type": "application/json" }).end(step.raw);
    if ("status" in step) {
      const headers = { "content-type": "application/json", ...(step.status === 429 ? { "retry-after": "0" } : {}) };
      const fallback = anthropic ? { type: "error", error: { type: "api_error", message: `status ${step.status}` } } : { error: { message: `status ${step.status}`, type: "api_error" } };
      return void response.writeHead(step.status, headers).end(step.body ?? JSON.stringify(fallback));
    }
    const model = String(body?.model ?? "test-model");
    const stream = body?.stream === true;
    if (anthropic) {
      writeAnthropicMessage(response, { id: "msg_test", model, content: [{ type: "text", text: step.text }], stopReason: step.stopReason ?? "end_turn", stream });
      return;
    }
    const finish = step.stopReason ?? "stop";
    if (!stream) {
      response.writeHead(200, { "content-type": "application/json" });
      response.end(JSON.stringify({ id: "chatcmpl-test", object: "chat.completion", created: 1_764_000_000, model, choices: [{ index: 0, message: { role: "assistant", content: step.text, refusal: null }, finish_reason: finish, logprobs: null }], usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 } }));
      return;
    }
    response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    const chunk = (delta: object, finishReason: string | null) =>
      response.write(`data: ${JSON.stringify({ id: "chatcmpl-test", object: "chat.completion.chunk", created: 1_764_000_000, model, choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null }] })}\n\n`);
    chunk({ role: "assistant", content: "" }, null);
    for (const piece of pieces(step.text)) chunk({ content: piece }, null);
    chunk({}, finish);
    response.write("data: [DONE]\n\n");
    response.end();
  }
}
