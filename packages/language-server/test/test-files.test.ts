import { cp, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { examples, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * Test files (`*.vigiltest`) over JSON-RPC: the reader's diagnostics as the text changes, the tests
 * run on open, on save and when their policy changes in the editor (unsaved), a failing expectation
 * as V2201 at the expectation, a lens per test with its outcome that runs it (`vigil.runTest`), and
 * a missing policy as V2101.
 */

let server: TestServer;
let folder: string;
let policyUri: string;
let testUri: string;
let policyText: string;
let testText: string;
let testVersion = 1;
let policyVersion = 1;

beforeAll(async () => {
  folder = await mkdtemp(join(tmpdir(), "vigil-ls-tests-"));
  await cp(join(examples, "dashcam"), folder, { recursive: true });
  // The example's first three tests: two of recorded traces, then one written by hand (the cases below count on them).
  const shipped = await readFile(join(folder, "dashcam.vigiltest"), "utf8");
  const fourth = [...shipped.matchAll(/^(?:\/\/\/.*\n)*test "/gm)][3];
  await writeFile(join(folder, "dashcam.vigiltest"), fourth === undefined ? shipped : shipped.slice(0, fourth.index));
  server = await TestServer.start({ folders: [folder] });
  policyUri = uriOf(join(folder, "dashcam.vigil"));
  testUri = uriOf(join(folder, "dashcam.vigiltest"));
  policyText = await readFile(join(folder, "dashcam.vigil"), "utf8");
  testText = await readFile(join(folder, "dashcam.vigiltest"), "utf8");
});
afterAll(async () => {
  await server?.close();
});

/** The 0-based line of the text that contains `needle` (after the line containing `after`). */
function lineOf(text: string, needle: string, after = ""): number {
  const lines = text.split("\n");
  const from = after === "" ? 0 : lines.findIndex((line) => line.includes(after));
  const index = lines.findIndex((line, number) => number >= from && line.includes(needle));
  if (index < 0) throw new Error(`\`${needle}\` is not in the text`);
  return index;
}

/** The range of `needle` on its line, as LSP gives it. */
function rangeOf(text: string, needle: string, after = ""): { start: { line: number; character: number }; end: { line: number; character: number } } {
  const line = lineOf(text, needle, after);
  const character = text.split("\n")[line]!.indexOf(needle);
  return { start: { line, character }, end: { line, character: character + needle.length } };
}

async function lenses(uri = testUri): Promise<any[]> {
  return server.request("textDocument/codeLens", { textDocument: { uri } });
}

async function titles(uri = testUri): Promise<string[]> {
  return (await lenses(uri)).map((lens) => lens.command.title);
}

/** Waits for diagnostics of the document's version that pass a test. */
function diagnosticsWhere(uri: string, version: number, test: (diagnostics: any[]) => boolean, since = 0): Promise<any> {
  return server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === version && test(p.diagnostics), 20_000, since);
}

const passed = /^✓ passed \(\d+ ms\)$/;

/** The watchers the server registered last, once they pass a test. */
async function latestWatchers(test: (watchers: any[]) => boolean): Promise<any[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const registrations = server.serverRequests
      .filter((r) => r.method === "client/registerCapability")
      .flatMap((r) => r.params.registrations)
      .filter((r: any) => r.method === "workspace/didChangeWatchedFiles");
    const watchers = registrations[registrations.length - 1]?.registerOptions.watchers;
    if (watchers !== undefined && test(watchers)) return watchers;
    if (Date.now() > deadline) throw new Error(`no matching watcher registration: ${JSON.stringify(watchers)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("a test file beside its policy", () => {
  it("runs the tests on open: a lens above each test says it passed, and clicking it runs the test", async () => {
    await server.open(policyUri, policyText);
    const reader = await server.open(testUri, testText);
    expect(reader.diagnostics).toEqual([]);
    const shown = await lenses();
    expect(shown.map((lens) => lens.command.title)).toEqual([expect.stringMatching(passed), expect.stringMatching(passed), expect.stringMatching(passed)]);
    expect(shown[1]).toEqual({
      range: rangeOf(testText, '"warp before validation"'),
      command: { title: expect.stringMatching(passed), command: "vigil.runTest", arguments: [{ uri: testUri, name: "warp before validation" }] },
    });
    expect(server.latestDiagnostics(testUri)).toMatchObject({ version: 1, diagnostics: [] });
  });

  it("shows the reader's syntax error as it is typed, and no test can run", async () => {
    const broken = testText.replace("decide 4 allow", "decide 4 alow");
    const published = await server.change(testUri, broken, ++testVersion);
    expect(published.diagnostics).toEqual([
      expect.objectContaining({ code: "V2001", severity: 1, source: "vigil", range: rangeOf(broken, "alow"), message: "unexpected `alow`: expected `decide N allow|block|ask|warn [by RULE, …]`" }),
    ]);
    expect(await titles()).toEqual(Array(3).fill("! could not run"));
  });

  it("puts a failing expectation at the expectation as V2201, once the hand-written test ran again", async () => {
    const failing = testText.replace("expect R1 violated at 3", "expect R1 violated at 2");
    const since = server.notifications.length;
    await server.change(testUri, failing, ++testVersion);
    const published = await diagnosticsWhere(testUri, testVersion, (d) => d.length > 0, since);
    expect(published.diagnostics).toEqual([
      {
        range: rangeOf(failing, "expect R1 violated at 2"),
        severity: 1,
        code: "V2201",
        codeDescription: { href: expect.stringMatching(/\/docs\/testing\.md#diagnostics$/) },
        source: "vigil",
        message: "expected violated at 2; found violated at 3 (forward engine, monitor)",
        // The events involved, at their lines in the test file.
        relatedInformation: [
          { message: 'event 2: emit_mask {frame: "frames/1.png", out: "masks/1.csr"} ok', location: { uri: testUri, range: rangeOf(failing, 'emit_mask {frame: "frames/1.png", out: "masks/1.csr"} ok') } },
          { message: 'event 3: release_artifact {file: "masks/1.csr"} ok', location: { uri: testUri, range: rangeOf(failing, 'release_artifact {file: "masks/1.csr"} ok') } },
        ],
        data: { version: testVersion },
      },
    ]);
    // The tests the edit did not touch keep their outcome.
    expect(await titles()).toEqual([expect.stringMatching(passed), expect.stringMatching(passed), "✗ failed: 1 expectation"]);
  });

  it("runs one test by its lens's command", async () => {
    const lens = (await lenses())[2];
    const result = await server.request("workspace/executeCommand", { command: lens.command.command, arguments: lens.command.arguments });
    expect(result).toEqual({
      uri: testUri,
      tests: [{ name: "hand-written: wrong fps, mask before warp, release before validation", outcome: "failed", failedExpectations: 1, durationMs: expect.any(Number) }],
      errors: [],
    });
    const trace = await server.request("workspace/executeCommand", { command: "vigil.runTest", arguments: [{ uri: testUri, name: "benign run" }] });
    expect(trace.tests).toEqual([expect.objectContaining({ name: "benign run", outcome: "passed", failedExpectations: 0 })]);
  });

  it("runs a test of a trace file on save, not as it is typed", async () => {
    const current = testText.replace("expect R1 violated at 3", "expect R1 violated at 2");
    const edited = current.replace("expect R3 violated at 5", "expect R3 violated at 4");
    const since = server.notifications.length;
    await server.change(testUri, edited, ++testVersion);
    // Once the edit is still, the hand-written test is current already and the trace's waits.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await titles()).toEqual([expect.stringMatching(passed), "▶ run test", "✗ failed: 1 expectation"]);
    expect(server.latestDiagnostics(testUri).diagnostics.map((d: any) => d.code)).toEqual(["V2201"]);
    await server.connection.sendNotification("textDocument/didSave", { textDocument: { uri: testUri } });
    const saved = await diagnosticsWhere(testUri, testVersion, (d) => d.length === 2, since);
    expect(saved.diagnostics[0]).toMatchObject({ code: "V2201", range: rangeOf(edited, "expect R3 violated at 4"), message: "expected violated at 4; found violated at 5 (forward engine, monitor)" });
    // The trace's event is a related place in the trace file, at its line.
    expect(saved.diagnostics[0].relatedInformation.map((r: any) => [r.location.uri, r.location.range.start.line])).toEqual([
      [uriOf(join(folder, "violating.jsonl")), 3],
      [uriOf(join(folder, "violating.jsonl")), 4],
    ]);
    expect(await titles()).toEqual([expect.stringMatching(passed), "✗ failed: 1 expectation", "✗ failed: 1 expectation"]);
    testText = edited;
  });

  it("runs the tests against the policy as it is in the editor, unsaved", async () => {
    // R1 is satisfied by any earlier sample_frames: the hand-written run no longer violates it.
    const edited = policyText.replace("rule R1: prec(handoff, validate)", "rule R1: prec(handoff, action in {sample_frames})");
    const since = server.notifications.length;
    await server.change(policyUri, edited, ++policyVersion);
    const published = await diagnosticsWhere(testUri, testVersion, (d) => d.some((x: any) => x.message.startsWith("expected violated at 2; found holds")), since);
    expect(published.diagnostics.find((d: any) => d.message.startsWith("expected violated at 2"))).toMatchObject({
      code: "V2201",
      range: rangeOf(testText, "expect R1 violated at 2"),
      message: "expected violated at 2; found holds (forward engine, monitor)",
    });
    // The trace tests wait for the policy to be saved, or for a click.
    expect(await titles()).toEqual(["▶ run test", "▶ run test", "✗ failed: 1 expectation"]);
    const benign = await server.request("workspace/executeCommand", { command: "vigil.runTest", arguments: [{ uri: testUri, name: "benign run" }] });
    expect(benign.tests[0].outcome).toBe("passed");
    expect((await titles())[0]).toMatch(passed);

    // Back to the saved text: every test runs against it again once the policy is saved.
    await server.change(policyUri, policyText, ++policyVersion);
    const back = server.notifications.length;
    await server.connection.sendNotification("textDocument/didSave", { textDocument: { uri: policyUri } });
    await diagnosticsWhere(testUri, testVersion, (d) => d.length === 2 && d.every((x: any) => x.code === "V2201") && d[1].message === "expected violated at 2; found violated at 3 (forward engine, monitor)", back);
    expect(await titles()).toEqual([expect.stringMatching(passed), "✗ failed: 1 expectation", "✗ failed: 1 expectation"]);
  });

  it("offers the near rule name for a rule the policy does not have", async () => {
    const typo = testText.replace("expect R3 holds", "expect r3 holds");
    const since = server.notifications.length;
    await server.change(testUri, typo, ++testVersion);
    const published = await diagnosticsWhere(testUri, testVersion, (d) => d.some((x: any) => x.code === "V2102"), since);
    const unknown = published.diagnostics.find((d: any) => d.code === "V2102");
    expect(unknown).toMatchObject({ severity: 1, range: rangeOf(typo, "r3", "expect r3 holds"), message: "the policy has no rule `r3`\nhelp: did you mean `R3`?" });
    expect(await titles()).toEqual([expect.stringMatching(passed), "✗ failed: 1 expectation", "! could not run"]);
    const actions = await server.request("textDocument/codeAction", { textDocument: { uri: testUri }, range: unknown.range, context: { diagnostics: [unknown] } });
    expect(actions).toEqual([
      expect.objectContaining({ title: "replace with `R3`", kind: "quickfix", edit: { documentChanges: [{ textDocument: { uri: testUri, version: testVersion }, edits: [{ range: unknown.range, newText: "R3" }] }] } }),
    ]);
    await server.change(testUri, testText, ++testVersion);
  });
});

describe("opening and closing", () => {
  it("keeps the run of a test file opened before its policy, and reads the policy's file once it is closed", async () => {
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri: policyUri } });
    const uri = uriOf(join(folder, "second.vigiltest"));
    const text = await readFile(join(folder, "dashcam.vigiltest"), "utf8");
    // The policy opens right after the test file, as it is on disk: the run that started goes on.
    await server.connection.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: "vigil-test", version: 1, text } });
    await server.connection.sendNotification("textDocument/didOpen", { textDocument: { uri: policyUri, languageId: "vigil", version: 1, text: policyText } });
    expect(await titles(uri)).toEqual([expect.stringMatching(passed), expect.stringMatching(passed), expect.stringMatching(passed)]);
    // An unsaved edit breaks the hand-written test; closing the policy without saving mends it.
    const since = server.notifications.length;
    await server.change(policyUri, policyText.replace("rule R1: prec(handoff, validate)", "rule R1: prec(handoff, action in {sample_frames})"), 2);
    await diagnosticsWhere(uri, 1, (d) => d.some((x: any) => x.code === "V2201"), since);
    const closed = server.notifications.length;
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri: policyUri } });
    await diagnosticsWhere(uri, 1, (d) => d.length === 0, closed);
    expect(await titles(uri)).toEqual([expect.stringMatching(passed), expect.stringMatching(passed), expect.stringMatching(passed)]);
  });

  it("watches the policy and traces a test file names, and runs its tests when the policy changes on disk", async () => {
    const uri = uriOf(join(folder, "second.vigiltest"));
    const watched = await latestWatchers((watchers) => watchers.some((w: any) => w.globPattern.pattern === "dashcam.vigil"));
    expect(watched).toEqual(
      expect.arrayContaining([
        { globPattern: { baseUri: uriOf(folder), pattern: "dashcam.vigil" } },
        { globPattern: { baseUri: uriOf(folder), pattern: "benign.jsonl" } },
        { globPattern: { baseUri: uriOf(folder), pattern: "violating.jsonl" } },
      ]),
    );
    const policyFile = join(folder, "dashcam.vigil");
    const since = server.notifications.length;
    await writeFile(policyFile, policyText.replace("rule R1: prec(handoff, validate)", "rule R1: prec(handoff, action in {sample_frames})"));
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: policyUri, type: 2 }] });
    await diagnosticsWhere(uri, 1, (d) => d.some((x: any) => x.code === "V2201"), since);
    const restored = server.notifications.length;
    await writeFile(policyFile, policyText);
    await server.connection.sendNotification("workspace/didChangeWatchedFiles", { changes: [{ uri: policyUri, type: 2 }] });
    await diagnosticsWhere(uri, 1, (d) => d.length === 0, restored);
  });

  it("cancels a run when the test file changes", async () => {
    const lines = ['{"action": "sample_frames", "args": {"video": "a.mp4", "fps": 6}, "status": "ok"}'];
    for (let index = 0; index < 150_000; index++) lines.push('{"action": "index_frames", "args": {"dir": "frames/"}, "status": "ok"}');
    await writeFile(join(folder, "long.jsonl"), `${lines.join("\n")}\n`);
    const uri = uriOf(join(folder, "long.vigiltest"));
    const long = (name: string) => `test "${name}" {\n  trace "long.jsonl"\n  expect all hold\n}\n\n`;
    const text = `policy "dashcam.vigil"\n\n${long("long")}${long("long again")}test "short" {\n  events { sample_frames {fps: 30} }\n  expect R0 violated at 1\n}\n`;
    await server.open(uri, text);
    // The run of every test starts on open and judges the long trace for about a second; an edit
    // (of the short test) a moment later stops it before the next trace, and nothing of it is kept.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const edited = text.replace("expect R0 violated at 1", "expect R0 violated");
    await server.connection.sendNotification("textDocument/didChange", { textDocument: { uri, version: 2 }, contentChanges: [{ text: edited }] });
    await diagnosticsWhere(uri, 2, () => true);
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(await titles(uri)).toEqual(["▶ run test", "▶ run test", expect.stringMatching(passed)]);
  });
});

describe("a test file whose policy is missing", () => {
  it("says so at the policy's name (V2101), and no test runs", async () => {
    const uri = uriOf(join(folder, "missing.vigiltest"));
    const text = 'policy "nope.vigil"\n\ntest "t" {\n  events { a }\n  expect all hold\n}\n';
    await server.open(uri, text);
    expect(await titles(uri)).toEqual(["! could not run"]);
    const published = server.latestDiagnostics(uri);
    expect(published.diagnostics).toEqual([expect.objectContaining({ code: "V2101", severity: 1, range: rangeOf(text, '"nope.vigil"') })]);
    expect(published.diagnostics[0].message).toMatch(/^the policy `nope\.vigil` cannot be read: /);
    const result = await server.request("workspace/executeCommand", { command: "vigil.runTest", arguments: [{ uri }] });
    expect(result.tests).toEqual([]);
    expect(result.errors).toEqual([expect.stringMatching(/^line 1:8: V2101: the policy `nope\.vigil` cannot be read/)]);
  });
});

describe("bad input", () => {
  it("answers a test file's requests, and malformed commands, without a crash", async () => {
    const uri = uriOf(join(folder, "garbage.vigiltest"));
    const garbage = '\u0000 test "x" { events { "a\\q {b: [1, 2} } decide 99999999999999999999999 block by } \n'.repeat(50) + "\ud800";
    const published = await server.open(uri, garbage);
    expect(published.diagnostics.length).toBeGreaterThan(0);
    expect((await titles(uri)).every((title) => title === "! could not run")).toBe(true);
    // The policy's features have nothing to say about a test file.
    expect(await server.request("textDocument/hover", { textDocument: { uri }, position: { line: 0, character: 3 } })).toBeNull();
    expect(await server.request("textDocument/formatting", { textDocument: { uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual([]);
    expect(await server.request("textDocument/documentSymbol", { textDocument: { uri } })).toEqual([]);
    const rejected = async (params: unknown) => server.request("workspace/executeCommand", params).then(() => undefined, (error: { code: number; message: string }) => error.code);
    expect(await rejected({ command: "vigil.noSuchCommand", arguments: [] })).toBe(-32602);
    expect(await rejected({ command: "vigil.runTest", arguments: [] })).toBe(-32602);
    expect(await rejected({ command: "vigil.runTest", arguments: [{ uri, name: 3 }] })).toBe(-32602);
    expect(await rejected({ command: "vigil.runTest", arguments: [{ uri: "file:///nowhere/q.vigiltest" }] })).toBe(-32602);
    // A test file that names itself as its policy, and one that names a folder.
    for (const [name, policy] of [["self.vigiltest", "self.vigiltest"], ["folder.vigiltest", "."]] as const) {
      const other = uriOf(join(folder, name));
      await server.open(other, `policy "${policy}"\ntest "t" {\n  events { a }\n  expect all hold\n}\n`);
      expect(await titles(other)).toEqual(["! could not run"]);
      expect(server.latestDiagnostics(other).diagnostics.map((d: any) => d.code)).toEqual(["V2101"]);
    }
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("is still serving, with nothing logged", async () => {
    expect(await titles()).toHaveLength(3);
    expect(server.process.exitCode).toBeNull();
    expect(server.stderr).toBe("");
    expect(server.notifications.filter((n) => n.method === "window/logMessage")).toEqual([]);
  });
});
