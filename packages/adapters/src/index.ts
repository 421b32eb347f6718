/**
 * Vigil in the call path of the agent SDKs. The shared core is here; each SDK has its own entry
 * point, which imports nothing from the SDK: `@vigil/adapters/ai` (the Vercel AI SDK),
 * `@vigil/adapters/langchain` (LangChain.js and LangGraph), `@vigil/adapters/openai-agents` (the
 * OpenAI Agents SDK) and `@vigil/adapters/claude-agent-sdk` (the Claude Agent SDK).
 */
export type { AdapterCall, AdapterEnforcer, CallOutcome, CallPathOptions, DecisionListener, OpenedVigil, OpenVigilOptions, Speaker } from "./core.js";
export { argumentsOf, contentOf, errorText, openVigil, textOf, VigilCallPath } from "./core.js";
