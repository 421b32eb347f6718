import { textOf, VigilCallPath, type Speaker } from "./core.js";

/**
 * The OpenAI Agents SDK (`@openai/agents`): `vigilTool(tool, path, options)` puts a function tool
 * in the call path (its `invoke` is decided first, its result recorded); `vigilGuardrails(path,
 * options)` gives an input guardrail that records the user's messages and an output guardrail that
 * records the agent's final text, neither of which ever trips. A refused call does not run: its
 * output is the refusal (the rule, its text, the remediation), which the model reads as the tool's
 * result, and the run goes on.
 *
 * The run is chosen from the run's context (`options.runId`, a fixed id or a function of the
 * context object given to `run`). This file imports nothing from the SDK: a function tool is a plain
 * object, and so is a guardrail.
 */

/** A function tool, as far as this wrapper reads it (`FunctionTool`). */
export interface OpenAiFunctionTool {
  readonly type: "function";
  readonly name: string;
  invoke: (runContext: never, input: string, details?: never) => Promise<unknown>;
}

/** The parts of the SDK's `RunContext` and `ToolCallDetails` this adapter reads. */
interface RunContextLike {
  readonly context?: unknown;
}
interface CallDetailsLike {
  readonly toolCall?: { readonly callId?: string };
}

export interface OpenAiAdapterOptions {
  /** The run: a fixed id, or one read from the context object given to `run` (default `"default"`). */
  readonly runId?: string | ((context: unknown) => string);
}

function runOf(runContext: RunContextLike | undefined, options: OpenAiAdapterOptions): string {
  if (typeof options.runId === "function") return options.runId(runContext?.context);
  return options.runId ?? "default";
}

/** The tool, in Vigil's call path. */
export function vigilTool<T extends OpenAiFunctionTool>(tool: T, path: VigilCallPath, options: OpenAiAdapterOptions = {}): T {
  const invoke = tool.invoke as unknown as (runContext: RunContextLike, input: string, details?: CallDetailsLike) => Promise<unknown>;
  return {
    ...tool,
    invoke: async (runContext: RunContextLike, input: string, details?: CallDetailsLike) => {
      const id = details?.toolCall?.callId;
      const outcome = await path.call(runOf(runContext, options), { ...(id !== undefined ? { id } : {}), action: tool.name, args: parsedArguments(input) }, () => invoke(runContext, input, details));
      return outcome.ran ? outcome.output : outcome.refusal;
    },
  };
}

/** Every tool of a list in the call path (tools that are not function tools are left as they are). */
export function vigilTools<T extends { readonly type: string }>(tools: readonly T[], path: VigilCallPath, options: OpenAiAdapterOptions = {}): T[] {
  return tools.map((tool) => (tool.type === "function" ? (vigilTool(tool as unknown as OpenAiFunctionTool, path, options) as unknown as T) : tool));
}

/**
 * The model's arguments (a JSON text) as an object. Text that is not a JSON object is judged as
 * `{input: text}`: the call is still decided (the SDK itself then rejects what it cannot parse).
 */
function parsedArguments(input: string): unknown {
  try {
    const parsed = JSON.parse(input) as unknown;
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed) ? parsed : { input };
  } catch {
    return { input };
  }
}

/** An input item of the SDK (a message with a role, or anything else). */
interface InputItem {
  readonly role?: string;
  readonly content?: unknown;
}

/**
 * Guardrails that record the conversation and never trip: spread them into an `Agent`'s options
 * (`{...vigilGuardrails(path, options)}`). The input guardrail records the user's messages of the
 * run's input; the output guardrail the agent's final text.
 */
export function vigilGuardrails(path: VigilCallPath, options: OpenAiAdapterOptions = {}) {
  const pass = { tripwireTriggered: false, outputInfo: null };
  return {
    inputGuardrails: [
      {
        name: "vigil-conversation",
        execute: async ({ input, context }: { input: string | readonly InputItem[]; context: RunContextLike }) => {
          const runId = runOf(context, options);
          for (const [speaker, text] of userMessages(input)) path.said(runId, speaker, text);
          return pass;
        },
      },
    ],
    outputGuardrails: [
      {
        name: "vigil-conversation",
        execute: async ({ agentOutput, context }: { agentOutput: unknown; context: RunContextLike }) => {
          path.said(runOf(context, options), "agent", typeof agentOutput === "string" ? agentOutput : JSON.stringify(agentOutput ?? ""));
          return pass;
        },
      },
    ],
  };
}

function userMessages(input: string | readonly InputItem[]): [Speaker, string][] {
  if (typeof input === "string") return [["user", input]];
  return input.filter((item) => item.role === "user").map((item) => ["user", textOf(inputTextParts(item.content))]);
}

/** The SDK's input parts (`input_text`) as text parts. */
function inputTextParts(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  return content.map((part) => (typeof part === "object" && part !== null && (part as { type?: unknown }).type === "input_text" ? { ...part, type: "text" } : part));
}
