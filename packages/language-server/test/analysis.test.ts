import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { analyzePolicy, compile } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { root, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The analysis in the editor: `vigilc analyze`'s findings published with a document's diagnostics
 * once it has been still for `vigil.analysis.delay`, carried across edits that leave their rules
 * as they were, and stopped by a newer edit; and `vigil/diffCommitted`, the current text against
 * the file at a git revision. The analysis runs in the server's worker thread, with Z3.
 */

const fixture = resolve(root, "packages/cli/test/fixtures/analysis/release.vigil");
const releaseText = readFileSync(fixture, "utf8");

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-ls-analysis-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const findingCodes = (diagnostics: { code: string }[]) => diagnostics.map((d) => d.code).filter((code) => code.startsWith("A"));
/** A diagnostic as compared here: code, first line and where it is (0-based line and character). */
const shape = (d: { code: string; message: string; range: { start: { line: number; character: number } } }) => `${d.code} ${d.range.start.line}:${d.range.start.character} ${d.message.split("\n")[0]}`;

describe("analysis findings after a pause in typing", () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await TestServer.start({ folders: [scratch], settings: { analysis: { enabled: true, delay: 200 } } });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("publishes exactly vigilc analyze's findings, after the compiler's diagnostics of the same version", async () => {
    const uri = uriOf(join(scratch, "release.vigil"));
    const first = await server.open(uri, releaseText, 1);
    expect(findingCodes(first.diagnostics)).toEqual([]);
    const analysed = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === 1 && findingCodes(p.diagnostics).length > 0, 90_000);
    // The same function the CLI runs, on the same text: the same findings, at the same places.
    const compiled = compile(releaseText, { file: join(scratch, "release.vigil") });
    const expected = await analyzePolicy(compiled.program, { file: join(scratch, "release.vigil") });
    expect(new Set(findingCodes(analysed.diagnostics))).toEqual(new Set(["A0001", "A0002", "A0003", "A0004", "A0005", "A0006"]));
    expect(analysed.diagnostics.filter((d: any) => d.code.startsWith("A")).map((d: any) => `${d.code} ${d.range.start.line + 1}:${d.range.start.character + 1}`).sort()).toEqual(
      expected.map((d) => `${d.code} ${d.span!.line}:${d.span!.column}`).sort(),
    );
    expect(analysed.diagnostics.every((d: any) => d.source === "vigil")).toBe(true);
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("keeps the findings of unchanged rules through an edit, moved with them, and drops those of the rule edited", async () => {
    const uri = uriOf(join(scratch, "carry.vigil"));
    await server.open(uri, releaseText, 1);
    const analysed = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === 1 && findingCodes(p.diagnostics).length > 0, 90_000);
    const before = analysed.diagnostics.filter((d: any) => d.code.startsWith("A"));
    // Two lines above everything, and the rule `never` made satisfiable.
    const edited = `// a comment\n// another\n${releaseText.replace("status = ok and status = error)", "status = error)")}`;
    const published = await server.change(uri, edited, 2);
    const neverLine = releaseText.split("\n").findIndex((line) => line.includes("rule never:"));
    const moved = (d: any) => ({ ...d, range: { start: { ...d.range.start, line: d.range.start.line + 2 }, end: { ...d.range.end, line: d.range.end.line + 2 } } });
    const kept = before.filter((d: any) => d.range.start.line !== neverLine).map(moved);
    expect(kept.length).toBeGreaterThan(0);
    expect(kept.length).toBeLessThan(before.length);
    // At once, before any new analysis: the carried findings, two lines down.
    expect(published.diagnostics.filter((d: any) => d.code.startsWith("A")).map(shape).sort()).toEqual(kept.map(shape).sort());
    // And after the pause, the analysis of the edited text: `never` no longer breaks nothing.
    const again = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && p.version === 2, 90_000);
    const expected = await analyzePolicy(compile(edited).program);
    expect(findingCodes(again.diagnostics).sort()).toEqual(expected.map((d) => d.code).sort());
    expect(again.diagnostics.some((d: any) => d.range.start.line === neverLine + 2)).toBe(false);
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("analyses only the version typing stopped at, and not a policy with errors", async () => {
    const uri = uriOf(join(scratch, "typing.vigil"));
    const policy = (rules: string) => `policy p {\n${rules}}\n`;
    await server.open(uri, policy("  rule a: abs(action in {x} and status = ok and status = error)\n"), 1);
    // Each edit comes before the pause ends: the analysis of version 1 (if it started) is stopped.
    await server.change(uri, policy("  rule a: abs(action in {x} and status = ok and status = error)\n  rule b: abs(action in {y\n"), 2);
    const last = policy("  rule b: abs(action in {y} and status = ok and status = error)\n");
    await server.change(uri, last, 3);
    const analysed = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && findingCodes(p.diagnostics).length > 0, 90_000);
    expect(analysed.version).toBe(3);
    expect(analysed.diagnostics.map((d: any) => d.message.split("\n")[0])).toEqual(expect.arrayContaining([expect.stringContaining("rule `p.b`")]));
    expect(JSON.stringify(analysed.diagnostics)).not.toContain("`p.a`");
    const published = server.notifications.filter((n) => n.method === "textDocument/publishDiagnostics" && n.params.uri === uri);
    expect(published.filter((n) => n.params.version === 2).every((n) => findingCodes(n.params.diagnostics).length === 0)).toBe(true);
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });

  it("drops the findings when the analysis is turned off, and finds them again when it is turned on", async () => {
    const uri = uriOf(join(scratch, "toggle.vigil"));
    await server.open(uri, releaseText, 1);
    await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && findingCodes(p.diagnostics).length > 0, 90_000);
    await server.changeSettings({ analysis: { enabled: false } });
    await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && findingCodes(p.diagnostics).length === 0, 30_000);
    await server.changeSettings({ analysis: { enabled: true, delay: 50, depth: 3 } });
    const again = await server.waitFor("textDocument/publishDiagnostics", (p) => p.uri === uri && findingCodes(p.diagnostics).length > 0, 90_000);
    // Depth 3 is said in the messages of what was searched.
    expect(again.diagnostics.map((d: any) => d.message).join("\n")).toContain("up to 3 events");
    await server.connection.sendNotification("textDocument/didClose", { textDocument: { uri } });
  });
});

