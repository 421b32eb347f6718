import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import type { Containment } from "@vigil/engine";
import { isJsonObject, readRecording, readRegularFile, shellToolNames, type JsonValue } from "@vigil/trace";
import { toolResponseContent, toolResponseFailed } from "./call-events.js";
import { Enforcer, logRefusal, type EnforcedDecision } from "./enforcer.js";
import type { GuardOptions } from "./guard.js";
import { loadPolicy, type EnforcedPolicy } from "./policy.js";
import { oneLine, printable } from "./reason.js";
import { Store } from "./store.js";

/**
 * Claude Code's command hooks: Claude Code runs the hook once per event, a new process each time,
 * with the event as JSON on standard input, and reads the answer from standard output and the exit
 * code. This is one such run:
 *
 * - `PreToolUse`: the monitor's decision on the call (grounded, so a Bash call is the commands it
 *   runs), as `hookSpecificOutput.permissionDecision`: `deny` for a `block` rule, `ask` for an `ask`
 *   rule, and nothing when no rule objects (Claude Code's own permission rules then decide; `allow`
 *   only with `explicitAllow`), with a warning for a `warn` rule; the reason names the rule, its text,
 *   the events involved and the remediation. On a halted run (a `halt` rule broken) the call is
 *   denied and the answer also says `continue: false` with a `stopReason`: Claude Code stops the
 *   agent, and the person reads why.
 * - `PostToolUse` / `PostToolUseFailure`: the call's result is recorded (status and output).
 * - `UserPromptSubmit`: the prompt is recorded as a `user_message` event with its `text`.
 * - `Stop` / `SubagentStop`: the agent may not stop while a rule waits for a call it can still make,
 *   unless it was told so once already (`stop_hook_active`).
 * - `SessionEnd`: the run's final verdicts are logged.
 *
 * The run is the session (`session_id`); its state lives in the database between runs of the hook.
 * Anything that goes wrong (an input that cannot be read, a policy with errors, a database that
 * cannot be opened) refuses the call: exit code 2, the reason on standard error, which Claude Code
 * shows to the agent and treats as blocking.
 */

export interface ClaudeCodeHookOptions {
  /** The `.vigil` files of the policy. */
  readonly policyFiles: readonly string[];
  /** The database; by default `.vigil/audit.db` under `$CLAUDE_PROJECT_DIR`, or else under the event's `cwd`. */
  readonly db?: string;
  /** The key of the audit chain (`VIGIL_AUDIT_KEY`). */
  readonly key?: string;
  /**
   * Answer `allow` when no rule objects, which skips Claude Code's own permission prompt. By default
   * the hook answers nothing then, so that Claude Code's permission rules still apply: installing
   * Vigil must not take away a protection the user had.
   */
  readonly explicitAllow?: boolean;
  /** The environment (for `CLAUDE_PROJECT_DIR`) and the working directory the hook runs in. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  readonly cwd?: string;
  /** How long to wait for another hook's write lock (default 10 s). */
  readonly busyTimeoutMs?: number;
  /**
   * The guard of Vigil's own state (on by default, with Claude Code's settings files protected too);
   * `false` turns it off, which the audit log says on every decision.
   */
  readonly guard?: GuardOptions | false;
  /**
   * The clock that times each event, in epoch milliseconds (default `Date.now`): Claude Code's hook
   * input carries no time, so a call is timed when it is decided and a prompt when it is submitted.
   */
  readonly now?: () => number;
  /** See {@link HookAnswerOptions.beforeShellCall}. */
  readonly beforeShellCall?: () => Promise<string | undefined>;
}

/** How a hook answers, whoever runs it (a hook process, the sidecar). */
export interface HookAnswerOptions {
  /** See {@link ClaudeCodeHookOptions.explicitAllow}. */
  readonly explicitAllow?: boolean;
  /**
   * Asked before a shell call is decided: a reason to refuse it whatever the policy says, or
   * undefined. The CLI's hook asks whether the sandbox's network proxy is Vigil's: another program
   * on its port would see every connection of the command, undecided.
   */
  readonly beforeShellCall?: () => Promise<string | undefined>;
}

/** What the hook answers: Claude Code reads standard output and the exit code. */
export interface HookAnswer {
  readonly stdout: string;
  readonly stderr: string;
  readonly exitCode: number;
}

