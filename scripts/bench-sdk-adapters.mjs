// The SDK adapters' added cost in the call path (docs/adapters.md): one allowed call decided,
// run (a tool that returns at once) and recorded, against the bare enforcer doing the same
// (`decide` then `record`), per adapter: the Vercel AI SDK's wrapped `execute`, LangChain's
// wrapped tool (`invoke`, which also parses the input with the tool's schema and runs its
// callbacks), the OpenAI Agents SDK's wrapped `invoke` (the SDK's own JSON parsing included), the
// Claude Agent SDK's hook callbacks (PreToolUse then PostToolUse). Each on its own run of a
// scratch database. Calls per measurement: VIGIL_BENCH_CALLS (default 1,000). Run after `tsc -b`.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { tool as aiTool } from "ai";
import { tool as langchainTool } from "@langchain/core/tools";
import { tool as openaiTool } from "@openai/agents";
import { z } from "zod";
import { openVigil, VigilCallPath } from "../packages/adapters/dist/index.js";
import { vigilTools as aiTools } from "../packages/adapters/dist/ai.js";
import { vigilTool as langchainWrap } from "../packages/adapters/dist/langchain.js";
import { vigilTool as openaiWrap } from "../packages/adapters/dist/openai-agents.js";
import { vigilHookCallback } from "../packages/adapters/dist/claude-agent-sdk.js";

const calls = Number(process.env.VIGIL_BENCH_CALLS ?? 1000);
const scratch = mkdtempSync(join(tmpdir(), "vigil-bench-sdk-adapters-"));
writeFileSync(
  join(scratch, "policy.vigil"),
  `policy bench {
  rule read_before_edit: prec(action in {edit_file} and path = $p, action in {read_file} and path = $p)
  rule no_upload_after_secret: always not (action in {upload} and once (action in {read_file} and path ~ "*.env"))
}
`,
);
const vigil = await openVigil({ policyFiles: ["policy.vigil"], cwd: scratch });
const path = new VigilCallPath(vigil.enforcer);
const read = async ({ path: file }) => `contents of ${file}`;

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
async function measure(name, once) {
  for (let i = 0; i < 50; i++) await once(`warm-${i}`);
  const samples = [];
  for (let i = 0; i < calls; i++) {
    const start = performance.now();
    await once(`c${i}`);
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return { name, p50: percentile(samples, 50), p95: percentile(samples, 95), p99: percentile(samples, 99) };
}

const ai = aiTools({ read_file: aiTool({ inputSchema: z.object({ path: z.string() }), execute: read }) }, path, { runId: "ai" });
const langchain = langchainWrap(langchainTool(read, { name: "read_file", description: "Read a file", schema: z.object({ path: z.string() }) }), path, { runId: "langchain" });
const langchainBare = langchainTool(read, { name: "read_file", description: "Read a file", schema: z.object({ path: z.string() }) });
const openai = openaiWrap(openaiTool({ name: "read_file", description: "Read a file", parameters: z.object({ path: z.string() }), execute: read }), path, { runId: "openai" });
const hook = vigilHookCallback(vigil.enforcer);

const rows = [
  await measure("bare enforcer: decide, run, record", async (id) => {
    const decided = vigil.enforcer.decide("bare", { id, action: "read_file", args: { path: "a.txt" } });
    const output = await read({ path: "a.txt" });
    vigil.enforcer.record("bare", { id: decided.callId, action: "read_file", status: "ok", content: output });
  }),
  await measure("Vercel AI SDK: wrapped execute", (id) => ai.read_file.execute({ path: "a.txt" }, { toolCallId: id, messages: [] })),
  await measure("LangChain: the tool alone (no Vigil)", (id) => langchainBare.invoke({ id, name: "read_file", args: { path: "a.txt" }, type: "tool_call" })),
  await measure("LangChain: wrapped tool", (id) => langchain.invoke({ id, name: "read_file", args: { path: "a.txt" }, type: "tool_call" })),
  await measure("OpenAI Agents SDK: wrapped invoke", (id) => openai.invoke({ context: {} }, JSON.stringify({ path: "a.txt" }), { toolCall: { callId: id } })),
  await measure("Claude Agent SDK: PreToolUse + PostToolUse hooks", async (id) => {
    const base = { session_id: "claude", tool_name: "read_file", tool_input: { path: "a.txt" }, tool_use_id: id };
    await hook({ hook_event_name: "PreToolUse", ...base }, id, {});
    await hook({ hook_event_name: "PostToolUse", ...base, tool_response: "contents of a.txt" }, id, {});
  }),
];

console.log(`# SDK adapters: ${calls.toLocaleString("en")} allowed calls per row; load average at start ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
console.log("| what | p50 | p95 | p99 | p50 over the bare enforcer |");
console.log("|---|---|---|---|---|");
const bare = rows[0].p50;
for (const row of rows) {
  console.log(`| ${row.name} | ${row.p50.toFixed(3)} ms | ${row.p95.toFixed(3)} ms | ${row.p99.toFixed(3)} ms | ${row === rows[0] ? "—" : `${(row.p50 - bare >= 0 ? "+" : "")}${(row.p50 - bare).toFixed(3)} ms`} |`);
}
vigil.close();
rmSync(scratch, { recursive: true, force: true });
