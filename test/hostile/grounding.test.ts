import { readdirSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claudeCodeBashCall, examplesDir, policyOf, scratchDirectory, vigilcInProcess, vigilcSpawned } from "./support.js";

/**
 * Shell commands written to hide what they run, and the closed-world suggestions of the coding-agent
 * example: grounding must see through the quoting, and a suggestion must be a plausible typo.
 */

const scratch = scratchDirectory("grounding");
afterAll(() => scratch.remove());

describe("grounding sees through ANSI-C quoting and eval", () => {
  // docs/grounding.md: `cat` names its positional arguments `path`.
  const policy = scratch.file("secret.vigil", policyOf('abs(action in {cat} and path ~ "*.env")'));

  for (const command of ["$'\\x63at' .env", "eval 'cat .env'"]) {
    it(`a Claude Code Bash call \`${command}\` violates abs(action in {cat} and path ~ "*.env")`, async () => {
      const trace = scratch.file(`session-${command.length}.jsonl`, claudeCodeBashCall(command));
      const json = await vigilcInProcess(["check", policy, "--trace", trace, "--format", "json"], { cwd: scratch.path });
      expect(json.code).toBe(1);
      const [statement] = JSON.parse(json.stdout).statements as Array<{ holds: boolean; witnesses: number[] }>;
      expect(statement!.holds).toBe(false);
      expect(statement!.witnesses).toHaveLength(1);
      // The witness is the grounded `cat` of `.env`, not the Bash call itself.
      const human = await vigilcInProcess(["check", policy, "--trace", trace], { cwd: scratch.path });
      expect(human.code).toBe(1);
      expect(human.stdout).toMatch(/witness event \d+ \([^)]*\): cat \{[^}]*"path":"\.env"/);
    });
  }
});

/** A Claude Code recording of several Bash calls, each answered. */
function bashSession(commands: readonly string[]): string {
  return commands
    .map((command, i) =>
      [
        { type: "assistant", message: { id: `m${i}`, role: "assistant", content: [{ type: "tool_use", id: `toolu_${i}`, name: "Bash", input: { command } }] } },
        { type: "user", message: { role: "user", content: [{ tool_use_id: `toolu_${i}`, type: "tool_result", content: "ok", is_error: false }] } },
      ]
        .map((line) => JSON.stringify(line))
        .join("\n"),
    )
    .join("\n") + "\n";
}

describe("long but flat command lines (found by fuzzing)", () => {
  // A few kilobytes of ordinary shell: nothing is nested in the JSON, the lists are only long, so
  // "nested too deeply" would be the wrong diagnosis as well as a refusal. A line past grounding's
  // documented bounds (docs/grounding.md: 256 chained commands, 32 levels of nesting) is not parsed:
  // it is an `unknown_command` (reason `too_complex`) that a policy can forbid, so it fails closed.
  const policy = scratch.file("flat.vigil", policyOf("abs(action in {unknown_command} and reason in {\"too_complex\"})"));
  const cases: Array<[string, string[]]> = [
    ["a pipeline of 600 stages", ["cat .env" + " | cat".repeat(600)]],
    ["a list of 600 commands joined by &&", ["cat .env" + " && true".repeat(600)]],
    ["a list of 600 commands after a call with 80 nested substitutions", ["echo " + "$(".repeat(80) + "date" + ")".repeat(80), "cat .env" + " && true".repeat(600)]],
  ];
  for (const [what, commands] of cases) {
    it(`${what} is judged quickly, failing closed as an unknown command`, async () => {
      const trace = scratch.file(`flat-${what.length}.jsonl`, bashSession(commands));
      const run = await vigilcSpawned(["check", policy, "--trace", trace, "--format", "json"], { cwd: scratch.path, timeoutMs: 55_000 });
      expect(run.signal, "killed at the time limit").toBeNull();
      expect(run.stderr).not.toContain("nested too deeply");
      expect(run.code).toBe(1);
      expect(JSON.parse(run.stdout).statements[0].witnesses.length).toBeGreaterThanOrEqual(1);
    }, 60_000);
  }
});

/**
 * Whether `suggestion` is a plausible typo of `name`: the same letters in another case, or (case
 * aside) one slip away for names of up to four characters and two for longer ones, a slip being a
 * character left out, typed in, or swapped with its neighbour. `head` and `Read` share three
 * letters but are different words: replacing a letter is not a slip.
 */
function plausibleTypo(name: string, suggestion: string): boolean {
  const a = name.toLowerCase();
  const b = suggestion.toLowerCase();
  if (a === b) return true;
  const allowed = Math.max(a.length, b.length) <= 4 ? 1 : 2;
  // Edit distance with insertions, deletions and adjacent transpositions only.
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1);
      if (a[i - 1] === b[j - 1]) best = Math.min(best, d[i - 1]![j - 1]!);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1);
      d[i]![j] = best;
    }
  }
  return d[a.length]![b.length]! <= allowed;
}

describe("the coding-agent example's did-you-mean suggestions", () => {
  const directory = join(examplesDir, "coding-agent");
  const policy = join(directory, "coding-agent.vigil");
  const traces = readdirSync(directory).filter((f) => f.endsWith(".jsonl")).sort();

  it("are all plausible typos on every shipped trace (never `head` → `Read`)", async () => {
    expect(traces.length).toBeGreaterThan(3);
    const implausible: string[] = [];
    for (const trace of traces) {
      const run = await vigilcInProcess(["check", policy, "--trace", join(directory, trace)], { cwd: directory });
      expect([0, 1]).toContain(run.code);
      // Each closed-world warning names the symbol, and its help line the suggestion.
      for (const match of run.stderr.matchAll(/^warning\[V110\d\]: the (?:action|argument|value) `([^`]*)`[^\n]*\n(?:(?!^warning|^error|^info)[^\n]*\n)*?\s+help: did you mean `([^`]*)`\?/gm)) {
        const [, name, suggestion] = match;
        if (!plausibleTypo(name!, suggestion!)) implausible.push(`${trace}: \`${name}\` → \`${suggestion}\``);
      }
      expect(run.stderr).not.toMatch(/`head`[^\n]*\n(?:[^\n]*\n){0,6}?\s+help: did you mean `Read`/);
    }
    expect(implausible).toEqual([]);
  });
});
