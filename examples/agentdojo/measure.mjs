#!/usr/bin/env node
/**
 * Measures the AgentDojo policies against the recorded AgentDojo runs.
 *
 *   node examples/agentdojo/measure.mjs [CORPUS] [--list] [--json]
 *
 * CORPUS (default: ../../../shared/data/agentdojo relative to this script) holds run files laid out
 * as `<model>/<suite>/<user_task>/<attack>/<injection_task_N|none>.json`. Each run is read with the
 * AgentDojo adapter, checked with its suite's policy file (`<suite>.vigil` beside this script) by
 * the direct evaluator, and counted as flagged when its verdict is `unsafe`.
 *
 * Labels: on an injected run (attack other than `none`) `security: true` means the attack
 * succeeded, a positive; `security: false` is a negative. Runs under the attack `none` are benign
 * negatives (their `security` field is a placeholder).
 *
 * Two views are reported: every rule, and the general rules alone (without the `*_indicators`
 * policies, which use benchmark-specific constants). `--list` also lists every false positive and
 * false negative with the rules it broke; `--json` prints the figures as JSON (the shape of
 * `measured.json`, which the example's test compares against).
 *
 * Exits 1 on any problem reading a run or compiling a policy; no run is ever skipped.
 *
 * Build first (`npx tsc -b` at the repository root): run directly, the script imports the built
 * packages. The test imports `measure` and `summarize` from this module.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative, resolve, sep } from "node:path";
import { pathToFileURL } from "node:url";
import { check, compile, signatureOf } from "@vigil/compiler";
import { readAnyTrace } from "@vigil/trace";

const here = import.meta.dirname;
export const suites = ["banking", "slack", "travel", "workspace"];
export const defaultCorpus = join(here, "../../../shared/data/agentdojo");
const indicatorPolicy = /_indicators$/;

function errorsOf(diagnostics) {
  return diagnostics.filter((d) => d.severity === "error");
}

function describe(diagnostic) {
  const where = diagnostic.span ? `:${diagnostic.span.start.line}:${diagnostic.span.start.column}` : "";
  return `${diagnostic.file ?? ""}${where} ${diagnostic.code} ${diagnostic.message}`;
}

function* runFiles(directory) {
  const entries = readdirSync(directory, { withFileTypes: true }).sort((a, b) =>
    a.name.localeCompare(b.name, "en", { numeric: true }),
  );
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* runFiles(path);
    else if (entry.isFile() && entry.name.endsWith(".json")) yield path;
  }
}

/**
 * Checks every run under `corpus` with its suite's policy. Returns one row per judged run and the
 * problems (a run that does not read, a policy that does not compile); a run with a problem is
 * never counted, so a caller must treat any problem as a failure.
 */
export async function measure(corpus = defaultCorpus) {
  const problems = [];
  const rows = [];
  if (!existsSync(corpus) || !statSync(corpus).isDirectory()) {
    return { rows, problems: [`${corpus} is not a directory`] };
  }

  // The policies: each must compile without errors before any run is judged.
  const policies = new Map();
  for (const suite of suites) {
    const file = join(here, `${suite}.vigil`);
    const source = readFileSync(file, "utf8");
    const errors = errorsOf(compile(source, { file }).diagnostics);
    if (errors.length > 0) problems.push(`${file} does not compile:\n  ${errors.map(describe).join("\n  ")}`);
    policies.set(suite, { file, source });
  }
  if (problems.length > 0) return { rows, problems };

  for (const path of runFiles(corpus)) {
    const shown = relative(corpus, path) || path;
    // <model>/<suite>/<user_task>/<attack>/<file>.json, read from the end of the path.
    const [suite, task, attack, file] = path.split(sep).slice(-4);
    if (!suites.includes(suite)) {
      problems.push(`${shown}: not under a suite directory (${suites.join(", ")})`);
      continue;
    }
    let text;
    let run;
    try {
      text = readFileSync(path, "utf8");
      run = JSON.parse(text);
    } catch (error) {
      problems.push(`${shown}: cannot be read: ${error.message}`);
      continue;
    }
    if (run?.suite_name !== suite) {
      problems.push(`${shown}: suite_name ${JSON.stringify(run?.suite_name)} does not match its directory`);
      continue;
    }
    const injected = attack !== "none";
    if (injected && typeof run.security !== "boolean") {
      problems.push(`${shown}: an injected run without a boolean security label`);
      continue;
    }
    const { trace, diagnostics, format } = readAnyTrace(text, { file: shown, format: "agentdojo" });
    const readErrors = errorsOf(diagnostics);
    if (format !== "agentdojo" || readErrors.length > 0) {
      problems.push(`${shown}: the trace does not read:\n  ${readErrors.map(describe).join("\n  ")}`);
      continue;
    }
    const policy = policies.get(suite);
    const compiled = compile(policy.source, { file: policy.file, signature: signatureOf(trace.events) });
    const compileErrors = errorsOf(compiled.diagnostics);
    if (!compiled.ok || compileErrors.length > 0) {
      problems.push(`${shown}: the policy does not compile against this run:\n  ${compileErrors.map(describe).join("\n  ")}`);
      continue;
    }
    const report = await check(compiled, trace, { engine: "eval" });
    const broken = report.statements.filter((s) => !s.holds).map((s) => `${s.policy}.${s.name}`);
    rows.push({
      path: shown,
      suite,
      task,
      attack,
      file,
      positive: injected && run.security === true,
      broken,
      generalBroken: broken.filter((name) => !indicatorPolicy.test(name.split(".")[0])),
    });
  }
  if (rows.length === 0 && problems.length === 0) problems.push(`no run files under ${corpus}`);
  return { rows, problems };
}

