// The language server's latency on a large policy, over the real server process and JSON-RPC:
// from a didChange to the publishDiagnostics of that version, a completion request, and the code
// lenses (each rule's verdict on the sample traces). The policy has 2,000 rules and is checked
// against the sample traces of examples/coding-agent. Prints p50 and p95 of each. Then, on a second
// server with the analysis on: completions and hovers asked while the analysis (Z3, in the server's
// worker thread) runs on the analysis example (packages/cli/test/fixtures/analysis/release.vigil),
// against the same once it is done.
//
//   npx tsc -b && node scripts/bench-language-server.mjs [--edits 60]
//
// Targets: diagnostics < 100 ms, completion < 50 ms, lenses < 500 ms.

import { spawn } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const server = join(root, "packages/language-server/dist/main.js");
const editsArgument = process.argv.indexOf("--edits");
const edits = editsArgument > 0 ? Number(process.argv[editsArgument + 1]) : 60;
const rules = 2000;

// A workspace: the coding agent's sample traces and a generated policy of 2,000 rules over them.
const workspace = mkdtempSync(join(tmpdir(), "vigil-bench-lsp-"));
for (const name of readdirSync(join(root, "examples/coding-agent")).filter((n) => n.endsWith(".jsonl"))) {
  cpSync(join(root, "examples/coding-agent", name), join(workspace, name));
}
writeFileSync(join(workspace, "vigil.config.json"), JSON.stringify({ traces: ["*.jsonl"] }));

function policyText() {
  const lines = ["/// A generated policy of 2,000 rules over a coding agent's tools.", "policy generated {"];
  for (let index = 0; index < 50; index++) {
    lines.push(`  /// Files of kind ${index}.`, `  pattern touches_${index} = action in {Read, Edit, Write} and file_path ~ "*.py${index}"`, "");
  }
  const forms = [
    (i) => `prec(action in {Edit} and file_path = $f, action in {Read} and file_path = $f)`,
    (i) => `abs(action in {rm} and recursive in {true} and target ~ "/tmp${i}/*")`,
    (i) => `always not (action in {curl, wget} and once touches_${i % 50})`,
    (i) => `resp(touches_${i % 50}, action in {pytest, python} and status = ok)`,
    (i) => `bresp[5](action in {"git commit"}, action in {"git push"})`,
  ];
  for (let index = 0; index < rules; index++) {
    lines.push(`  /// Generated rule ${index}.`, `  rule r${index}: ${forms[index % forms.length](index)}`, "");
  }
  lines.push("}", "");
  return lines.join("\n");
}

const text = policyText();
const uri = pathToFileURL(join(workspace, "generated.vigil")).href;
writeFileSync(join(workspace, "generated.vigil"), text);

const child = spawn(process.execPath, [server, "--stdio"], { stdio: ["pipe", "pipe", "inherit"], detached: true });
const connection = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
const waiting = new Map();
connection.onNotification("textDocument/publishDiagnostics", (params) => {
  const resolve = waiting.get(params.version);
  if (resolve !== undefined) {
    waiting.delete(params.version);
    resolve(params);
  }
});
connection.onRequest(() => null);
connection.listen();

