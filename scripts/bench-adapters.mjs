// Benchmark: events per second through each trace adapter and through shell grounding, and the
// whole AgentDojo corpus checked end to end by `vigilc check` (worker threads, all cores).
// A benchmark, not a test: it prints figures, and fails only if an input does not read cleanly.
//
//   npm run bench:adapters
//   VIGIL_BENCH_CORPUS=path/to/agentdojo npm run bench:adapters
import { execFileSync } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { groundTrace, parseCommandLine, readAnyTrace } from "@vigil/trace";
import sh from "mvdan-sh";

const root = resolve(import.meta.dirname, "..");
const shared = resolve(root, "../shared/data");
const agentdojo = resolve(process.env.VIGIL_BENCH_CORPUS ?? join(shared, "agentdojo"));
const claudeCode = join(shared, "claude-code");

function filesUnder(directory, extension) {
  const out = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) out.push(...filesUnder(path, extension));
    else if (entry.name.endsWith(extension)) out.push(path);
  }
  return out.sort();
}

/** Reads every document with `format`, `passes` times; returns events per second. */
function measureAdapter(name, format, documents, passes) {
  let events = 0;
  const start = performance.now();
  for (let pass = 0; pass < passes; pass++) {
    for (const [file, text] of documents) {
      const read = readAnyTrace(text, { file, format });
      const errors = read.diagnostics.filter((d) => d.severity === "error");
      if (errors.length > 0) throw new Error(`${file} does not read as ${format}: ${errors[0].code} ${errors[0].message}`);
      events += read.trace.events.length;
    }
  }
  const seconds = (performance.now() - start) / 1000;
  const bytes = documents.reduce((sum, [, text]) => sum + text.length, 0) * passes;
  return { input: name, format, documents: documents.length, "events read": events, "events/s": Math.round(events / seconds), "MB/s": (bytes / 2 ** 20 / seconds).toFixed(1) };
}

// Generated recordings of 10,000 calls in each documented shape.
const N = 10_000;
const tools = ["read_file", "write_file", "search", "send_email", "fetch"];
const argsOf = (i) => ({ path: `/data/file-${i % 97}.txt`, query: `term ${i}`, limit: i % 50 });
const canonical = Array.from({ length: N }, (_, i) => JSON.stringify({ action: tools[i % 5], args: argsOf(i), status: i % 13 ? "ok" : "error", output: `result ${i}` })).join("\n");
const openai = [{ role: "user", content: "go" }];
for (let i = 0; i < N; i++) {
  openai.push({ role: "assistant", content: null, tool_calls: [{ id: `call_${i}`, type: "function", function: { name: tools[i % 5], arguments: JSON.stringify(argsOf(i)) } }] });
  openai.push({ role: "tool", tool_call_id: `call_${i}`, content: `result ${i}` });
}
const mcp = [];
for (let i = 0; i < N; i++) {
  mcp.push(JSON.stringify({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: tools[i % 5], arguments: argsOf(i) } }));
  mcp.push(JSON.stringify({ jsonrpc: "2.0", id: i, result: { content: [{ type: "text", text: `result ${i}` }], isError: i % 13 === 0 } }));
}

const agentdojoRuns = filesUnder(agentdojo, ".json").map((file) => [file, readFileSync(file, "utf8")]);
const transcripts = filesUnder(claudeCode, ".jsonl").map((file) => [file, readFileSync(file, "utf8")]);

const rows = [
  measureAdapter("generated, 10,000 calls", "jsonl", [["canonical.jsonl", canonical]], 5),
  measureAdapter("generated, 10,000 calls", "openai", [["openai.json", JSON.stringify(openai)]], 5),
  measureAdapter("generated, 10,000 calls", "mcp", [["mcp.jsonl", mcp.join("\n")]], 5),
  measureAdapter(`AgentDojo runs (${agentdojo})`, "agentdojo", agentdojoRuns, 3),
  measureAdapter("Claude Code transcripts (../shared/data/claude-code)", "claude-code", transcripts, 50),
];
console.log("Adapters (reading only):");
console.table(rows);