describe("vigil/diffCommitted", () => {
  const committed = `policy deploy {
  rule checked: prec(action in {deploy}, action in {version_check})
}
`;
  let server: TestServer;
  let repository: string;
  let file: string;
  beforeAll(async () => {
    repository = join(scratch, "repo");
    execFileSync("mkdir", ["-p", join(repository, "policies")]);
    const git = (...args: string[]) => execFileSync("git", ["-c", "user.email=a@b", "-c", "user.name=a", ...args], { cwd: repository, encoding: "utf8" });
    git("init", "-q");
    file = join(repository, "policies", "deploy.vigil");
    writeFileSync(file, committed);
    git("add", ".");
    git("commit", "-q", "-m", "first");
    server = await TestServer.start({ folders: [repository] });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("compares the unsaved text with the last commit: the relation, each rule, and a run that shows the difference", async () => {
    const uri = uriOf(file);
    const edited = committed.replace("}\n", "  rule tested: prec(action in {deploy}, action in {run_tests})\n}\n");
    await server.open(uri, edited, 4);
    const result = await server.request("vigil/diffCommitted", { uri }, 90_000);
    expect(result).toMatchObject({ uri, version: 4, revision: "HEAD", old: "deploy.vigil@HEAD", new: "deploy.vigil", relation: "stricter", same: false });
    expect(result.markdown).toContain("### Policy change: `deploy.vigil@HEAD` → `deploy.vigil`");
    expect(result.markdown).toContain("| `deploy.checked` | unchanged | equivalent (proven) |");
    expect(result.markdown).toContain("| `deploy.tested` | added | stricter");
    // The run is in the canonical trace format: a deploy with no test before it.
    const run = /```jsonl\n([^`]*)```/.exec(result.markdown)?.[1] ?? "";
    const events = run.trim().split("\n").map((line) => JSON.parse(line) as { action: string });
    expect(events.map((event) => event.action)).toContain("deploy");
    expect(result.json.rules.map((rule: any) => [rule.rule, rule.change])).toEqual([["deploy.checked", "unchanged"], ["deploy.tested", "added"]]);
    // The text as committed: no difference, proven.
    await server.change(uri, committed, 5);
    const same = await server.request("vigil/diffCommitted", { uri }, 90_000);
    expect(same).toMatchObject({ version: 5, relation: "equivalent", basis: "proof", same: true });
  });

  it("says why it cannot compare: no commit of the file, a bad revision, errors in the text", async () => {
    const loose = join(scratch, "loose.vigil");
    writeFileSync(loose, committed);
    await expect(server.request("vigil/diffCommitted", { uri: uriOf(loose) })).rejects.toThrow(/no version of `loose.vigil` at HEAD to compare with: fatal: not a git repository/);
    const untracked = join(repository, "policies", "new.vigil");
    writeFileSync(untracked, committed);
    await expect(server.request("vigil/diffCommitted", { uri: uriOf(untracked) })).rejects.toThrow(/no version of `new.vigil` at HEAD to compare with: fatal: .*new\.vigil/);
    await expect(server.request("vigil/diffCommitted", { uri: uriOf(file), revision: "--output=/tmp/x" })).rejects.toThrow(/is not a revision/);
    await expect(server.request("vigil/diffCommitted", { uri: uriOf(file), revision: "no-such-branch" })).rejects.toThrow(/no version of `deploy.vigil` at no-such-branch/);
    await expect(server.request("vigil/diffCommitted", { uri: uriOf(file), depth: 40 })).rejects.toThrow(/the depth is 40/);
    const uri = uriOf(file);
    await server.change(uri, "policy deploy { rule r: prec(action in {a}) }\n", 9);
    await expect(server.request("vigil/diffCommitted", { uri })).rejects.toThrow(/`deploy.vigil` has 1 error: fix it to compare it with HEAD/);
  });
});
