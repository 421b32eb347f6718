import { readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CaseDir, ExitTally, examplesDir, expectSane, failCase, fuzzFor, fuzzSeed, suiteBudgetMs, testTimeoutMs, vigilcInProcess } from "./support/harness.js";
import { claudeCodeRecording, shellCall, shellCommand } from "./support/shell.js";

/**
 * Shell command lines given to a Claude Code Bash tool call, through `check` with grounding (the
 * default for recordings) and through `signature`. Whatever the line, `vigilc` answers with 0, 1
 * or 2, never with a stack trace or an internal error, and within the time one input may take.
 */

const suite = "shell";
const budget = suiteBudgetMs();

/** The coding-agent example's rules, and rules on what grounding cannot know. */
const policy =
  readFileSync(join(examplesDir, "coding-agent/coding-agent.vigil"), "utf8") +
  `
policy shell_fuzz {
  rule no_secret_read: abs(action in {cat, head, read, source} and path ~ "*.env")
  rule fail_closed: abs(action in {unknown_command}) warn "a command grounding could not know"
  rule no_eval_script: abs(action in {eval, bash, sh} and script ~ "*cat*")
}
`;

describe(`fuzzing shell command lines (seed ${fuzzSeed()}, ${budget / 1000} s)`, () => {
  it(
    "Bash tool calls of a Claude Code recording, grounded",
    async () => {
      const tally = new ExitTally();
      const recording = fc.record({
        calls: fc.array(fc.record({ command: shellCommand, call: shellCall }), { minLength: 1, maxLength: 3 }),
        command: fc.constantFrom("check", "check", "check", "signature"),
        explicitFormat: fc.boolean(),
      });
      const runs = await fuzzFor(budget, recording, async ({ calls, command, explicitFormat }) => {
        const dir = new CaseDir(suite);
        try {
          const text = claudeCodeRecording(calls);
          const policyPath = dir.write("policy.vigil", policy);
          const tracePath = dir.write("session.jsonl", text);
          const format = explicitFormat ? ["--trace-format", "claude-code"] : [];
          const argv = command === "check" ? ["check", policyPath, "--trace", tracePath, ...format] : ["signature", tracePath, ...format];
          const result = await vigilcInProcess(argv, { cwd: dir.path });
          tally.add(command, result);
          const files = { "policy.vigil": policy, "session.jsonl": text };
          expectSane(suite, result, files);
          // The recording is well-formed JSON and the policy has no error: a command line that does
          // not parse is a warning (T0011), so nothing here may be refused.
          if (result.code === 2) failCase(suite, result, files, "a well-formed recording was refused (exit 2)");
        } finally {
          dir.remove();
        }
      });
      tally.report("shell command lines", runs);
      expect(tally.count("check", 0) + tally.count("check", 1)).toBeGreaterThan(0);
    },
    testTimeoutMs(budget),
  );
});
