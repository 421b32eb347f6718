import { join, resolve } from "node:path";
import type { JsonValue } from "@vigil/compiler";
import { Enforcer, loadPolicy, printable, Store, type EnforcedDecision, type EnforcedRecord, type EnforcerOptions, type GuardOptions } from "@vigil/runtime";

/**
 * The one call path every SDK adapter goes through: decide → refuse or run → record → audit, on
 * the same `Enforcer` the Claude Code hook, the MCP gateway and the sidecar use. An adapter only
 * translates: it names the run (one per conversation or thread), hands each tool call to
 * {@link VigilCallPath.call} with a function that runs the tool, and turns the outcome into what
 * its SDK gives the model. A refused call never runs and never throws: the model gets the refusal
 * as the tool's result (the rule, its text, the events involved, the remediation). Anything that
 * goes wrong in Vigil itself refuses the call, saying why (fail closed).
 *
 * Decisions pass through as the enforcer gives them: only `allow` runs the call; `ask` runs it
 * only when the application's `ask` callback says a person allowed it; any other decision the
 * enforcer returns (a `block`, or a response this package does not know by name) refuses it with
 * the enforcer's reason.
 */

/** What the enforcer can be asked to do; `agentMessage` is used when the enforcer offers it. */
export type AdapterEnforcer = Pick<Enforcer, "decide" | "record" | "message" | "refuse" | "cancel" | "finish"> & {
  /** Records what the agent said (an `agent_message` event with its `text`), when the runtime offers it. */
  readonly agentMessage?: (runId: string, text: string, time?: number) => EnforcedRecord;
};

/** A tool call as an SDK hands it over. */
export interface AdapterCall {
  /** The SDK's id of the call (a tool-call id), which pairs the decision with the result. */
  readonly id?: string;
  /** The tool's name: the event's action. */
  readonly action: string;
  /** The arguments the model gave. */
  readonly args: unknown;
}

/** What the application is told of every decision (to show a warning, to count, to stop a run). */
export type DecisionListener = (decided: EnforcedDecision, call: AdapterCall) => void;

export interface CallPathOptions {
  /**
   * Asked when the enforcer answers `ask` (a rule needs a person's approval): resolve true to run
   * the call. Without it, such a call is refused, saying that a person must allow it.
   */
  readonly ask?: (decided: EnforcedDecision, call: AdapterCall) => Promise<boolean> | boolean;
  /** Told every decision, whatever it is (a `warn` verdict is an allowed call with a warning). */
  readonly onDecision?: DecisionListener;
  /** Told what Vigil could not do without refusing (a result it could not record, say). Default: standard error. */
  readonly log?: (line: string) => void;
}

/** The outcome of one call through the call path. */
export type CallOutcome<T> =
  | { readonly ran: true; readonly output: T; readonly decided: EnforcedDecision }
  | { readonly ran: false; readonly refusal: string; readonly decided?: EnforcedDecision };

/** Who said a message: the user, or the agent in text. */
export type Speaker = "user" | "agent";

/** The call path over one enforcer. Every adapter of this package is a thin layer over it. */
export class VigilCallPath {
  private readonly log: (line: string) => void;
  private readonly agentMessagesMissing = new Set<string>();
  /** How many entries of each run's conversation were already seen (see saidSince). */
  private readonly seen = new Map<string, number>();

  constructor(
    readonly enforcer: AdapterEnforcer,
    private readonly options: CallPathOptions = {},
  ) {
    this.log = options.log ?? ((line) => process.stderr.write(`${line}\n`));
  }