/** The exit code Claude Code treats as blocking: standard error is then the reason. */
export const BLOCKING_EXIT_CODE = 2;

/** The database of a hook, where no `--db` says otherwise. */
export function defaultHookDatabase(env: Readonly<Record<string, string | undefined>>, cwd: string, eventCwd?: string): string {
  const project = env["CLAUDE_PROJECT_DIR"];
  const base = project !== undefined && project !== "" ? project : eventCwd !== undefined && isAbsolute(eventCwd) ? eventCwd : cwd;
  return join(base, ".vigil", "audit.db");
}

/** A hook's event, read: its name and session, or the answer that refuses it. */
type ReadEvent = { readonly payload: { readonly [key: string]: JsonValue }; readonly event: string; readonly session: string } | { readonly answer: HookAnswer };

function readEvent(input: string): ReadEvent {
  let payload: { readonly [key: string]: JsonValue };
  try {
    const parsed = JSON.parse(input) as unknown;
    if (!isJsonObject(parsed)) throw new Error("it is not a JSON object");
    payload = parsed;
  } catch (error) {
    return { answer: refused(undefined, `Vigil could not read the hook's input (${(error as Error).message}); the call is refused.`) };
  }
  const event = payload["hook_event_name"];
  const session = payload["session_id"];
  if (typeof event !== "string") return { answer: refused(undefined, "Vigil could not read the hook's input: it has no `hook_event_name`; the call is refused.") };
  if (typeof session !== "string" || session === "") return { answer: refused(event, "Vigil could not read the hook's input: it has no `session_id`; the call is refused.", payload) };
  if (!HANDLED_EVENTS.has(event)) return { answer: { stdout: "", stderr: "", exitCode: 0 } };
  return { payload, event, session };
}

/**
 * Answers one hook event with an enforcer that is already open (the sidecar's): what a hook
 * process would answer, without opening the database and loading the policy for it.
 */
export async function answerClaudeCodeHook(input: string, enforcer: Enforcer, options: HookAnswerOptions = {}): Promise<HookAnswer> {
  const read = readEvent(input);
  if ("answer" in read) return read.answer;
  try {
    return await answer(read.event, read.payload, read.session, enforcer, options);
  } catch (error) {
    const reason = `Vigil failed (${(error as Error).message}); the call is refused.`;
    if (read.event === "PreToolUse") {
      try {
        enforcer.refuse(read.session, reason, callOf(read.payload));
      } catch {
        // The database itself failed: the refusal still stands, on standard error.
      }
    }
    return refused(read.event, reason, read.payload);
  }
}

/** Answers one hook event as one run of a hook process does: everything opened for it is closed after it. */
export async function runClaudeCodeHook(input: string, options: ClaudeCodeHookOptions): Promise<HookAnswer> {
  const host = new ClaudeCodeHookHost();
  try {
    return await host.answer(input, options);
  } finally {
    host.close();
  }
}

/**
 * Answers hook events, keeping between them what a process that answers many can keep (the hook
 * daemon): the database open, the policy loaded (its files read again at every event, its program
 * decoded again only when their texts changed) and the enforcer with its runs' monitors in memory
 * (read again from the database whenever another process changed a run, see Enforcer). A hook
 * process answers its one event with a host of its own, which it then closes: both answer through
 * this one path.
 *
 * An enforcer is kept only for the same options: another database or key, another policy, guard,
 * working directory, environment or clock, and a new one is made. A kept enforcer's guard keeps the
 * real paths of what it protects as they were resolved when it was made, as the sidecar's does
 * (behind the boundary the agent can change none of them).
 */
export class ClaudeCodeHookHost {
  private store: { readonly key: string; readonly store: Store } | undefined;
  private policy: EnforcedPolicy | undefined;
  private enforcer: { readonly key: string; readonly now: (() => number) | undefined; readonly enforcer: Enforcer } | undefined;