function diagnosticsOf(version) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no diagnostics for version ${version} within 60 s`)), 60_000);
    waiting.set(version, (params) => {
      clearTimeout(timer);
      resolve(params);
    });
  });
}

function percentile(values, p) {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

function report(name, values, target) {
  const p50 = percentile(values, 50);
  const p95 = percentile(values, 95);
  console.log(`${name.padEnd(34)} p50 ${p50.toFixed(1).padStart(7)} ms   p95 ${p95.toFixed(1).padStart(7)} ms   (n = ${values.length}, target < ${target} ms${p50 < target ? "" : ", MISSED at p50"})`);
}

try {
  await connection.sendRequest("initialize", {
    processId: process.pid,
    rootUri: pathToFileURL(workspace).href,
    workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: "bench" }],
    capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } }, workspace: { workspaceEdit: { documentChanges: true } } },
    // The analysis is measured on its own below.
    initializationOptions: { settings: { analysis: { enabled: false } } },
  });
  await connection.sendNotification("initialized", {});

  let started = performance.now();
  const opened = diagnosticsOf(1);
  await connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "vigil", version: 1, text } });
  const first = await opened;
  console.log(`${rules} rules, ${text.length} characters, ${text.split("\n").length} lines; first diagnostics after ${(performance.now() - started).toFixed(0)} ms (${first.diagnostics.length} diagnostics)`);

  // Edits in the middle of the file: each renames one rule by a character (a keystroke), then back.
  const lines = text.split("\n");
  const editLine = lines.findIndex((line) => line.startsWith(`  rule r${rules / 2}:`));
  const diagnosticsTimes = [];
  let version = 1;
  for (let index = 0; index < edits; index++) {
    version++;
    const insert = index % 2 === 0;
    const change = insert
      ? { range: { start: { line: editLine, character: 8 }, end: { line: editLine, character: 8 } }, text: "x" }
      : { range: { start: { line: editLine, character: 8 }, end: { line: editLine, character: 9 } }, text: "" };
    const published = diagnosticsOf(version);
    started = performance.now();
    await connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [change] });
    await published;
    diagnosticsTimes.push(performance.now() - started);
  }

  // Completion after `action in {` of a rule in the middle, and at a key position.
  const completionTimes = [];
  const actionLine = lines.findIndex((line) => line.startsWith(`  rule r${rules / 2 + 1}:`));
  const braceCharacter = lines[actionLine].indexOf("{") + 1;
  let items = 0;
  for (let index = 0; index < edits; index++) {
    const position = index % 2 === 0 ? { line: actionLine, character: braceCharacter } : { line: editLine, character: lines[editLine].indexOf("(") + 1 };
    started = performance.now();
    const list = await connection.sendRequest("textDocument/completion", { textDocument: { uri }, position });
    completionTimes.push(performance.now() - started);
    items += list.items.length;
  }

  // Code lenses: after an edit (the verdicts of the new version are computed), then asked again.
  const lensTimes = [];
  const cachedLensTimes = [];
  let lensCount = 0;
  const lensRounds = Math.max(10, Math.floor(edits / 4));
  for (let index = 0; index < lensRounds; index++) {
    version++;
    const insert = index % 2 === 0;
    const change = insert
      ? { range: { start: { line: editLine, character: 8 }, end: { line: editLine, character: 8 } }, text: "y" }
      : { range: { start: { line: editLine, character: 8 }, end: { line: editLine, character: 9 } }, text: "" };
    const published = diagnosticsOf(version);
    await connection.sendNotification("textDocument/didChange", { textDocument: { uri, version }, contentChanges: [change] });
    await published;
    started = performance.now();
    const lenses = await connection.sendRequest("textDocument/codeLens", { textDocument: { uri } });
    lensTimes.push(performance.now() - started);
    lensCount = lenses.length;
    started = performance.now();
    await connection.sendRequest("textDocument/codeLens", { textDocument: { uri } });
    cachedLensTimes.push(performance.now() - started);
  }

  console.log("");
  report("didChange → publishDiagnostics", diagnosticsTimes, 100);
  report("completion", completionTimes, 50);
  report("code lens after an edit", lensTimes, 500);
  report("code lens again (cached)", cachedLensTimes, 500);
  console.log(`(${items / edits} completion items on average; ${lensCount} lenses over ${readdirSync(workspace).filter((n) => n.endsWith(".jsonl")).length} sample traces)`);

  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
  await duringAnalysis();
} finally {
  connection.dispose();
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
  rmSync(workspace, { recursive: true, force: true });
}

/**
 * Completion and hover latency on a server whose analysis worker is busy: the analysis example is
 * opened with the analysis on and no pause, and requests are sent one after another until its
 * findings are published; then as many again, with the worker idle. Its analysis takes seconds;
 * the requests must not wait for it.
 */
async function duringAnalysis() {
  const policyFile = join(root, "packages/cli/test/fixtures/analysis/release.vigil");
  const policy = (await import("node:fs")).readFileSync(policyFile, "utf8");
  const policyUri = pathToFileURL(policyFile).href;
  const busy = spawn(process.execPath, [server, "--stdio"], { stdio: ["pipe", "pipe", "inherit"], detached: true });
  const rpc = createMessageConnection(new StreamMessageReader(busy.stdout), new StreamMessageWriter(busy.stdin));
  let analysed = false;
  let analysisStarted = 0;
  let analysisTook = 0;
  rpc.onNotification("textDocument/publishDiagnostics", (params) => {
    if (!analysed && params.diagnostics.some((d) => String(d.code).startsWith("A"))) {
      analysed = true;
      analysisTook = performance.now() - analysisStarted;
    }
  });
  rpc.onRequest(() => null);
  rpc.listen();
  try {
    await rpc.sendRequest("initialize", {
      processId: process.pid,
      rootUri: null,
      capabilities: { textDocument: { completion: { completionItem: { snippetSupport: true } } } },
      initializationOptions: { settings: { analysis: { enabled: true, delay: 0 } } },
    });
    await rpc.sendNotification("initialized", {});
    analysisStarted = performance.now();
    await rpc.sendNotification("textDocument/didOpen", { textDocument: { uri: policyUri, languageId: "vigil", version: 1, text: policy } });
    const lines = policy.split("\n");
    const ruleLine = lines.findIndex((line) => line.includes("rule tested:"));
    const braceLine = lines.findIndex((line) => line.includes("action in {"));
    const ask = async () => {
      let started = performance.now();
      await rpc.sendRequest("textDocument/completion", { textDocument: { uri: policyUri }, position: { line: braceLine, character: lines[braceLine].indexOf("{") + 1 } });
      const completion = performance.now() - started;
      started = performance.now();
      await rpc.sendRequest("textDocument/hover", { textDocument: { uri: policyUri }, position: { line: ruleLine, character: lines[ruleLine].indexOf("tested") + 2 } });
      return { completion, hover: performance.now() - started };
    };
    const busyTimes = [];
    const deadline = performance.now() + 120_000;
    while (!analysed && performance.now() < deadline) busyTimes.push(await ask());
    if (!analysed) throw new Error("the analysis did not publish its findings within 120 s");
    const idleTimes = [];
    for (let index = 0; index < Math.max(20, busyTimes.length); index++) idleTimes.push(await ask());
    console.log("");
    console.log(`analysis of release.vigil (the analysis example): findings published after ${analysisTook.toFixed(0)} ms; meanwhile ${busyTimes.length} completions and hovers were answered`);
    report("completion, analysis running", busyTimes.map((t) => t.completion), 50);
    report("completion, analysis done", idleTimes.map((t) => t.completion), 50);
    report("hover, analysis running", busyTimes.map((t) => t.hover), 50);
    report("hover, analysis done", idleTimes.map((t) => t.hover), 50);
    await rpc.sendRequest("shutdown");
    await rpc.sendNotification("exit");
  } finally {
    rpc.dispose();
    try {
      process.kill(-busy.pid, "SIGKILL");
    } catch {
      // Already gone.
    }
  }
}
