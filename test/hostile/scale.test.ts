import { readFileSync } from "node:fs";
import { afterAll, describe, expect, it } from "vitest";
import { policyOf, scratchDirectory, vigilcInProcess, vigilcSpawned } from "./support.js";

/**
 * Inputs that used to take minutes or fail by their size alone: wildcards that backtrack, long
 * traces through the solver and the lowering, huge value sets, huge policies through the
 * formatter. Each must finish (within vitest's time limit) and give the right answer.
 */

const scratch = scratchDirectory("scale");
afterAll(() => scratch.remove());

describe("a wildcard with several stars on a long text", () => {
  const policy = scratch.file("stars.vigil", policyOf('abs(action in {x} and output ~ "*a*a*b")'));
  const noB = scratch.file("no-b.jsonl", JSON.stringify({ action: "x", output: "a".repeat(65_536) }) + "\n");
  // The same length with a `b` at the end: within the observation cap, so the wildcard matches.
  const endsInB = scratch.file("ends-in-b.jsonl", JSON.stringify({ action: "x", output: "a".repeat(65_535) + "b" }) + "\n");

  for (const engine of ["eval", "smt"]) {
    it(`\`output ~ "*a*a*b"\` on 65,536 × "a" finishes and holds, and matches when the output ends in b (--engine ${engine})`, async () => {
      const holds = await vigilcInProcess(["check", policy, "--trace", noB, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(holds.stderr).not.toContain("internal error");
      expect(holds.code).toBe(0);
      expect(JSON.parse(holds.stdout).statements[0]).toMatchObject({ holds: true, witnesses: [] });

      const violated = await vigilcInProcess(["check", policy, "--trace", endsInB, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(violated.code).toBe(1);
      expect(JSON.parse(violated.stdout).statements[0]).toMatchObject({ holds: false, witnesses: [1] });
    }, 60_000);
  }

  it("a regular expression that backtracks elsewhere, `^(a+)+b$` and `(a|aa)*c`, on 65,536 × \"a\" finishes and holds (both engines)", async () => {
    const regexPolicy = scratch.file("regex.vigil", policyOf("abs(action in {x} and (output matches /^(a+)+b$/ or output matches /(a|aa)*c/i))"));
    for (const engine of ["eval", "smt"]) {
      const holds = await vigilcInProcess(["check", regexPolicy, "--trace", noB, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(holds.code).toBe(0);
      expect(JSON.parse(holds.stdout).statements[0]).toMatchObject({ holds: true, witnesses: [] });
      const violated = await vigilcInProcess(["check", regexPolicy, "--trace", endsInB, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(JSON.parse(violated.stdout).statements[0]).toMatchObject({ holds: false, witnesses: [1] });
    }
  }, 60_000);

  it("`contains` with a long bound value on a long text finishes and gives the right answer", async () => {
    const containsPolicy = scratch.file("contains.vigil", policyOf("prec(action in {use} and v = $x, action in {x} and output contains $x)"));
    const needle = "a".repeat(30_000) + "b";
    const trace = (output: string) => [JSON.stringify({ action: "x", output }), JSON.stringify({ action: "use", args: { v: needle } })].join("\n") + "\n";
    const missing = scratch.file("contains-missing.jsonl", trace("a".repeat(65_536)));
    const present = scratch.file("contains-present.jsonl", trace("a".repeat(35_535) + "b"));
    for (const engine of ["eval", "smt"]) {
      const broken = await vigilcInProcess(["check", containsPolicy, "--trace", missing, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(JSON.parse(broken.stdout).statements[0]).toMatchObject({ holds: false, witnesses: [2] });
      const kept = await vigilcInProcess(["check", containsPolicy, "--trace", present, "--engine", engine, "--format", "json"], { cwd: scratch.path });
      expect(JSON.parse(kept.stdout).statements[0]).toMatchObject({ holds: true, witnesses: [] });
    }
  }, 60_000);

  it('`p ~ "*a*b"` on a 200 KB argument finishes; the text past the cap is not seen', async () => {
    const starPolicy = scratch.file("arg.vigil", policyOf('abs(p ~ "*a*b")'));
    const noMatch = scratch.file("arg.jsonl", JSON.stringify({ action: "x", args: { p: "a".repeat(200_000) } }) + "\n");
    const pastCap = scratch.file("arg-b-past-cap.jsonl", JSON.stringify({ action: "x", args: { p: "a".repeat(200_000) + "b" } }) + "\n");
    const withinCap = scratch.file("arg-b-within-cap.jsonl", JSON.stringify({ action: "x", args: { p: "a".repeat(65_535) + "b" + "a".repeat(134_464) } }) + "\n");

    const holds = await vigilcInProcess(["check", starPolicy, "--trace", noMatch, "--format", "json"], { cwd: scratch.path });
    expect(holds.code).toBe(0);
    // A wildcard needing text past the argument cap (65,536 characters) does not match.
    const past = await vigilcInProcess(["check", starPolicy, "--trace", pastCap, "--format", "json"], { cwd: scratch.path });
    expect(past.code).toBe(0);
    expect(past.stderr).toContain("T0014");
    // The observed prefix ends in the `b`, so the wildcard matches it.
    const within = await vigilcInProcess(["check", starPolicy, "--trace", withinCap, "--format", "json"], { cwd: scratch.path });
    expect(within.code).toBe(1);
    expect(JSON.parse(within.stdout).statements[0].witnesses).toEqual([1]);
  }, 60_000);
});

describe("130,000 events through the solver and the lowering", () => {
  const policy = scratch.file("long.vigil", policyOf("abs(action in {b})"));
  const trace = scratch.file("long.jsonl", '{"action":"a"}\n'.repeat(130_000));

  it("--engine smt decides abs(action in {b}) on 130,000 events: it holds (exit 0)", async () => {
    const run = await vigilcSpawned(["check", policy, "--trace", trace, "--engine", "smt", "--format", "json"], { cwd: scratch.path, timeoutMs: 170_000 });
    expect(run.signal).toBeNull();
    expect(run.stderr).not.toContain("internal error");
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toMatchObject({ verdict: "safe", statements: [{ holds: true, witnesses: [] }] });
  }, 180_000);

  it("vigilc lower prints the script of 130,000 events (exit 0)", async () => {
    const run = await vigilcSpawned(["lower", policy, "--trace", trace], { cwd: scratch.path, timeoutMs: 110_000 });
    expect(run.signal).toBeNull();
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("(set-option :produce-unsat-cores true)");
    expect(run.stdout).toContain("r130000");
    expect(run.stdout.trimEnd().endsWith("(get-unsat-core)")).toBe(true);
  }, 120_000);
});

describe("a set of 160,000 values", () => {
  it("is checked against one small trace without a quadratic closed-world check: the rule is violated at event 1", async () => {
    const values = Array.from({ length: 160_000 }, (_, i) => JSON.stringify(`v${i}`)).join(", ");
    const policy = scratch.file("big-set.vigil", policyOf(`abs(transform in {${values}})`));
    const trace = scratch.file("small.jsonl", '{"action":"warp","args":{"transform":"v5"}}\n{"action":"warp","args":{"transform":"w"}}\n');
    const run = await vigilcSpawned(["check", policy, "--trace", trace, "--format", "json"], { cwd: scratch.path, timeoutMs: 55_000 });
    expect(run.signal).toBeNull();
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).statements[0]).toMatchObject({ holds: false, witnesses: [1] });
  }, 60_000);
});

describe("vigilc fmt on huge policies", () => {
  /** Formats `file`, then checks that the output is formatted and parses (`fmt --check` on it exits 0). */
  async function formatsAndReparses(name: string, text: string): Promise<string> {
    const file = scratch.file(name, text);
    const formatted = await vigilcSpawned(["fmt", file], { cwd: scratch.path, timeoutMs: 55_000 });
    expect(formatted.signal).toBeNull();
    expect(formatted.stderr).toBe("");
    expect(formatted.code).toBe(0);
    const again = scratch.file(`formatted-${name}`, formatted.stdout);
    const check = await vigilcSpawned(["fmt", "--check", again], { cwd: scratch.path, timeoutMs: 55_000 });
    expect(check.stderr).toBe("");
    expect(check.stdout).toBe("");
    expect(check.code).toBe(0);
    return readFileSync(again, "utf8");
  }

  it("35,000 rules: exit 0, and the output is formatted and parses", async () => {
    const rules = Array.from({ length: 35_000 }, (_, i) => `rule r${i}: abs(action in {a${i}})`).join("\n");
    const output = await formatsAndReparses("many-rules.vigil", `policy p {\n${rules}\n}\n`);
    expect(output.match(/^ {2}rule r\d+: abs\(action in \{a\d+\}\)$/gm)).toHaveLength(35_000);
  }, 120_000);

  it("one rule with an 80,000-element set: exit 0, and the output is formatted and parses", async () => {
    const values = Array.from({ length: 80_000 }, (_, i) => JSON.stringify(`v${i}`)).join(", ");
    const output = await formatsAndReparses("big-set.vigil", `policy p { rule r: abs(transform in {${values}}) }\n`);
    for (const value of ['"v0"', '"v40000"', '"v79999"']) expect(output).toContain(value);
  }, 120_000);
});
