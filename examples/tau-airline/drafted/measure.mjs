#!/usr/bin/env node
/**
 * Measures the drafted airline policy against the hand-written one (../tau-airline/airline.vigil),
 * run by run, on the 200 recorded τ-bench runs: a run is flagged by a policy when some rule of it
 * does not hold (`vigilc check --messages`). The hand policy's flagged runs are the reference:
 * precision is the share of the draft's flagged runs the hand policy flags too, recall the share of
 * the hand policy's flagged runs the draft flags. Then `vigilc diff --pair-by source` compares each
 * drafted rule with the hand rule that cites the same lines of airline-policy.md.
 *
 *   npx tsc -b && node examples/tau-airline/drafted/measure.mjs [--json]
 *
 * `tau-airline-drafted.test.ts` checks the figures against `measured.json` on every test run.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const root = join(import.meta.dirname, "..", "..", "..");
const cli = join(root, "packages", "cli", "dist", "main.js");
export const handPolicy = join("examples", "tau-airline", "airline.vigil");
export const draftedPolicy = join("examples", "tau-airline", "drafted", "airline-drafted.vigil");
export const runsFile = join("..", "shared", "data", "tau-bench", "gpt-4o-airline.json");

/** Runs `vigilc` in the repository; exit 1 (a rule broken, or policies that differ) still gives its output. */
async function vigilc(args) {
  const { stdout } = await promisify(execFile)(process.execPath, [cli, ...args], { cwd: root, maxBuffer: 256 * 1024 * 1024 }).catch((error) => {
    if (error.code === 1 && error.stdout) return error;
    throw error;
  });
  return stdout;
}

/** Per run (by name), the rules of the policy that do not hold on it. */
export async function brokenRules(policy) {
  const report = JSON.parse(await vigilc(["check", policy, "--messages", "--trace", runsFile, "--format", "json"]));
  if (report.summary.failed !== 0) throw new Error(`${report.summary.failed} runs could not be judged with ${policy}`);
  return new Map(report.runs.map((run) => [run.run, run.statements.filter((s) => !s.holds).map((s) => s.name)]));
}

const ratio = (a, b) => (b === 0 ? 0 : Math.round((a / b) * 1000) / 1000);

/** The figures: flagged runs of each policy, their overlap, precision, recall and F1, and the rules' counts. */
export async function measure() {
  const [hand, drafted] = await Promise.all([brokenRules(handPolicy), brokenRules(draftedPolicy)]);
  const flagged = (runs) => new Set([...runs].filter(([, rules]) => rules.length > 0).map(([run]) => run));
  const h = flagged(hand);
  const d = flagged(drafted);
  const both = [...d].filter((run) => h.has(run)).length;
  const precision = ratio(both, d.size);
  const recall = ratio(both, h.size);
  const perRule = (runs) => {
    const counts = {};
    for (const rules of runs.values()) for (const rule of rules) counts[rule] = (counts[rule] ?? 0) + 1;
    return counts;
  };
  return {
    runs: hand.size,
    hand: h.size,
    drafted: d.size,
    both,
    precision,
    recall,
    f1: ratio(2 * precision * recall, precision + recall),
    missed: [...h].filter((run) => !d.has(run)).sort(),
    extra: [...d].filter((run) => !h.has(run)).sort(),
    handRules: perRule(hand),
    draftedRules: perRule(drafted),
  };
}

/** `vigilc diff` of the hand policy and the draft, rules paired by the lines they cite. */
export async function pairedDiff() {
  return JSON.parse(await vigilc(["diff", handPolicy, draftedPolicy, "--pair-by", "source", "--format", "json"]));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const figures = await measure();
  if (process.argv.includes("--json")) console.log(JSON.stringify(figures, null, 2));
  else {
    console.log(`runs: ${figures.runs}; flagged by the hand policy ${figures.hand}, by the draft ${figures.drafted}, by both ${figures.both}`);
    console.log(`precision ${figures.precision}, recall ${figures.recall}, F1 ${figures.f1}`);
    console.log(`missed (${figures.missed.length}): ${figures.missed.join(", ")}`);
    console.log(`extra (${figures.extra.length}): ${figures.extra.join(", ")}`);
  }
}
