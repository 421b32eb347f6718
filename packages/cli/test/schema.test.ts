import { expect, it } from "vitest";
import { fixtures } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/** `vigilc check POLICY --schema TOOLS`: a policy against tool schemas, before any run exists. */
it("reports actions, arguments and enumerated values the tools do not have", async () => {
  const result = await runCli(["check", "schema-policy.vigil", "--schema", "tools-list.json"], { cwd: fixtures });
  expect(result.code).toBe(0);
  expect(result.stderr).toContain("warning[V1101]: the action `send_emial` is not one of the tools, so it matches no event");
  expect(result.stderr).toContain("did you mean `send_email`?");
  expect(result.stderr).toContain('info[V1103]: the value "urgent" never occurs under `priority`');
  expect(result.stderr).toContain("warning[V1102]: no tool schema has an argument `subject`");
  // Open values (no enum) are never reported; nested and array properties are known arguments.
  expect(result.stderr).not.toMatch(/`path`|`to`|`headers\.cc`/);
  expect(result.stdout).toBe("checked schema-policy.vigil against 2 tools of tools-list.json: 0 errors, 2 warnings\n");
});

it("fails under --strict, and on a file that is not tool schemas", async () => {
  const strict = await runCli(["check", "schema-policy.vigil", "--schema", "tools-list.json", "--strict"], { cwd: fixtures });
  expect(strict.code).toBe(2);
  const wrong = await runCli(["check", "schema-policy.vigil", "--schema", "ok.jsonl"], { cwd: fixtures });
  expect(wrong.code).toBe(2);
  expect(wrong.stderr).toMatch(/error\[T000[18]\]/);
});

it("needs a trace or schemas", async () => {
  const result = await runCli(["check", "schema-policy.vigil"], { cwd: fixtures });
  expect(result.code).toBe(2);
  expect(result.stderr).toContain("needs a trace (--trace FILE), tool schemas (--schema FILE) or, with --engine sql, an events table (--events FILE)");
});
