import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { format, tokenize } from "@vigil/syntax";
import { codeServerFolders, installEditorTools, installExtension, startCodeServer, writeUserSettings, type RunningCodeServer } from "./support/code-server.js";
import { freePort } from "../support/ports.js";
import { launchChromium } from "../support/chromium.js";
import { serverTimeout, uiTimeout, Workbench } from "./support/workbench.js";

/**
 * The extension in a real VS Code: the .vsix built from extension/ is installed into code-server
 * (VS Code in the browser), which opens a copy of examples/ in Chromium; the test then does what a
 * person does and checks what a person sees: highlighting, squiggles and Problems rows, hovers,
 * completion from the sample traces, formatting, rename, a quick fix, the verdict lenses, the
 * trace check, a test file's lenses and failing expectation, the analysis findings after a pause,
 * and the comparison of an edit with the last commit. Node 24 and code-server are installed on first use into a cache folder
 * (scripts/editor-tools/install.mjs); screenshots of each step go to the artifacts folder.
 */

const root = join(import.meta.dirname, "..", "..");
const policyPath = "coding-agent/coding-agent.vigil";
const messyPath = "scratch/messy.vigil";
const testFilePath = "dashcam/dashcam.vigiltest";

const artifacts = process.env["VIGIL_E2E_ARTIFACTS"] ?? join(tmpdir(), "vigil-editor-e2e-artifacts");
rmSync(artifacts, { recursive: true, force: true });
const log = (line: string) => process.stderr.write(`[editor e2e] ${line}\n`);

let home: string;
let workspace: string;
let codeServer: RunningCodeServer | undefined;
let browser: Browser | undefined;
let page: Page;
let workbench: Workbench;
const timings: Record<string, number> = {};

