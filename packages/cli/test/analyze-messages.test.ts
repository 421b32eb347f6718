import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { root, vigilc } from "./support/run-vigilc.js";

/**
 * `vigilc analyze --trace RUNS --messages`: a rule over the conversation (what the user says) is
 * analyzed under a signature that has the conversation's messages in it. Without `--messages` the
 * messages are not events of the signature, and the closed world says the rule never fires.
 */

const runs = join(root, "..", "shared", "data", "tau-bench", "gpt-4o-airline.json");
const scratch = mkdtempSync(join(tmpdir(), "vigil-analyze-messages-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const policy = join(scratch, "conversation.vigil");
writeFileSync(policy, 'policy conversation {\n  rule no_cancel_without_asking: prec(action in {cancel_reservation}, action in {user_message} and text ~ "*cancel*")\n}\n');

describe("vigilc analyze --trace … --messages", () => {
  it("without --messages, the user's messages are not in the signature: the rule's prerequisite can never happen", async () => {
    const analyzed = await vigilc(["analyze", policy, "--trace", runs, "--format", "json"], { timeoutMs: 600_000 });
    expect(analyzed.code, analyzed.stderr).toBe(1);
    expect(analyzed.stdout).toContain("user_message");
  }, 700_000);

  it("with --messages, they are, and nothing is found", async () => {
    const analyzed = await vigilc(["analyze", policy, "--trace", runs, "--messages", "--format", "json"], { timeoutMs: 600_000 });
    expect(analyzed.code, analyzed.stdout + analyzed.stderr).toBe(0);
    expect((JSON.parse(analyzed.stdout) as { files: { diagnostics: unknown[] }[] }).files[0]!.diagnostics).toEqual([]);
  }, 700_000);

  it("refuses --messages without --trace", async () => {
    const analyzed = await vigilc(["analyze", policy, "--messages"]);
    expect(analyzed.code).toBe(2);
    expect(analyzed.stderr).toContain("--messages goes with --trace");
  });
});
