import { Agent, Runner, tool, type Model, type ModelRequest, type ModelResponse } from "@openai/agents";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { vigilGuardrails, vigilTools } from "../src/openai-agents.js";
import { expectScenario, openScenario, SCRIPT, USER_PROMPT, type Scenario } from "./support/scenario.js";

/** The scenario through the OpenAI Agents SDK's own runner, with a scripted `Model`. */

let scenario: Scenario;
beforeEach(async () => {
  scenario = await openScenario();
});
afterEach(() => scenario.close());

const usage = { requests: 1, inputTokens: 1, outputTokens: 1, totalTokens: 2 };

/** A model that plays SCRIPT, one step per request, and keeps the tool results it is given. */
class ScriptedModel implements Model {
  private step = 0;
  constructor(private readonly results: Map<string, string>) {}
  async getResponse(request: ModelRequest): Promise<ModelResponse> {
    if (Array.isArray(request.input)) {
      for (const item of request.input) {
        if (item.type === "function_call_result") this.results.set(item.callId, typeof item.output === "string" ? item.output : JSON.stringify(item.output));
      }
    }
    const next = SCRIPT[this.step++]!;
    const output: ModelResponse["output"] = [];
    if (next.text !== undefined) output.push({ type: "message", role: "assistant", status: "completed", content: [{ type: "output_text", text: next.text }] });
    if (next.call !== undefined) output.push({ type: "function_call", callId: next.call.id, name: next.call.tool, arguments: JSON.stringify(next.call.args), status: "completed" });
    return { usage: usage as never, output };
  }
  // eslint-disable-next-line require-yield
  async *getStreamedResponse(): AsyncIterable<never> {
    throw new Error("not scripted");
  }
}

function scenarioTools(s: Scenario) {
  return [
    tool({ name: "read_file", description: "Read a file", parameters: z.object({ path: z.string() }), execute: async (args) => s.tools.read_file(args) }),
    tool({ name: "edit_file", description: "Edit a file", parameters: z.object({ path: z.string(), content: z.string() }), execute: async (args) => s.tools.edit_file(args) }),
    tool({ name: "upload", description: "Upload data", parameters: z.object({ url: z.string(), data: z.string() }), execute: async (args) => s.tools.upload(args) }),
  ];
}

describe("@vigil/adapters/openai-agents", () => {
  it("runs the shared scenario in the SDK's runner: refusals reach the model as tool results", async () => {
    const results = new Map<string, string>();
    const options = { runId: (context: unknown) => (context as { conversation: string }).conversation };
    const agent = new Agent({
      name: "coder",
      instructions: "Help the user.",
      model: new ScriptedModel(results),
      tools: vigilTools(scenarioTools(scenario), scenario.path, options),
      ...vigilGuardrails(scenario.path, options),
    });
    const result = await new Runner({ tracingDisabled: true }).run(agent, USER_PROMPT, { context: { conversation: "conversation-oa" }, maxTurns: 10 });
    expect(result.finalOutput).toBe(SCRIPT.at(-1)!.text);
    expectScenario(scenario, "conversation-oa", results);
  });
});
