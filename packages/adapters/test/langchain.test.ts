import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, HumanMessage, type BaseMessage } from "@langchain/core/messages";
import type { ChatResult } from "@langchain/core/outputs";
import { tool } from "@langchain/core/tools";
import { MemorySaver } from "@langchain/langgraph";
import { createReactAgent } from "@langchain/langgraph/prebuilt";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { vigilCallbacks, vigilTools } from "../src/langchain.js";
import { expectScenario, openScenario, SCRIPT, USER_PROMPT, type Scenario } from "./support/scenario.js";

/** The scenario through LangGraph's prebuilt agent (its ToolNode runs the tools), with a scripted chat model. */

let scenario: Scenario;
beforeEach(async () => {
  scenario = await openScenario();
});
afterEach(() => scenario.close());

/** A chat model that plays SCRIPT, one step per call, and keeps the tool results it is given. */
class ScriptedChatModel extends BaseChatModel {
  private step = 0;
  constructor(private readonly results: Map<string, string>) {
    super({});
  }
  _llmType(): string {
    return "scripted";
  }
  override bindTools(): this {
    return this;
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    for (const message of messages) {
      if (message.getType() === "tool") this.results.set((message as unknown as { tool_call_id: string }).tool_call_id, message.text);
    }
    const next = SCRIPT[this.step++]!;
    const message = new AIMessage({
      content: next.text ?? "",
      tool_calls: next.call !== undefined ? [{ id: next.call.id, name: next.call.tool, args: next.call.args, type: "tool_call" }] : [],
    });
    return { generations: [{ text: next.text ?? "", message }] };
  }
}

function scenarioTools(s: Scenario) {
  return [
    tool(async (args: { path: string }) => s.tools.read_file(args), { name: "read_file", description: "Read a file", schema: z.object({ path: z.string() }) }),
    tool(async (args: { path: string; content: string }) => s.tools.edit_file(args), { name: "edit_file", description: "Edit a file", schema: z.object({ path: z.string(), content: z.string() }) }),
    tool(async (args: { url: string; data: string }) => s.tools.upload(args), { name: "upload", description: "Upload data", schema: z.object({ url: z.string(), data: z.string() }) }),
  ];
}

describe("@vigil/adapters/langchain", () => {
  it("runs the shared scenario in a LangGraph agent: the run is the thread, refusals reach the model as tool messages", async () => {
    const results = new Map<string, string>();
    const agent = createReactAgent({ llm: new ScriptedChatModel(results), tools: vigilTools(scenarioTools(scenario), scenario.path), checkpointer: new MemorySaver() });
    const output = await agent.invoke(
      { messages: [new HumanMessage(USER_PROMPT)] },
      { configurable: { thread_id: "thread-lc" }, callbacks: [vigilCallbacks(scenario.path)], recursionLimit: 30 },
    );
    expect(output.messages.at(-1)?.text).toBe(SCRIPT.at(-1)!.text);
    expectScenario(scenario, "thread-lc", results);
    expect(scenario.agentMessages[0]).toBe("Let me read the notes first.");
  });

  it("a refused direct call returns the refusal as the tool's content, and keeps the tool's name and schema", async () => {
    const [, edit] = vigilTools(scenarioTools(scenario), scenario.path, { runId: "direct" });
    expect(edit!.name).toBe("edit_file");
    const message = await edit!.invoke({ id: "d1", name: "edit_file", args: { path: "a.ts", content: "" }, type: "tool_call" });
    expect(message.content).toContain("sdk_agent.read_before_edit");
    expect(message.tool_call_id).toBe("d1");
    await expect(edit!.invoke({ path: 3 } as never)).rejects.toThrow(/did not match expected schema/);
    expect(scenario.tools.ran).toEqual([]);
  });
});