async function timed<T>(name: string, step: () => T | Promise<T>): Promise<T> {
  const started = Date.now();
  try {
    return await step();
  } finally {
    timings[name] = Date.now() - started;
    log(`${name}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  }
}

async function screenshot(name: string): Promise<void> {
  if (page === undefined) return;
  mkdirSync(artifacts, { recursive: true });
  await page.screenshot({ path: join(artifacts, `${name}.png`) }).catch((error) => log(`screenshot ${name} failed: ${String(error)}`));
}

/** Runs a step of a test; on failure, a screenshot named after it goes to the artifacts folder. */
async function step(name: string, body: () => Promise<void>): Promise<void> {
  try {
    await body();
    await screenshot(name);
  } catch (error) {
    await screenshot(`FAILED-${name}`);
    throw error;
  }
}

/** The workspace's text of a file, read back from disk. */
function onDisk(relativePath: string): string {
  return readFileSync(join(workspace, relativePath), "utf8");
}

/** Waits until a file on disk satisfies a condition (after a save). */
async function waitForDisk(relativePath: string, condition: (text: string) => boolean): Promise<string> {
  const deadline = Date.now() + uiTimeout;
  for (;;) {
    const text = onDisk(relativePath);
    if (condition(text)) return text;
    if (Date.now() > deadline) return text;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The text with every identifier token `from` replaced by `to`, as a rename must leave it. */
function renamedByTokens(text: string, from: string, to: string): string {
  const hits = tokenize(text).tokens.filter((token) => token.tokenType.name === "Identifier" && token.image === from);
  let result = text;
  for (const token of hits.reverse()) result = result.slice(0, token.startOffset) + to + result.slice(token.startOffset + from.length);
  return result;
}

beforeAll(async () => {
  const tools = await timed("editor tools (Node 24, code-server)", () => installEditorTools(log));

  const vsix = join(root, "extension", "vigil.vsix");
  await timed("build and package the extension", () => {
    const built = spawnSync("npm", ["run", "package", "-w", "extension"], { cwd: root, encoding: "utf8", timeout: 300_000 });
    if (built.status !== 0) throw new Error(`npm run package -w extension failed:\n${built.stdout}\n${built.stderr}`);
  });
  expect(existsSync(vsix)).toBe(true);

  home = mkdtempSync(join(tmpdir(), "vigil-editor-e2e-"));
  workspace = join(home, "workspace");
  cpSync(join(root, "examples"), workspace, { recursive: true, filter: (source) => !source.endsWith(".test.ts") });
  if (!existsSync(join(workspace, "vigil.config.json"))) {
    writeFileSync(join(workspace, "vigil.config.json"), `${JSON.stringify({ traces: ["coding-agent/*.jsonl"] }, null, 2)}\n`);
  }
  // The workspace is a git repository with everything committed: "Compare with last commit" reads
  // the policy's committed version from it.
  const git = (...args: string[]) => {
    const ran = spawnSync("git", ["-c", "user.email=e2e@vigil.invalid", "-c", "user.name=e2e", "-c", "commit.gpgsign=false", ...args], { cwd: workspace, encoding: "utf8" });
    if (ran.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${ran.stderr}`);
  };
  git("init", "-q");
  git("add", ".");
  git("commit", "-q", "-m", "the examples");
  // A policy written without indentation, for Format Document.
  mkdirSync(join(workspace, "scratch"));
  const policy = readFileSync(join(workspace, policyPath), "utf8");
  writeFileSync(join(workspace, messyPath), policy.replace(/^[ \t]+/gm, "").replace(/ = /g, "  =  "));

  const folders = codeServerFolders(home);
  writeUserSettings(folders, {
    "chat.disableAIFeatures": true,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": false,
    "workbench.enableExperiments": false,
    "extensions.autoCheckUpdates": false,
    "extensions.autoUpdate": false,
    "extensions.ignoreRecommendations": true,
    "update.mode": "none",
    "telemetry.telemetryLevel": "off",
    "git.enabled": false,
    "security.workspace.trust.enabled": false,
    // Completions come from the language server only, and only when asked for, so that a
    // suggestion seen is the server's and typing is never completed by surprise.
    "editor.wordBasedSuggestions": "off",
    "editor.quickSuggestions": { other: "off", comments: "off", strings: "off" },
    "editor.suggestOnTriggerCharacters": false,
    "editor.acceptSuggestionOnCommitCharacter": false,
    "editor.autoClosingBrackets": "never",
    "editor.autoClosingQuotes": "never",
    "editor.autoIndent": "none",
    "editor.hover.delay": 200,
    "editor.minimap.enabled": false,
    "workbench.colorTheme": "Default Dark Modern",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "files.autoSave": "off",
  });
  const installed = await timed("install the .vsix", () => installExtension(tools, folders, vsix));
  log(installed.trim());

  const port = await freePort();
  codeServer = await timed("start code-server", () => startCodeServer(tools, folders, port, workspace));

  browser = await launchChromium();
  page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  page.setDefaultTimeout(uiTimeout);
  workbench = new Workbench(page);
  await timed("open the workbench", async () => {
    await page.goto(`${codeServer!.url}/?folder=${encodeURIComponent(workspace)}`);
    await page.locator(".monaco-workbench").waitFor({ state: "visible", timeout: 60_000 });
    await page.locator(".explorer-folders-view, .explorer-viewlet").first().waitFor({ state: "visible", timeout: 30_000 });
  });
}, 1_200_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await codeServer?.stop();
  if (home !== undefined) {
    // VS Code's logs (the extension host's, and the output channels "Vigil" and "Vigil Language
    // Server") and code-server's own, beside the screenshots.
    mkdirSync(artifacts, { recursive: true });
    for (const [from, to] of [[join(home, "user-data", "logs"), "logs"], [join(home, "code-server.log"), "code-server.log"]] as const) {
      if (existsSync(from)) cpSync(from, join(artifacts, to), { recursive: true });
    }
  }
  if (codeServer !== undefined) {
    // The whole process group is gone: no extension host or language server is left running.
    expect(() => process.kill(-codeServer!.process.pid!, 0)).toThrow();
  }
  log(`timings (ms): ${JSON.stringify(timings)}`);
  log(`screenshots in ${artifacts}`);
  if (home !== undefined) rmSync(home, { recursive: true, force: true });
}, 60_000);

/**
 * How long to wait for what Z3 computes in the server's worker (analysis findings, the comparison
 * with the last commit): a few seconds alone, up to half a minute seen beside the rest of the suite.
 */
const solverTimeout = 90_000;