  /**
   * Decides a call, runs it only if allowed, records its result. `run` is the tool itself; its
   * failure is recorded as the call's error and thrown again, for the SDK to handle as it handles
   * a failing tool. `resultOf` turns the tool's output into the recorded content (default:
   * {@link contentOf}).
   */
  async call<T>(runId: string, call: AdapterCall, run: () => Promise<T> | T, resultOf: (output: T) => JsonValue | undefined = contentOf): Promise<CallOutcome<T>> {
    let decided: EnforcedDecision;
    try {
      decided = this.enforcer.decide(runId, { ...(call.id !== undefined ? { id: call.id } : {}), action: call.action, args: call.args ?? {} });
    } catch (error) {
      return { ran: false, refusal: this.failed(runId, call, error) };
    }
    this.tell(decided, call);
    const refusal = await this.refusalOf(runId, decided, call);
    if (refusal !== undefined) return { ran: false, refusal, decided };
    let output: T;
    try {
      output = await run();
    } catch (error) {
      this.recordSafely(runId, call, decided.callId, "error", errorText(error));
      throw error;
    }
    this.recordSafely(runId, call, decided.callId, "ok", resultOf(output));
    return { ran: true, output, decided };
  }

  /**
   * Records what was said in the conversation: the user's words as a `user_message` event, the
   * agent's as an `agent_message` event (when the enforcer offers it; otherwise noted once per run).
   * Empty text is not an event. A failure is logged, not thrown: a message is no call to refuse.
   */
  said(runId: string, speaker: Speaker, text: string): void {
    if (text.trim() === "") return;
    try {
      if (speaker === "user") this.enforcer.message(runId, text);
      else if (this.enforcer.agentMessage !== undefined) this.enforcer.agentMessage(runId, text);
      else if (!this.agentMessagesMissing.has(runId)) {
        this.agentMessagesMissing.add(runId);
        this.log(`vigil: the agent's messages of run \`${printable(runId)}\` are not recorded: this runtime records only the user's.`);
      }
    } catch (error) {
      this.log(`vigil: a ${speaker} message of run \`${printable(runId)}\` could not be recorded: ${(error as Error).message}`);
    }
  }

  /**
   * Records the messages of a conversation that the run has not seen yet, given the whole history
   * each time (as the SDKs hand it to a model or a tool): entries past those already seen are
   * said; an entry without a speaker (a tool result, a system prompt) is counted, not said.
   */
  saidSince(runId: string, history: readonly { readonly speaker?: Speaker; readonly text: string }[]): void {
    const seen = this.seen.get(runId) ?? 0;
    for (const entry of history.slice(seen)) if (entry.speaker !== undefined) this.said(runId, entry.speaker, entry.text);
    this.seen.set(runId, Math.max(seen, history.length));
  }

  /** The run has ended: every rule's verdict is logged. A failure is logged, not thrown. */
  finish(runId: string): void {
    try {
      this.enforcer.finish(runId);
    } catch (error) {
      this.log(`vigil: the verdicts of run \`${printable(runId)}\` could not be logged: ${(error as Error).message}`);
    }
  }

  private tell(decided: EnforcedDecision, call: AdapterCall): void {
    try {
      this.options.onDecision?.(decided, call);
    } catch (error) {
      this.log(`vigil: the decision listener failed: ${(error as Error).message}`);
    }
  }

  /** Undefined when the call may run; otherwise the refusal the model is given. */
  private async refusalOf(runId: string, decided: EnforcedDecision, call: AdapterCall): Promise<string | undefined> {
    if (decided.decision === "allow") return undefined;
    if (decided.decision === "ask") {
      let allowed = false;
      try {
        allowed = this.options.ask !== undefined && (await this.options.ask(decided, call));
      } catch (error) {
        this.log(`vigil: asking a person about call \`${printable(decided.callId)}\` failed: ${(error as Error).message}`);
      }
      if (allowed) return undefined;
      this.cancelSafely(runId, decided.callId);
      const why = this.options.ask === undefined ? "No person can be asked here, so the call is refused; the user can allow it in the policy." : "A person did not allow it.";
      return `${decided.reason}\n${why}`;
    }
    // `block`, and any response the enforcer adds (the call is refused with its reason).
    return decided.reason;
  }

  /** The enforcer failed: the call is refused, the refusal logged when the database still can. */
  private failed(runId: string, call: AdapterCall, error: unknown): string {
    const reason = `Vigil failed (${printable(errorText(error))}); the ${printable(call.action)} call is refused.`;
    try {
      this.enforcer.refuse(runId, reason, { ...(call.id !== undefined ? { id: call.id } : {}), action: call.action, args: call.args });
    } catch {
      // The database itself failed: the refusal still stands, in the tool's result.
    }
    return reason;
  }

