import { spawn } from "node:child_process";

/** What a hook's process answered: its exit code and its two streams. */
export interface Answer {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `file args` in `cwd` with `input` on standard input, as Claude Code runs a hook's command
 * (the test's environment, with `env` on top). Bounded: a process still running after 90 s is
 * killed, so a hung hook fails its test instead of holding it.
 */
export function runHookProcess(file: string, args: readonly string[], input: string, cwd: string, env: Readonly<Record<string, string>> = {}): Promise<Answer> {
  return new Promise((resolvePromise) => {
    const child = spawn(file, args, { cwd, env: { ...process.env, ...env }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolvePromise({ code, stdout, stderr });
    });
    child.stdin.end(input);
  });
}
