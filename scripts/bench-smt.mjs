// Z3 at size: one run of 100,000 events judged against the twenty rules of bench-corpus.mjs by
// `vigilc check --engine smt` and by `--engine eval`, each in its own process with its wall time and
// peak resident memory. Every rule Z3 decides must have the forward engine's witnesses; a rule it
// does not decide is listed with the reason (a query over the decider's limit, a solver time-out).
// Then the size of each rule's query (the shared encoding) at a tenth of the events and at all of
// them: linear in the trace, where Figure 5 read literally is quadratic.
//
// First, symbolic analysis at size: `vigilc analyze` of the τ-bench airline policy under the
// signature of its 200 recorded runs (../shared/data/tau-bench, read in place), with its wall time
// and peak memory against the target of 60 s, and that it ends without an internal error (every
// question the solver cannot decide is A0007, counted).
//
//   node scripts/bench-smt.mjs                          100,000 events
//   VIGIL_BENCH_SMT_EVENTS=10000 node scripts/bench-smt.mjs
//   VIGIL_BENCH_SMT_PARTS=analyze node scripts/bench-smt.mjs     the analysis row only
//
// A benchmark, not a test: it prints Markdown and fails only when the engines disagree on a rule
// both decided, or a command does not finish as it should.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { corpusEvents, policy, run } from "./bench-corpus.mjs";

const root = join(import.meta.dirname, "..");
const vigilc = join(root, "packages/cli/dist/main.js");
const events = Number(process.env["VIGIL_BENCH_SMT_EVENTS"] ?? 100_000);
const parts = (process.env["VIGIL_BENCH_SMT_PARTS"] ?? "analyze,check").split(",");

if (parts.includes("analyze")) {
  const runs = join(root, "..", "shared", "data", "tau-bench", "gpt-4o-airline.json");
  if (!existsSync(runs)) console.log(`(the τ-bench runs are not at ${runs}: the analysis row is skipped)`);
  else {
    const args = [vigilc, "analyze", join(root, "examples/tau-airline/airline.vigil"), "--trace", runs, "--format", "json"];
    const reportRss = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\n@maxrss "+process.resourceUsage().maxRSS+"\\n"))`;
    const start = performance.now();
    const child = spawnSync(process.execPath, ["--import", reportRss, ...args], { encoding: "utf8", maxBuffer: 2 ** 30, stdio: ["ignore", "pipe", "pipe"] });
    const seconds = (performance.now() - start) / 1000;
    const rss = Number(/@maxrss (\d+)/.exec(child.stderr)?.[1] ?? NaN) / 1024;
    // Exit 0 (nothing found) or 1 (findings); 2 or more, or an internal error, is a failure.
    if ((child.status !== 0 && child.status !== 1) || /internal error/.test(child.stderr)) throw new Error(`vigilc analyze exited ${child.status}:\n${child.stderr.slice(0, 2000)}`);
    const diagnostics = JSON.parse(child.stdout).files[0].diagnostics;
    const undecided = diagnostics.filter((d) => d.code === "A0007").length;
    console.log("| what | wall time | peak memory (RSS) | findings | undecided (A0007) | target 60 s |\n|---|---|---|---|---|---|");
    console.log(
      `| \`vigilc analyze examples/tau-airline/airline.vigil --trace …/gpt-4o-airline.json\` (200 τ-bench runs, 10 rules) | ${seconds.toFixed(1)} s | ${Math.round(rss)} MB | ${diagnostics.length} | ${undecided} | ${seconds < 60 ? "met" : "MISSED"} |\n`,
    );
  }
}
if (!parts.includes("check")) process.exit(0);

const directory = mkdtempSync(join(tmpdir(), "vigil-bench-smt-"));
try {
  const trace = join(directory, "run.jsonl");
  const policyFile = join(directory, "bench.vigil");
  writeFileSync(policyFile, policy);
  writeFileSync(trace, [...corpusEvents(0, events)].map((event) => JSON.stringify(event)).join("\n") + "\n");
  const reports = {};
  const rows = [];
  for (const engine of ["eval", "smt"]) {
    const result = run([vigilc, "check", policyFile, "--trace", trace, "--engine", engine, "--format", "json", "--exit-zero"]);
    reports[engine] = JSON.parse(result.stdout).statements;
    rows.push(`| \`vigilc check --engine ${engine}\`, ${events.toLocaleString("en")} events, 20 rules | ${result.seconds.toFixed(1)} s | ${Math.round(result.rss)} MB |`);
    console.error(rows[rows.length - 1]);
  }
  console.log("| what | wall time | peak memory (RSS) |\n|---|---|---|\n" + rows.join("\n"));

  const { compile } = await import("@vigil/compiler");
  const { lowerStatement } = await import("@vigil/smt");
  const statements = compile(policy).program.policies[0].statements;
  const all = [...corpusEvents(0, events)].map((event, index) => ({ ...event, position: index + 1 }));
  const tenth = all.slice(0, Math.floor(events / 10));
  const mib = (statement, trace) => (lowerStatement(statement, trace).body.length / 2 ** 20).toFixed(1);
  console.log(`\n| rule | Z3 | witnesses | query at ${tenth.length.toLocaleString("en")} events | at ${events.toLocaleString("en")} |\n|---|---|---|---|---|`);
  let disagreements = 0;
  for (const [index, statement] of statements.entries()) {
    const forward = reports.eval[index];
    const smt = reports.smt[index];
    let verdict;
    if (smt.undecided !== undefined) verdict = `undecided: ${smt.undecided}`;
    else if (JSON.stringify(smt.witnesses) === JSON.stringify(forward.witnesses)) verdict = "decided, as eval";
    else {
      verdict = "DISAGREES with eval";
      disagreements++;
    }
    // A scoped rule is lowered stretch by stretch; its size is not one query's.
    const sizes = statement.scope === undefined ? [mib(statement, tenth), mib(statement, all)].map((size) => `${size} MiB`) : ["per stretch", "per stretch"];
    console.log(`| ${statement.name} | ${verdict} | ${forward.witnesses.length} | ${sizes[0]} | ${sizes[1]} |`);
  }
  if (disagreements > 0) throw new Error(`--engine smt and --engine eval disagree on ${disagreements} rule(s) both decided`);
} finally {
  rmSync(directory, { recursive: true, force: true });
}
