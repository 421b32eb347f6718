import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { userMessageEvent } from "@vigil/runtime";
import { readRecording } from "@vigil/trace";
import { afterAll, describe, expect, it } from "vitest";
import { fixtures, root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc` on the τ-bench file (200 runs of gpt-4o as an airline agent): a corpus of its runs,
 * named by task and trial, checked in worker threads with every report; `--messages` makes the
 * user's and the agent's turns events; `--run` chooses one run for `check`, `lower` and
 * `signature`. Run from the repository root, which reaches the data as `../shared/data`. A corpus
 * is checked by the built CLI, whose worker threads load its corpus-worker.js (see `built` in
 * support/run-cli.ts).
 */
const tau = "../shared/data/tau-bench/gpt-4o-airline.json";
const policy = join(fixtures, "tau-airline.vigil");
const text = readFileSync(join(root, tau), "utf8");
const lines = text.split("\n");

interface Message {
  readonly role: string;
  readonly content: string | null;
  readonly tool_calls?: readonly { readonly id: string; readonly function: { readonly name: string } }[];
}
const runs = (JSON.parse(text) as { task_id: number; trial: number; traj: Message[] }[]).map((run) => ({ name: `task ${run.task_id} trial ${run.trial}`, traj: run.traj }));
const calls = (traj: readonly Message[]) => traj.flatMap((message) => message.tool_calls ?? []);

/** What the rules say of each run, from the file itself: a booking before any user turn saying yes, a transfer. */
function expectedVerdicts(messages: boolean): Map<string, { confirm: boolean; transfer: boolean }> {
  const verdicts = new Map<string, { confirm: boolean; transfer: boolean }>();
  for (const run of runs) {
    let yes = false;
    let confirm = true;
    for (const message of run.traj) {
      if (messages && message.role === "user" && /yes|Yes/.test(message.content ?? "")) yes = true;
      for (const call of message.tool_calls ?? []) if (call.function.name === "book_reservation" && !yes) confirm = false;
    }
    verdicts.set(run.name, { confirm, transfer: !calls(run.traj).some((call) => call.function.name === "transfer_to_human_agents") });
  }
  return verdicts;
}

interface JsonRun {
  file: string;
  run: string;
  format: string;
  events: number;
  verdict: string;
  statements: { name: string; holds: boolean; witnesses: number[]; witnessLines: number[] }[];
  errors: { code: string; file: string; line: number; message: string }[];
}
interface JsonReport {
  verdict: string;
  summary: { runs: number; safe: number; unsafe: number; failed: number; events: number; violations: { rule: string; runs: number }[] };
  runs: JsonRun[];
}

const scratch = mkdtempSync(join(tmpdir(), "vigil-tau-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc check on the τ-bench file", () => {
  it("checks the 200 runs as a corpus, each named by task and trial, with --messages", async () => {
    const result = await runCli(["check", policy, "--trace", tau, "--messages"], { cwd: root, built: true });
    expect(result.code).toBe(1);
    const expected = expectedVerdicts(true);
    const confirmViolated = [...expected.values()].filter((v) => !v.confirm).length;
    const transferViolated = [...expected.values()].filter((v) => !v.transfer).length;
    expect(confirmViolated).toBeGreaterThan(0);
    expect(result.stdout).toMatch(new RegExp(`airline\\.confirm_before_booking\\s+${confirmViolated} of 200 runs`));
    expect(result.stdout).toMatch(new RegExp(`airline\\.no_transfer\\s+${transferViolated} of 200 runs`));
    expect(result.stdout).toMatch(/^checked 200 runs \(\d+ events\): \d+ safe, \d+ unsafe$/m);
    // Each unsafe run by its file and its name in the file.
    const unsafe = [...result.stdout.matchAll(/^unsafe {2}(.*?): /gm)].map((m) => m[1]);
    expect(unsafe).toEqual(runs.filter((run) => !expected.get(run.name)!.confirm || !expected.get(run.name)!.transfer).map((run) => `${tau} · ${run.name}`));
    expect(result.stderr).not.toContain("note: the policy names");
  });

  it("gives each run its name and the file's lines in JSON", async () => {
    const result = await runCli(["check", policy, "--trace", tau, "--messages", "--format", "json"], { cwd: root, built: true });
    expect(result.code).toBe(1);
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(report.summary).toMatchObject({ runs: 200, failed: 0 });
    expect(report.runs.map((run) => [run.file, run.run, run.format])).toEqual(runs.map((run) => [tau, run.name, "tau-bench"]));
    const expected = expectedVerdicts(true);
    let witnesses = 0;
    for (const run of report.runs) {
      const traj = runs.find((candidate) => candidate.name === run.run)!.traj;
      // Every call and every non-empty user or agent turn is an event.
      expect(run.events).toBe(calls(traj).length + traj.filter((m) => (m.role === "user" || m.role === "assistant") && m.content).length);
      const [confirm, transfer] = run.statements;
      expect([confirm!.holds, transfer!.holds]).toEqual([expected.get(run.run)!.confirm, expected.get(run.run)!.transfer]);
      // A witness is a booking, at the line of its call in the file.
      const bookings = calls(traj).filter((call) => call.function.name === "book_reservation").map((call) => call.id);
      for (const line of confirm!.witnessLines) {
        expect(bookings.some((id) => lines[line - 1]!.includes(id))).toBe(true);
        witnesses++;
      }
    }
    expect(witnesses).toBeGreaterThan(0);
  });

  it("without --messages has no message events: a condition on them matches nothing, and a note says why", async () => {
    const result = await runCli(["check", policy, "--trace", tau, "--format", "json"], { cwd: root, built: true });
    expect(result.stderr).toContain("note: the policy names `user_message`: messages are events only with --messages");
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(report.summary.events).toBe(runs.reduce((sum, run) => sum + calls(run.traj).length, 0));
    const expected = expectedVerdicts(false);
    for (const run of report.runs) expect(run.statements[0]!.holds).toBe(expected.get(run.run)!.confirm);
  });

  it("gives the same verdicts and witnesses with --engine smt", async () => {
    const [evaluated, solved] = await Promise.all([
      runCli(["check", policy, "--trace", tau, "--messages", "--format", "json"], { cwd: root, built: true }),
      runCli(["check", policy, "--trace", tau, "--messages", "--format", "json", "--engine", "smt"], { cwd: root, built: true }),
    ]);
    const strip = (report: JsonReport) => report.runs.map((run) => [run.run, run.verdict, run.statements.map((s) => s.witnesses)]);
    expect(strip(JSON.parse(solved.stdout) as JsonReport)).toEqual(strip(JSON.parse(evaluated.stdout) as JsonReport));
    expect((JSON.parse(solved.stdout) as { runs: { engine: string }[] }).runs.every((run) => run.engine === "smt")).toBe(true);
  });

  it("writes SARIF located in the file, each result naming its run, and an HTML report listing the runs", async () => {
    const sarif = join(scratch, "tau.sarif");
    const html = join(scratch, "tau.html");
    const result = await runCli(["check", policy, "--trace", tau, "--messages", "--sarif", sarif, "--html", html], { cwd: root, built: true });
    expect(result.code).toBe(1);
    const log = JSON.parse(readFileSync(sarif, "utf8")) as { runs: { results: { message: { text: string }; properties: { run: string }; locations: { physicalLocation: { artifactLocation: { uri: string }; region: { startLine: number } } }[] }[] }[] };
    const results = log.runs[0]!.results;
    expect(results.length).toBeGreaterThan(0);
    for (const entry of results) {
      expect(entry.message.text.startsWith(`[${entry.properties.run}] `)).toBe(true);
      for (const location of entry.locations) {
        expect(location.physicalLocation.artifactLocation.uri).toMatch(/tau-bench\/gpt-4o-airline\.json$/);
        expect(lines[location.physicalLocation.region.startLine - 1]).toMatch(/"id": "call_/);
      }
    }
    const page = readFileSync(html, "utf8");
    expect(page.match(/<article class="run"/g)).toHaveLength(200);
    expect(page).toContain("gpt-4o-airline.json · task 0 trial 0");
  });

  it("expands a file of runs found by a glob, and fails a broken run with its line, checking the others", async () => {
    const directory = join(scratch, "corpus");
    const { mkdirSync } = await import("node:fs");
    mkdirSync(directory, { recursive: true });
    const broken = [
      "[",
      '  {"task_id": 1, "trial": 0, "traj": [{"role": "user", "content": "yes"}, {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "book_reservation", "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "c1", "content": "ok"}]},',
      '  {"task_id": 2, "trial": 0, "reward": 0},',
      '  {"task_id": 3, "trial": 0, "traj": [{"role": "assistant", "content": null, "tool_calls": [{"id": "c9", "type": "function", "function": {"name": "book_reservation", "arguments": "{\\"when\\": 1e999}"}}]}]}',
      "]",
    ].join("\n");
    writeFileSync(join(directory, "runs.json"), broken);
    writeFileSync(join(directory, "plain.jsonl"), '{"action": "book_reservation"}\n');
    const result = await runCli(["check", policy, "--trace", `${directory}/*.json*`, "--messages", "--format", "json"], { cwd: root, built: true });
    expect(result.code).toBe(2);
    const report = JSON.parse(result.stdout) as JsonReport;
    expect(report.runs.map((run) => [basename(run.file), run.run ?? null, run.verdict ?? "failed"])).toEqual([
      ["plain.jsonl", null, "unsafe"],
      ["runs.json", "task 1 trial 0", "safe"],
      ["runs.json", "task 2 trial 0", "failed"],
      ["runs.json", "task 3 trial 0", "failed"],
    ]);
    expect(report.runs[2]!.errors.map((e) => [e.code, e.line])).toEqual([["T0008", 3]]);
    expect(report.runs[3]!.errors.map((e) => [e.code, e.line])).toEqual([["T0013", 4]]);
    const human = await runCli(["check", policy, "--trace", `${directory}/*.json*`, "--messages"], { cwd: root, built: true });
    expect(human.stdout).toMatch(/^error {3}\S*runs\.json · task 2 trial 0: \S*runs\.json:3: T0008 /m);
    expect(human.stdout).toContain("checked 4 runs");
  });
});

describe("one run of the τ-bench file", () => {
  it("check --run judges one run, its witnesses at the file's lines", async () => {
    const result = await runCli(["check", policy, "--trace", tau, "--messages", "--run", "task 0 trial 3"], { cwd: root });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/^note: read `\.\.\/shared\/data\/tau-bench\/gpt-4o-airline\.json · task 0 trial 3` as tau-bench: \d+ tool calls and \d+ messages$/m);
    expect(result.stdout).toContain(`against 33 events of ${tau} · task 0 trial 3`);
    const witness = /witness event \d+ \(\.\.\/shared\/data\/tau-bench\/gpt-4o-airline\.json:(\d+)\): book_reservation/.exec(result.stdout);
    expect(lines[Number(witness![1]) - 1]).toMatch(/"id": "call_/);
  });

  it("names the runs when --run names none of them", async () => {
    const result = await runCli(["check", policy, "--trace", tau, "--run", "task 0 trial 9"], { cwd: root });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: `../shared/data/tau-bench/gpt-4o-airline.json` has no run named `task 0 trial 9`; did you mean `task 0 trial 0`?");
    expect(result.stderr).toContain("its 200 runs are named by task and trial, from `task 0 trial 0` to `task 49 trial 3`");
  });

  it("refuses --run on a trace of one run", async () => {
    const result = await runCli(["check", policy, "--trace", "claude-session.jsonl", "--run", "task 0 trial 0"], { cwd: fixtures });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: --run chooses one run of a file holding several (a τ-bench results file); `claude-session.jsonl` is one run");
  });

  it("lower needs --run, and says how to give it", async () => {
    const missing = await runCli(["lower", policy, "--trace", tau], { cwd: root });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("error: the trace `../shared/data/tau-bench/gpt-4o-airline.json` holds 200 runs (τ-bench); `lower` reads one");
    expect(missing.stderr).toContain("help: choose it with --run NAME, such as --run 'task 0 trial 0'");
    const lowered = await runCli(["lower", policy, "--trace", tau, "--run", "task 0 trial 3", "--messages", "--rule", "confirm_before_booking"], { cwd: root });
    expect(lowered.code).toBe(0);
    expect(lowered.stdout).toContain("; Vigil: policy airline, rule confirm_before_booking (prec)");
    expect(lowered.stdout).toContain("(check-sat-assuming (r1 r2");
    expect(lowered.stdout).toContain(" r33))");
  });

  it("signature gives all the runs together, or one run with --run, with the messages' actions and text", async () => {
    const all = await runCli(["signature", tau, "--messages", "--format", "json"], { cwd: root });
    expect(all.code).toBe(0);
    const signature = JSON.parse(all.stdout) as { events: number; runs: number; actions: string[]; keys: { key: string; distinctValues: number }[] };
    expect(signature.runs).toBe(200);
    expect(signature.actions).toContain("user_message");
    expect(signature.actions).toContain("agent_message");
    expect(signature.actions).toContain("book_reservation");
    expect(signature.keys.find((key) => key.key === "text")!.distinctValues).toBeGreaterThan(1000);
    const human = await runCli(["signature", tau], { cwd: root });
    expect(human.stdout).toMatch(/^\d+ events in 200 runs: the signature of all the runs of the file together/);
    expect(human.stdout).not.toContain("user_message");
    const one = await runCli(["signature", tau, "--run", "task 0 trial 3", "--messages", "--format", "json"], { cwd: root });
    expect(JSON.parse(one.stdout)).toMatchObject({ events: 33, run: "task 0 trial 3" });
  });
});

describe("--messages on other recordings", () => {
  it("reads a Claude Code prompt as the runtime records a UserPromptSubmit: user_message with its text", async () => {
    const transcript = join(scratch, "prompt.jsonl");
    const prompt = "Deploy the site, please.";
    writeFileSync(
      transcript,
      [
        JSON.stringify({ type: "user", message: { role: "user", content: prompt }, session_id: "s" }),
        JSON.stringify({ type: "assistant", message: { role: "assistant", content: [{ type: "text", text: "Deploying." }, { type: "tool_use", id: "t1", name: "deploy", input: {} }] }, session_id: "s" }),
      ].join("\n") + "\n",
    );
    const read = readRecording(readFileSync(transcript, "utf8"), { messages: true });
    const recorded = userMessageEvent(prompt);
    expect({ action: read.trace.events[0]!.action, args: read.trace.events[0]!.args }).toEqual({ action: recorded.action, args: recorded.args });
    const deployPolicy = join(scratch, "deploy.vigil");
    writeFileSync(deployPolicy, 'policy p {\n  rule asked: prec(action in {deploy}, action in {user_message} and text ~ "*Deploy*")\n}\n');
    const checked = await runCli(["check", deployPolicy, "--trace", transcript, "--messages", "--format", "json"], { cwd: scratch });
    expect(checked.stderr).toContain("as claude-code (detected): 1 tool call and 2 messages");
    expect(JSON.parse(checked.stdout).verdict).toBe("safe");
    const without = await runCli(["check", deployPolicy, "--trace", transcript, "--format", "json"], { cwd: scratch });
    expect(JSON.parse(without.stdout).verdict).toBe("unsafe");
    expect(without.stderr).toContain("warning[V1101]: the action `user_message` does not occur in the trace");
    // A message witness is shown as a message, not as a call still waiting for its result.
    const silentPolicy = join(scratch, "silent.vigil");
    writeFileSync(silentPolicy, "policy p {\n  rule silent: abs(action in {agent_message})\n}\n");
    const shown = await runCli(["check", silentPolicy, "--trace", "prompt.jsonl", "--messages"], { cwd: scratch });
    expect(shown.stdout).toContain('witness event 2 (prompt.jsonl:2): agent_message {"text":"Deploying."} [message]');
  });

  it("passes --messages to the workers of a directory corpus", async () => {
    const agentdojo = "../shared/data/agentdojo/gpt-4o-2024-05-13/banking/user_task_0";
    const messagesPolicy = join(scratch, "asked.vigil");
    writeFileSync(messagesPolicy, "policy p {\n  rule user_first: prec(action in {agent_message}, action in {user_message})\n}\n");
    const [withMessages, without] = await Promise.all([
      runCli(["check", messagesPolicy, "--trace", agentdojo, "--messages", "--format", "json"], { cwd: root, built: true }),
      runCli(["check", messagesPolicy, "--trace", agentdojo, "--format", "json"], { cwd: root, built: true }),
    ]);
    const a = JSON.parse(withMessages.stdout) as JsonReport;
    const b = JSON.parse(without.stdout) as JsonReport;
    expect(a.summary.runs).toBeGreaterThan(0);
    expect(a.summary.failed).toBe(0);
    // Each AgentDojo run holds one user message and one final answer: two more events per run.
    expect(a.summary.events - b.summary.events).toBeGreaterThanOrEqual(a.summary.runs);
    expect(a.runs.every((run) => run.verdict === "safe")).toBe(true);
  });
});
