import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { answerClaudeCodeHook, Enforcer, loadPolicy, readAudit, replayAudit, startSidecar, Store } from "../src/index.js";

/**
 * Containment through the enforcer: every entry point reads the refusal and its reason from the
 * enforcer's decision; the run's state survives the process (the database), the audit log records
 * it, and replay comes to it again.
 */
const POLICY = `policy p {
  pattern read_only = action in {Read, Grep}
  /// Never read the credentials.
  rule secret: abs(action in {Read} and file_path ~ "*.env") halt "Stop: a secret was read."
  rule failing: abs(action in {deploy} and status = error) quarantine "Only look until a person checks."
}
`;

let scratch = "";
let stores: Store[] = [];
beforeEach(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-containment-"));
  stores = [];
});
afterEach(() => {
  for (const store of stores) store.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function open(name = "audit.db"): Promise<{ store: Store; enforcer: Enforcer }> {
  const file = join(scratch, "policy.vigil");
  writeFileSync(file, POLICY);
  const store = Store.open(join(scratch, name));
  stores.push(store);
  return { store, enforcer: new Enforcer(store, await loadPolicy([file], store), { guard: false }) };
}

describe("the enforcer", () => {
  it("refuses the breaking call and every later one, naming the rule, and the state outlives the process", async () => {
    const { store, enforcer } = await open();
    const breaking = enforcer.decide("r", { id: "c1", action: "Read", args: { file_path: ".env" } });
    expect(breaking.decision).toBe("block");
    expect(breaking.containment).toMatchObject({ state: "halted", name: "secret", by: "decision" });
    expect(breaking.reason).toContain("The run is now halted by rule `p.secret`");
    // Another process (a new enforcer on the same database) finds the run halted.
    const other = new Enforcer(store, enforcer.policy, { guard: false });
    const later = other.decide("r", { id: "c2", action: "Read", args: { file_path: "notes.md" } });
    expect(later).toMatchObject({ decision: "block", contained: true, violations: [] });
    expect(later.reason).toContain("the run was halted by rule `p.secret`");
    expect(later.reason).toContain("requires: Never read the credentials.");
    expect(later.reason).toContain("to comply: Stop: a secret was read.");
    // The audit log says it on each decision.
    const decisions = [...readAudit(store, "r")].filter((record) => record.kind === "decision");
    expect(decisions.map((record) => [record.outcome, (record.body["containment"] as { state: string } | undefined)?.state, record.body["contained"]])).toEqual([
      ["block", "halted", undefined],
      ["block", "halted", true],
    ]);
    // Replay under the same policy comes to the same state: nothing changes.
    const replayed = replayAudit(store, enforcer.policy, { runId: "r" });
    expect(replayed.changed).toBe(0);
    expect(replayed.decisions).toBe(2);
  });

  it("quarantines on a failing result: read-only calls run, others are refused, and stop is not held back", async () => {
    const { enforcer } = await open();
    expect(enforcer.decide("q", { id: "d", action: "deploy", args: {} }).decision).toBe("allow");
    const recorded = enforcer.record("q", { id: "d", status: "error", content: "failed" });
    expect(recorded.containment).toMatchObject({ state: "quarantined", name: "failing", by: "record" });
    expect(recorded.reason).toContain("The run is now quarantined by rule `p.failing`");
    expect(enforcer.decide("q", { id: "g", action: "Grep", args: { pattern: "x" } }).decision).toBe("allow");
    const refused = enforcer.decide("q", { id: "w", action: "Write", args: { file_path: "x" } });
    expect(refused).toMatchObject({ decision: "block", contained: true });
    expect(refused.reason).toContain("the run was quarantined by rule `p.failing`");
    expect(enforcer.stop("q", false).block).toBe(false);
  });

  it("replay reports a decision whose containment differs under another policy", async () => {
    const { store, enforcer } = await open();
    enforcer.decide("r", { id: "c1", action: "Read", args: { file_path: ".env" } });
    enforcer.decide("r", { id: "c2", action: "Read", args: { file_path: "notes.md" } });
    const file = join(scratch, "plain.vigil");
    writeFileSync(file, POLICY.replace(' halt "', ' block "'));
    const replayed = replayAudit(store, await loadPolicy([file], store), { runId: "r" });
    expect(replayed.runs[0]!.changed.map((call) => [call.callId, call.was, call.now, call.wasContainment, call.nowContainment])).toEqual([
      ["c1", "block", "block", "halted by p.secret", undefined],
      ["c2", "block", "allow", "halted by p.secret", undefined],
    ]);
  });
});

describe("the entry points", () => {
  const event = (name: string, extra: object) => JSON.stringify({ hook_event_name: name, session_id: "s", ...extra });

  it("the Claude Code hook denies the call and stops the agent on a halted run", async () => {
    const { enforcer } = await open();
    const answer = await answerClaudeCodeHook(event("PreToolUse", { tool_name: "Read", tool_use_id: "t1", tool_input: { file_path: ".env" } }), enforcer);
    const output = JSON.parse(answer.stdout) as { continue?: boolean; stopReason?: string; hookSpecificOutput: { permissionDecision: string } };
    expect(output.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(output.continue).toBe(false);
    expect(output.stopReason).toContain("Vigil halted this run: rule p.secret");
    const later = JSON.parse((await answerClaudeCodeHook(event("PreToolUse", { tool_name: "Grep", tool_use_id: "t2", tool_input: {} }), enforcer)).stdout) as typeof output;
    expect(later.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(later.continue).toBe(false);
  });

  it("the Claude Code hook denies a call of a quarantined run without stopping the agent", async () => {
    const { enforcer } = await open();
    await answerClaudeCodeHook(event("PreToolUse", { tool_name: "deploy", tool_use_id: "t1", tool_input: {} }), enforcer);
    const failed = await answerClaudeCodeHook(event("PostToolUseFailure", { tool_name: "deploy", tool_use_id: "t1", tool_input: {}, error: "no" }), enforcer);
    expect(JSON.parse(failed.stdout)).toMatchObject({ decision: "block" });
    expect(JSON.parse(failed.stdout).continue).toBeUndefined();
    const output = JSON.parse((await answerClaudeCodeHook(event("PreToolUse", { tool_name: "Write", tool_use_id: "t2", tool_input: {} }), enforcer)).stdout) as { continue?: boolean; hookSpecificOutput: { permissionDecision: string; permissionDecisionReason: string } };
    expect(output.hookSpecificOutput.permissionDecision).toBe("deny");
    expect(output.hookSpecificOutput.permissionDecisionReason).toContain("quarantined by rule `p.failing`");
    expect(output.continue).toBeUndefined();
  });

  it("the sidecar answers `halted` for a call of a halted run", async () => {
    const { enforcer } = await open();
    const token = "t".repeat(40);
    const sidecar = await startSidecar({ enforcer, token });
    try {
      const decide = async (id: string, action: string, args: object) => {
        const response = await fetch(`${sidecar.url}/v1/runs/r/decide`, {
          method: "POST",
          headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
          body: JSON.stringify({ id, action, args }),
        });
        return (await response.json()) as { decision: string; reason: string; containment?: { state: string; name: string } };
      };
      const breaking = await decide("c1", "Read", { file_path: ".env" });
      expect(breaking.decision).toBe("halted");
      expect(breaking.containment).toMatchObject({ state: "halted", name: "secret" });
      const later = await decide("c2", "Grep", {});
      expect(later.decision).toBe("halted");
      expect(later.reason).toContain("the run was halted by rule `p.secret`");
    } finally {
      await sidecar.close();
    }
  });
});