  async answer(input: string, options: ClaudeCodeHookOptions): Promise<HookAnswer> {
    const env = options.env ?? {};
    const cwd = options.cwd ?? process.cwd();
    const read = readEvent(input);
    if ("answer" in read) return read.answer;
    const { payload, event, session } = read;

    const eventCwd = typeof payload["cwd"] === "string" ? payload["cwd"] : undefined;
    const path = options.db !== undefined ? resolve(cwd, options.db) : defaultHookDatabase(env, cwd, eventCwd);
    let store: Store | undefined;
    try {
      store = this.openStore(path, options);
      let enforcer: Enforcer;
      try {
        enforcer = await this.enforcerFor(store, options, eventCwd !== undefined && isAbsolute(eventCwd) ? eventCwd : cwd, env);
      } catch (error) {
        const reason = `Vigil could not load its policy (${(error as Error).message}); the call is refused.`;
        if (event === "PreToolUse") logRefusal(store, session, reason, callOf(payload));
        return refused(event, reason, payload);
      }
      return await answer(event, payload, session, enforcer, options);
    } catch (error) {
      const reason = `Vigil failed (${(error as Error).message}); the call is refused.`;
      if (event === "PreToolUse" && store !== undefined) {
        try {
          logRefusal(store, session, reason, callOf(payload));
        } catch {
          // The database itself failed: the refusal still stands, on standard error.
        }
      }
      // Whatever failed is not kept: the next event opens everything afresh.
      this.close();
      return refused(event, reason, payload);
    }
  }

  /** Closes the database; the next event opens it again. */
  close(): void {
    const open = this.store;
    this.store = undefined;
    this.policy = undefined;
    this.enforcer = undefined;
    open?.store.close();
  }

