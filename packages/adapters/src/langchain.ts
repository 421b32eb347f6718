import { argumentsOf, textOf, VigilCallPath } from "./core.js";

/**
 * LangChain.js (`@langchain/core`, `@langchain/langgraph`): `vigilTool(tool, path, options)` gives
 * a tool whose every call is decided first and its result recorded, for a `ToolNode`, an agent or
 * a direct `invoke`; `vigilCallbacks(path, options)` is a callback handler that records the
 * conversation (the user's messages as the chat model receives them, the agent's text as it
 * answers). The run is the LangGraph thread (`configurable.thread_id`), or `options.runId`.
 *
 * A refused call does not run: the tool returns the refusal (the rule, its text, the remediation)
 * as its content, a `ToolMessage` for a tool call, so the model reads it and goes on.
 *
 * This file imports nothing from LangChain: the wrapped tool is the tool itself with its `_call`
 * (the one method every `StructuredTool` runs a call through, after parsing the input and before
 * formatting the output) put in the call path, so schema, callbacks and output format stay the tool's.
 */

/** A LangChain tool, as far as this wrapper reads it (`StructuredTool`). */
export interface LangChainTool {
  readonly name: string;
  readonly responseFormat?: string;
  _call(input: never, runManager?: never, config?: never): Promise<unknown>;
}

/** The parts of a runnable config this adapter reads. */
export interface LangChainConfig {
  readonly configurable?: { readonly thread_id?: unknown };
  readonly metadata?: { readonly thread_id?: unknown };
  readonly toolCall?: { readonly id?: string };
}

export interface LangChainAdapterOptions {
  /** The run when the call's config names no thread (default `"default"`). */
  readonly runId?: string;
}

/** The run of a config: its LangGraph thread, or the default. */
export function runOfConfig(config: LangChainConfig | undefined, options: LangChainAdapterOptions): string {
  const thread = config?.configurable?.thread_id ?? config?.metadata?.thread_id;
  return typeof thread === "string" || typeof thread === "number" ? String(thread) : (options.runId ?? "default");
}

/** The tool, in Vigil's call path. */
export function vigilTool<T extends LangChainTool>(tool: T, path: VigilCallPath, options: LangChainAdapterOptions = {}): T {
  const original = tool._call as unknown as (this: T, input: unknown, runManager: unknown, config: LangChainConfig | undefined) => Promise<unknown>;
  const wrapped = Object.create(tool) as T;
  Object.defineProperty(wrapped, "_call", {
    value: async function (this: T, input: unknown, runManager: unknown, config: LangChainConfig | undefined) {
      const runId = runOfConfig(config, options);
      const id = config?.toolCall?.id;
      const outcome = await path.call(runId, { ...(id !== undefined ? { id } : {}), action: tool.name, args: argumentsOf(input) }, () => original.call(this, input, runManager, config), (output) =>
        contentOfOutput(this.responseFormat === "content_and_artifact" && Array.isArray(output) ? output[0] : output),
      );
      if (outcome.ran) return outcome.output;
      return this.responseFormat === "content_and_artifact" ? [outcome.refusal, undefined] : outcome.refusal;
    },
  });
  return wrapped;
}

/** Every tool of a list, in Vigil's call path. */
export function vigilTools<T extends LangChainTool>(tools: readonly T[], path: VigilCallPath, options: LangChainAdapterOptions = {}): T[] {
  return tools.map((tool) => vigilTool(tool, path, options));
}

function contentOfOutput(output: unknown) {
  if (typeof output === "string") return output;
  // A ToolMessage or content blocks: their text.
  const content = typeof output === "object" && output !== null && "content" in output ? (output as { content: unknown }).content : output;
  const text = textOf(content);
  return text !== "" ? text : JSON.stringify(output ?? null) ?? "";
}

/** A message as LangChain's callbacks give it (`BaseMessage`). */
interface LangChainMessage {
  readonly content: unknown;
  readonly type?: string;
  getType?(): string;
  _getType?(): string;
}

function typeOf(message: LangChainMessage): string | undefined {
  return typeof message.getType === "function" ? message.getType() : typeof message._getType === "function" ? message._getType() : message.type;
}

/**
 * A callback handler (pass it in `callbacks`) that records the conversation: when a chat model
 * starts, the user's messages it has not seen yet; when it ends, the agent's text.
 */
export function vigilCallbacks(path: VigilCallPath, options: LangChainAdapterOptions = {}) {
  /** The run of each model call in flight (LangChain's run id), for its end. */
  const runs = new Map<string, string>();
  return {
    name: "vigil",
    handleChatModelStart(_llm: unknown, messages: LangChainMessage[][], callbackRunId: string, _parent?: string, _extra?: unknown, _tags?: string[], metadata?: Record<string, unknown>): void {
      const runId = runOfConfig({ metadata: metadata ?? {} }, options);
      runs.set(callbackRunId, runId);
      const history = messages[0] ?? [];
      // The agent's own text is recorded when the model answers (below), not again from the history.
      path.saidSince(runId, history.map((message) => (typeOf(message) === "human" ? { speaker: "user" as const, text: textOf(message.content) } : { text: "" })));
    },
    handleLLMEnd(output: { generations?: { text?: string; message?: LangChainMessage }[][] }, callbackRunId: string): void {
      const runId = runs.get(callbackRunId);
      runs.delete(callbackRunId);
      if (runId === undefined) return;
      const generation = output.generations?.[0]?.[0];
      const text = generation?.message !== undefined ? textOf(generation.message.content) : (generation?.text ?? "");
      path.said(runId, "agent", text);
    },
    handleLLMError(_error: unknown, callbackRunId: string): void {
      runs.delete(callbackRunId);
    },
  };
}
