#!/usr/bin/env node
/**
 * Checks every τ-bench airline run against airline.vigil with `vigilc check --messages` and prints,
 * per rule, how many runs break it and which: the table of README.md, kept as verdicts.json and
 * checked by tau-airline.test.ts.
 *
 *   node examples/tau-airline/verdicts.mjs [--engine eval|smt] > examples/tau-airline/verdicts.json
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";

const root = join(import.meta.dirname, "..", "..");
export const policy = join("examples", "tau-airline", "airline.vigil");
export const runsFile = join("..", "shared", "data", "tau-bench", "gpt-4o-airline.json");

/** `vigilc check` on the run file, as JSON: the corpus report. */
export async function check(engine = "eval") {
  const cli = join(root, "packages", "cli", "dist", "main.js");
  const args = [cli, "check", policy, "--messages", "--trace", runsFile, "--format", "json", "--engine", engine];
  // Exit 1 means some run is unsafe: the report is still complete.
  const { stdout } = await promisify(execFile)(process.execPath, args, { cwd: root, maxBuffer: 256 * 1024 * 1024 }).catch((error) => {
    if (error.code === 1 && error.stdout) return error;
    throw error;
  });
  return JSON.parse(stdout);
}

/** Per rule, in the policy's order: the number of runs breaking it and their names. */
export function verdictTable(report) {
  const rules = new Map();
  for (const run of report.runs) {
    for (const statement of run.statements) {
      const name = `${statement.policy}.${statement.name}`;
      if (!rules.has(name)) rules.set(name, []);
      if (!statement.holds) rules.get(name).push(run.run ?? run.file);
    }
  }
  return {
    runs: report.summary.runs,
    unsafe: report.summary.unsafe,
    rules: [...rules].map(([rule, broken]) => ({ rule, runs: broken.length, broken })),
  };
}

/** Each run's verdict and, per rule, whether it holds, its witnesses and the events that broke it: what two engines must agree on. */
export function runVerdicts(report) {
  return report.runs.map((run) => ({
    run: run.run,
    verdict: run.verdict,
    statements: run.statements.map(({ name, holds, witnesses, brokenBy }) => ({ name, holds, witnesses, brokenBy })),
  }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const engine = process.argv.includes("--engine") ? process.argv[process.argv.indexOf("--engine") + 1] : "eval";
  console.log(JSON.stringify(verdictTable(await check(engine)), null, 2));
}