// Grounding: the shell calls of the Claude Code transcripts, and generated compound commands.
// Every command line distinct (no parse is ever repeated), in five shapes.
const shellCommands = [
  (i) => `cp out-${i}.xlsx /shared && rm out-${i}.xlsx`,
  (i) => `cd /repo-${i} && git status && git push origin main`,
  (i) => `curl -sS -X POST https://api.example.com/v${i} -d @body.json -o reply.json | jq .id > id-${i}.txt`,
  (i) => `for f in *.csv; do python3 analyze-${i}.py "$f" >> report.txt; done`,
  (i) => `sudo -u deploy kubectl apply -f deploy-${i}.yaml || echo failed 2>&1`,
];
const bashEvents = Array.from({ length: N }, (_, i) => ({ position: i + 1, action: "Bash", args: { command: shellCommands[i % shellCommands.length](i) }, status: "ok" }));
const transcriptEvents = transcripts.flatMap(([file, text]) => readAnyTrace(text, { file, format: "claude-code" }).trace.events);
const grounding = [];
for (const [name, events, passes] of [
  ["generated, 10,000 distinct Bash command lines", bashEvents, 1],
  [`Claude Code transcripts (${transcriptEvents.filter((e) => e.action === "Bash").length} Bash calls of ${transcriptEvents.length})`, transcriptEvents, 20],
]) {
  let out = 0;
  const start = performance.now();
  for (let pass = 0; pass < passes; pass++) {
    const grounded = groundTrace(events);
    if (grounded.diagnostics.some((d) => d.severity === "error")) throw new Error(`grounding ${name}: ${grounded.diagnostics[0].message}`);
    out += grounded.events.length;
  }
  const seconds = (performance.now() - start) / 1000;
  const shell = events.filter((e) => e.action === "Bash").length;
  grounding.push({ input: name, "Bash calls/s": Math.round((shell * passes) / seconds), "events in": events.length, "events out": out / passes });
}
console.log("Shell grounding:");
console.table(grounding);

// Where a command line's time goes: mvdan/sh's parse, a walk of its syntax tree through the
// library's JavaScript wrappers (with nothing done per node), and the whole of parseCommandLine.
const commandLines = bashEvents.map((event) => event.args.command);
const parser = sh.syntax.NewParser();
const perLine = (work) => {
  const start = performance.now();
  work();
  return ((performance.now() - start) / commandLines.length).toFixed(3);
};
const parsedFiles = [];
const parseOnly = perLine(() => {
  for (const line of commandLines) parsedFiles.push(parser.Parse(line, "command"));
});
const walkOnly = perLine(() => {
  for (const file of parsedFiles) sh.syntax.Walk(file, () => true);
});
const whole = perLine(() => {
  for (const line of commandLines) parseCommandLine(line);
});
console.log("Shell command lines, milliseconds per line:");
console.table([{ "mvdan/sh parse": parseOnly, "empty tree walk": walkOnly, parseCommandLine: whole }]);

// End to end: the built CLI on every AgentDojo run, each suite with its policy.
const cli = join(root, "packages/cli/dist/main.js");
let runs = 0;
let events = 0;
const start = performance.now();
for (const suite of ["banking", "slack", "travel", "workspace"]) {
  const args = [cli, "check", join(root, "examples/agentdojo", `${suite}.vigil`), "--trace", join(agentdojo, "*", suite, "**", "*.json"), "--format", "json", "--exit-zero"];
  const report = JSON.parse(execFileSync(process.execPath, args, { encoding: "utf8", maxBuffer: 2 ** 28 }));
  if (report.summary.failed > 0) throw new Error(`${suite}: ${report.summary.failed} runs could not be checked`);
  runs += report.summary.runs;
  events += report.summary.events;
}
const seconds = (performance.now() - start) / 1000;
console.log("End to end (`vigilc check` on each suite's runs with its policy, four processes in turn):");
console.table([{ runs, events, seconds: seconds.toFixed(2), "runs/s": Math.round(runs / seconds), threads: availableParallelism() }]);
