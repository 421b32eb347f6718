import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { examples, vigilc } from "./support/run-vigilc.js";

/**
 * What a `vigilc` process loads before it answers: a Claude Code hook is a new process per tool
 * call, so each module it loads is paid on every call (bench:enforcement measures it). The hook
 * reads its compiled policy from the database, so it loads neither the checker nor the parser; a
 * command that parses loads chevrotain's single-file build, not the ~700 modules of lodash-es
 * behind chevrotain's entry point.
 */
const scratch = mkdtempSync(join(tmpdir(), "vigilc-startup-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// A module loader hook that writes the URL of every module loaded to a file.
const listing = join(scratch, "loaded.txt");
const loader = join(scratch, "loader.mjs");
writeFileSync(loader, `import { appendFileSync } from "node:fs";\nexport async function load(url, context, next) { appendFileSync(${JSON.stringify(listing)}, url + "\\n"); return next(url, context); }\n`);
const register = join(scratch, "register.mjs");
writeFileSync(register, `import { register } from "node:module";\nregister(${JSON.stringify(new URL(`file://${loader}`).href)});\n`);

async function loadedBy(args: readonly string[], input?: string): Promise<string[]> {
  writeFileSync(listing, "");
  const run = await vigilc(args, { cwd: scratch, env: { NODE_OPTIONS: `--import=${register}` }, ...(input !== undefined ? { input } : {}) });
  expect(run.code, run.stderr).toBe(0);
  const { readFileSync } = await import("node:fs");
  return readFileSync(listing, "utf8").split("\n").filter((line) => line !== "");
}

const policy = join(examples, "coding-agent", "coding-agent.vigil");
const event = (id: string) => JSON.stringify({ session_id: "startup", transcript_path: "/tmp/t.jsonl", cwd: "/repo", permission_mode: "default", hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: "/repo/a.ts" }, tool_use_id: id });

describe("what a vigilc process loads", () => {
  it("a hook call, once the policy is in the database: no checker, no parser, no chevrotain", async () => {
    const hook = ["hook", "claude-code", "--policy", policy, "--db", join(scratch, "hook.db")];
    // The first call compiles the policy into the database.
    await loadedBy(hook, event("t1"));
    const loaded = await loadedBy(hook, event("t2"));
    expect(loaded.some((url) => url.includes("/packages/engine/"))).toBe(true);
    expect(loaded.filter((url) => /\/packages\/(syntax|compiler)\/|chevrotain|lodash-es/.test(url))).toEqual([]);
    // Of the checker, only the checked IR (types and their helpers).
    expect(loaded.filter((url) => url.includes("/packages/checker/")).map((url) => url.replace(/^.*\/packages\/checker\//, ""))).toEqual(["dist/ir.js"]);
  });

  it("vigilc check: chevrotain's single-file build, no lodash-es", async () => {
    const loaded = await loadedBy(["check", policy, "--trace", join(examples, "coding-agent", "benign.jsonl")]);
    expect(loaded.some((url) => url.endsWith("/chevrotain/lib/chevrotain.mjs"))).toBe(true);
    expect(loaded.filter((url) => url.includes("lodash-es"))).toEqual([]);
  });
});
