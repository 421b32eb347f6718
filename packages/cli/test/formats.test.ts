import { describe, expect, it } from "vitest";
import { fixtures, root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/** Recordings in the formats agents write, read by `vigilc check` with detection and grounding. */
describe("vigilc check on recordings", () => {
  it("detects a Claude Code transcript, grounds its Bash call, and finds the grounded witnesses", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "claude-session.jsonl", "--format", "json"], { cwd: fixtures });
    expect(result.stderr).toMatch(/^note: read `claude-session.jsonl` as claude-code \(detected\): 2 tool calls, and 2 events grounded from shell commands\n/);
    // `validate` never ran: the closed world says so, and the precondition fails at the copy.
    expect(result.stderr).toContain("warning[V1101]: the action `validate` does not occur in the trace");
    expect(JSON.parse(result.stdout)).toEqual({
      verdict: "unsafe",
      statements: [
        { policy: "housekeeping", name: "no_recursive_delete", holds: false, witnesses: [3], response: "block", triggers: { count: 1, first: [3] }, patterns: [{ role: "pattern", count: 1, first: [3] }] },
        {
          policy: "housekeeping",
          name: "validate_before_share",
          holds: false,
          witnesses: [2],
          response: "block",
          triggers: { count: 1, first: [2] },
          // The share matched; no validation did: why it broke.
          patterns: [
            { role: "first", count: 1, first: [2] },
            { role: "second", count: 0, first: [] },
          ],
        },
      ],
    });
    expect(result.code).toBe(1);
  });

  it("without grounding, the shell call is one opaque event", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "claude-session.jsonl", "--no-ground", "--format", "json"], { cwd: fixtures });
    expect(JSON.parse(result.stdout).verdict).toBe("safe");
    expect(result.code).toBe(0);
  });

  it("shows the witness at the line of the original tool call", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "claude-session.jsonl"], { cwd: fixtures });
    expect(result.stdout).toContain("claude-session.jsonl:2");
  });

  it("reports the coding-agent example's exfiltration at the curl grounded out of the second Bash call (README)", async () => {
    const result = await runCli(["check", "examples/coding-agent/coding-agent.vigil", "--trace", "examples/coding-agent/secret-exfiltration.jsonl"], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("note: read `examples/coding-agent/secret-exfiltration.jsonl` as claude-code (detected): 3 tool calls, and 3 events grounded from shell commands");
    expect(result.stdout).toContain("violation[coding_agent.no_egress_after_secret]");
    expect(result.stdout).toMatch(/witness event 6 \(examples\/coding-agent\/secret-exfiltration\.jsonl:6\): curl \{[^\n]*"method":"POST","data":"@\.env"/);
    expect(result.stdout).toContain("6 hold, 1 violated (coding_agent.no_egress_after_secret)");
  });

  it("sums up the closed world exactly as docs/cli.md shows it for the coding-agent example", async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const page = readFileSync(join(root, "docs/cli.md"), "utf8");
    const shown = /The summed-up closed world[^\n]*\n\n```\n([\s\S]*?)\n```/.exec(page)![1]!;
    const result = await runCli(["check", "examples/coding-agent/coding-agent.vigil", "--trace", "examples/coding-agent/benign.jsonl"], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(shown + "\n");
  });

  it("reads a trace piped on standard input (--trace -), named <stdin>", async () => {
    const { readFileSync } = await import("node:fs");
    const { join } = await import("node:path");
    const input = readFileSync(join(root, "examples/coding-agent/secret-exfiltration.jsonl"), "utf8");
    const result = await runCli(["check", "examples/coding-agent/coding-agent.vigil", "--trace", "-"], { cwd: root, stdin: input });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain("note: read `<stdin>` as claude-code (detected): 3 tool calls, and 3 events grounded from shell commands");
    expect(result.stdout).toContain("witness event 6 (<stdin>:6): curl");
    const signature = await runCli(["signature", "-", "--format", "json"], { cwd: root, stdin: input });
    expect(JSON.parse(signature.stdout)).toMatchObject({ events: 6, actions: ["Bash", "Read", "cat", "curl", "read"] });
    const broken = await runCli(["check", "examples/coding-agent/coding-agent.vigil", "--trace", "-"], { cwd: root, stdin: input.slice(0, input.indexOf("\n") + 40) });
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/error\[T0001\]: line 2 is not valid JSON[^\n]*\n {2}--> <stdin>:2:/);
  });

  it("a requested format that does not fit is an input error", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "claude-session.jsonl", "--trace-format", "openai"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error\[T0001\]|error\[T0008\]/);
  });

  it("an unknown format name is a usage error", async () => {
    const result = await runCli(["check", "no-delete.vigil", "--trace", "claude-session.jsonl", "--trace-format", "csv"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("--trace-format");
  });
});
