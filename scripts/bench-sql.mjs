// Policies as SQL at scale: a generated corpus of runs judged by `vigilc check --engine sql` (every
// run read into one embedded DuckDB database, one query) and by `--engine eval` (the forward engine,
// run by run in worker threads), each in its own process with its wall time and peak resident
// memory; both must give the same verdicts. Then, in one process, the corpus loaded into DuckDB
// once and judged by one query for the whole policy against one query per rule.
//
//   node scripts/bench-sql.mjs                       10,000,000 events in 100,000 runs, 20 rules
//   VIGIL_BENCH_SQL_RUNS=10000 node scripts/bench-sql.mjs   a tenth of it
//
// A benchmark, not a test: it prints a Markdown table and fails only when the engines disagree or a
// command does not finish as it should. It writes the corpus (~1 GB at full size) to the temp dir.
import { createHash } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { corpusEvents, policy, run } from "./bench-corpus.mjs";

const root = join(import.meta.dirname, "..");
const vigilc = join(root, "packages/cli/dist/main.js");
const runs = Number(process.env["VIGIL_BENCH_SQL_RUNS"] ?? 100_000);
const perRun = Number(process.env["VIGIL_BENCH_SQL_EVENTS_PER_RUN"] ?? 100);


if (process.argv[2] === "--queries") {
  // The child of the last row: the corpus loaded once, judged two ways.
  const { compile } = await import("@vigil/compiler");
  const { compileSql, SqlJudge } = await import("@vigil/sql");
  const compiled = compileSql(compile(policy).program);
  const judge = await SqlJudge.create();
  const loading = performance.now();
  for (let r = 0; r < runs; r++) {
    let position = 0;
    for (const event of corpusEvents(r, perRun)) judge.append(`run${r}`, { ...event, position: ++position });
    judge.addRun(`run${r}`);
  }
  const loaded = (performance.now() - loading) / 1000;
  const one = performance.now();
  const together = await judge.judge(compiled);
  const oneSeconds = (performance.now() - one) / 1000;
  const each = performance.now();
  const apart = await judge.judge({ ...compiled, sql: undefined });
  const eachSeconds = (performance.now() - each) / 1000;
  const digest = (verdicts) => createHash("sha256").update(JSON.stringify([...verdicts].map(([run, v]) => [run, v.outcomes]))).digest("hex");
  if (digest(together) !== digest(apart)) throw new Error("one query for all and one query per rule disagree");
  judge.close();
  process.stdout.write(JSON.stringify({ loaded, oneSeconds, eachSeconds }));
  process.exit(0);
}

const directory = mkdtempSync(join(tmpdir(), "vigil-bench-sql-"));
try {
  const corpus = join(directory, "runs");
  const policyFile = join(directory, "bench.vigil");
  writeFileSync(policyFile, policy);
  const writing = performance.now();
  for (let r = 0; r < runs; r++) {
    const folder = join(corpus, String(Math.floor(r / 1000)).padStart(3, "0"));
    if (r % 1000 === 0) mkdirSync(folder, { recursive: true });
    writeFileSync(join(folder, `run${String(r).padStart(6, "0")}.jsonl`), [...corpusEvents(r, perRun)].map((event) => JSON.stringify(event)).join("\n") + "\n");
  }
  const events = runs * perRun;
  console.error(`wrote ${events} events in ${runs} runs in ${((performance.now() - writing) / 1000).toFixed(1)} s`);
  // The human summary names every unsafe run with the witnesses of each rule it breaks.
  const verdicts = (stdout) => createHash("sha256").update(stdout).digest("hex");
  const rows = [];
  const measured = {};
  const outputs = {};
  for (const engine of ["eval", "sql"]) {
    const result = run([vigilc, "check", policyFile, "--trace", corpus, "--engine", engine, "--exit-zero"]);
    measured[engine] = verdicts(result.stdout);
    outputs[engine] = result.stdout.split("\n");
    rows.push(`| \`vigilc check --engine ${engine}\`, ${events.toLocaleString("en")} events in ${runs.toLocaleString("en")} runs, 20 rules | ${result.seconds.toFixed(1)} s | ${Math.round(result.rss)} MB |`);
    console.error(rows[rows.length - 1]);
  }
  if (measured["eval"] !== measured["sql"]) {
    const at = outputs["eval"].findIndex((line, index) => line !== outputs["sql"][index]);
    throw new Error(`--engine sql and --engine eval disagree on the corpus, from line ${at + 1}:\neval: ${outputs["eval"][at]}\nsql:  ${outputs["sql"][at]}`);
  }
  const queries = run([import.meta.filename, "--queries"]);
  const { loaded, oneSeconds, eachSeconds } = JSON.parse(queries.stdout);
  rows.push(`| in one process: ${events.toLocaleString("en")} events appended to DuckDB (events and values tables) | ${loaded.toFixed(1)} s | ${Math.round(queries.rss)} MB (whole process) |`);
  rows.push(`| then one query for the 20 rules | ${oneSeconds.toFixed(1)} s | |`);
  rows.push(`| then one query per rule, 20 in turn | ${eachSeconds.toFixed(1)} s | |`);
  console.log("| what | wall time | peak memory (RSS) |\n|---|---|---|\n" + rows.join("\n"));
  console.log(`\nsame verdicts, witnesses and undecided rules from both engines on every run: ${measured["eval"] === measured["sql"]}`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
