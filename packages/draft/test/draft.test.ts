import { join, resolve } from "node:path";
import { readRunSignature } from "@vigil/compiler";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createProvider, DraftFailed, draftPolicy, ModelError, readSpecifications, type ModelProvider, type ProviderName } from "../src/index.js";
import { brokenDraft, proseOnly, repairedDraft, stubbornDraft } from "./fixtures/answers.js";
import { ModelServer } from "../../../test/support/model-server.js";

/**
 * The draft loop end to end against a model endpoint on 127.0.0.1 that speaks each provider's wire
 * format (plain and streamed): a broken draft and its repair, an ungroundable requirement, a
 * malformed answer, a rule that keeps failing, a time-out, a 429, a refused key.
 */

const skill = resolve(import.meta.dirname, "fixtures/release-skill");
const key = "sk-test-0123456789abcdef";
let server: ModelServer;

beforeAll(async () => {
  server = await ModelServer.start();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

function provider(name: ProviderName, options: { stream?: boolean; timeoutMs?: number; maxRetries?: number } = {}): ModelProvider {
  const env = name === "anthropic" ? { ANTHROPIC_API_KEY: key, ANTHROPIC_BASE_URL: server.url } : { OPENAI_API_KEY: key, OPENAI_BASE_URL: `${server.url}/v1` };
  const made = createProvider({ provider: name, env, model: "test-model", maxRetries: options.maxRetries ?? 0, ...options });
  if (!made.ok) throw new Error(made.message);
  return made.provider;
}

async function inputs() {
  const reading = await readSpecifications(["SKILL.md"], { cwd: skill });
  expect(reading.errors).toEqual([]);
  const { signature } = await readRunSignature({ file: join(skill, "run.jsonl") });
  return { sources: reading.sources, signature };
}

describe.each([
  ["anthropic", false],
  ["anthropic", true],
  ["openai", false],
  ["openai", true],
] as const)("the draft loop with %s (streamed: %s)", (name, stream) => {
  it("sends a broken draft's problems back, and keeps the repaired policy, each rule traced to its line", async () => {
    server.answer({ text: brokenDraft }, { text: repairedDraft });
    const rounds: number[] = [];
    const result = await draftPolicy({ ...(await inputs()), provider: provider(name, { stream }), policyName: "release", onRound: (round, problems) => rounds.push(problems.length) });
    expect(result.rounds).toBe(2);
    expect(rounds[0]).toBeGreaterThanOrEqual(2);
    expect(rounds[1]).toBe(0);
    // The second request carries the first answer and the problems found in it.
    expect(server.requests).toHaveLength(2);
    const second = server.requests[1]!.body;
    const messages: { role: string; content: string }[] = second.messages.filter((m: any) => m.role !== "system");
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(messages[2]!.content).toContain("V1101");
    expect(messages[2]!.content).toContain("tag_release");
    expect(messages[2]!.content).toContain("rule `no_force_push_main` does not say where it comes from");
    // The key went in the header, as each SDK sends it (both as a bearer token), and nowhere else.
    expect(server.requests[0]!.headers["authorization"]).toBe(`Bearer ${key}`);
    expect(JSON.stringify(server.requests.map((r) => r.body))).not.toContain(key);
    expect(second.stream === true).toBe(stream);
    expect(result.rules.map((rule) => [rule.name, rule.source])).toEqual([
      ["tests_before_tag", "SKILL.md:10"],
      ["no_force_push_main", "SKILL.md:11"],
      ["announce_after_publish", "SKILL.md:12"],
      ["bump_before_publish", "checklist.md:3"],
    ]);
    expect(result.rules[3]!.cited).toBe("- The version must be bumped (`bump_version`) before `publish`.");
    expect(result.unsupported).toEqual([
      { source: "SKILL.md:13", requirement: "Make sure the changelog reads well before you publish.", why: "whether prose reads well is a judgement no tool call records", cited: "- Make sure the changelog reads well before you publish." },
    ]);
    expect(result.rejected).toEqual([]);
    expect(result.policy).toContain("rule tests_before_tag: prec(action in {tag}, action in {run_tests} and status = ok)");
    expect(result.provider).toBe(name);
  });
});

describe("the draft loop's bounds", () => {
  it("asks again for an answer with no policy block, and fails when none comes", async () => {
    server.answer({ text: proseOnly }, { text: proseOnly });
    const failed = draftPolicy({ ...(await inputs()), provider: provider("anthropic"), policyName: "release", maxRepairs: 1 });
    await expect(failed).rejects.toBeInstanceOf(DraftFailed);
    await expect(failed).rejects.toThrow("the model gave no policy in 2 answers");
    expect(server.requests[1]!.body.messages.at(-1).content).toContain("the answer has no ```vigil block");
  });

  it("takes out a rule that still fails after the last round, and says why", async () => {
    server.answer({ text: stubbornDraft }, { text: stubbornDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider("openai"), policyName: "release", maxRepairs: 1 });
    expect(result.rounds).toBe(2);
    expect(result.rules.map((rule) => rule.name)).toEqual(["tests_before_tag", "no_force_push_main", "announce_after_publish"]);
    expect(result.rejected).toEqual([
      { name: "release.bump_before_publish", requirement: "The version must be bumped (`bump_version`) before `publish`.", source: "checklist.md:99", problems: ["rule `bump_before_publish` cites `checklist.md:99`, which is not a line of the specification"] },
    ]);
    expect(result.policy).not.toContain("bump_before_publish");
  });

  it("retries a 429, and fails in words on a time-out and on a refused key, never naming the key", async () => {
    server.answer({ status: 429 }, { text: repairedDraft });
    const retried = await draftPolicy({ ...(await inputs()), provider: provider("anthropic", { maxRetries: 2 }), policyName: "release" });
    expect(server.requests).toHaveLength(2);
    expect(retried.rules).toHaveLength(4);

    server.answer({ hangMs: 10_000 });
    const late = draftPolicy({ ...(await inputs()), provider: provider("openai", { timeoutMs: 300 }), policyName: "release" });
    await expect(late).rejects.toBeInstanceOf(ModelError);
    await expect(late).rejects.toThrow("the model did not answer in time");

    server.answer({ status: 401, body: JSON.stringify({ type: "error", error: { type: "authentication_error", message: `invalid x-api-key ${key}` } }) });
    const refused = draftPolicy({ ...(await inputs()), provider: provider("anthropic"), policyName: "release" });
    await expect(refused).rejects.toThrow(/^the endpoint refused the key \(401\)/);
    await expect(refused).rejects.not.toThrow(key);

    server.answer({ raw: "{not json" });
    await expect(draftPolicy({ ...(await inputs()), provider: provider("openai"), policyName: "release" })).rejects.toBeInstanceOf(ModelError);
  });
});

describe("providers", () => {
  it("say which variables to set when no key is", () => {
    const none = createProvider({ env: {} });
    expect(none).toEqual({ ok: false, message: expect.stringContaining("ANTHROPIC_API_KEY") });
    expect(none.ok === false && none.message).toContain("OPENAI_API_KEY");
    expect(createProvider({ provider: "openai", env: { ANTHROPIC_API_KEY: key } })).toEqual({ ok: false, message: expect.stringMatching(/^--provider openai needs OPENAI_API_KEY/) });
    const chosen = createProvider({ env: { OPENAI_API_KEY: key } });
    expect(chosen.ok && chosen.provider.name).toBe("openai");
  });
});
