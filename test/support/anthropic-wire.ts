import type { ServerResponse } from "node:http";

/**
 * Anthropic's Messages API on the wire, as its SDKs and Claude Code read it: one assistant message,
 * whole (`application/json`) or streamed as server-sent events (`message_start`, a start, deltas
 * and a stop per content block, `message_delta`, `message_stop`). The test servers that play a
 * model answer through this one writer.
 */

export type ContentBlock = { readonly type: "text"; readonly text: string } | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown };

export function writeAnthropicMessage(
  response: ServerResponse,
  message: { readonly id: string; readonly model: string; readonly content: readonly ContentBlock[]; readonly stopReason: string; readonly stream: boolean },
): void {
  const usage = { input_tokens: 10, output_tokens: 10 };
  const head = { id: message.id, type: "message", role: "assistant", model: message.model, stop_sequence: null };
  if (!message.stream) {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify({ ...head, content: message.content, stop_reason: message.stopReason, usage }));
    return;
  }
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const event = (name: string, data: object) => response.write(`event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`);
  event("message_start", { message: { ...head, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } });
  message.content.forEach((block, index) => {
    if (block.type === "text") {
      event("content_block_start", { index, content_block: { type: "text", text: "" } });
      for (const piece of pieces(block.text)) event("content_block_delta", { index, delta: { type: "text_delta", text: piece } });
    } else {
      event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      for (const piece of pieces(JSON.stringify(block.input))) event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: piece } });
    }
    event("content_block_stop", { index });
  });
  event("message_delta", { delta: { stop_reason: message.stopReason, stop_sequence: null }, usage: { output_tokens: 10 } });
  event("message_stop", {});
  response.end();
}

/** A text in pieces of a few characters, as a stream delivers it. */
export function pieces(text: string): string[] {
  const out: string[] = [];
  for (let index = 0; index < text.length; index += 17) out.push(text.slice(index, index + 17));
  return out;
}
