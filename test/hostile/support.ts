import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { builtCli } from "../fuzz/support/harness.js";

export { builtCli, examplesDir, root, vigilcInProcess, type CliResult } from "../fuzz/support/harness.js";

/**
 * Helpers of the hostile-input regressions: a temporary directory per suite for the large inputs
 * they generate, and the built `vigilc` spawned with a time limit and, on request, a measure of the
 * memory it used at its peak.
 */

/** A temporary directory for one suite's inputs; `remove` deletes it and everything in it. */
export function scratchDirectory(name: string): { readonly path: string; file(name: string, content: string | Uint8Array): string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), `vigil-hostile-${name}-`));
  return {
    path,
    file(fileName: string, content: string | Uint8Array): string {
      const file = join(path, fileName);
      writeFileSync(file, content);
      return file;
    },
    remove(): void {
      rmSync(path, { recursive: true, force: true });
    },
  };
}

/**
 * A module that the child loads before `vigilc` (`node --import`): when the process exits, it
 * writes its peak resident set size (kilobytes, as `process.resourceUsage().maxRSS` gives it,
 * worker threads included) to the file named by VIGIL_MAX_RSS_FILE.
 */
const recordPeakMemory =
  "data:text/javascript," +
  encodeURIComponent(
    'import { writeFileSync } from "node:fs";\n' +
      'process.on("exit", () => { const file = process.env.VIGIL_MAX_RSS_FILE; if (file) writeFileSync(file, String(process.resourceUsage().maxRSS)); });\n',
  );

export interface SpawnedRun {
  /** The exit code; -1 when the process was killed (by the time limit). */
  readonly code: number;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The peak resident set size in megabytes, when it was measured. */
  readonly maxRssMb?: number;
}

/**
 * Runs the built `vigilc` with `argv` in `cwd`; kills it after `timeoutMs` so that a hang fails the
 * test instead of stalling it. With `measureMemory`, the child records its peak memory on exit.
 */
export function vigilcSpawned(argv: readonly string[], options: { cwd: string; timeoutMs: number; measureMemory?: boolean; stdin?: string }): Promise<SpawnedRun> {
  const rssFile = join(options.cwd, `max-rss-${process.pid}-${Math.random().toString(36).slice(2)}.txt`);
  const nodeArguments = options.measureMemory === true ? ["--import", recordPeakMemory, builtCli, ...argv] : [builtCli, ...argv];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, nodeArguments, {
      cwd: options.cwd,
      env: { ...process.env, NO_COLOR: "1", VIGIL_DEBUG: "", VIGIL_MAX_RSS_FILE: rssFile },
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    child.stdout.on("data", (chunk: Buffer) => stdout.push(chunk));
    child.stderr.on("data", (chunk: Buffer) => stderr.push(chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      let maxRssMb: number | undefined;
      if (options.measureMemory === true) {
        try {
          maxRssMb = Number(readFileSync(rssFile, "utf8")) / 1024;
          rmSync(rssFile, { force: true });
        } catch {
          maxRssMb = undefined;
        }
      }
      resolve({ code: code ?? -1, signal, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8"), ...(maxRssMb !== undefined ? { maxRssMb } : {}) });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin ?? "");
  });
}

/** A policy file's text with one policy `p` holding the given rules, one per line. */
export function policyOf(...rules: string[]): string {
  return `policy p {\n${rules.map((rule, i) => `  rule r${i}: ${rule}\n`).join("")}}\n`;
}

/** A Claude Code stream-json recording of one Bash call with `command`, answered with `result`. */
export function claudeCodeBashCall(command: string, result = "SECRET=1"): string {
  return (
    JSON.stringify({ type: "assistant", message: { id: "m1", role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "Bash", input: { command } }] }, session_id: "s" }) +
    "\n" +
    JSON.stringify({ type: "user", message: { role: "user", content: [{ tool_use_id: "toolu_1", type: "tool_result", content: result, is_error: false }] }, session_id: "s" }) +
    "\n"
  );
}
