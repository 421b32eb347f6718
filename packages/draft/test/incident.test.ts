import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { compile, mergeSignatures, readRunEvents, readRunSignature, type TraceEvent } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelServer } from "../../../test/support/model-server.js";
import { createProvider, draftGuardrail, GuardrailFailed } from "../src/index.js";

/**
 * From an incident to a guardrail, against a model endpoint on 127.0.0.1: a proposal that would
 * refuse benign calls goes back with the call it refused; one that refuses the incident's call in
 * time and no benign call is kept. The dashcam example's run that warps with an unvalidated
 * transform (R3, event 5) is the incident.
 */

const dashcam = resolve(import.meta.dirname, "../../../examples/dashcam");
const policyText = readFileSync(join(dashcam, "dashcam.vigil"), "utf8");
const policy = compile(policyText, { file: "dashcam.vigil" });
let server: ModelServer;

async function run(name: string): Promise<{ name: string; events: TraceEvent[] }> {
  const events: TraceEvent[] = [];
  await readRunEvents({ file: join(dashcam, name) }, {}, (read) => events.push(...read));
  return { name, events };
}

const answer = (rule: string) => `Here is the guardrail.\n\n\`\`\`vigil\npolicy guardrails {\n  /// Never warp with a transform that was not validated first.\n  rule guard_R3: ${rule}\n}\n\`\`\`\n`;

beforeAll(async () => {
  server = await ModelServer.start();
});
afterAll(async () => {
  await server?.close();
});

describe("a guardrail from an incident", () => {
  it("sends back a rule that refuses a benign call or refuses too late, and keeps one that refuses the incident's call before it runs", async () => {
    const made = createProvider({ provider: "openai", env: { OPENAI_API_KEY: "sk-t", OPENAI_BASE_URL: `${server.url}/v1` }, model: "test-model", maxRetries: 0 });
    if (!made.ok) throw new Error(made.message);
    const incident = await run("violating.jsonl");
    const benign = [await run("benign.jsonl")];
    const signature = mergeSignatures([(await readRunSignature({ file: join(dashcam, "violating.jsonl") })).signature, (await readRunSignature({ file: join(dashcam, "benign.jsonl") })).signature]);
    server.answer(
      { text: answer("abs(action in {warpAffine})") },
      { text: answer("abs(action in {zoom})") },
      { text: answer("prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)") },
    );
    const rounds: string[][] = [];
    const result = await draftGuardrail({ policy, policyText, rule: "R3", incident, benign, signature, provider: made.provider, onRound: (_, problems) => rounds.push([...problems]) });
    expect(rounds[0]).toEqual(["the rule refuses event 5 (`warpAffine`) of the benign run benign.jsonl: it must let benign runs through"]);
    expect(rounds[1]).toEqual(expect.arrayContaining([expect.stringContaining("V1101"), "the rule refuses no call of violating.jsonl at or before event 5: the monitor lets every one of them run"]));
    expect(rounds[2]).toEqual([]);
    expect(result).toMatchObject({ rule: "guardrails.guard_R3", broken: "dashcam.R3", witness: 5, refusesAt: 5, refusedAction: "warpAffine", benignRuns: 1, rounds: 3 });
    // Formatted as vigilc fmt writes it (the long rule wrapped).
    expect(result.policy.replace(/\s+/g, " ")).toContain("rule guard_R3: prec( action in {warpAffine} and transform = $x, action in {validate_output} and target = $x, )");
    // The model was shown the rule and the run up to the witness, numbered.
    const asked = server.requests[0]!.body.messages.at(-1).content as string;
    expect(asked).toContain("rule R3: prec(warp and transform = $x, validate and target = $x)");
    expect(asked).toContain('5| {"action":"warpAffine","args":{"transform":"M","frame":"frames/000123.png"}');
    expect(asked).not.toContain("6| ");
  });

  it("refuses to draft for a run the rule does not break, or a rule the policy lacks", async () => {
    const made = createProvider({ provider: "openai", env: { OPENAI_API_KEY: "sk-t", OPENAI_BASE_URL: `${server.url}/v1` }, maxRetries: 0 });
    if (!made.ok) throw new Error(made.message);
    const benign = await run("benign.jsonl");
    await expect(draftGuardrail({ policy, policyText, rule: "R3", incident: benign, benign: [], provider: made.provider })).rejects.toThrow(new GuardrailFailed("rule `dashcam.R3` holds on benign.jsonl: there is no incident to guard against"));
    await expect(draftGuardrail({ policy, policyText, rule: "R9", incident: benign, benign: [], provider: made.provider })).rejects.toThrow("the policy has no rule `R9`");
  });

  it("decides the last call of a run too: a guardrail that refuses the incident's last call is kept, one that refuses a benign run's last call is sent back", async () => {
    const made = createProvider({ provider: "openai", env: { OPENAI_API_KEY: "sk-t", OPENAI_BASE_URL: `${server.url}/v1` }, maxRetries: 0 });
    if (!made.ok) throw new Error(made.message);
    // Both runs end with their warp (event 5): the harm is the incident's last call.
    const incident = { name: "violating-to-the-warp.jsonl", events: (await run("violating.jsonl")).events.slice(0, 5) };
    const benign = [{ name: "benign-to-the-warp.jsonl", events: (await run("benign.jsonl")).events.slice(0, 5) }];
    expect([incident.events.at(-1)!.action, benign[0]!.events.at(-1)!.action]).toEqual(["warpAffine", "warpAffine"]);
    server.answer({ text: answer("abs(action in {warpAffine})") }, { text: answer("prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)") });
    const rounds: string[][] = [];
    const result = await draftGuardrail({ policy, policyText, rule: "R3", incident, benign, provider: made.provider, onRound: (_, problems) => rounds.push([...problems]) });
    expect(rounds).toEqual([["the rule refuses event 5 (`warpAffine`) of the benign run benign-to-the-warp.jsonl: it must let benign runs through"], []]);
    expect(result).toMatchObject({ witness: 5, refusesAt: 5, refusedAction: "warpAffine", benignRuns: 1, rounds: 2 });
  });
});
