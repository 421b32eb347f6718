import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { builtCli, CaseDir, type CliResult, expectSane, fuzzSeed, insanity, PER_INPUT_MS, saveFailingCase, shellLine } from "./support/harness.js";
import { examplePolicies, generatedPolicy, mutateText, textMutation } from "./support/policies.js";
import { claudeCodeRecording, shellCall, shellCommand } from "./support/shell.js";
import { generatedTrace, mutateTrace, seedTraces, traceMutation, tracePolicy } from "./support/traces.js";

/**
 * A few fuzzed inputs through the built executable rather than in this process: what the
 * in-process runs cannot show (the process's exit code as the shell sees it, standard input read
 * from a real pipe, the solver's threads ended with the process, output flushed before exit).
 * Each run is killed if it outlives its limit, so a hang fails the test instead of stalling it.
 */

const suite = "binary";
const CASES_PER_KIND = 2;

/**
 * The bound on a hang of one spawned run: the in-process one and the start of a Node process that loads
 * the stages (about a second on a loaded two-core machine).
 */
const SPAWNED_INPUT_MS = PER_INPUT_MS + 3_000;

/** Runs the built `vigilc`, killing it once it is taken to hang. */
function spawnVigilc(argv: readonly string[], cwd: string, stdin?: Uint8Array): Promise<CliResult> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [builtCli, ...argv], { cwd, env: { ...process.env, NO_COLOR: "1", VIGIL_DEBUG: "" }, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), SPAWNED_INPUT_MS);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // A killed process has no exit code; -1 fails the exit-code property and names the signal.
      resolve({ argv, code: code ?? -1, stdout, stderr: signal !== null ? `${stderr}\n(killed by ${signal})` : stderr, ms: performance.now() - started });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(stdin ?? "");
  });
}

/** The in-process properties, with the limit of a spawned run in place of the in-process one. */
function expectSaneSpawned(result: CliResult, files: Record<string, string | Uint8Array>, stdin?: string): void {
  expectSane(suite, { ...result, ms: Math.max(0, result.ms - (SPAWNED_INPUT_MS - PER_INPUT_MS)) }, files, stdin);
}

describe(`fuzzed inputs through the built vigilc (seed ${fuzzSeed()})`, () => {
  it("the executable is built", () => {
    expect(existsSync(builtCli), `build it first: npx tsc -b (looked for ${builtCli})`).toBe(true);
  });

  it("generated and mutated policies: check and fmt", async () => {
    const examples = examplePolicies();
    const seed = fuzzSeed();
    const generated = fc.sample(fc.tuple(generatedPolicy, generatedTrace), { seed, numRuns: CASES_PER_KIND });
    const mutated = fc.sample(fc.tuple(fc.nat(examples.length - 1), fc.array(textMutation, { minLength: 1, maxLength: 4 })), { seed: seed + 1, numRuns: CASES_PER_KIND });
    const cases: Array<{ policy: Uint8Array; trace: string }> = [
      ...generated.map(([policy, trace]) => ({ policy: Buffer.from(policy, "utf8"), trace })),
      ...mutated.map(([index, mutations]) => ({ policy: mutateText(examples[index]!.text, mutations), trace: '{"action":"read","args":{"path":"a.txt"}}\n' })),
    ];
    let checked = 0;
    for (const { policy, trace } of cases) {
      const dir = new CaseDir(suite);
      try {
        const policyPath = dir.write("policy.vigil", policy);
        const tracePath = dir.write("trace.jsonl", trace);
        const files = { "policy.vigil": policy, "trace.jsonl": trace };
        expectSaneSpawned(await spawnVigilc(["check", policyPath, "--trace", tracePath], dir.path), files);
        expectSaneSpawned(await spawnVigilc(["fmt", policyPath], dir.path), files);
        checked++;
      } finally {
        dir.remove();
      }
    }
    expect(checked).toBe(cases.length);
  }, 240_000);

  it("mutated recordings: check from a pipe, with both engines, and signature", async () => {
    const seeds = seedTraces();
    const cases = fc.sample(fc.tuple(fc.nat(seeds.length - 1), fc.array(traceMutation, { maxLength: 3 })), { seed: fuzzSeed() + 2, numRuns: CASES_PER_KIND });
    let checked = 0;
    for (const [index, mutations] of cases) {
      const bytes = mutateTrace(seeds[index]!, mutations);
      const dir = new CaseDir(suite);
      try {
        const policyPath = dir.write("policy.vigil", tracePolicy);
        const files = { "policy.vigil": tracePolicy, "stdin.txt": bytes };
        // Standard input as the executable reads it: raw bytes from a pipe, decoded by vigilc.
        expectSaneSpawned(await spawnVigilc(["check", policyPath, "--trace", "-"], dir.path, bytes), files);
        expectSaneSpawned(await spawnVigilc(["check", policyPath, "--trace", "-", "--engine", "smt", "--timeout", "1000", "--format", "json"], dir.path, bytes), files);
        expectSaneSpawned(await spawnVigilc(["signature", "-"], dir.path, bytes), files);
        checked++;
      } finally {
        dir.remove();
      }
    }
    expect(checked).toBe(cases.length);
  }, 240_000);

  it("shell command lines in a Claude Code recording: check with grounding", async () => {
    const cases = fc.sample(fc.array(fc.record({ command: shellCommand, call: shellCall }), { minLength: 1, maxLength: 2 }), { seed: fuzzSeed() + 3, numRuns: CASES_PER_KIND });
    let checked = 0;
    for (const calls of cases) {
      const recording = claudeCodeRecording(calls);
      const dir = new CaseDir(suite);
      try {
        const policy = 'policy p {\n  rule r: abs(action in {cat} and path ~ "*.env")\n  rule u: abs(action in {unknown_command})\n}\n';
        const policyPath = dir.write("policy.vigil", policy);
        const tracePath = dir.write("session.jsonl", recording);
        const result = await spawnVigilc(["check", policyPath, "--trace", tracePath], dir.path);
        if (insanity({ ...result, ms: 0 }) === undefined && result.code === 2) {
          const saved = saveFailingCase(suite, { "policy.vigil": policy, "session.jsonl": recording }, `vigilc ${shellLine(result.argv)}\nexit 2 on a well-formed recording`);
          throw new Error(`a well-formed recording was refused (exit 2): ${result.stderr.slice(0, 400)}\n  case saved in: ${saved}`);
        }
        expectSaneSpawned(result, { "policy.vigil": policy, "session.jsonl": recording });
        checked++;
      } finally {
        dir.remove();
      }
    }
    expect(checked).toBe(cases.length);
  }, 240_000);
});
