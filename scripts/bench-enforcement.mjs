// Enforcement in the call path, end to end (docs/performance.md, "Enforcement"):
//   0. the hook as `--install` writes it (the relay to its daemon, through the shell as Claude Code
//      runs it) for an ordinary PreToolUse, against `node -e 0`, the hook with no daemon (started
//      from its startup snapshot) and the hook alone, the four interleaved, with the ratio to
//      `node -e 0` (the target: 1.3);
//   1. one `vigilc hook claude-code` invocation as Claude Code makes it (a new process: start,
//      load, read the event, decide or record, persist, answer), PreToolUse and PostToolUse;
//   2. the same through a running sidecar (`--server`): the hook's process only passes the event on;
//   3. the sidecar's HTTP round trip (decide, record) on a kept-alive connection;
//   4. the MCP gateway's round trip for a tools/call, against the same call made to the server directly.
// Calls per measurement: VIGIL_BENCH_CALLS (default 1,000; 200 at most for 0.). Run after `tsc -b`;
// `--installed-only` (or its old name `--snapshot-only`) runs 0. alone.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { request, Agent } from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const root = join(import.meta.dirname, "..");
const vigilc = join(root, "packages", "cli", "bin", "vigilc.js");
const policy = join(root, "examples", "coding-agent", "coding-agent.vigil");
const filesystemServer = join(root, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const calls = Number(process.env.VIGIL_BENCH_CALLS ?? 1000);
const scratch = realpathSync(mkdtempSync(join(tmpdir(), "vigil-bench-enforcement-")));

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}
function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { n: sorted.length, p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}
function row(name, samples) {
  const s = summary(samples);
  console.log(`| ${name} | ${s.n.toLocaleString("en")} | ${s.p50.toFixed(1)} ms | ${s.p95.toFixed(1)} ms | ${s.p99.toFixed(1)} ms |`);
  return s;
}

/** Runs a process with `input` on stdin; resolves with its wall time in ms (rejects on a non-zero exit). */
function timed(args, input, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const started = performance.now();
    const { command = process.execPath, shellArgs = args, ...rest } = options;
    const child = spawn(command, shellArgs, { cwd: scratch, stdio: ["pipe", "ignore", "pipe"], ...rest });
    let stderr = "";
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk));
    const limit = setTimeout(() => child.kill("SIGKILL"), 60_000);
    child.on("close", (code) => {
      clearTimeout(limit);
      if (code === 0) resolvePromise(performance.now() - started);
      else reject(new Error(`exit ${code}: ${stderr}`));
    });
    child.stdin.end(input);
  });
}

/** The events of a session of `calls` tool calls, Pre and Post in turn, over a few tools. */
function* session(id) {
  const tools = [
    (i) => ["Read", { file_path: `/repo/src/file${i % 50}.ts` }, { type: "text", file: { filePath: `/repo/src/file${i % 50}.ts`, content: "export {};\n" } }],
    (i) => ["Bash", { command: `npm test -- --grep case${i % 7} && git status`, description: "Run a test" }, { stdout: "1 passing", stderr: "", interrupted: false, isImage: false }],
    (i) => ["Edit", { file_path: `/repo/src/file${i % 50}.ts`, old_string: "a", new_string: "b" }, { filePath: `/repo/src/file${i % 50}.ts` }],
    (i) => ["Grep", { pattern: `TODO${i % 9}`, path: "/repo" }, { mode: "content", numFiles: 1 }],
  ];
  for (let i = 0; ; i++) {
    const [tool, input, response] = tools[i % tools.length](i);
    const base = { session_id: id, transcript_path: `/home/dev/.claude/projects/repo/${id}.jsonl`, cwd: "/repo", permission_mode: "default", tool_name: tool, tool_input: input, tool_use_id: `toolu_${i}` };
    yield ["PreToolUse", JSON.stringify({ ...base, hook_event_name: "PreToolUse" })];
    yield ["PostToolUse", JSON.stringify({ ...base, hook_event_name: "PostToolUse", tool_response: response })];
  }
}

/** Runs a shell command line as Claude Code runs a hook's (`sh -c`), `input` on stdin; resolves with its wall time in ms. */
function timedShell(line, input) {
  return timed([], input, { command: "/bin/sh", shellArgs: ["-c", line] });
}

/** The hook's command line as `--print-settings` writes it in `directory` (whose `.vigil` holds the database). */
async function installedCommand(directory, extra = []) {
  const printed = await new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [vigilc, "hook", "claude-code", "--print-settings", "--policy", policy, ...extra], {
      cwd: directory,
      env: { ...process.env, CLAUDE_PROJECT_DIR: directory },
      stdio: ["ignore", "pipe", "inherit"],
    });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => (stdout += chunk));
    child.on("close", (code) => (code === 0 ? resolvePromise(stdout) : reject(new Error(`--print-settings exited with ${code}`))));
  });
  return JSON.parse(printed).hooks.PreToolUse[0].hooks[0].command;
}

