// Scale benchmark: the built `vigilc` on large inputs, each in its own process, with wall time and
// peak resident memory. A benchmark, not a test: it prints a table (Markdown) and fails only when a
// command does not finish as it should.
//
//   node scripts/bench-scale.mjs                 every row (a few minutes; writes ~2.3 GB to the temp dir)
//   VIGIL_BENCH_SKIP_2GB=1 node scripts/bench-scale.mjs
//   VIGIL_BENCH_ONLY_2GB=1 node scripts/bench-scale.mjs   the streamed 2.2 GB row alone
//
// The rows the targets are about (`check` on 1,000,000 events against the floor, and the streamed
// 2.2 GB check) are measured in VIGIL_BENCH_ROUNDS rounds (3 by default): the machine is shared
// and noisy, so each round measures the floor again, and the row gives the medians with every
// round's figures.
import { spawnSync } from "node:child_process";
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const vigilc = join(root, "packages/cli/dist/main.js");
const directory = mkdtempSync(join(tmpdir(), "vigil-scale-"));
const path = (name) => join(directory, name);

/** Reports the child's peak resident set size on stderr as it exits. */
const reportRss = `data:text/javascript,process.on("exit",()=>process.stderr.write("\\n@maxrss "+process.resourceUsage().maxRSS+"\\n"))`;

function run(args, expectedExit = [0, 1]) {
  const start = performance.now();
  const child = spawnSync(process.execPath, ["--import", reportRss, vigilc, ...args], { encoding: "utf8", maxBuffer: 2 ** 30, stdio: ["ignore", "pipe", "pipe"] });
  const seconds = (performance.now() - start) / 1000;
  const rss = Number(/@maxrss (\d+)/.exec(child.stderr)?.[1] ?? NaN) / 1024;
  if (!expectedExit.includes(child.status)) {
    throw new Error(`vigilc ${args.join(" ")} exited ${child.status}:\n${child.stderr.slice(0, 2000)}`);
  }
  return { seconds, rss, stdout: child.stdout, stderr: child.stderr };
}

function floor(file) {
  const start = performance.now();
  const text = readFileSync(file, "utf8");
  let at = 0;
  while (at < text.length) {
    let end = text.indexOf("\n", at);
    if (end < 0) end = text.length;
    if (end > at) JSON.parse(text.slice(at, end));
    at = end + 1;
  }
  return (performance.now() - start) / 1000;
}

/** Writes `count` canonical events, line by line, without holding the file in memory. */
function writeEvents(file, count, event) {
  const fd = openSync(file, "w");
  let chunk = "";
  for (let i = 0; i < count; i++) {
    chunk += JSON.stringify(event(i)) + "\n";
    if (chunk.length > 1 << 20) {
      writeSync(fd, chunk);
      chunk = "";
    }
  }
  writeSync(fd, chunk);
  closeSync(fd);
}

const policy20 = path("rules20.vigil");
{
  const rules = [];
  for (let i = 0; i < 20; i++) {
    const forms = [
      `abs(action in {tool${i}} and path ~ "/etc/*")`,
      `prec(action in {tool${i}} and id = $x, action in {tool${(i + 1) % 50}} and id = $x)`,
      `resp(action in {tool${i}} and id = $x, action in {tool${(i + 2) % 50}} and id = $x)`,
      `bresp[5](action in {tool${i}} and path ~ "/etc/*", action in {tool${(i + 3) % 50}})`,
    ];
    rules.push(`  rule r${i}: ${forms[i % forms.length]}`);
  }
  writeFileSync(policy20, `policy scale {\n${rules.join("\n")}\n}\n`);
}
const paths = ["/etc/passwd", "/home/u/notes.txt", "/tmp/out.csv"];
const million = path("million.jsonl");
writeEvents(million, 1_000_000, (i) => ({ action: `tool${(i * 7) % 50}`, args: { path: paths[i % 3], id: `id${i % 1000}` }, status: "ok", output: "done" }));

