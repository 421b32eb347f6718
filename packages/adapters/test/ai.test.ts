import { generateText, stepCountIs, tool } from "ai";
import { MockLanguageModelV3 } from "ai/test";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { vigilStepRecorder, vigilTools } from "../src/ai.js";
import { expectScenario, openScenario, SCRIPT, USER_PROMPT, type Scenario } from "./support/scenario.js";

/** The scenario through the Vercel AI SDK's own loop (`generateText`), with its mock model. */

let scenario: Scenario;
beforeEach(async () => {
  scenario = await openScenario();
});
afterEach(() => scenario.close());

const usage = { inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 }, outputTokens: { total: 1, text: 1, reasoning: 0 } };

/** A model that plays SCRIPT one step per model call and keeps what it was given as tool results. */
function scriptedModel(results: Map<string, string>): MockLanguageModelV3 {
  let step = 0;
  return new MockLanguageModelV3({
    doGenerate: async (options) => {
      for (const message of options.prompt) {
        if (message.role !== "tool") continue;
        for (const part of message.content) {
          if (part.type !== "tool-result") continue;
          const output = part.output as { type: string; value: unknown };
          results.set(part.toolCallId, `${output.type}: ${typeof output.value === "string" ? output.value : JSON.stringify(output.value)}`);
        }
      }
      const next = SCRIPT[step++]!;
      const content = [
        ...(next.text !== undefined ? [{ type: "text" as const, text: next.text }] : []),
        ...(next.call !== undefined ? [{ type: "tool-call" as const, toolCallId: next.call.id, toolName: next.call.tool, input: JSON.stringify(next.call.args) }] : []),
      ];
      return { content, finishReason: { unified: next.call !== undefined ? "tool-calls" : "stop", raw: undefined }, usage, warnings: [] };
    },
  });
}

function scenarioTools(s: Scenario) {
  return {
    read_file: tool({ description: "Read a file", inputSchema: z.object({ path: z.string() }), execute: async (args) => s.tools.read_file(args) }),
    edit_file: tool({ description: "Edit a file", inputSchema: z.object({ path: z.string(), content: z.string() }), execute: async (args) => s.tools.edit_file(args) }),
    upload: tool({ description: "Upload data", inputSchema: z.object({ url: z.string(), data: z.string() }), execute: async (args) => s.tools.upload(args) }),
  };
}

describe("@vigil/adapters/ai", () => {
  it("runs the shared scenario: refusals reach the model as tool results, allowed calls run and are recorded", async () => {
    const results = new Map<string, string>();
    const runId = "conversation-ai";
    const result = await generateText({
      model: scriptedModel(results),
      tools: vigilTools(scenarioTools(scenario), scenario.path, { runId }),
      prompt: USER_PROMPT,
      stopWhen: stepCountIs(10),
      onStepFinish: vigilStepRecorder(scenario.path, runId),
    });
    expect(result.steps).toHaveLength(SCRIPT.length);
    expectScenario(scenario, runId, results);
    // A refusal is an error result for the model, an allowed call's output is its own.
    expect(results.get("call_2")).toMatch(/^error-text: Vigil blocked this edit_file call/);
    expect(results.get("call_1")).toBe("text: contents of notes.txt");
    expect(scenario.agentMessages[0]).toBe("Let me read the notes first.");
  });

  it("keeps one run per conversation, chosen from the call's context", async () => {
    const tools = vigilTools(scenarioTools(scenario), scenario.path, { runId: (options) => (options.experimental_context as { thread: string }).thread });
    for (const thread of ["a", "b"]) {
      await tools.read_file.execute!({ path: "main.ts" }, { toolCallId: `r-${thread}`, messages: [], experimental_context: { thread: thread } });
    }
    // Each thread's read counts only in its own run: editing main.ts is allowed in both.
    for (const thread of ["a", "b"]) {
      const edited = await tools.edit_file.execute!({ path: "main.ts", content: "" }, { toolCallId: `e-${thread}`, messages: [], experimental_context: { thread } });
      expect(edited).toBe("edited main.ts");
    }
    const other = await tools.edit_file.execute!({ path: "main.ts", content: "" }, { toolCallId: "e-c", messages: [], experimental_context: { thread: "c" } });
    expect(other).toContain("sdk_agent.read_before_edit");
  });

  it("fails closed: an enforcer that fails refuses the call, saying why, and the tool does not run", async () => {
    const broken = Object.assign(Object.create(scenario.vigil.enforcer) as typeof scenario.vigil.enforcer, {
      decide: () => {
        throw new Error("database is locked");
      },
    });
    const { VigilCallPath } = await import("../src/core.js");
    const tools = vigilTools(scenarioTools(scenario), new VigilCallPath(broken), { runId: "r" });
    const output = await tools.read_file.execute!({ path: "notes.txt" }, { toolCallId: "x1", messages: [] });
    expect(output).toBe("Vigil failed (database is locked); the read_file call is refused.");
    expect(scenario.tools.ran).toEqual([]);
  });
});
