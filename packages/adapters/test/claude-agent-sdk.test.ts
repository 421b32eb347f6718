import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { vigilHooks } from "../src/claude-agent-sdk.js";
import { expectScenario, FINAL_TEXT, openScenario, SCRIPT, USER_PROMPT, type Scenario } from "./support/scenario.js";

/**
 * The scenario through the hook callbacks `query()` is given, fed the hook inputs Claude Code sends
 * (not through a spawned Claude Code: see docs/adapters.md for what that needs).
 */

let scenario: Scenario;
beforeEach(async () => {
  scenario = await openScenario();
});
afterEach(() => scenario.close());

describe("@vigil/adapters/claude-agent-sdk", () => {
  it("answers the hook events as the Claude Code hook does: the shared scenario", async () => {
    const hooks = vigilHooks(scenario.vigil.enforcer);
    const fire = (event: keyof typeof hooks, input: Record<string, unknown>) =>
      hooks[event][0]!.hooks[0]!({ hook_event_name: event, session_id: "session-cc", cwd: "/tmp", ...input }, input["tool_use_id"] as string | undefined, {});
    await fire("UserPromptSubmit", { prompt: USER_PROMPT });
    const results = new Map<string, string>();
    for (const step of SCRIPT) {
      if (step.call === undefined) continue;
      const base = { tool_name: step.call.tool, tool_input: step.call.args, tool_use_id: step.call.id };
      const answer = (await fire("PreToolUse", base)) as { hookSpecificOutput?: { permissionDecision?: string; permissionDecisionReason?: string } };
      if (answer.hookSpecificOutput?.permissionDecision === "deny") {
        results.set(step.call.id, answer.hookSpecificOutput.permissionDecisionReason ?? "");
        continue;
      }
      const output = (scenario.tools[step.call.tool] as (args: Record<string, string>) => string).call(scenario.tools, step.call.args);
      results.set(step.call.id, output);
      await fire("PostToolUse", { ...base, tool_response: output });
    }
    // The runtime's hook records the user's prompt; Claude Code's text reaches no hook, so the
    // agent's message is given here as the scenario expects it of every adapter.
    scenario.path.said("session-cc", "agent", FINAL_TEXT);
    expectScenario(scenario, "session-cc", results);
  });
});