const rows = [];
const row = (what, measured, note = "") => {
  rows.push(`| ${what} | ${measured.seconds.toFixed(1)} s | ${Math.round(measured.rss)} MB | ${note} |`);
  console.error(`${what}: ${measured.seconds.toFixed(1)} s, ${Math.round(measured.rss)} MB`);
};
const ROUNDS = Number(process.env.VIGIL_BENCH_ROUNDS ?? 3);
const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const listed = (values, digits) => values.map((value) => value.toFixed(digits)).join(", ");
/** A row measured in rounds: medians of time and peak memory, with each round's figures. */
function rowOfRounds(what, args, floorOf) {
  const measured = [];
  for (let round = 0; round < ROUNDS; round++) {
    const floorSeconds = floorOf?.();
    measured.push({ ...run(args), floorSeconds });
    console.error(`${what}, round ${round + 1}: ${measured.at(-1).seconds.toFixed(1)} s, ${Math.round(measured.at(-1).rss)} MB${floorSeconds !== undefined ? `, floor ${floorSeconds.toFixed(2)} s` : ""}`);
  }
  const seconds = measured.map((m) => m.seconds);
  const rss = measured.map((m) => m.rss);
  let note = `rounds: ${listed(seconds, 1)} s; ${listed(rss, 0)} MB`;
  if (floorOf !== undefined) {
    const ratios = measured.map((m) => m.seconds / m.floorSeconds);
    note = `${median(ratios).toFixed(1)}× the floor (${listed(ratios, 1)}; floors ${listed(measured.map((m) => m.floorSeconds), 2)} s); ${note}`;
  }
  rows.push(`| ${what} | ${median(seconds).toFixed(1)} s | ${Math.round(median(rss))} MB | ${note} |`);
}

if (process.env.VIGIL_BENCH_ONLY_2GB !== "1") {
  rows.push(`| the floor: read 1,000,000 events and JSON.parse each line (${(statSync(million).size / 2 ** 20).toFixed(0)} MB) | | | in this process, before each round |`);
  rowOfRounds("`check` 20 rules, 1,000,000 events", ["check", policy20, "--trace", million], () => floor(million));
  row("`check --format json`, same", run(["check", policy20, "--trace", million, "--format", "json"]));
  row("`check --sarif`, same", run(["check", policy20, "--trace", million, "--sarif", path("out.sarif")]));
  row("`check --html`, same", run(["check", policy20, "--trace", million, "--html", path("out.html")]), `page ${(statSync(path("out.html")).size / 2 ** 20).toFixed(1)} MB`);
  row("`signature`, 1,000,000 events", run(["signature", million]));

  const hundredThousand = path("100k.jsonl");
  writeEvents(hundredThousand, 100_000, () => ({ action: "a" }));
  const absB = path("abs-b.vigil");
  writeFileSync(absB, "policy p {\n  rule r: abs(action in {b})\n}\n");
  row("`check --engine smt`, 100,000 events", run(["check", absB, "--trace", hundredThousand, "--engine", "smt"]));
  row("`lower`, 100,000 events", run(["lower", absB, "--trace", hundredThousand]));

  const bigSet = path("set.vigil");
  writeFileSync(bigSet, `policy p {\n  rule r: abs(action in {a} and transform in {${Array.from({ length: 200_000 }, (_, i) => `"v${i}"`).join(", ")}})\n}\n`);
  row("`check`, a 200,000-value set, 100,000 events", run(["check", bigSet, "--trace", hundredThousand]));

  const manyRules = path("rules50k.vigil");
  writeFileSync(manyRules, `policy p {\n${Array.from({ length: 50_000 }, (_, i) => `  rule r${i}: abs(action in {tool${i}})`).join("\n")}\n}\n`);
  row("`fmt`, 50,000 rules", run(["fmt", manyRules]));
}

if (process.env.VIGIL_BENCH_SKIP_2GB !== "1") {
  const huge = path("huge.jsonl");
  const padding = "x".repeat(150);
  writeEvents(huge, 10_000_000, (i) => ({ action: `tool${(i * 7) % 50}`, args: { path: paths[i % 3], id: `id${i % 1000}`, note: padding }, status: "ok" }));
  const size = statSync(huge).size / 2 ** 30;
  rowOfRounds(`\`check\` 20 rules, streamed, ${size.toFixed(1)} GB (10,000,000 events)`, ["check", policy20, "--trace", huge]);
  rmSync(huge);
}

rmSync(directory, { recursive: true, force: true });
console.log("| input | time | peak RSS | note |\n|---|---|---|---|");
console.log(rows.join("\n"));
