// Benchmark of the forward engine: the online monitor's decision latency and memory, the offline
// evaluator's throughput against the floor of reading and parsing the same file, and the monitor
// against Cedar on rules that look at one call only. A benchmark, not a test: it prints figures.
//
//   node --expose-gc scripts/bench-monitor.mjs            everything (about two minutes)
//   VIGIL_BENCH_EVENTS=1000,100000 node --expose-gc scripts/bench-monitor.mjs
//   VIGIL_BENCH_PARTS=evaluator node --expose-gc scripts/bench-monitor.mjs   one part only (monitor, limits, evaluator, cedar)
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { join } from "node:path";
import { createMonitor, compile, judgeRun, TraceRun } from "@vigil/compiler";

const checkpoints = (process.env.VIGIL_BENCH_EVENTS ?? "1000,100000,1000000").split(",").map(Number);
const ruleCounts = [1, 20, 100];
const parts = new Set((process.env.VIGIL_BENCH_PARTS ?? "monitor,limits,evaluator,cedar").split(","));
const gc = globalThis.gc ?? (() => {});

/** A deterministic pseudo-random generator (mulberry32). */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const ACTIONS = 50;
const tool = (i) => `tool${i % ACTIONS}`;

/** `count` rules cycling through the forms, over 50 actions and 1,000 distinct ids. */
function policyText(count) {
  const rules = [];
  for (let i = 0; i < count; i++) {
    const a = (k) => tool(i * 7 + k);
    switch (i % 6) {
      case 0:
        rules.push(`rule r${i}: abs(action in {${a(0)}} and path ~ "/etc/*")`);
        break;
      case 1:
        rules.push(`rule r${i}: prec(action in {${a(0)}} and id = $x, action in {${a(1)}} and id = $x)`);
        break;
      case 2:
        rules.push(`rule r${i}: resp(action in {${a(0)}} and id = $x, action in {${a(2)}} and id = $x)`);
        break;
      case 3:
        rules.push(`rule r${i}: bresp[5](action in {${a(0)}} and path ~ "/etc/*", action in {${a(3)}})`);
        break;
      case 4:
        rules.push(`rule r${i}: until(action in {${a(0)}} and id = $x, action in {${a(4)}} and id = $x, action in {${a(5)}} and id = $x)`);
        break;
      case 5:
        rules.push(`rule r${i}: always not (action in {${a(0)}} and once (action in {${a(6)}} and path ~ "*secret*"))`);
        break;
    }
  }
  return `policy bench {\n  ${rules.join("\n  ")}\n}\n`;
}

/**
 * `count` rate limits cycling through the kinds of `limit`: a count per minute for each id (1,000
 * ids), a count per minute over all calls of a tool, and a sum of amounts per hour for each id.
 */
function limitPolicyText(count) {
  const rules = [];
  for (let i = 0; i < count; i++) {
    const a = tool(i * 7);
    switch (i % 3) {
      case 0:
        rules.push(`rule r${i}: limit[3 per 1m](action in {${a}} and id = $x)`);
        break;
      case 1:
        rules.push(`rule r${i}: limit[100 per 1m](action in {${a}})`);
        break;
      case 2:
        rules.push(`rule r${i}: limit[500.00 of amount per 1h](action in {${a}} and id = $x)`);
        break;
    }
  }
  return `policy limits {\n  ${rules.join("\n  ")}\n}\n`;
}

function compiled(count, text = policyText) {
  const policy = compile(text(count));
  if (!policy.ok) throw new Error(policy.diagnostics.map((d) => d.message).join("\n"));
  return policy;
}

function callGenerator(seed) {
  const next = random(seed);
  const paths = ["/etc/passwd", "/home/u/notes.txt", "/home/u/secret.key", "/tmp/out.csv", "/srv/data.json"];
  return (n) => ({
    id: `c${n}`,
    action: tool(Math.floor(next() * ACTIONS)),
    args: { path: paths[Math.floor(next() * paths.length)], id: `id${Math.floor(next() * 1000)}` },
  });
}