/** The line (from 1) of the policy's text that contains `needle`, and the column (from 1) where it starts. */
function find(text: string, needle: string, after = ""): { line: number; column: number } {
  const lines = text.split("\n");
  const from = after === "" ? 0 : lines.findIndex((line) => line.includes(after));
  const index = lines.findIndex((line, number) => number >= from && line.includes(needle));
  if (index === -1) throw new Error(`\`${needle}\` is not in the text`);
  return { line: index + 1, column: lines[index]!.indexOf(needle) + 1 };
}

/** The first blank line after the line containing `after`. */
function blankLineAfter(text: string, after: string): number {
  const lines = text.split("\n");
  const from = lines.findIndex((line) => line.includes(after));
  return lines.findIndex((line, number) => number > from && line.trim() === "") + 1;
}

describe("the packaged extension, as VS Code installed it", () => {
  /** The extension's folder in the instance's extensions folder, outside the repository. */
  const installedExtension = () => {
    const extensions = join(home, "extensions");
    const name = readdirSync(extensions).find((entry) => entry.startsWith("vigil.vigil-vscode-"));
    if (name === undefined) throw new Error(`no Vigil extension in ${extensions}`);
    return join(extensions, name);
  };

  it("ships the bundles, the grammars and z3-solver, and no node_modules of its own", () => {
    const files = readdirSync(installedExtension(), { recursive: true, encoding: "utf8" }).map((file) => file.replace(/\\/g, "/"));
    expect(files).toEqual(expect.arrayContaining(["package.json", "language-configuration.json", "syntaxes/vigil.tmLanguage.json", "syntaxes/vigil-test.tmLanguage.json", "dist/docs/testing.md", "dist/extension.js", "dist/server.mjs", "dist/analysis-worker.mjs", "dist/node_modules/z3-solver/build/z3-built.wasm"]));
    expect(files.filter((file) => file.startsWith("node_modules/") || file.startsWith("src/") || file.endsWith(".ts"))).toEqual([]);
  });

  for (const engine of ["eval", "smt"] as const) {
    it(`judges a trace with the ${engine} engine from the installed bundle, outside the repository`, async () => {
      const server = spawn(process.execPath, [join(installedExtension(), "dist", "server.mjs"), "--stdio"], { cwd: home, stdio: ["pipe", "pipe", "pipe"] });
      const stderr: string[] = [];
      server.stderr.on("data", (chunk: Buffer) => stderr.push(chunk.toString()));
      const connection = createMessageConnection(new StreamMessageReader(server.stdout), new StreamMessageWriter(server.stdin));
      connection.onRequest(() => null);
      connection.listen();
      try {
        await connection.sendRequest("initialize", { processId: process.pid, rootUri: pathToFileURL(workspace).href, capabilities: {}, workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: "workspace" }] });
        await connection.sendNotification("initialized", {});
        const result = (await Promise.race([
          connection.sendRequest("vigil/checkTrace", { uri: pathToFileURL(join(workspace, policyPath)).href, trace: join(workspace, "coding-agent", "force-push.jsonl"), engine }),
          new Promise((_, reject) => setTimeout(() => reject(new Error(`no answer within 60 s; server stderr: ${stderr.join("")}`)), 60_000)),
        ])) as { verdict: string; errors: string[]; statements: { policy: string; name: string; holds: boolean; witnesses: { event: number }[] }[] };
        // What examples/coding-agent/coding-agent.vigiltest expects of this run.
        const expected = { verdict: "unsafe", violations: { "coding_agent.read_before_edit": [2], "coding_agent.tests_before_commit": [4], "coding_agent.no_force_push": [5] } };
        expect(result.errors).toEqual([]);
        expect(result.verdict).toBe(expected.verdict);
        const violations = Object.fromEntries(result.statements.filter((statement) => !statement.holds).map((statement) => [`${statement.policy}.${statement.name}`, statement.witnesses.map((witness) => witness.event)]));
        expect(violations).toEqual(expected.violations);
      } finally {
        connection.dispose();
        server.kill("SIGKILL");
      }
    });
  }
});