  private openStore(path: string, options: ClaudeCodeHookOptions): Store {
    const key = JSON.stringify([path, options.key ?? null, options.busyTimeoutMs ?? null]);
    if (this.store?.key === key) return this.store.store;
    this.close();
    const store = Store.open(path, { ...(options.key !== undefined ? { key: options.key } : {}), ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}) });
    this.store = { key, store };
    return store;
  }

  private async enforcerFor(store: Store, options: ClaudeCodeHookOptions, cwd: string, env: Readonly<Record<string, string | undefined>>): Promise<Enforcer> {
    const files = options.policyFiles.map((file) => resolve(options.cwd ?? process.cwd(), file));
    // Read at every event: an edited policy is in force from the next call on.
    const policy = await loadPolicy(files, store, this.policy);
    this.policy = policy;
    const key = JSON.stringify([policy.hash, policy.files, options.guard ?? null, cwd, Object.entries(env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);
    if (this.enforcer !== undefined && this.enforcer.key === key && this.enforcer.now === options.now) return this.enforcer.enforcer;
    const enforcer = new Enforcer(store, policy, {
      guard: options.guard === false ? false : { claudeSettings: true, ...options.guard },
      cwd,
      // Claude Code starts the hook and the agent's shell from its own environment (the shell also
      // sources a snapshot of the user's login shell: see GuardContext.env).
      env,
      ...(options.now !== undefined ? { now: options.now } : {}),
    });
    this.enforcer = { key, now: options.now, enforcer };
    return enforcer;
  }
}

const HANDLED_EVENTS = new Set(["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop", "SessionEnd"]);

async function answer(event: string, payload: { readonly [key: string]: JsonValue }, session: string, enforcer: Enforcer, options: HookAnswerOptions): Promise<HookAnswer> {
  const lost = await lostSession(event, payload, session, enforcer);
  if (lost !== undefined) return lost;
  switch (event) {
    case "PreToolUse": {
      const call = callOf(payload);
      if (call.action === undefined) return refused(event, "Vigil could not read the hook's input: it has no `tool_name`; the call is refused.", payload);
      // The guard reads relative paths against the directory Claude Code says the session is in.
      const where = typeof payload["cwd"] === "string" && isAbsolute(payload["cwd"]) ? { cwd: payload["cwd"] } : {};
      const unsafe = options.beforeShellCall !== undefined && shellToolNames.includes(call.action) ? await options.beforeShellCall() : undefined;
      if (unsafe !== undefined) {
        const reason = `Vigil refused this ${printable(call.action)} call: ${unsafe}`;
        enforcer.refuse(session, reason, callOf(payload));
        return refused(event, reason, payload);
      }
      const decided = enforcer.decide(session, { ...(call.id !== undefined ? { id: call.id } : {}), action: call.action, args: call.args ?? {}, ...where });
      return preToolUseAnswer(decided, options.explicitAllow === true);
    }
    case "PostToolUse":
    case "PostToolUseFailure": {
      const call = callOf(payload);
      if (call.action === undefined) return refused(event, "Vigil could not read the hook's input: it has no `tool_name`; the result is not recorded.", payload);
      const failed = event === "PostToolUseFailure" || toolResponseFailed(payload["tool_response"]);
      const content = event === "PostToolUseFailure" ? payload["error"] : toolResponseContent(payload["tool_response"]);
      const recorded = enforcer.record(session, {
        ...(call.id !== undefined ? { id: call.id } : {}),
        action: call.action,
        status: failed ? "error" : "ok",
        ...(content !== undefined && content !== null ? { content } : {}),
      });
      if (recorded.anomaly !== undefined) {
        // Not a call this hook let run (a result sent by something else than Claude Code, say): logged, not recorded.
        const message = `Vigil did not record this ${printable(call.action)} result: ${printable(recorded.anomaly)}. It is logged as an anomaly.`;
        return { stdout: JSON.stringify({ systemMessage: message }) + "\n", stderr: "", exitCode: 0 };
      }
      if (recorded.violations.length === 0 || recorded.reason === undefined) return { stdout: "", stderr: "", exitCode: 0 };
      const reason = `Vigil: this ${printable(call.action)} call ran, and its result breaks the policy:\n${recorded.reason}`;
      // A rule that blocks is told to the agent at once; a warning goes along with the result.
      const blocking = recorded.violations.some((v) => v.response !== "warn");
      const output = blocking ? { decision: "block", reason } : { hookSpecificOutput: { hookEventName: event, additionalContext: reason } };
      return { stdout: JSON.stringify({ ...output, ...haltedRun(recorded.containment) }) + "\n", stderr: "", exitCode: 0 };
    }
    case "UserPromptSubmit": {
      const prompt = payload["prompt"];
      if (typeof prompt !== "string") return refused(event, "Vigil could not read the hook's input: it has no `prompt`; the prompt is not recorded.", payload);
      enforcer.message(session, prompt);
      return { stdout: "", stderr: "", exitCode: 0 };
    }
    case "Stop":
    case "SubagentStop": {
      const stop = enforcer.stop(session, payload["stop_hook_active"] === true);
      if (!stop.block) return { stdout: "", stderr: "", exitCode: 0 };
      return { stdout: JSON.stringify({ decision: "block", reason: stop.reason }) + "\n", stderr: "", exitCode: 0 };
    }
    case "SessionEnd": {
      enforcer.finish(session);
      return { stdout: "", stderr: "", exitCode: 0 };
    }
    default:
      return { stdout: "", stderr: "", exitCode: 0 };
  }
}

/**
 * Lost state is not forgotten state, and it is not rebuilt from what the agent's user can write. A
 * session the database has no run of, whose transcript (`transcript_path`) shows calls that already
 * ran, lost its state (the database was deleted) or began before Vigil was installed. Vigil's own
 * records of those calls are gone or never existed, and the transcript is a file Claude Code writes
 * as the agent's user: a run rebuilt from it would be only as true as that file (a fake `Read`
 * appended, a real one deleted). So such a session is refused whole: every call, until a new
 * session starts; its prompts and results are not recorded (which would make a run of them), and
 * each refusal is logged. A transcript that exists but cannot be read as one refuses too (fail
 * closed). A transcript that does not exist, or that this process may not read (a sidecar running
 * as another user), shows no earlier calls.
 *
 * The transcript is only ever a reason to refuse: forging it cannot make Vigil allow anything.
 */
async function lostSession(event: string, payload: { readonly [key: string]: JsonValue }, session: string, enforcer: Enforcer): Promise<HookAnswer | undefined> {
  const path = payload["transcript_path"];
  if (typeof path !== "string" || path === "" || enforcer.hasRun(session)) return undefined;
  try {
    await access(path, constants.R_OK);
  } catch {
    // No transcript this process may read (none yet, or a sidecar running as another user).
    return undefined;
  }
  // Read as every trace is: a regular file only (a pipe put in its place would hold the hook forever).
  const text = await readRegularFile(path, "transcript");
  if (typeof text !== "string") {
    return refusedLost(event, `Vigil has no record of this session, and its transcript cannot be read (${printable(text.message)})`, payload, session, enforcer);
  }
  const read = readRecording(text, { format: "claude-code", ground: false });
  const errors = read.diagnostics.filter((d) => d.severity === "error");
  if (errors.length > 0) {
    return refusedLost(event, `Vigil has no record of this session, and its transcript \`${printable(path)}\` cannot be read (${printable(errors[0]!.message)})`, payload, session, enforcer);
  }
  const ran = read.trace.events.filter((recorded) => recorded.kind !== "message" && recorded.status !== undefined).length;
  // Nothing ran yet (the session's first prompt): a new run, not a lost one.
  if (ran === 0) return undefined;
  return refusedLost(
    event,
    `Vigil has no record of the ${ran} call${ran === 1 ? "" : "s"} this session already made (it began before Vigil's hook was installed, or Vigil's state was lost), and what they did cannot be taken from the transcript, which the agent's user can write`,
    payload,
    session,
    enforcer,
  );
}

/** The answer to an event of a session Vigil lost: a call is refused and logged; anything else is left unrecorded. */
function refusedLost(event: string, why: string, payload: { readonly [key: string]: JsonValue }, session: string, enforcer: Enforcer): HookAnswer {
  if (event !== "PreToolUse") return { stdout: "", stderr: "", exitCode: 0 };
  const reason = `${why}. Every call of this session is refused: start a new session.`;
  enforcer.refuse(session, reason, callOf(payload));
  return refused(event, reason, payload);
}

function preToolUseAnswer(decided: EnforcedDecision, explicitAllow: boolean): HookAnswer {
  const decision = decided.decision === "block" ? "deny" : decided.decision;
  if (decision === "allow" && !explicitAllow) {
    // No objection: Claude Code's own permission settings decide; a warning is still shown.
    const output = decided.verdict === "warn" ? { systemMessage: decided.reason } : undefined;
    return { stdout: output !== undefined ? JSON.stringify(output) + "\n" : "", stderr: "", exitCode: 0 };
  }
  const output = {
    hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: decision, permissionDecisionReason: decided.reason },
    ...(decided.verdict === "warn" ? { systemMessage: decided.reason } : {}),
    ...(decided.decision === "block" ? haltedRun(decided.containment) : {}),
  };
  return { stdout: JSON.stringify(output) + "\n", stderr: "", exitCode: 0 };
}

