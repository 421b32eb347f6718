import { answerClaudeCodeHook, type Enforcer, type HookAnswerOptions } from "@vigil/runtime";

/**
 * The Claude Agent SDK (`@anthropic-ai/claude-agent-sdk`): `vigilHooks(enforcer)` gives the
 * `hooks` option of `query()`. The SDK runs Claude Code, whose hook events these callbacks answer
 * with the runtime's own Claude Code hook (`answerClaudeCodeHook`): the same decisions, the same
 * audit records, the same run (the session) as the `vigilc hook` command, without a process per
 * call. `PreToolUse` decides (a refusal is a `deny` with the rule, its text and the remediation,
 * which Claude Code gives the model as the tool's result), `PostToolUse`/`PostToolUseFailure`
 * records, `UserPromptSubmit` records the prompt, `Stop` holds back a stop while a rule waits,
 * `SessionEnd` logs the verdicts. Anything that fails refuses the call (fail closed).
 *
 * This file imports nothing from the SDK: a hook callback takes the event's JSON and returns the
 * JSON a hook prints.
 */

/** The hook events the runtime's Claude Code hook answers. */
export const HOOK_EVENTS = ["PreToolUse", "PostToolUse", "PostToolUseFailure", "UserPromptSubmit", "Stop", "SubagentStop", "SessionEnd"] as const;

/** A hook callback of the SDK (`HookCallback`): the event's input in, the hook's JSON output out. */
export type ClaudeHookCallback = (input: unknown, toolUseId: string | undefined, options: { readonly signal?: AbortSignal }) => Promise<Record<string, unknown>>;

/** The `hooks` option of `query()`: every event the hook answers, for every tool. */
export function vigilHooks(enforcer: Enforcer, options: HookAnswerOptions = {}): Record<(typeof HOOK_EVENTS)[number], { hooks: ClaudeHookCallback[] }[]> {
  const callback = vigilHookCallback(enforcer, options);
  return Object.fromEntries(HOOK_EVENTS.map((event) => [event, [{ hooks: [callback] }]])) as Record<(typeof HOOK_EVENTS)[number], { hooks: ClaudeHookCallback[] }[]>;
}

/** One callback that answers any of the hook's events as `vigilc hook` does. */
export function vigilHookCallback(enforcer: Enforcer, options: HookAnswerOptions = {}): ClaudeHookCallback {
  return async (input) => {
    let text: string;
    try {
      text = JSON.stringify(input);
    } catch (error) {
      return deny(`Vigil could not read the hook's input (${(error as Error).message}); the call is refused.`);
    }
    const answer = await answerClaudeCodeHook(text, enforcer, options);
    if (answer.stdout.trim() !== "") {
      try {
        return JSON.parse(answer.stdout) as Record<string, unknown>;
      } catch {
        return deny(`Vigil's hook answered what cannot be read; the call is refused.`);
      }
    }
    // A blocking exit with nothing on standard output: the reason is on standard error.
    if (answer.exitCode === 2) return { decision: "block", reason: answer.stderr.trim() };
    return {};
  };
}

function deny(reason: string): Record<string, unknown> {
  return { hookSpecificOutput: { hookEventName: "PreToolUse", permissionDecision: "deny", permissionDecisionReason: reason } };
}