describe("the Vigil extension in VS Code (code-server 4.139) in Chromium", () => {
  let original: string;

  // A step that failed half-way leaves no unsaved edit behind for the next one.
  afterEach(async () => {
    for (const path of [policyPath, messyPath, testFilePath]) {
      const name = path.slice(path.lastIndexOf("/") + 1);
      if ((await page.locator(`.tabs-container .tab.dirty[data-resource-name="${name}"]`).count()) === 0) continue;
      await workbench.openFile(path);
      await workbench.runCommand("File: Revert File");
    }
  });

  it("opens a policy as a Vigil document and highlights it with the grammar's scopes", async () => {
    original = onDisk(policyPath);
    await step("highlighting", async () => {
      await workbench.openFile(policyPath);
      await expect.poll(() => page.locator("#status\\.editor\\.mode").textContent(), { timeout: uiTimeout }).toContain("Vigil");
      const at = find(original, "prec(", "rule read_before_edit");
      await workbench.goTo(at.line, at.column + 1);
      // Keywords, forms and names are drawn in different colours (Monaco's mtk classes).
      await workbench.token("prec").first().waitFor({ state: "visible", timeout: uiTimeout });
      const classOf = async (text: string) => (await workbench.token(text).first().getAttribute("class")) ?? "";
      expect(await classOf("prec")).not.toBe(await classOf("read_before_edit"));
      expect(await classOf("prec")).not.toBe(await classOf("Edit"));
      // The scopes under the cursor, as "Developer: Inspect Editor Tokens and Scopes" lists them.
      await workbench.runCommand("Developer: Inspect Editor Tokens and Scopes");
      const inspector = page.locator(".token-inspect-widget");
      await expect.poll(() => inspector.textContent(), { timeout: uiTimeout }).toContain("keyword.control.form.vigil");
      expect(await inspector.textContent()).toContain("source.vigil");
      await workbench.dismissWidgets();
    });
  });

  it("shows a rule's verdicts on the sample traces as code lenses, and opens the trace at a witness", async () => {
    await step("lenses", async () => {
      await workbench.openFile(policyPath);
      const lenses = page.locator(".codelens-decoration");
      // Every rule of the example is broken by one of its traces (that is what they are for).
      await expect.poll(() => lenses.allTextContents(), { timeout: serverTimeout }).toEqual(
        expect.arrayContaining([expect.stringMatching(/^violated at event 5 of force-push\.jsonl$/), expect.stringMatching(/^violated at event \d+ of [\w.-]+\.jsonl \(and 1 more trace\)$/)]),
      );
      // The status bar says what the policy is checked against (the server's vigil/status).
      const status = page.locator(".statusbar-item", { hasText: /Vigil: \d+ sample traces?/ });
      await status.first().waitFor({ state: "visible", timeout: serverTimeout });
      // A rule that no sample breaks, typed in, gets its lens.
      await workbench.goTo(blankLineAfter(original, "pattern egress"), 1);
      await page.keyboard.type('  rule no_delete_of_root: abs(action in {rm} and target in {"/"})');
      await expect.poll(() => lenses.allTextContents(), { timeout: serverTimeout }).toEqual(expect.arrayContaining([expect.stringMatching(/^holds on \d+ traces$/)]));
      await screenshot("lenses-typed-rule");
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => workbench.visibleText()).not.toContain("no_delete_of_root");
      // A violated rule's lens opens the trace with the witness's line selected.
      const violated = page.locator(".codelens-decoration a", { hasText: "violated at event 5 of force-push.jsonl" }).first();
      await violated.click();
      await expect.poll(() => workbench.activeTabName(), { timeout: uiTimeout }).toBe("force-push.jsonl");
      await expect.poll(() => page.locator("#status\\.editor\\.selection").textContent(), { timeout: uiTimeout }).toMatch(/^Ln 6, Col \d+ \(\d+ selected\)$/);
    });
  });

  it("shows a hover with a rule's documentation", async () => {
    await step("hover", async () => {
      await workbench.openFile(policyPath);
      const at = find(original, "read_before_edit");
      const hover = page.locator(".monaco-hover:not(.hidden)", { hasText: "edited only after the agent has read it" });
      // The hover is asked for at the cursor (Show or Focus Hover, Ctrl+K Ctrl+I), not with the
      // mouse: lenses arriving while the mouse moves shift the lines under it. Asked again until the
      // server has answered, within the bounded wait.
      const deadline = Date.now() + serverTimeout;
      for (;;) {
        await workbench.goTo(at.line, at.column + 1);
        await page.keyboard.press("Control+K");
        await page.keyboard.press("Control+I");
        const shown = await hover.first().waitFor({ state: "visible", timeout: 3_000 }).then(() => true, () => false);
        if (shown || Date.now() > deadline) break;
      }
      await hover.first().waitFor({ state: "visible", timeout: 1_000 });
      expect(await hover.first().textContent()).toContain("read it in this session");
    });
  });

  it("completes an action that only the sample traces know", async () => {
    await step("completion", async () => {
      await workbench.openFile(policyPath);
      await workbench.goTo(blankLineAfter(original, "pattern egress"), 1);
      await page.keyboard.type("  pattern probe = action in {git");
      await page.keyboard.press("Control+Space");
      const rows = page.locator(".suggest-widget.visible .monaco-list-row");
      await expect.poll(() => rows.evaluateAll((elements) => elements.map((element) => element.getAttribute("aria-label") ?? "")), { timeout: serverTimeout }).toEqual(
        expect.arrayContaining([expect.stringContaining("git add")]),
      );
      await screenshot("completion-list");
      await workbench.dismissWidgets();
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => workbench.visibleText()).not.toContain("pattern probe");
    });
  });

  it("underlines an error as it is typed, lists it in Problems, and clears it when undone", async () => {
    await step("diagnostics", async () => {
      await workbench.openFile(policyPath);
      const errors = workbench.editor.locator(".squiggly-error");
      expect(await errors.count()).toBe(0);
      const at = find(original, "abs(", "rule no_force_push");
      await workbench.goTo(at.line, at.column);
      await page.keyboard.type("zz ");
      await errors.first().waitFor({ state: "visible", timeout: serverTimeout });
      const rows = await workbench.problems();
      const row = rows.filter({ hasText: /V0\d{3}/ }).first();
      await row.waitFor({ state: "visible", timeout: serverTimeout });
      await screenshot("diagnostics-problems");
      await workbench.focusEditor();
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => errors.count(), { timeout: serverTimeout }).toBe(0);
    });
  });

  it("applies a quick fix", async () => {
    await step("quick-fix", async () => {
      await workbench.openFile(policyPath);
      const line = blankLineAfter(original, "pattern egress");
      await workbench.goTo(line, 1);
      await page.keyboard.type("  pattern bare = module in {pytest}");
      await workbench.editor.locator(".squiggly-error").first().waitFor({ state: "visible", timeout: serverTimeout });
      await workbench.goTo(line, "  pattern bare = module in {pyt".length);
      // Quick Fix… asks the server for the actions at the cursor; asked again if the menu came up
      // before the diagnostics the fix belongs to had reached the editor.
      const fix = page.locator(".action-widget .monaco-list-row", { hasText: 'write `"pytest"`' }).first();
      await expect
        .poll(
          async () => {
            if (await fix.isVisible()) return true;
            await workbench.dismissWidgets();
            await workbench.focusEditor();
            await page.keyboard.press("Control+.");
            return fix.waitFor({ state: "visible", timeout: 3_000 }).then(() => true, () => false);
          },
          { timeout: serverTimeout, intervals: [0] },
        )
        .toBe(true);
      await fix.click();
      await expect.poll(() => workbench.visibleText(), { timeout: uiTimeout }).toContain('pattern bare = module in {"pytest"}');
      await expect.poll(() => workbench.editor.locator(".squiggly-error").count(), { timeout: serverTimeout }).toBe(0);
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => workbench.visibleText()).not.toContain("pattern bare");
    });
  });

  it("runs a test file's tests: a lens above each test says it passed, and a broken expectation is a problem at it", async () => {
    await step("test-file", async () => {
      const text = onDisk(testFilePath);
      await workbench.openFile(testFilePath);
      await expect.poll(() => page.locator("#status\\.editor\\.mode").textContent(), { timeout: uiTimeout }).toContain("Vigil test");
      const lenses = page.locator(".codelens-decoration");
      const passed = /^✓ passed \(\d+ ms\)$/;
      // One lens per test of the file, each passed.
      const allPassed = Array.from(text.matchAll(/^test "/gm), () => expect.stringMatching(passed));
      await expect.poll(() => lenses.allTextContents(), { timeout: serverTimeout }).toEqual(allPassed);
      // The hand-written test expects R1 violated at 3; at 2 it fails, at the expectation.
      const at = find(text, "expect R1 violated at 3");
      await workbench.goTo(at.line, at.column + "expect R1 violated at ".length);
      await page.keyboard.press("Delete");
      await page.keyboard.type("2");
      await expect.poll(() => lenses.allTextContents(), { timeout: serverTimeout }).toContain("✗ failed: 1 expectation");
      const rows = await workbench.problems();
      const failing = rows.filter({ hasText: "expected violated at 2; found violated at 3 (forward engine, monitor)" });
      await failing.first().waitFor({ state: "visible", timeout: serverTimeout });
      expect(await failing.first().textContent()).toContain("V2201");
      await screenshot("test-file-failing");
      await workbench.openFile(testFilePath);
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => lenses.allTextContents(), { timeout: serverTimeout }).toEqual(allPassed);
    });
  });

  it("checks the policy against a trace and puts each violated rule in Problems", async () => {
    await step("check-against-trace", async () => {
      await workbench.openFile(policyPath);
      await workbench.openFile("coding-agent/force-push.jsonl");
      await workbench.runCommand("Vigil: Check against trace…");
      const rows = await workbench.problems();
      const violated = rows.filter({ hasText: "violated on force-push.jsonl" });
      await expect.poll(() => violated.count(), { timeout: serverTimeout }).toBe(3);
      const texts = (await violated.allTextContents()).join("\n");
      for (const rule of ["no_force_push", "read_before_edit", "tests_before_commit"]) expect(texts).toContain(rule);
    });
  });

  it("shows the signature the policy is checked against", async () => {
    await step("signature", async () => {
      await workbench.openFile(policyPath);
      await workbench.runCommand("Vigil: Show signature");
      await expect.poll(() => workbench.activeTabName(), { timeout: serverTimeout }).toBe("coding-agent.vigil.signature.json");
      await expect.poll(() => page.locator("#status\\.editor\\.mode").textContent(), { timeout: uiTimeout }).toContain("JSON");
      // An action that only the traces know is in it: found with the editor's Find.
      await workbench.focusEditor();
      await page.keyboard.press("Control+F");
      await page.keyboard.type('"git add"');
      await expect.poll(() => page.locator(".find-widget .matchesCount").textContent(), { timeout: uiTimeout }).toMatch(/^1 of \d+$/);
      await workbench.dismissWidgets();
      // It is read-only.
      await workbench.focusEditor();
      const before = await workbench.visibleText();
      await page.keyboard.type("xyz");
      await page.waitForTimeout(300);
      expect(await workbench.visibleText()).toBe(before);
    });
  });

  it("shows the analysis findings once typing stops, and drops them with the rule", async () => {
    await step("analysis-findings", async () => {
      await workbench.openFile(policyPath);
      await workbench.goTo(blankLineAfter(original, "pattern egress"), 1);
      // A rule whose pattern cannot match: an edit ok and failed at once. It never fires.
      await page.keyboard.type("  rule never_fires: abs(action in {Edit} and status = ok and status = error)");
      // Go to Next Problem (F8) from the start of the new rule's line shows, in the editor, the first
      // problem after it: the analysis's, once it has run (until then, one further down).
      const line = blankLineAfter(original, "pattern egress");
      const problemAt = async () => {
        await workbench.goTo(line, 1);
        await page.keyboard.press("F8");
        const widget = page.locator(".marker-widget").first();
        const text = await widget.waitFor({ state: "visible", timeout: 3_000 }).then(() => widget.textContent(), () => "");
        await workbench.dismissWidgets();
        return text ?? "";
      };
      await expect.poll(problemAt, { timeout: solverTimeout, intervals: [1_000] }).toContain("no run of up to 5 events breaks rule `coding_agent.never_fires`: it never fires");
      expect(await problemAt()).toContain("A0002");
      await workbench.goTo(line, 1);
      await page.keyboard.press("F8");
      await page.locator(".marker-widget").first().waitFor({ state: "visible", timeout: uiTimeout });
      await screenshot("analysis-findings-peek");
      // The next one is the pattern's: it cannot match.
      await page.keyboard.press("F8");
      await expect.poll(() => page.locator(".marker-widget").first().textContent(), { timeout: uiTimeout }).toContain("A0001");
      await workbench.dismissWidgets();
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => workbench.visibleText()).not.toContain("never_fires");
      // And no problem left names it: the next one after its line is another's.
      await expect.poll(problemAt, { timeout: serverTimeout, intervals: [1_000] }).not.toContain("never_fires");
    });
  });

  it("compares the edited policy with its last commit, with a run that tells them apart", async () => {
    await step("diff-with-commit", async () => {
      await workbench.openFile(policyPath);
      await workbench.goTo(blankLineAfter(original, "pattern egress"), 1);
      // Unsaved: the comparison is of the text in the editor.
      await page.keyboard.type("  rule no_curl: abs(action in {curl})");
      await workbench.runCommand("Vigil: Compare with last commit");
      await expect.poll(() => workbench.activeTabName(), { timeout: solverTimeout }).toBe("coding-agent.vigil.diff.md");
      await expect.poll(() => page.locator("#status\\.editor\\.mode").textContent(), { timeout: uiTimeout }).toContain("Markdown");
      // The notification first (Escape, which closes Find, hides it too).
      const toast = page.locator(".notifications-toasts .notification-list-item-message", { hasText: "coding-agent.vigil against HEAD: stricter" });
      await toast.first().waitFor({ state: "visible", timeout: uiTimeout });
      // Found with the editor's Find, which searches the whole report, wrapped or scrolled away.
      for (const line of [
        "### Policy change: `coding-agent.vigil@HEAD` → `coding-agent.vigil`",
        "**Whole policy:** stricter: the new version rejects runs the old accepts",
        "| `coding_agent.no_curl` | added | stricter",
        "| `coding_agent.no_force_push` | unchanged | equivalent (proven) |",
        '{"action":"curl"}',
      ]) {
        expect(await workbench.findCount(line), line).toMatch(/ of [1-9]\d*$/);
      }
      await screenshot("diff-with-commit-report");
      await workbench.runCommand("View: Close Editor");
      await workbench.openFile(policyPath);
      await workbench.runCommand("File: Revert File");
      await expect.poll(() => workbench.visibleText()).not.toContain("no_curl");
    });
  });

  it("renames a pattern at its declaration and every reference", async () => {
    await step("rename", async () => {
      await workbench.openFile(policyPath);
      const at = find(original, "egress =", "pattern egress");
      await workbench.goTo(at.line, at.column + 1);
      await page.keyboard.press("F2");
      const input = page.locator(".rename-box input, .rename-input").first();
      await input.waitFor({ state: "visible", timeout: serverTimeout });
      await input.fill("network_egress");
      await page.keyboard.press("Enter");
      await expect.poll(() => workbench.visibleText(), { timeout: serverTimeout }).toContain("pattern network_egress =");
      await page.keyboard.press("Control+S");
      const expected = renamedByTokens(original, "egress", "network_egress");
      expect(expected).not.toBe(original);
      expect(await waitForDisk(policyPath, (text) => text === expected)).toBe(expected);
    });
  });

  it("formats a badly indented document as vigilc fmt does", async () => {
    await step("format", async () => {
      const messy = onDisk(messyPath);
      const formatted = format(messy).text;
      expect(formatted).toBeDefined();
      expect(formatted).not.toBe(messy);
      await workbench.openFile(messyPath);
      await workbench.runCommand("Format Document");
      await expect.poll(() => workbench.visibleText(), { timeout: serverTimeout }).toContain("  pattern secret_file =\n    path ~");
      await page.keyboard.press("Control+S");
      expect(await waitForDisk(messyPath, (text) => text === formatted)).toBe(formatted);
    });
  });
});
