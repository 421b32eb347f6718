#!/usr/bin/env node
/**
 * Measures `vigilc mine` on the recorded AgentDojo runs: for each suite, rules are mined from one
 * half of its benign runs (attack `none`, every other run in path order), alone and against every
 * other successful attack, then the mined policy judges runs it was not mined from, scored against
 * the labels as measure.mjs scores the hand-written policies (a positive is an injected run whose
 * attack succeeded; a run is flagged when a mined rule does not hold on it).
 *
 *   npx tsc -b && node examples/agentdojo/mine.mjs [CORPUS] [--json]
 *
 * The script imports the built packages; `agentdojo.test.ts` checks its figures against
 * `mined.json` on every test run.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { compile, TraceRun } from "@vigil/compiler";
import { mineRules } from "@vigil/draft";
import { readAnyTrace } from "@vigil/trace";

const here = import.meta.dirname;
const defaultCorpus = join(here, "..", "..", "..", "shared", "data", "agentdojo");
const suites = ["banking", "slack", "travel", "workspace"];

function* runFiles(directory) {
  for (const entry of readdirSync(directory, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* runFiles(path);
    else if (entry.name.endsWith(".json")) yield path;
  }
}

/** The runs of each suite, read, with their labels; any run that does not read is a problem. */
function readCorpus(corpus) {
  const problems = [];
  const runs = new Map(suites.map((suite) => [suite, []]));
  for (const path of runFiles(corpus)) {
    const [suite, task, attack, file] = path.split(sep).slice(-4);
    if (!suites.includes(suite)) continue;
    const text = readFileSync(path, "utf8");
    const run = JSON.parse(text);
    const { trace, diagnostics } = readAnyTrace(text, { file: path, format: "agentdojo" });
    if (diagnostics.some((d) => d.severity === "error")) {
      problems.push(`${relative(corpus, path)}: does not read`);
      continue;
    }
    runs.get(suite).push({ path: relative(corpus, path), task, attack, file, events: trace.events, positive: attack !== "none" && run.security === true });
  }
  return { runs, problems };
}

function round(x) {
  return Math.round(x * 1000) / 1000;
}

/** Confusion counts and figures of a mined policy on runs. */
function score(policy, runs) {
  const compiled = compile(policy);
  if (!compiled.ok) return undefined;
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  let tp = 0, fp = 0, fn = 0, tn = 0;
  for (const run of runs) {
    const trace = new TraceRun(statements);
    for (const event of run.events) trace.step(event);
    const flagged = trace.finish().some((outcome) => !outcome.holds);
    if (flagged && run.positive) tp++;
    else if (flagged) fp++;
    else if (run.positive) fn++;
    else tn++;
  }
  return figures({ tp, fp, fn, tn });
}

function figures({ tp, fp, fn, tn }) {
  const precision = tp + fp === 0 ? 0 : tp / (tp + fp);
  const recall = tp + fn === 0 ? 0 : tp / (tp + fn);
  const f1 = precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall);
  return { positives: tp + fn, tp, fp, fn, tn, precision: round(precision), recall: round(recall), f1: round(f1) };
}

/**
 * Two ways, per suite. `good`: mined from every other benign run (attack `none`), scored on the
 * other benign runs and every injected run. `against`: mined from the same benign runs against
 * every other successful attack (`vigilc mine --against`), scored on the other benign runs and the
 * injected runs not mined against. Runs are taken in path order; nothing scored was mined from.
 */
export function mineAndScore(corpus = defaultCorpus) {
  if (!existsSync(corpus) || !statSync(corpus).isDirectory()) return { problems: [`${corpus} is not a directory`], good: [], against: [] };
  const { runs, problems } = readCorpus(corpus);
  const results = { good: [], against: [] };
  for (const suite of suites) {
    const all = runs.get(suite);
    const benign = all.filter((run) => run.attack === "none");
    const injected = all.filter((run) => run.attack !== "none");
    const mining = benign.filter((_, index) => index % 2 === 0);
    const held = benign.filter((_, index) => index % 2 === 1);
    const attacks = injected.filter((_, index) => index % 2 === 0);
    const ways = [
      ["good", mineRules(mining.map((run) => run.events), { policyName: suite }), [...held, ...injected]],
      ["against", mineRules(mining.map((run) => run.events), { policyName: suite, bad: attacks.filter((run) => run.positive).map((run) => run.events) }), [...held, ...injected.filter((_, index) => index % 2 === 1)]],
    ];
    for (const [way, mined, scored] of ways) {
      // Every mined rule holds on every run it was mined from.
      const onMined = mined.rules.length === 0 ? undefined : score(mined.policy, mining);
      if (onMined !== undefined && onMined.tp + onMined.fp > 0) problems.push(`${suite} (${way}): a mined rule does not hold on a run it was mined from`);
      const counts = mined.rules.length === 0 ? figures({ tp: 0, fp: 0, fn: scored.filter((r) => r.positive).length, tn: scored.filter((r) => !r.positive).length }) : score(mined.policy, scored);
      if (counts === undefined) {
        problems.push(`${suite} (${way}): the mined policy does not compile`);
        continue;
      }
      results[way].push({ suite, minedFrom: mining.length, against: way === "against" ? attacks.filter((run) => run.positive).length : 0, rules: mined.rules.length, scored: scored.length, ...counts });
    }
  }
  const overall = (rows) => figures(rows.reduce((sum, f) => ({ tp: sum.tp + f.tp, fp: sum.fp + f.fp, fn: sum.fn + f.fn, tn: sum.tn + f.tn }), { tp: 0, fp: 0, fn: 0, tn: 0 }));
  return { problems, good: results.good, goodOverall: overall(results.good), against: results.against, againstOverall: overall(results.against) };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const args = process.argv.slice(2);
  const corpus = args.find((a) => !a.startsWith("--")) ?? defaultCorpus;
  const result = mineAndScore(corpus);
  if (result.problems.length > 0) {
    for (const problem of result.problems) process.stderr.write(`${problem}\n`);
    process.exit(1);
  }
  if (args.includes("--json")) process.stdout.write(`${JSON.stringify({ good: result.good, goodOverall: result.goodOverall, against: result.against, againstOverall: result.againstOverall }, null, 2)}\n`);
  else {
    for (const [title, rows, o] of [["Mined from benign runs only", result.good, result.goodOverall], ["Mined against successful attacks too (--against)", result.against, result.againstOverall]]) {
      console.log(`\n${title}:\n`);
      console.log("| suite | mined from | against | rules | scored | positives | TP | FP | FN | TN | precision | recall | F1 |");
      console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
      for (const f of rows) console.log(`| ${f.suite} | ${f.minedFrom} | ${f.against} | ${f.rules} | ${f.scored} | ${f.positives} | ${f.tp} | ${f.fp} | ${f.fn} | ${f.tn} | ${f.precision.toFixed(3)} | ${f.recall.toFixed(3)} | ${f.f1.toFixed(3)} |`);
      console.log(`| **overall** | | | | | ${o.positives} | ${o.tp} | ${o.fp} | ${o.fn} | ${o.tn} | **${o.precision.toFixed(3)}** | **${o.recall.toFixed(3)}** | **${o.f1.toFixed(3)}** |`);
    }
  }
}
