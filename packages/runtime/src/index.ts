/**
 * Vigil in the agent's call path: the enforcement database (each run's monitor state, its events,
 * the calls it decided, compiled policies by hash, the hash-chained audit log), the `Enforcer`
 * that decides and records in one transaction, the Claude Code hook, the HTTP sidecar, the MCP
 * gateway, and the audit log's verification and replay.
 */
export type { AuditKind, AuditOutcome, AuditRecord, AuditRecordInput, VerifyResult } from "./audit-chain.js";
export { appendAudit, readAudit, verifyAudit } from "./audit-chain.js";
export type { AuditRow, ChainAlgorithm } from "./audit-hash.js";
export { canonicalRecord, GENESIS_HASH, linkHash, stateDigest } from "./audit-hash.js";
export type { CallEvent, CallResultContent, ReadCall } from "./call-events.js";
export { CallEventsError, callEvents, readCall, toolResponseContent, toolResponseFailed, userMessageEvent } from "./call-events.js";
export type { CallDecision, CallRecord, CallVerdict } from "@vigil/engine";
export { decideCall, mergeViolations, recordCall, verdictOf } from "@vigil/engine";
export type { EnforcedDecision, EnforcedRecord, EnforcerOptions, FinishOutcome, RefusedCall, RunStanding, StopDecision, ToolCall, ToolCallResult } from "./enforcer.js";
export { Enforcer, IN_FLIGHT_MS, logRefusal } from "./enforcer.js";
export { StateError } from "./live-runs.js";
export type { Effect, GuardContext, GuardFinding, GuardOptions, GuardRule, ProtectedPath } from "./guard.js";
export { databaseFiles, describeFindings, Guard, stateToSeal, vigilCodeDirectory, vigilCodePaths } from "./guard.js";
export type { EnforcedPolicy } from "./policy.js";
export { decodeProgram, encodeProgram, loadPolicy, PolicyError, policyHash } from "./policy.js";
export type { InvolvedEvent } from "./reason.js";
export { decisionReason, describeEvent, describeViolation, printable } from "./reason.js";
export type { OpenStoreOptions } from "./store.js";
export { SCHEMA_VERSION, Store, StoreError } from "./store.js";
export type { ClaudeCodeHookOptions, HookAnswer, HookAnswerOptions } from "./claude-code-hook.js";
export { answerClaudeCodeHook, BLOCKING_EXIT_CODE, ClaudeCodeHookHost, defaultHookDatabase, runClaudeCodeHook } from "./claude-code-hook.js";
export { checkState } from "./consistency.js";
export type { ReplayedCall, ReplayedRun, ReplayReport, Verdict } from "./replay.js";
export { replayAudit } from "./replay.js";
export type { Sidecar, SidecarOptions } from "./sidecar.js";
export { SidecarSocketError, startSidecar } from "./sidecar.js";
export type { McpGatewayOptions } from "./mcp-gateway.js";

/**
 * Runs the MCP gateway (see mcp-gateway.ts). Loaded on first use: the MCP SDK is not needed by the
 * hook or the sidecar.
 */
export async function runMcpGateway(options: import("./mcp-gateway.js").McpGatewayOptions): Promise<void> {
  const gateway = await import("./mcp-gateway.js");
  return gateway.runMcpGateway(options);
}
// The egress proxy is `@vigil/runtime/egress`: the hook, which runs once per call, does not load it.
export { EGRESS_IDENTITY_HOST, EGRESS_IDENTITY_PATH } from "./egress-identity.js";