/**
 * On a halted run, Claude Code's common fields that stop the agent: `continue: false`, and the
 * `stopReason` the person reads (the agent reads the denial's reason). Nothing otherwise: a
 * quarantined run goes on, with its calls refused one by one.
 */
function haltedRun(containment: Containment | undefined): { continue?: false; stopReason?: string } {
  if (containment?.state !== "halted") return {};
  const rule = `${printable(containment.policy)}.${printable(containment.name)}`;
  const remediation = containment.remediation !== undefined ? ` ${printable(oneLine(containment.remediation))}` : "";
  return { continue: false, stopReason: `Vigil halted this run: rule ${rule} was broken, and every later call of the run is refused.${remediation}` };
}

function callOf(payload: { readonly [key: string]: JsonValue }): { id?: string; action?: string; args?: JsonValue } {
  const id = payload["tool_use_id"];
  const action = payload["tool_name"];
  return {
    ...(typeof id === "string" && id !== "" ? { id } : {}),
    ...(typeof action === "string" && action !== "" ? { action } : {}),
    ...(payload["tool_input"] !== undefined ? { args: payload["tool_input"] } : {}),
  };
}

/**
 * Refuses, failing closed: exit code 2 with the reason on standard error (what Claude Code reads
 * when a hook blocks), and for a tool call the same refusal as a `deny` on standard output.
 */
function refused(event: string | undefined, reason: string, payload?: { readonly [key: string]: JsonValue }): HookAnswer {
  const text = printable(reason);
  const stdout =
    event === undefined || event === "PreToolUse"
      ? JSON.stringify({ hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: text } }) + "\n"
      : "";
  // A stop already held back once is let through (a lasting failure must not keep the agent going
  // forever), and the end of a session cannot be blocked: the failure is reported, not blocking.
  const blocking = !(event === "SessionEnd" || ((event === "Stop" || event === "SubagentStop") && payload?.["stop_hook_active"] === true));
  return { stdout, stderr: text + "\n", exitCode: blocking ? BLOCKING_EXIT_CODE : 1 };
}