function percentile(sorted, p) {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

const mb = (bytes) => (bytes / 2 ** 20).toFixed(1);

// ---- 1. the monitor -------------------------------------------------------------------------

console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, Node ${process.version}\n`);
if (parts.has("monitor")) {
  console.log("Monitor: decide() latency over a run where each allowed call is recorded (blocked calls are not)");
  console.log("rules | events decided | p50 µs | p99 µs | blocked | heap after GC");
  for (const rules of ruleCounts) decisionLatencies(rules, createMonitor(compiled(rules)), callGenerator(rules));
}

/**
 * Decides the generated calls one after another (an allowed call recorded, a blocked one not), and
 * prints the latency of `decide` over the last 1,000 decisions before each checkpoint, and the heap.
 * `prepare` changes a call before it is decided (and may move an injected clock).
 */
function decisionLatencies(rules, monitor, nextCall, prepare = () => {}) {
  const WINDOW = 1000;
  let blocked = 0;
  let decided = 0;
  for (const checkpoint of checkpoints) {
    const latencies = [];
    while (decided < checkpoint) {
      const call = nextCall(decided);
      prepare(call);
      const measured = decided >= checkpoint - WINDOW;
      const start = measured ? process.hrtime.bigint() : 0n;
      const decision = monitor.decide(call);
      if (measured) latencies.push(Number(process.hrtime.bigint() - start) / 1000);
      decided++;
      if (decision.decision === "block") {
        blocked++;
        monitor.cancel(call.id);
      } else monitor.record({ id: call.id, status: "ok", output: "done" });
    }
    latencies.sort((a, b) => a - b);
    gc();
    const heap = process.memoryUsage().heapUsed;
    console.log(
      `${String(rules).padStart(5)} | ${String(checkpoint).padStart(14)} | ${percentile(latencies, 50).toFixed(2).padStart(6)} | ${percentile(latencies, 99).toFixed(2).padStart(6)} | ${((100 * blocked) / decided).toFixed(1).padStart(6)}% | ${mb(heap)} MB`,
    );
  }
}

// ---- 1b. the monitor on rate limits ----------------------------------------------------------

if (parts.has("limits")) {
  console.log("\nMonitor on rate limits: 20 limits (per id per minute, per tool per minute, a sum of amounts per id per hour), a call every 10 ms of the injected clock");
  console.log("rules | events decided | p50 µs | p99 µs | blocked | heap after GC");
  const rules = 20;
  let now = 0;
  const amounts = random(99);
  decisionLatencies(rules, createMonitor(compiled(rules, limitPolicyText), { now: () => now }), callGenerator(rules), (call) => {
    call.args.amount = Math.round(amounts() * 10_000) / 100;
    now += 10;
  });
}

// ---- 2. the offline evaluator against the floor ----------------------------------------------

const EVENTS = Math.max(...checkpoints);
if (parts.has("evaluator")) {
  const directory = mkdtempSync(join(tmpdir(), "vigil-bench-"));
  const file = join(directory, "trace.jsonl");
  {
    const nextCall = callGenerator(7);
    const lines = [];
    for (let n = 0; n < EVENTS; n++) {
      const call = nextCall(n);
      lines.push(JSON.stringify({ action: call.action, args: call.args, status: "ok", output: "done" }));
    }
    writeFileSync(file, lines.join("\n") + "\n");
  }
  console.log(`\nOffline evaluator, 20 rules, ${EVENTS.toLocaleString("en")} events (${mb(readFileSync(file).length)} MB of JSON Lines)`);
  /** Milliseconds of one call of `f`, after a full collection. */
  const timed = async (f) => {
    gc();
    const start = performance.now();
    await f();
    return performance.now() - start;
  };
  const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
  const floor = () => {
    const text = readFileSync(file, "utf8");
    let start = 0;
    let parsed = 0;
    while (start < text.length) {
      let end = text.indexOf("\n", start);
      if (end < 0) end = text.length;
      if (end > start) {
        JSON.parse(text.slice(start, end));
        parsed++;
      }
      start = end + 1;
    }
    if (parsed !== EVENTS) throw new Error("the floor read the wrong number of lines");
  };
  const policy20 = compiled(20);
  const judge = (options) => async () => {
    const judged = await judgeRun(policy20, { file }, options);
    if (judged.report === undefined) throw new Error("the run was not judged");
  };
  // The machine is shared and noisy: each round measures the floor again beside the pipeline, and
  // the ratio of each round is to its own floor; the figures are the medians of the rounds.
  const ROUNDS = 3;
  const rounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    const floorMs = await timed(floor);
    // As `vigilc check` runs it (the first 20 witnesses of each rule located), and as an embedding
    // that keeps the event of every witness does (the default).
    const shown = await timed(judge({ locateWitnesses: 20 }));
    const every = await timed(judge({}));
    rounds.push({ floorMs, shown, every });
  }
  // The engine alone, on events already in memory: built only now (a million events held in the
  // heap would slow the collector in the runs above), with the fields of the reader's events in the
  // same order, so that the engine's code meets one shape of event in both parts (a second shape
  // made it deoptimize, and the engine alone looked twice as slow as it is).
  const statements = policy20.program.policies.flatMap((p) => p.statements);
  const events = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line, i) => {
      const record = JSON.parse(line);
      return { position: i + 1, action: record.action, args: record.args, status: record.status, output: record.output, source: { line: i + 1 } };
    });
  const engineRounds = [];
  for (let round = 0; round < ROUNDS; round++) {
    engineRounds.push(
      await timed(() => {
        const run = new TraceRun(statements);
        for (const event of events) run.step(event);
        run.finish();
      }),
    );
  }
  const rate = (ms) => `${Math.round(EVENTS / (ms / 1000)).toLocaleString("en")} events/s`;
  const each = (values) => values.map((value) => value.toFixed(0)).join(", ");
  const ratios = (key) => rounds.map((round) => round[key] / round.floorMs);
  console.log(`rounds: ${ROUNDS}; each figure is their median (the rounds' own figures in brackets)`);
  console.log(`floor (read the file, JSON.parse every line): ${median(rounds.map((r) => r.floorMs)).toFixed(0)} ms [${each(rounds.map((r) => r.floorMs))}], ${rate(median(rounds.map((r) => r.floorMs)))}`);
  console.log(`forward engine alone (20 rules, events in memory): ${median(engineRounds).toFixed(0)} ms [${each(engineRounds)}], ${rate(median(engineRounds))}`);
  for (const [key, what] of [
    ["shown", "judgeRun end to end, 20 witnesses of each rule located (as vigilc check)"],
    ["every", "judgeRun end to end, every witness located (the default)"],
  ]) {
    const times = rounds.map((r) => r[key]);
    console.log(`${what}: ${median(times).toFixed(0)} ms [${each(times)}], ${rate(median(times))}, ${median(ratios(key)).toFixed(2)}× the floor [${ratios(key).map((r) => r.toFixed(2)).join(", ")}]`);
  }
  rmSync(directory, { recursive: true, force: true });
}

// ---- 3. against Cedar, on rules about one call ------------------------------------------------

let cedar;
if (parts.has("cedar")) {
  try {
    cedar = await import("@cedar-policy/cedar-wasm/nodejs");
  } catch {
    console.log("\nCedar comparison skipped: @cedar-policy/cedar-wasm is not installed");
  }
}
if (cedar !== undefined) {
  const RULES = 20;
  const vigil = [];
  const forbids = ["permit(principal, action, resource);"];
  for (let i = 0; i < RULES; i++) {
    vigil.push(`rule c${i}: abs(action in {${tool(i)}} and path ~ "/etc/*")`);
    forbids.push(`@id("c${i}") forbid(principal, action == Action::"${tool(i)}", resource) when { context.path like "/etc/*" };`);
  }
  const policy = compile(`policy single_call {\n  ${vigil.join("\n  ")}\n}\n`);
  const prepared = cedar.preparsePolicySet("single_call", { staticPolicies: forbids.join("\n") });
  if (prepared.type !== "success") throw new Error(JSON.stringify(prepared));
  const nextCall = callGenerator(11);
  const calls = Array.from({ length: 20_000 }, (_, n) => nextCall(n));
  const monitor = createMonitor(policy);
  let agree = 0;
  const timeVigil = [];
  const timeCedar = [];
  for (const call of calls) {
    let start = process.hrtime.bigint();
    const ours = monitor.decide(call);
    timeVigil.push(Number(process.hrtime.bigint() - start) / 1000);
    monitor.cancel(call.id);
    start = process.hrtime.bigint();
    const theirs = cedar.statefulIsAuthorized({
      principal: { type: "Agent", id: "agent" },
      action: { type: "Action", id: call.action },
      resource: { type: "Tool", id: call.action },
      context: call.args,
      preparsedPolicySetId: "single_call",
      entities: [],
    });
    timeCedar.push(Number(process.hrtime.bigint() - start) / 1000);
    if ((theirs.response?.decision === "deny") === (ours.decision === "block")) agree++;
  }
  timeVigil.sort((a, b) => a - b);
  timeCedar.sort((a, b) => a - b);
  console.log(`\nOne-call rules (${RULES} forbid/abs rules), ${calls.length.toLocaleString("en")} calls, decisions agree on ${agree}`);
  console.log(`Vigil monitor decide: p50 ${percentile(timeVigil, 50).toFixed(2)} µs, p99 ${percentile(timeVigil, 99).toFixed(2)} µs`);
  console.log(`Cedar statefulIsAuthorized (preparsed policy set): p50 ${percentile(timeCedar, 50).toFixed(2)} µs, p99 ${percentile(timeCedar, 99).toFixed(2)} µs`);
  console.log(`ratio (Cedar p50 / Vigil p50): ${(percentile(timeCedar, 50) / percentile(timeVigil, 50)).toFixed(1)}×`);
}
