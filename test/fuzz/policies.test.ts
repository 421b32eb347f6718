import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CaseDir, ExitTally, expectSane, failCase, fuzzFor, fuzzSeed, suiteBudgetMs, testTimeoutMs, vigilcInProcess } from "./support/harness.js";
import { examplePolicies, generatedPolicy, mutateText, textMutation } from "./support/policies.js";
import { generatedTrace } from "./support/traces.js";

/**
 * Policies from the grammar and mutated examples through `check` and `fmt`. Whatever the text,
 * `vigilc` answers with 0, 1 or 2, never with a stack trace or an internal error, and within the
 * time one input may take. Where `fmt` succeeds, its output is a fixed point of `fmt` and means
 * the same: `check` gives the same report for the formatted text as for the original.
 */

const suite = "policies";
const budget = suiteBudgetMs();
const examples = examplePolicies();

/** Options of a `check` run, drawn with the case. */
const checkOptions = fc.record({
  format: fc.constantFrom("human", "json"),
  strict: fc.integer({ min: 0, max: 5 }).map((n) => n === 0),
  smt: fc.integer({ min: 0, max: 19 }).map((n) => n === 0),
});

function checkArgv(policy: string, trace: string, options: { format: string; strict: boolean; smt: boolean }): string[] {
  return [
    "check",
    policy,
    "--trace",
    trace,
    "--format",
    options.format,
    ...(options.strict ? ["--strict"] : []),
    // A short solver limit: an undecided rule is a verdict (exit 1), and keeps the case fast.
    ...(options.smt ? ["--engine", "smt", "--timeout", "200"] : []),
  ];
}

/**
 * Runs `check` and `fmt` on one policy file and asserts the properties above; `files` are the
 * case's files, kept on disk when it fails.
 */
async function checkAndFormat(tally: ExitTally, dir: CaseDir, policyBytes: Uint8Array, tracePath: string, files: Record<string, string | Uint8Array>, options: { format: string; strict: boolean; smt: boolean }): Promise<void> {
  const policy = dir.write("policy.vigil", policyBytes);
  const checked = await vigilcInProcess(checkArgv(policy, tracePath, options), { cwd: dir.path });
  expectSane(suite, checked, files);
  tally.add(options.smt ? "check(smt)" : "check", checked);

  const formatted = await vigilcInProcess(["fmt", policy], { cwd: dir.path });
  expectSane(suite, formatted, files);
  tally.add("fmt", formatted);
  if (formatted.code !== 0) return;

  const again = dir.write("formatted.vigil", formatted.stdout);
  const reformatted = await vigilcInProcess(["fmt", again], { cwd: dir.path });
  expectSane(suite, reformatted, files);
  if (reformatted.code !== 0 || reformatted.stdout !== formatted.stdout) failCase(suite, reformatted, { ...files, "formatted.vigil": formatted.stdout }, "fmt is not idempotent: formatting the formatted text changes it or fails");

  // The meaning is kept: the JSON report (or the refusal) is the same for both texts.
  const jsonOptions = { ...options, format: "json", smt: false };
  const original = await vigilcInProcess(checkArgv(policy, tracePath, jsonOptions), { cwd: dir.path });
  const reformattedCheck = await vigilcInProcess(checkArgv(again, tracePath, jsonOptions), { cwd: dir.path });
  expectSane(suite, reformattedCheck, files);
  if (original.code !== reformattedCheck.code || original.stdout !== reformattedCheck.stdout) {
    failCase(suite, reformattedCheck, { ...files, "formatted.vigil": formatted.stdout }, `fmt changed the meaning: check of the original exits ${original.code}, of the formatted text ${reformattedCheck.code}, or the JSON reports differ`);
  }
}

describe(`fuzzing policies (seed ${fuzzSeed()}, ${budget / 1000} s)`, () => {
  it(
    "policies generated from the grammar, with generated traces",
    async () => {
      const tally = new ExitTally();
      const runs = await fuzzFor(budget / 2, fc.record({ policy: generatedPolicy, trace: generatedTrace, options: checkOptions }), async ({ policy, trace, options }) => {
        const dir = new CaseDir(suite);
        try {
          const tracePath = dir.write("trace.jsonl", trace);
          await checkAndFormat(tally, dir, Buffer.from(policy, "utf8"), tracePath, { "policy.vigil": policy, "trace.jsonl": trace }, options);
        } finally {
          dir.remove();
        }
      });
      tally.report("generated policies", runs);
      // Most generated texts are well-formed: some must reach the engines and be judged.
      expect(tally.count("check", 0) + tally.count("check", 1)).toBeGreaterThan(0);
    },
    testTimeoutMs(budget),
  );

  it(
    "mutations of the shipped example policies, against their own traces",
    async () => {
      expect(examples.length).toBeGreaterThan(5);
      const mutatedExample = fc.record({
        example: fc.nat(examples.length - 1),
        trace: fc.nat(),
        mutations: fc.array(textMutation, { minLength: 1, maxLength: 5 }),
        options: checkOptions,
      });
      const tally = new ExitTally();
      const runs = await fuzzFor(budget / 2, mutatedExample, async ({ example, trace, mutations, options }) => {
        const { text, traces } = examples[example]!;
        const dir = new CaseDir(suite);
        try {
          const policyBytes = mutateText(text, mutations);
          // The AgentDojo policies have no trace beside them; a small canonical one stands in.
          const tracePath = traces.length > 0 ? traces[trace % traces.length]! : dir.write("trace.jsonl", '{"action":"send_money","args":{"recipient":"x"}}\n');
          await checkAndFormat(tally, dir, policyBytes, tracePath, { "policy.vigil": policyBytes }, { ...options, smt: options.smt && policyBytes.length < 4_000 });
        } finally {
          dir.remove();
        }
      });
      tally.report("mutated example policies", runs);
      expect(runs).toBeGreaterThan(0);
    },
    testTimeoutMs(budget),
  );
});
