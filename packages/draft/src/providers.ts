import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";

/**
 * The language models a draft can come from, behind one small interface: the Anthropic Messages
 * API (`@anthropic-ai/sdk`) and OpenAI-compatible chat completions (`openai`), each answering with
 * one text, plainly or streamed. Time-outs and retries (429 and 5xx, with the server's
 * `retry-after`) are the SDKs'; a failure is an error whose message never holds the key.
 */

/** Where answers come from: a provider's API, or a file holding one answer (`answerFromFile`). */
export type ProviderName = "anthropic" | "openai" | "file";

export interface ModelRequest {
  readonly system: string;
  readonly messages: readonly { readonly role: "user" | "assistant"; readonly content: string }[];
  readonly maxTokens: number;
}

export interface ModelAnswer {
  readonly text: string;
  /** The model that answered, as the endpoint names it. */
  readonly model: string;
  /** Why the answer ended (`end_turn`, `stop`, `max_tokens`, `length`…). */
  readonly stopReason?: string;
}

export interface ModelProvider {
  readonly name: ProviderName;
  readonly model: string;
  complete(request: ModelRequest, options?: { readonly signal?: AbortSignal }): Promise<ModelAnswer>;
}

export interface ProviderOptions {
  readonly provider?: Exclude<ProviderName, "file">;
  readonly model?: string;
  /** Stream the answer (server-sent events) rather than wait for it whole. */
  readonly stream?: boolean;
  /** Per request (default 300 s). */
  readonly timeoutMs?: number;
  /** Retries of a request that failed for a reason worth retrying (default 2). */
  readonly maxRetries?: number;
  /** Where the keys and endpoints are read: `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY`, `OPENAI_BASE_URL`. */
  readonly env: Readonly<Record<string, string | undefined>>;
}

export const defaultModels: Readonly<Record<Exclude<ProviderName, "file">, string>> = { anthropic: "claude-opus-4-6", openai: "gpt-5" };

/** Why a model's answer could not be had: the words for the user, the key taken out. */
export class ModelError extends Error {}

/**
 * The provider the options ask for (or the one whose key is set: Anthropic's first), or what is
 * missing to make one.
 */
export function createProvider(options: ProviderOptions): { readonly ok: true; readonly provider: ModelProvider } | { readonly ok: false; readonly message: string } {
  const { env } = options;
  const has = (name: string) => (env[name] ?? "").trim().length > 0;
  const chosen = options.provider ?? (has("ANTHROPIC_API_KEY") ? "anthropic" : has("OPENAI_API_KEY") ? "openai" : undefined);
  if (chosen === undefined) {
    return { ok: false, message: "no model to draft with: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another endpoint), or OPENAI_API_KEY (and OPENAI_BASE_URL for an OpenAI-compatible endpoint)" };
  }
  const keyName = chosen === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
  if (!has(keyName)) return { ok: false, message: `--provider ${chosen} needs ${keyName}${chosen === "anthropic" ? " (and ANTHROPIC_BASE_URL for another endpoint)" : " (and OPENAI_BASE_URL for an OpenAI-compatible endpoint)"}` };
  const key = env[keyName]!.trim();
  const settings = {
    apiKey: key,
    timeout: options.timeoutMs ?? 300_000,
    maxRetries: options.maxRetries ?? 2,
  };
  const model = options.model ?? defaultModels[chosen];
  const stream = options.stream === true;
  if (chosen === "anthropic") {
    const baseURL = env["ANTHROPIC_BASE_URL"]?.trim() || undefined;
    const client = new Anthropic({ ...settings, ...(baseURL !== undefined ? { baseURL } : {}) });
    return { ok: true, provider: { name: "anthropic", model, complete: (request, call) => guarded(key, () => anthropicAnswer(client, model, stream, request, call?.signal)) } };
  }
  const baseURL = env["OPENAI_BASE_URL"]?.trim() || undefined;
  const client = new OpenAI({ ...settings, ...(baseURL !== undefined ? { baseURL } : {}) });
  return { ok: true, provider: { name: "openai", model, complete: (request, call) => guarded(key, () => openaiAnswer(client, model, stream, request, call?.signal)) } };
}