/** Runs `command` (a hook's command line) with `input` as Claude Code would: `sh -c`, in the project. */
function timedHook(command, project, input) {
  return timed([], input, { command: "/bin/sh", shellArgs: ["-c", command], cwd: project, env: { ...process.env, CLAUDE_PROJECT_DIR: project } });
}

/**
 * The hook as `--install` writes it, for an ordinary PreToolUse: the relay to the hook daemon
 * (hook-daemon.ts), its fallback started from the startup snapshot when no daemon serves, and the
 * hook without either; against `node -e 0`, all four interleaved, each hook on a session and
 * project of its own (its PostToolUse recorded too, untimed), with the ratio to `node -e 0` (the
 * target: 1.3).
 */
async function benchInstalledHook() {
  const { buildHookSnapshot } = await import("../packages/cli/scripts/build-hook-snapshot.mjs");
  await buildHookSnapshot();
  const project = (name) => {
    const directory = join(scratch, name);
    mkdirSync(directory);
    return directory;
  };
  const daemonProject = project("daemon");
  const snapshotProject = project("snapshot");
  const installed = await installedCommand(daemonProject);
  if (!installed.includes("hook-relay.cjs") || !installed.includes("--snapshot-blob")) throw new Error(`the installed hook does not relay to a daemon with the snapshot behind: ${installed}`);
  // A database outside `.vigil` has no daemon: the command line then starts from the snapshot.
  const snapshotOnly = await installedCommand(snapshotProject, ["--db", join(snapshotProject, "audit.db")]);
  if (installed.includes("--snapshot-blob") !== snapshotOnly.includes("--snapshot-blob") || snapshotOnly.includes("hook-relay.cjs")) throw new Error(`unexpected command line without a daemon: ${snapshotOnly}`);
  const plainProject = project("plain");
  const plain = [vigilc, "hook", "claude-code", "--policy", policy, "--db", join(plainProject, "audit.db")];
  const samples = { bare: [], daemon: [], snapshot: [], plain: [] };
  const events = { daemon: session("daemon"), snapshot: session("snapshot"), plain: session("plain") };
  // The first events compile the policy into each database and start the daemon; they are not counted.
  for (let i = 0; i < 2; i++) {
    await timedHook(installed, daemonProject, events.daemon.next().value[1]);
    await timedHook(snapshotOnly, snapshotProject, events.snapshot.next().value[1]);
    await timed(plain, events.plain.next().value[1]);
  }
  // The daemon must be what answers: measured while it is up, or the row would be the fallback's.
  const [, relay, socket] = installed.split(";")[0].split(" ");
  const relayed = async () => {
    for (let attempt = 0; ; attempt++) {
      try {
        await timed([relay, socket], events.daemon.next().value[1]);
        await timed([relay, socket], events.daemon.next().value[1]);
        return;
      } catch (error) {
        if (attempt === 100) throw new Error(`the hook daemon does not answer: ${error.message}`);
        await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
      }
    }
  };
  await relayed();
  const n = Math.min(calls, 200);
  for (let i = 0; i < n; i++) {
    samples.bare.push(await timed(["-e", "0"], ""));
    samples.daemon.push(await timedHook(installed, daemonProject, events.daemon.next().value[1]));
    await timedHook(installed, daemonProject, events.daemon.next().value[1]);
    samples.snapshot.push(await timedHook(snapshotOnly, snapshotProject, events.snapshot.next().value[1]));
    await timedHook(snapshotOnly, snapshotProject, events.snapshot.next().value[1]);
    samples.plain.push(await timed(plain, events.plain.next().value[1]));
    await timed(plain, events.plain.next().value[1]);
  }
  await relayed();
  const bare = row("`node -e 0`, interleaved with the three below", samples.bare);
  const daemon = row("hook as installed (relay to its daemon, via `sh -c`): PreToolUse", samples.daemon);
  const snapshot = row("hook with no daemon (startup snapshot, via `sh -c`): PreToolUse", samples.snapshot);
  const slow = row("hook alone (no daemon, no snapshot): PreToolUse", samples.plain);
  const ratio = (s) => `${(s.p50 / bare.p50).toFixed(2)}x at p50, ${(s.p95 / bare.p95).toFixed(2)}x at p95`;
  console.log(`ratio to \`node -e 0\` (target 1.3x): as installed ${ratio(daemon)}; with no daemon ${ratio(snapshot)}; alone ${ratio(slow)}`);
  // The daemon stops by itself once its socket is gone, with the scratch directory.
}

