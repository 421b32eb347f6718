import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { CaseDir, ExitTally, expectSane, failCase, fuzzFor, fuzzSeed, suiteBudgetMs, testTimeoutMs, vigilcInProcess } from "./support/harness.js";
import { generatedTrace, mutateTrace, seedTraces, traceFormats, traceMutation, tracePolicy, type SeedTrace } from "./support/traces.js";

/**
 * Recordings of every format, mutated, through `check`, `signature` and `lower`, with the format
 * detected and named explicitly (rightly and wrongly), grounded or not, from a file or from
 * standard input. Whatever the bytes, `vigilc` answers with 0, 1 or 2, never with a stack trace or
 * an internal error, and within the time one input may take.
 */

const suite = "traces";
const budget = suiteBudgetMs();
const seeds = seedTraces();

/** How one case runs `vigilc`: the command, the format option, grounding, the input channel, the report format. */
const invocation = fc.record({
  command: fc.constantFrom("check", "check", "signature", "lower"),
  // Detection most often, the seed's own format often, any other format now and then.
  format: fc.oneof({ weight: 3, arbitrary: fc.constant("auto") }, { weight: 2, arbitrary: fc.constant("own") }, { weight: 2, arbitrary: fc.constantFrom(...traceFormats) }),
  ground: fc.constantFrom(undefined, "--ground", "--no-ground"),
  stdin: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  json: fc.boolean(),
});

type Invocation = typeof invocation extends fc.Arbitrary<infer T> ? T : never;

function argvOf(how: Invocation, policy: string, trace: string, ownFormat: string): string[] {
  const format = how.format === "own" ? ownFormat : how.format;
  const reading = ["--trace-format", format, ...(how.ground !== undefined ? [how.ground] : [])];
  switch (how.command) {
    case "signature":
      return ["signature", trace, ...reading, ...(how.json ? ["--format", "json"] : [])];
    case "lower":
      return ["lower", policy, "--trace", trace, ...reading];
    default:
      return ["check", policy, "--trace", trace, ...reading, ...(how.json ? ["--format", "json"] : [])];
  }
}

/** Runs one mutated trace and asserts that the run is sane. */
async function runCase(tally: ExitTally, bytes: Buffer, how: Invocation, ownFormat: string): Promise<void> {
  const dir = new CaseDir(suite);
  try {
    const policy = dir.write("policy.vigil", tracePolicy);
    const traceName = ownFormat === "agentdojo" || ownFormat === "openai" ? "trace.json" : "trace.jsonl";
    const tracePath = how.stdin ? "-" : dir.write(traceName, bytes);
    // Standard input reaches `vigilc` decoded as UTF-8, as the executable decodes it.
    const stdin = how.stdin ? bytes.toString("utf8") : undefined;
    const argv = argvOf(how, policy, tracePath, ownFormat);
    const result = await vigilcInProcess(argv, { cwd: dir.path, ...(stdin !== undefined ? { stdin } : {}) });
    tally.add(how.command, result);
    const files = { "policy.vigil": tracePolicy, ...(how.stdin ? {} : { [traceName]: bytes }) };
    expectSane(suite, result, files, stdin);
    if (how.command !== "lower" && how.json && result.code !== 2) {
      // With --format json, stdout is exactly one JSON document whenever something was judged.
      try {
        JSON.parse(result.stdout);
      } catch {
        failCase(suite, result, files, "with --format json, stdout is not one JSON document", stdin);
      }
    }
  } finally {
    dir.remove();
  }
}

describe(`fuzzing traces (seed ${fuzzSeed()}, ${budget / 1000} s)`, () => {
  it(
    `mutated recordings of every format (${seeds.length} seeds)`,
    async () => {
      expect(new Set(seeds.map((s) => s.format))).toEqual(new Set(traceFormats));
      const tally = new ExitTally();
      const mutated = fc.record({ seed: fc.nat(seeds.length - 1), mutations: fc.array(traceMutation, { maxLength: 4 }), how: invocation });
      const runs = await fuzzFor((budget * 3) / 4, mutated, async ({ seed, mutations, how }) => {
        const chosen: SeedTrace = seeds[seed]!;
        await runCase(tally, mutateTrace(chosen, mutations), how, chosen.format);
      });
      tally.report("mutated recordings", runs);
      // Unmutated and lightly mutated recordings must be judged, not all refused.
      expect(tally.count("check", 0) + tally.count("check", 1)).toBeGreaterThan(0);
    },
    testTimeoutMs(budget),
  );

  it(
    "generated canonical traces, mutated",
    async () => {
      const tally = new ExitTally();
      const generated = fc.record({ trace: generatedTrace, mutations: fc.array(traceMutation, { maxLength: 3 }), how: invocation });
      const runs = await fuzzFor(budget / 4, generated, async ({ trace, mutations, how }) => {
        const layout = trace.trimStart().startsWith("[") ? "document" : "lines";
        await runCase(tally, mutateTrace({ name: "generated", format: "jsonl", layout, text: trace }, mutations), how, "jsonl");
      });
      tally.report("generated traces", runs);
      expect(runs).toBeGreaterThan(0);
    },
    testTimeoutMs(budget),
  );
});