/**
 * A provider whose one answer was saved in a file: the answer of a chat to the request
 * `vigilc draft --show-request` printed, say. It is checked like any answer; there is no one to
 * send problems back to, so a second request is an error.
 */
export function answerFromFile(name: string, text: string): ModelProvider {
  let answered = false;
  return {
    name: "file",
    model: name,
    complete: async () => {
      if (answered) throw new ModelError(`${name} holds one answer: there is no repair round`);
      answered = true;
      return { text, model: name };
    },
  };
}

async function anthropicAnswer(client: Anthropic, model: string, stream: boolean, request: ModelRequest, signal: AbortSignal | undefined): Promise<ModelAnswer> {
  const body = { model, max_tokens: request.maxTokens, system: request.system, messages: request.messages.map((m) => ({ role: m.role, content: m.content })) };
  const message = stream ? await client.messages.stream(body, { ...(signal !== undefined ? { signal } : {}) }).finalMessage() : await client.messages.create(body, { ...(signal !== undefined ? { signal } : {}) });
  const text = message.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("");
  return { text, model: message.model, ...(message.stop_reason !== null && message.stop_reason !== undefined ? { stopReason: message.stop_reason } : {}) };
}

async function openaiAnswer(client: OpenAI, model: string, stream: boolean, request: ModelRequest, signal: AbortSignal | undefined): Promise<ModelAnswer> {
  const messages = [{ role: "system" as const, content: request.system }, ...request.messages.map((m) => ({ role: m.role, content: m.content }))];
  const options = signal !== undefined ? { signal } : {};
  if (!stream) {
    const completion = await client.chat.completions.create({ model, messages, max_completion_tokens: request.maxTokens }, options);
    const choice = completion.choices[0];
    if (choice === undefined) throw new ModelError("the endpoint answered with no choice");
    return { text: choice.message.content ?? "", model: completion.model, ...(choice.finish_reason !== null ? { stopReason: choice.finish_reason } : {}) };
  }
  const chunks = await client.chat.completions.create({ model, messages, max_completion_tokens: request.maxTokens, stream: true }, options);
  let text = "";
  let answered = model;
  let stopReason: string | undefined;
  for await (const chunk of chunks) {
    answered = chunk.model || answered;
    const choice = chunk.choices[0];
    if (choice?.delta?.content) text += choice.delta.content;
    if (choice?.finish_reason) stopReason = choice.finish_reason;
  }
  return { text, model: answered, ...(stopReason !== undefined ? { stopReason } : {}) };
}

/** Runs a request; any failure becomes a `ModelError` in plain words, with the key never in them. */
async function guarded(key: string, ask: () => Promise<ModelAnswer>): Promise<ModelAnswer> {
  try {
    return await ask();
  } catch (error) {
    throw new ModelError(redact(describe(error), key));
  }
}

function describe(error: unknown): string {
  const status = (error as { status?: unknown }).status;
  const name = (error as { constructor?: { name?: string } }).constructor?.name ?? "";
  const message = error instanceof Error ? error.message : String(error);
  if (/Timeout/.test(name)) return "the model did not answer in time (--timeout)";
  if (/UserAbort/.test(name) || (error as { name?: string }).name === "AbortError") return "the request was cancelled";
  if (status === 401 || status === 403) return `the endpoint refused the key (${String(status)}): ${message}`;
  if (status === 429) return `the endpoint is rate-limiting (429) and went on after the retries: ${message}`;
  if (typeof status === "number") return `the endpoint answered ${status}: ${message}`;
  if (/Connection/.test(name)) return `the endpoint could not be reached: ${message}`;
  return message;
}

function redact(text: string, key: string): string {
  return key.length >= 4 ? text.split(key).join("[key]") : text;
}