  private recordSafely(runId: string, call: AdapterCall, callId: string, status: "ok" | "error", content: JsonValue | undefined): void {
    try {
      const recorded = this.enforcer.record(runId, { id: callId, action: call.action, status, ...(content !== undefined ? { content } : {}) });
      if (recorded.anomaly !== undefined) this.log(`vigil: the result of call \`${printable(callId)}\` was logged as an anomaly: ${recorded.anomaly}`);
    } catch (error) {
      this.log(`vigil: the result of call \`${printable(callId)}\` (${printable(call.action)}) could not be recorded: ${(error as Error).message}`);
    }
  }

  private cancelSafely(runId: string, callId: string): void {
    try {
      this.enforcer.cancel(runId, callId);
    } catch (error) {
      this.log(`vigil: call \`${printable(callId)}\` could not be marked as not run: ${(error as Error).message}`);
    }
  }
}

/**
 * A tool's output as the recorded content (what `output` conditions of a policy read): a string as
 * it is, content blocks (`[{type: "text", text}]`) as they are, anything else as its JSON text.
 */
export function contentOf(output: unknown): JsonValue | undefined {
  if (output === undefined || output === null) return undefined;
  if (typeof output === "string") return output;
  if (Array.isArray(output) && output.every((block) => typeof block === "object" && block !== null && typeof (block as { type?: unknown }).type === "string")) {
    return safeJson(output);
  }
  try {
    return JSON.stringify(output) ?? String(output);
  } catch {
    return String(output);
  }
}

function safeJson(value: unknown): JsonValue | undefined {
  try {
    return JSON.parse(JSON.stringify(value)) as JsonValue;
  } catch {
    return undefined;
  }
}

/** An error's message, whatever was thrown. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The text of a message's content: a string, or the `text` of its text parts. */
export function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) => (typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text" && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : ""))
    .filter((text) => text !== "")
    .join("\n");
}

/** A call's arguments as the enforcer takes them (an object): a string input is `{input}`. */
export function argumentsOf(input: unknown): unknown {
  return typeof input === "object" && input !== null && !Array.isArray(input) ? input : { input };
}

export interface OpenVigilOptions {
  /** The `.vigil` files of the policy. */
  readonly policyFiles: readonly string[];
  /** The enforcement database (default `.vigil/audit.db` under `cwd`). */
  readonly db?: string;
  /** The key of the audit chain (as `VIGIL_AUDIT_KEY` is for the hook). */
  readonly key?: string;
  /** The guard of Vigil's own state (on by default; `false` turns it off, which every decision logs). */
  readonly guard?: GuardOptions | false;
  /** The directory calls run in (default: this process's). */
  readonly cwd?: string;
  /** The enforcer's clock (default `Date.now`). */
  readonly now?: EnforcerOptions["now"];
}

/** An enforcer opened on its database and policy, and how to close it. */
export interface OpenedVigil {
  readonly store: Store;
  readonly enforcer: Enforcer;
  close(): void;
}

/** Opens the database and loads the policy, as the hook and the sidecar do. Throws when either cannot be (the caller must then refuse calls). */
export async function openVigil(options: OpenVigilOptions): Promise<OpenedVigil> {
  const cwd = options.cwd ?? process.cwd();
  const store = Store.open(resolve(cwd, options.db ?? join(".vigil", "audit.db")), options.key !== undefined ? { key: options.key } : {});
  try {
    const policy = await loadPolicy(
      options.policyFiles.map((file) => resolve(cwd, file)),
      store,
    );
    const enforcer = new Enforcer(store, policy, {
      cwd,
      ...(options.guard !== undefined ? { guard: options.guard } : {}),
      ...(options.now !== undefined ? { now: options.now } : {}),
    });
    return { store, enforcer, close: () => store.close() };
  } catch (error) {
    store.close();
    throw error;
  }
}
