import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DraftCache, type DraftResult, type GuardrailResult } from "../src/index.js";

/**
 * The cache is a folder of the user's files, which the agent being policed can write too: a kept
 * value is used only if it has the shape of one (and the CLI checks it again before using it).
 */
const folder = mkdtempSync(join(tmpdir(), "vigil-draft-cache-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const draft: DraftResult = {
  policy: "policy p {\n  rule r: abs(action in {a})\n}\n",
  rules: [{ policy: "p", name: "r", requirement: "Never a.", source: "SKILL.md:3", cited: "Never call a." }],
  unsupported: [{ source: "SKILL.md:4", requirement: "Be nice.", why: "no call records it" }],
  rejected: [{ name: "p.q", problems: ["V1101: unknown action"] }],
  rounds: 2,
  provider: "anthropic",
  model: "m",
  warnings: [],
};
const guardrail: GuardrailResult = { policy: "policy guardrails {}\n", rule: "guardrails.g", broken: "p.r", witness: 3, refusesAt: 2, refusedAction: "a", benignRuns: 1, benignCalls: 4, rounds: 1, provider: "openai", model: "m" };

describe("the draft cache", () => {
  const cache = new DraftCache(folder);

  it("gives back what it kept, each kind under its own key", async () => {
    await cache.set("k1", draft);
    await cache.setGuardrail("k2", guardrail);
    expect(await cache.get("k1")).toEqual(draft);
    expect(await cache.getGuardrail("k2")).toEqual(guardrail);
    // A key holds one kind: a draft is not a guardrail.
    expect(await cache.getGuardrail("k1")).toBeUndefined();
    expect(await cache.get("k2")).toBeUndefined();
    expect(await cache.get("absent")).toBeUndefined();
  });

  it("ignores a kept file that is torn, of another key, or edited out of shape, instead of failing", async () => {
    const file = join(folder, "k1.json");
    const edits: [string, (kept: { key: string; draft: Record<string, unknown> }) => unknown][] = [
      ["another key", (kept) => ({ ...kept, key: "k9" })],
      ["rules not a list", (kept) => ({ ...kept, draft: { ...kept.draft, rules: "r" } })],
      ["a rule without its source", (kept) => ({ ...kept, draft: { ...kept.draft, rules: [{ policy: "p", name: "r" }] } })],
      ["a rejected rule without its problems", (kept) => ({ ...kept, draft: { ...kept.draft, rejected: [{ name: "p.q" }] } })],
      ["no rounds", (kept) => ({ ...kept, draft: { ...kept.draft, rounds: "2" } })],
      ["null", () => null],
    ];
    const good = JSON.parse(readFileSync(file, "utf8"));
    for (const [what, edit] of edits) {
      writeFileSync(file, JSON.stringify(edit(structuredClone(good))));
      expect(await cache.get("k1"), what).toBeUndefined();
    }
    writeFileSync(file, '{"key":"k1","draft":{"pol');
    expect(await cache.get("k1")).toBeUndefined();
    // Kept again, whole: no temporary file is left behind.
    await cache.set("k1", draft);
    expect(await cache.get("k1")).toEqual(draft);
    expect(readdirSync(folder).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