function round(x) {
  return Number.isNaN(x) ? null : Math.round(x * 1000) / 1000;
}

function tally(rows, flagged) {
  const t = { runs: rows.length, positives: 0, tp: 0, fp: 0, fn: 0, tn: 0 };
  for (const row of rows) {
    const f = flagged(row);
    if (row.positive) {
      t.positives++;
      if (f) t.tp++;
      else t.fn++;
    } else if (f) t.fp++;
    else t.tn++;
  }
  const precision = t.tp + t.fp === 0 ? NaN : t.tp / (t.tp + t.fp);
  const recall = t.positives === 0 ? NaN : t.tp / t.positives;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : NaN;
  return { ...t, precision: round(precision), recall: round(recall), f1: round(f1) };
}

const flaggedBy = {
  all: (row) => row.broken.length > 0,
  general: (row) => row.generalBroken.length > 0,
};

/** The confusion counts and precision, recall and F1 (to three places) per suite and overall, for both views. */
export function summarize(rows) {
  const summary = {};
  for (const [view, flagged] of Object.entries(flaggedBy)) {
    summary[view] = {};
    for (const suite of [...suites, "overall"]) {
      summary[view][suite] = tally(suite === "overall" ? rows : rows.filter((r) => r.suite === suite), flagged);
    }
  }
  return summary;
}

function printTable(title, figures) {
  const header = ["suite", "runs", "positives", "TP", "FP", "FN", "TN", "precision", "recall", "F1"];
  const fmt = (x) => (x === null ? "n/a" : x.toFixed(3));
  const rows = Object.entries(figures).map(([suite, t]) =>
    [suite, t.runs, t.positives, t.tp, t.fp, t.fn, t.tn, fmt(t.precision), fmt(t.recall), fmt(t.f1)].map(String),
  );
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  ");
  console.log(title);
  console.log(line(header));
  for (const row of rows) console.log(line(row));
  console.log();
}

function printFalsePositiveKinds(rows, flagged) {
  const fps = rows.filter((row) => !row.positive && flagged(row));
  const benign = fps.filter((row) => row.attack === "none").length;
  const injected = fps.length - benign;
  const withIndicator = fps.filter((row) => row.attack !== "none" && row.broken.length > row.generalBroken.length).length;
  console.log(
    `False positives: ${fps.length} = ${benign} on runs without injection (attack none) + ${injected} on injected runs labelled ` +
      `"attack failed" (${withIndicator} of these contain a blocklisted attacker value in their calls).`,
  );
  console.log();
}

function printFalsePositiveRules(rows, flagged) {
  const counts = new Map();
  for (const row of rows) {
    if (row.positive || !flagged(row)) continue;
    for (const name of row.broken) counts.set(name, (counts.get(name) ?? 0) + 1);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0])).slice(0, 10);
  console.log("The 10 most frequent rules behind false positives (false-positive runs that break each rule):");
  if (top.length === 0) console.log("  (none)");
  for (const [name, count] of top) console.log(`  ${String(count).padStart(4)}  ${name}`);
  console.log();
}

async function main(argv) {
  const list = argv.includes("--list");
  const json = argv.includes("--json");
  const positional = argv.filter((a) => !a.startsWith("--"));
  const unknown = argv.filter((a) => a.startsWith("--") && a !== "--list" && a !== "--json");
  if (unknown.length > 0 || positional.length > 1) {
    console.error("usage: node measure.mjs [CORPUS] [--list] [--json]");
    return 2;
  }
  const corpus = resolve(positional[0] ?? defaultCorpus);
  const { rows, problems } = await measure(corpus);
  if (problems.length > 0) {
    console.error(`measure: ${problems.length} problem(s); no figure is reported:`);
    for (const problem of problems) console.error(`  ${problem}`);
    return 1;
  }
  const summary = summarize(rows);
  if (json) {
    console.log(JSON.stringify(summary, null, 2));
    return 0;
  }
  console.log(`Corpus: ${corpus} (${rows.length} runs; engine: eval)\n`);
  printTable("All rules (a run is flagged when its verdict is unsafe):", summary.all);
  printFalsePositiveKinds(rows, flaggedBy.all);
  printFalsePositiveRules(rows, flaggedBy.all);
  printTable("General rules only (without the *_indicators policies, which use benchmark-specific constants):", summary.general);
  printFalsePositiveKinds(rows, flaggedBy.general);
  if (list) {
    for (const [title, pick] of [
      ["False positives (all rules)", (r) => !r.positive && flaggedBy.all(r)],
      ["False negatives (all rules)", (r) => r.positive && !flaggedBy.all(r)],
    ]) {
      const picked = rows.filter(pick);
      console.log(`${title}: ${picked.length}`);
      for (const row of picked) console.log(`  ${row.path}${row.broken.length > 0 ? `  [${row.broken.join(", ")}]` : ""}`);
      console.log();
    }
  }
  return 0;
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  process.exitCode = await main(process.argv.slice(2));
}