async function benchHook(label, args, sessionId) {
  const samples = { PreToolUse: [], PostToolUse: [] };
  const events = session(sessionId);
  // The first event compiles the policy into the database; it is not counted.
  await timed(args, events.next().value[1]);
  events.next();
  for (let i = 0; i < calls; i++) {
    const [kind, input] = events.next().value;
    samples[kind].push(await timed(args, input));
  }
  const all = [...samples.PreToolUse, ...samples.PostToolUse];
  row(`${label}: PreToolUse (decide)`, samples.PreToolUse);
  row(`${label}: PostToolUse (record)`, samples.PostToolUse);
  return row(`${label}: every event`, all);
}

function startSidecar(database) {
  // The sidecar's token: every request but the health check carries it.
  const tokenFile = join(scratch, "sidecar.token");
  return new Promise((resolvePromise, reject) => {
    const child = spawn(process.execPath, [vigilc, "serve", "--policy", policy, "--port", "0", "--db", database, "--token-file", tokenFile], { cwd: scratch, stdio: ["ignore", "pipe", "inherit"] });
    let stdout = "";
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(stdout);
      if (match !== null) resolvePromise({ child, url: match[1], tokenFile, token: readFileSync(tokenFile, "utf8").trim() });
    });
    child.on("close", (code) => reject(new Error(`vigilc serve exited (${code})`)));
  });
}

function post(agent, url, token, path, body) {
  return new Promise((resolvePromise, reject) => {
    const text = JSON.stringify(body);
    const outgoing = request(new URL(path, url), { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(text), authorization: `Bearer ${token}` } }, (response) => {
      let data = "";
      response.setEncoding("utf8").on("data", (chunk) => (data += chunk));
      response.on("end", () => (response.statusCode === 200 ? resolvePromise(JSON.parse(data)) : reject(new Error(`${response.statusCode}: ${data}`))));
    });
    outgoing.on("error", reject);
    outgoing.end(text);
  });
}

async function benchSidecar(url, token) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const decide = [];
  const record = [];
  for (let i = 0; i < calls; i++) {
    const call = i % 2 === 0 ? { id: `c${i}`, action: "Read", args: { file_path: `/repo/src/file${i % 50}.ts` } } : { id: `c${i}`, action: "Bash", args: { command: `npm test -- --grep case${i % 7}` } };
    let started = performance.now();
    await post(agent, url, token, "/v1/runs/bench/decide", call);
    decide.push(performance.now() - started);
    started = performance.now();
    await post(agent, url, token, "/v1/runs/bench/record", { id: call.id, status: "ok", output: "done" });
    record.push(performance.now() - started);
  }
  agent.destroy();
  row("sidecar: decide", decide);
  row("sidecar: record", record);
}

async function benchGateway(database) {
  const served = join(scratch, "served");
  const { mkdirSync } = await import("node:fs");
  mkdirSync(served, { recursive: true });
  writeFileSync(join(served, "notes.txt"), "notes\n");
  const measure = async (command, args) => {
    const transport = new StdioClientTransport({ command, args, cwd: scratch, stderr: "ignore" });
    const client = new Client({ name: "bench", version: "1.0.0" });
    await client.connect(transport);
    const samples = [];
    for (let i = 0; i < calls + 20; i++) {
      const started = performance.now();
      await client.callTool({ name: "read_text_file", arguments: { path: join(served, "notes.txt") } });
      if (i >= 20) samples.push(performance.now() - started);
    }
    await client.close();
    return samples;
  };
  const direct = await measure(process.execPath, [filesystemServer, served]);
  const gated = await measure(process.execPath, [vigilc, "mcp-gateway", "--policy", policy, "--db", database, "--", process.execPath, filesystemServer, served]);
  row("MCP tools/call, straight to the server", direct);
  row("MCP tools/call, through vigilc mcp-gateway", gated);
}

try {
  console.log(`# Enforcement benchmarks: ${calls.toLocaleString("en")} calls per measurement; load average at start ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
  console.log("| what | calls | p50 | p95 | p99 |");
  console.log("|---|---|---|---|---|");
  await benchInstalledHook();
  // `--installed-only`: the rows above alone.
  if (!process.argv.includes("--installed-only") && !process.argv.includes("--snapshot-only")) {
    // What no hook can beat: starting Node and running nothing.
    const bare = [];
    for (let i = 0; i < Math.min(calls, 200); i++) bare.push(await timed(["-e", "0"], ""));
    row("`node -e 0` (the floor of any hook process)", bare);
    await benchHook("hook, direct", [vigilc, "hook", "claude-code", "--policy", policy, "--db", join(scratch, "hook.db")], "direct");
    const sidecar = await startSidecar(join(scratch, "sidecar.db"));
    try {
      await benchHook("hook, through the sidecar", [vigilc, "hook", "claude-code", "--server", sidecar.url, "--token-file", sidecar.tokenFile], "served");
      await benchSidecar(sidecar.url, sidecar.token);
    } finally {
      sidecar.child.kill("SIGTERM");
    }
    await benchGateway(join(scratch, "gateway.db"));
  }
  console.log(`load average at end ${loadavg().map((l) => l.toFixed(2)).join(", ")}`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
