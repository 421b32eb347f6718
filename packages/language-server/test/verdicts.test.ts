import { spawnSync } from "node:child_process";
import { readdirSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { basename, join } from "node:path";
import { readRecording } from "@vigil/compiler";
import { CancellationTokenSource } from "vscode-jsonrpc/node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFixture, examples, root, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The verdict lenses and the server's own requests: the lenses on examples/coding-agent agree with
 * `vigilc check` on every sample trace, and `vigil/checkTrace` and `vigil/signature` answer as the
 * extension expects.
 */

const vigilc = join(root, "packages/cli/dist/main.js");

function vigilcCheck(policy: string, trace: string): { verdict: string; statements: { policy: string; name: string; holds: boolean; witnesses: number[] }[] } {
  const result = spawnSync(process.execPath, [vigilc, "check", policy, "--trace", trace, "--format", "json", "--exit-zero"], { encoding: "utf8", timeout: 60_000 });
  expect(result.status).toBe(0);
  return JSON.parse(result.stdout);
}

/** The line of the trace file where the event at a position starts, as `vigilc` reads the trace. */
async function lineOfEvent(trace: string, position: number): Promise<number> {
  const read = readRecording(await readFile(trace, "utf8"), { file: trace });
  return read.trace.events[position - 1]!.source!.line!;
}

describe("the examples workspace", () => {
  let server: TestServer;
  const policy = join(examples, "coding-agent", "coding-agent.vigil");

  beforeAll(async () => {
    server = await TestServer.start({ folders: [examples] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("shows each rule's verdict on the sample traces, as `vigilc check` gives it", async () => {
    const uri = uriOf(policy);
    await server.open(uri, await readFile(policy, "utf8"));
    const lenses = await server.request("textDocument/codeLens", { textDocument: { uri } });
    const traces = readdirSync(join(examples, "coding-agent")).filter((name) => name.endsWith(".jsonl")).sort().map((name) => join(examples, "coding-agent", name));
    const reports = traces.map((trace) => ({ trace, report: vigilcCheck(policy, trace) }));
    const rules = reports[0]!.report.statements.map((s) => s.name);
    expect(lenses.map((lens: any) => lens.range.start.line)).toHaveLength(rules.length);

    for (const [index, rule] of rules.entries()) {
      const lens = lenses[index];
      const violated = reports.filter(({ report }) => !report.statements.find((s) => s.name === rule)!.holds);
      if (violated.length === 0) {
        expect(lens.command).toEqual({ title: `holds on ${traces.length} traces`, command: "" });
        continue;
      }
      const first = violated[0]!;
      const witness = first.report.statements.find((s) => s.name === rule)!.witnesses[0]!;
      const more = violated.length > 1 ? ` (and ${violated.length - 1} more ${violated.length === 2 ? "trace" : "traces"})` : "";
      expect(lens.command).toEqual({
        title: `violated at event ${witness} of ${basename(first.trace)}${more}`,
        command: "vigil.openWitness",
        arguments: [{ uri: uriOf(first.trace), line: (await lineOfEvent(first.trace, witness)) - 1 }],
      });
    }
    // Every rule of the example but the one scoped to the docx skill (which its traces never load) is
    // broken by one of its traces, so both kinds of lens are seen.
    expect(lenses.filter((lens: any) => lens.command.command !== "vigil.openWitness").map((lens: any) => lens.command.title)).toEqual([`holds on ${traces.length} traces`]);
  });

  it("says the policy cannot be judged while it has errors, and judges it again once it is fixed", async () => {
    const uri = uriOf(policy);
    const text = await readFile(policy, "utf8");
    await server.change(uri, text.replace("abs(action in {\"git push\"}", "abs(action in {\"git push\"} and"), 2);
    const broken = await server.request("textDocument/codeLens", { textDocument: { uri } });
    expect(broken.map((lens: any) => lens.command.title)).toEqual(Array(broken.length).fill("not judged: the policy has errors"));
    await server.change(uri, text, 3);
    const fixed = await server.request("textDocument/codeLens", { textDocument: { uri } });
    expect(fixed.some((lens: any) => lens.command.title.startsWith("violated at event"))).toBe(true);
  });

  it("completes the actions of Claude Code transcripts, grounded shell commands included", async () => {
    const uri = uriOf(policy);
    const text = await readFile(policy, "utf8");
    const marker = 'rule no_force_push: abs(action in {';
    const line = text.slice(0, text.indexOf(marker)).split("\n").length - 1;
    const list = await server.request("textDocument/completion", { textDocument: { uri }, position: { line, character: marker.length + 2 } });
    const labels = list.items.map((item: any) => item.label);
    // Read and Edit are the agent's tools; "git commit" is a command grounded out of a Bash call.
    expect(labels).toEqual(expect.arrayContaining(["Read", "Edit", "Bash", '"git commit"', '"git push"', "pytest"]));
    expect(list.items.find((item: any) => item.label === '"git commit"').textEdit.newText).toBe('"git commit"');
  });

  it("takes each example folder's own traces (vigil.config.json folders)", async () => {
    const dashcam = join(examples, "dashcam", "dashcam.vigil");
    const uri = uriOf(dashcam);
    const published = await server.open(uri, await readFile(dashcam, "utf8"));
    expect(published.diagnostics.filter((d: any) => d.code === "V1101" || d.code === "V1102")).toEqual([]);
    const signature = await server.request("vigil/signature", { uri });
    expect(signature.sources.map((s: string) => basename(s))).toEqual(["benign.jsonl", "violating-sampling.jsonl", "violating.jsonl"]);
    expect(signature.signature.actions).toContain("warpAffine");
  });
});

describe("vigil/checkTrace and vigil/signature", () => {
  let server: TestServer;
  let workspace: string;
  let uri: string;

  beforeAll(async () => {
    workspace = await copyFixture("workspace");
    server = await TestServer.start({ folders: [workspace] });
    uri = uriOf(join(workspace, "release.vigil"));
    await server.open(uri, await readFile(join(workspace, "release.vigil"), "utf8"));
  });
  afterAll(async () => {
    await server?.close();
  });

  it("shows verdict lenses that hold and that open a witness", async () => {
    const lenses = await server.request("textDocument/codeLens", { textDocument: { uri } });
    expect(lenses.map((lens: any) => lens.command)).toEqual([
      { title: "violated at event 2 of run-b.jsonl", command: "vigil.openWitness", arguments: [{ uri: uriOf(join(workspace, "traces", "run-b.jsonl")), line: 2 }] },
      { title: "violated at event 3 of run-b.jsonl", command: "vigil.openWitness", arguments: [{ uri: uriOf(join(workspace, "traces", "run-b.jsonl")), line: 3 }] },
      { title: "violated at event 2 of run-b.jsonl", command: "vigil.openWitness", arguments: [{ uri: uriOf(join(workspace, "traces", "run-b.jsonl")), line: 2 }] },
      { title: "holds on 2 traces", command: "" },
    ]);
    expect(lenses[0].range).toEqual({ start: { line: 6, character: 7 }, end: { line: 6, character: 18 } });
  });

  it("judges a trace file and locates each witness in it and each rule in the policy", async () => {
    const trace = join(workspace, "traces", "run-b.jsonl");
    const result = await server.request("vigil/checkTrace", { uri, trace });
    expect(result.verdict).toBe("unsafe");
    expect(result.trace).toBe(trace);
    expect(result.errors).toEqual([]);
    expect(result.statements.map((s: any) => [s.name, s.holds, s.witnesses])).toEqual([
      ["check_first", false, [{ event: 2, line: 3 }]],
      ["no_egress", false, [{ event: 3, line: 4 }]],
      ["staged", false, [{ event: 2, line: 3 }]],
      ["no_prod_rollback", true, []],
    ]);
    expect(result.statements[0]).toMatchObject({ policy: "release", witnessCount: 1, range: { start: { line: 6, character: 7 }, end: { line: 6, character: 18 } } });
    const safe = await server.request("vigil/checkTrace", { uri, trace: join(workspace, "traces", "run-a.jsonl"), engine: "eval" });
    expect(safe.verdict).toBe("safe");
  });

  it("judges with the solver when asked, with the same verdicts", async () => {
    const trace = join(workspace, "traces", "run-b.jsonl");
    const result = await server.request("vigil/checkTrace", { uri, trace, engine: "smt" }, 120_000);
    expect(result.errors).toEqual([]);
    expect(result.statements.map((s: any) => [s.name, s.holds, s.witnesses.map((w: any) => w.event)])).toEqual([
      ["check_first", false, [2]],
      ["no_egress", false, [3]],
      ["staged", false, [2]],
      ["no_prod_rollback", true, []],
    ]);
  });

  it("reports what keeps a trace from being judged, failing closed", async () => {
    const missing = await server.request("vigil/checkTrace", { uri, trace: join(workspace, "nope.jsonl") });
    expect(missing).toMatchObject({ verdict: "unsafe", statements: [] });
    expect(missing.errors.join("\n")).toContain("no such file");
    const broken = uriOf(join(workspace, "broken.vigil"));
    await server.open(broken, "policy broken {\n  rule r: abs(\n}\n");
    const refused = await server.request("vigil/checkTrace", { uri: broken, trace: join(workspace, "traces", "run-a.jsonl") });
    expect(refused).toMatchObject({ verdict: "unsafe", statements: [] });
    expect(refused.errors[0]).toBe("the policy has 1 error; no rule was checked");
    expect(refused.errors[1]).toMatch(/^line 2:\d+: V0001: /);
  });

  it("checks a policy on disk that is not open", async () => {
    const result = await server.request("vigil/checkTrace", { uri: uriOf(join(examples, "dashcam", "dashcam.vigil")), trace: join(examples, "dashcam", "violating.jsonl") });
    expect(result.statements.filter((s: any) => !s.holds).map((s: any) => [s.name, s.witnesses])).toEqual([["R3", [{ event: 5, line: 5 }]]]);
  });

  it("stops judging a trace when the client cancels the request", async () => {
    const long = join(workspace, "long.jsonl");
    await writeFile(long, '{"action": "check", "args": {"suite": "unit"}, "status": "ok"}\n'.repeat(400_000));
    const source = new CancellationTokenSource();
    const pending = server.connection.sendRequest("vigil/checkTrace", { uri, trace: long }, source.token);
    setTimeout(() => source.cancel(), 100);
    const error = await pending.then(
      () => undefined,
      (reason: { code: number }) => reason,
    );
    // The server answered "cancelled" (a server that ran on to the end would have sent its result,
    // which the client would have taken): it stopped judging. Counted by what it answered, not timed.
    expect(error?.code).toBe(-32800);
    const judged = await server.request("vigil/checkTrace", { uri, trace: long });
    expect(judged.verdict).toBe("safe");
  });

  it("gives the signature the policy is checked against, in vigilc's JSON shape", async () => {
    const result = await server.request("vigil/signature", { uri });
    expect(result.sources).toEqual([join(workspace, "traces", "run-a.jsonl"), join(workspace, "traces", "run-b.jsonl"), join(workspace, "tools.json")]);
    expect(result.problems).toEqual([]);
    expect(result.signature.actions).toEqual(["check", "deploy", "http_post", "read_file", "rollback"]);
    expect(result.signature.keys).toContainEqual({ key: "env", values: ['"prod"', '"staging"'], distinctValues: 2 });
    expect(result.signature.keys).toContainEqual({ key: "headers.host", values: ['"collector.example"'], distinctValues: 1 });
  });
});

describe("a sample trace too long to keep", () => {
  let server: TestServer;
  let workspace: string;

  beforeAll(async () => {
    workspace = await copyFixture("workspace");
    // 30,000 events: past the events the server keeps, so the lenses read the file again (judgeRun).
    const lines = ['{"action": "check", "args": {"suite": "unit"}, "status": "ok"}'];
    for (let index = 0; index < 29_998; index++) lines.push('{"action": "deploy", "args": {"env": "staging", "version": "1.2.0"}, "status": "ok"}');
    lines.push('{"action": "rollback", "args": {"env": "prod"}, "status": "ok"}');
    await writeFile(join(workspace, "traces", "run-long.jsonl"), `${lines.join("\n")}\n`);
    server = await TestServer.start({ folders: [workspace] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("is judged from its file, with its witness located", async () => {
    const uri = uriOf(join(workspace, "release.vigil"));
    await server.open(uri, await readFile(join(workspace, "release.vigil"), "utf8"));
    const lenses = await server.request("textDocument/codeLens", { textDocument: { uri } });
    expect(lenses[3].command).toEqual({
      title: "violated at event 30000 of run-long.jsonl",
      command: "vigil.openWitness",
      arguments: [{ uri: uriOf(join(workspace, "traces", "run-long.jsonl")), line: 29_999 }],
    });
    expect(lenses[0].command.title).toBe("violated at event 2 of run-b.jsonl");
  });
});
