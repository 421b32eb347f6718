// How long the shipped examples' policy tests take: `vigilc test examples/ --engine eval,monitor` as a user
// runs it (a new process each time, start-up included), and the same files through the compiler's
// runner in one process (what an editor or a watch loop pays per run). Also with every engine.
//
//   npx tsc -b && node scripts/bench-tests.mjs [--runs 5]
//
// Target: the examples' tests with the forward engine in under 2 s, as a user runs them.

import { execFileSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runTestFile } from "@vigil/compiler";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const cli = join(root, "packages/cli/dist/main.js");
const runsArgument = process.argv.indexOf("--runs");
const runs = runsArgument > 0 ? Number(process.argv[runsArgument + 1]) : 5;
const target = 2000;

const files = readdirSync(join(root, "examples"), { recursive: true })
  .filter((name) => String(name).endsWith(".vigiltest"))
  .map((name) => join(root, "examples", String(name)))
  .sort();

function median(values) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

function timeCli(engine) {
  const times = [];
  let summary = "";
  for (let k = 0; k < runs; k++) {
    const started = performance.now();
    const output = execFileSync(process.execPath, [cli, "test", "examples/", "--engine", engine], { cwd: root, encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    times.push(performance.now() - started);
    summary = output.trim().split("\n").at(-1);
  }
  return { times, summary };
}

async function timeInProcess(engines) {
  const times = [];
  let tests = 0;
  for (let k = 0; k < runs; k++) {
    const started = performance.now();
    tests = 0;
    for (const file of files) {
      const result = await runTestFile(file, { engines });
      if (result.tests.some((t) => t.outcome !== "passed") || result.diagnostics.some((d) => d.severity === "error")) throw new Error(`${file}: a test did not pass`);
      tests += result.tests.length;
    }
    times.push(performance.now() - started);
  }
  return { times, tests };
}

const row = (name, times, withTarget) => {
  const p50 = median(times);
  const verdict = withTarget ? `   target < ${target} ms${p50 < target ? "" : ", MISSED"}` : "";
  console.log(`${name.padEnd(58)} median ${p50.toFixed(0).padStart(6)} ms   [${times.map((t) => t.toFixed(0)).join(", ")}]${verdict}`);
};

console.log(`${files.length} test files under examples/, ${runs} runs each\n`);
const cliEval = timeCli("eval,monitor");
console.log(`(${cliEval.summary})`);
row("vigilc test examples/ --engine eval,monitor (new process)", cliEval.times, true);
const inProcess = await timeInProcess(["eval", "monitor"]);
row(`runTestFile, forward engine and monitor (${inProcess.tests} tests, in process)`, inProcess.times.slice(1), false);
row("vigilc test examples/ (every engine, Z3 included)", timeCli("all").times, false);
