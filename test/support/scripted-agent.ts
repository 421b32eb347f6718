import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { writeAnthropicMessage } from "./anthropic-wire.js";

/**
 * A scripted model for the real Claude Code, on 127.0.0.1 (`ANTHROPIC_BASE_URL`): Anthropic's
 * Messages API, streamed as server-sent events as Claude Code reads them. The agent's turns are a
 * script of tool calls: a request of the main agent (one that offers tools) is answered with the
 * step after the tool results it carries, so the n-th call is made once n-1 results came back,
 * whatever Claude Code decided about them. Past the script, and for Claude Code's side requests
 * (titles, summaries: requests without tools), the answer is a short text. Every result the agent
 * was given is kept, by step, for the test to read.
 */

export interface ToolStep {
  readonly tool: string;
  readonly input: Record<string, unknown>;
}

export interface ToolResult {
  readonly content: string;
  readonly isError: boolean;
}

export class ScriptedAgent {
  /** The result of each step's call, as the agent saw it, by step. */
  readonly results: (ToolResult | undefined)[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
    private readonly steps: readonly ToolStep[],
  ) {}

  static async start(steps: readonly ToolStep[]): Promise<ScriptedAgent> {
    let self: ScriptedAgent | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () => {
        if (!(request.url ?? "").startsWith("/v1/messages")) {
          response.writeHead(404, { "content-type": "application/json" }).end("{}");
          return;
        }
        let body: { tools?: unknown[]; messages?: { content?: unknown }[]; stream?: boolean; model?: string } = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
        } catch {
          // An unreadable request gets the plain text answer.
        }
        if ((request.url ?? "").includes("count_tokens")) {
          response.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify({ input_tokens: 10 }));
          return;
        }
        self!.answer(body, response);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    self = new ScriptedAgent(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}`, steps);
    return self;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private answer(body: { tools?: unknown[]; messages?: { content?: unknown }[]; stream?: boolean; model?: string }, response: ServerResponse): void {
    let step: ToolStep | undefined;
    if (Array.isArray(body.tools) && body.tools.length > 0) {
      const results = (body.messages ?? [])
        .flatMap((message) => (Array.isArray(message.content) ? (message.content as { type?: string; content?: unknown; is_error?: boolean }[]) : []))
        .filter((block) => block.type === "tool_result");
      results.forEach((result, index) => (this.results[index] = { content: textOf(result.content), isError: result.is_error === true }));
      step = this.steps[results.length];
    }
    const id = `toolu_${Math.random().toString(36).slice(2, 12)}`;
    writeAnthropicMessage(response, {
      id: `msg_${id}`,
      model: body.model ?? "scripted",
      content: step !== undefined ? [{ type: "tool_use", id, name: step.tool, input: step.input }] : [{ type: "text", text: "Done." }],
      stopReason: step !== undefined ? "tool_use" : "end_turn",
      stream: body.stream === true,
    });
  }
}

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((block: { text?: unknown }) => (typeof block.text === "string" ? block.text : "")).join("\n");
  return JSON.stringify(content);
}
