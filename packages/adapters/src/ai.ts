import { argumentsOf, textOf, VigilCallPath, type Speaker } from "./core.js";

/**
 * The Vercel AI SDK (`ai`): `vigilTools(tools, options)` wraps a tool set so that every `execute`
 * is decided first and its result recorded. A refused call does not run: its result is the
 * refusal (the rule, its text, the remediation), which the model reads as an error result
 * (`error-text`), and the step goes on. The user's messages among those the SDK hands each tool
 * (`messages`) are recorded as the run's `user_message` events, each once, before the call is
 * decided; `vigilStepRecorder` (an `onStepFinish` callback) records the agent's text of each step.
 *
 * This file imports nothing from the SDK: it works on the shape of a tool (`execute`,
 * `toModelOutput`), so the application's version of `ai` is the one in use.
 */

/** What the SDK passes to `execute` besides the input (`ToolExecutionOptions`). */
export interface AiToolCallOptions {
  readonly toolCallId: string;
  readonly messages?: readonly { readonly role: string; readonly content: unknown }[];
  readonly abortSignal?: AbortSignal;
  readonly experimental_context?: unknown;
}

/** A tool of the SDK, as far as this wrapper reads it. */
export interface AiTool {
  execute?: (input: never, options: never) => unknown;
  toModelOutput?: (options: never) => unknown;
  [key: string]: unknown;
}

export interface AiAdapterOptions {
  /** The run the calls belong to: one per conversation, a fixed id or read from the call's options. */
  readonly runId: string | ((options: AiToolCallOptions) => string);
}

/** How many refused call ids are kept to mark their results as errors. */
const REFUSALS_KEPT = 10_000;

/** The tool set with every `execute` in Vigil's call path; tools without `execute` are left as they are. */
export function vigilTools<T extends Record<string, AiTool>>(tools: T, path: VigilCallPath, options: AiAdapterOptions): T {
  const refused = new Set<string>();
  const wrapped: Record<string, AiTool> = {};
  for (const [name, tool] of Object.entries(tools)) wrapped[name] = tool.execute === undefined ? tool : wrapTool(name, tool, path, options, refused);
  return wrapped as T;
}

function wrapTool(name: string, tool: AiTool, path: VigilCallPath, options: AiAdapterOptions, refused: Set<string>): AiTool {
  const execute = tool.execute as unknown as (input: unknown, callOptions: AiToolCallOptions) => unknown;
  const toModelOutput = tool.toModelOutput as unknown as ((output: { toolCallId: string; input: unknown; output: unknown }) => unknown) | undefined;
  return {
    ...tool,
    execute: async (input: unknown, callOptions: AiToolCallOptions) => {
      const runId = typeof options.runId === "string" ? options.runId : options.runId(callOptions);
      path.saidSince(runId, conversation(callOptions.messages ?? []));
      const outcome = await path.call(runId, { id: callOptions.toolCallId, action: name, args: argumentsOf(input) }, async () => await execute(input, callOptions));
      if (outcome.ran) return outcome.output;
      remember(refused, callOptions.toolCallId);
      return outcome.refusal;
    },
    toModelOutput: async (result: { toolCallId: string; input: unknown; output: unknown }) => {
      if (refused.has(result.toolCallId) && typeof result.output === "string") return { type: "error-text", value: result.output };
      if (toModelOutput !== undefined) return await toModelOutput(result);
      // The SDK's own default: a string is text, anything else JSON.
      return typeof result.output === "string" ? { type: "text", value: result.output } : { type: "json", value: result.output ?? null };
    },
  } as AiTool;
}

function remember(refused: Set<string>, id: string): void {
  refused.add(id);
  if (refused.size > REFUSALS_KEPT) refused.delete(refused.values().next().value as string);
}

/** The SDK's model messages as the conversation: the user's and the assistant's text. */
function conversation(messages: readonly { readonly role: string; readonly content: unknown }[]): { speaker?: Speaker; text: string }[] {
  return messages.map((message) => {
    // The agent's text is recorded as each step finishes (vigilStepRecorder), not again from the history.
    const speaker: Speaker | undefined = message.role === "user" ? "user" : undefined;
    return speaker !== undefined ? { speaker, text: textOf(message.content) } : { text: "" };
  });
}

/** An `onStepFinish` callback that records the agent's text of each step as an `agent_message`. */
export function vigilStepRecorder(path: VigilCallPath, runId: string): (step: { readonly text?: string }) => void {
  return (step) => path.said(runId, "agent", step.text ?? "");
}
