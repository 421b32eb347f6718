import { spawnSync } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEdits, copyFixture, cursor, root, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The editing features over JSON-RPC, each at a `<|>` cursor: hover, completion, signature help,
 * definition, references, rename, outline, folding, semantic tokens, formatting and quick fixes.
 */

let server: TestServer;
let workspace: string;
let releaseText: string;
let version = 1;

beforeAll(async () => {
  workspace = await copyFixture("workspace");
  server = await TestServer.start({ folders: [workspace] });
  releaseText = await readFile(join(workspace, "release.vigil"), "utf8");
});
afterAll(async () => {
  await server?.close();
});

/** Opens (or replaces) a document of the fixture workspace with a marked text; returns the cursor. */
async function document(name: string, marked: string): Promise<{ uri: string; text: string; position: { line: number; character: number }; diagnostics: any[] }> {
  const uri = uriOf(join(workspace, name));
  const { text, position } = cursor(marked);
  version++;
  const published = opened.has(uri) ? await server.change(uri, text, version) : await server.open(uri, text, version);
  opened.add(uri);
  return { uri, text, position, diagnostics: published.diagnostics };
}
const opened = new Set<string>();

function at(text: string, marker: string, shift = 0): string {
  const index = text.indexOf(marker);
  if (index < 0) throw new Error(`no ${marker} in the text`);
  return `${text.slice(0, index + shift)}<|>${text.slice(index + shift)}`;
}

async function hoverText(name: string, marked: string): Promise<string> {
  const doc = await document(name, marked);
  const hover = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
  expect(hover?.contents.kind).toBe("markdown");
  return hover.contents.value as string;
}

describe("hover", () => {
  it("on a rule name: its doc, its form in words and its Figure 5 requirement", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "check_first:", 3));
    expect(text).toContain("**rule** `check_first` in `release`");
    expect(text).toContain("Deploy only after a passing check.");
    expect(text).toContain("`prec` holds when every event matching ψ has an earlier event matching ψ' (precedence).");
    expect(text).toContain("Figure 5 (Prec): R_φ(e) = ψ(e) ⇒ ⋁_{e′ ≺ e} ψ′(e′) — each ψ-event has an earlier ψ′-event.");
    expect(text).toContain("**response** `block` (the default)");
  });

  it("on a form keyword", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "abs(", 1));
    expect(text).toContain("`abs` holds when no event matches ψ (absence).");
    expect(text).toContain("R_φ(e) = ¬ψ(e)");
    expect(text).toContain("**response** `warn`: lets the call go ahead and reports the violation");
  });

  it("on an action: how many events of the sample traces carry it", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "{deploy}, action", 2));
    expect(text).toContain("**action** `deploy`");
    expect(text).toContain("3 events of 7 in 2 sample traces carry this action (run-a.jsonl: 2, run-b.jsonl: 1).");
  });

  it("on a key and on a value", async () => {
    const key = await hoverText("release.vigil", at(releaseText, 'env in {"prod"}', 1));
    expect(key).toContain("**argument** `env`");
    expect(key).toContain("3 events of 7 in 2 sample traces carry this argument");
    expect(key).toContain('most frequent values: `"prod"` (2), `"staging"` (1)');
    const value = await hoverText("release.vigil", at(releaseText, '"prod"', 2));
    expect(value).toContain('**value** `"prod"` under `env`');
    expect(value).toContain("2 events of 7 in 2 sample traces carry this value under the argument (run-a.jsonl: 1, run-b.jsonl: 1).");
  });

  it("on an action that no sample has: it matches nothing", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "rollback}", 2));
    expect(text).toContain("No event of the 2 sample traces (7 events) carries this action: under the closed world it matches nothing.");
  });

  it("on a variable: where it is bound and where it is used", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "$v,\n    action in {deploy} and env in {\"staging\"}", 1));
    expect(text).toContain("**variable** `$v` in rule `staged`");
    expect(text).toContain("- bound at `version` in `ψ` (trigger) (line 14)");
    expect(text).toContain("- used at `version` in `ψ'` (required before) (line 15)");
  });

  it("on a pattern reference: the pattern's doc and body", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "once read_secret", 7));
    expect(text).toContain("**pattern** `read_secret`");
    expect(text).toContain("Reading a dotenv file.");
    expect(text).toContain('pattern read_secret = action in {read_file} and path ~ "*.env"');
  });

  it("on a keyword that is not a form", async () => {
    const text = await hoverText("release.vigil", at(releaseText, "once read_secret", 1));
    expect(text).toContain("`once Θ`: Θ held at some **strictly earlier** event");
  });

  it("on nothing in particular: no hover", async () => {
    const doc = await document("release.vigil", at(releaseText, "\n\n  /// No upload", 1));
    expect(await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position })).toBeNull();
  });
});

describe("completion", () => {
  async function labels(marked: string): Promise<string[]> {
    const doc = await document("draft.vigil", marked);
    const list = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
    return list.items.map((item: any) => item.label);
  }

  it("the sample traces' actions after `action in {`, most frequent first, in half-typed text", async () => {
    const items = await labels("policy draft {\n  rule r: abs(action in {<|>\n}\n");
    expect(items).toEqual(["deploy", "read_file", "check", "http_post", "rollback"]);
  });

  it("the actions still missing from the set, while one is being typed", async () => {
    const items = await labels("policy draft {\n  rule r: abs(action in {deploy, re<|>})\n}\n");
    expect(items).toEqual(["read_file", "check", "http_post", "rollback"]);
  });

  it("keys, pattern names and the atoms at a key position", async () => {
    const items = await labels("policy draft {\n  pattern secret = action in {read_file}\n  rule r: prec(secret, <|>\n}\n");
    expect(items).toEqual(expect.arrayContaining(["action in {…}", "status = ok", 'output ~ "…"', "not", "secret", "env", "version", "path", "suite", "url", "headers.host", "force"]));
    expect(items).not.toContain("once");
  });

  it("the values of a key after `KEY in {`", async () => {
    const items = await labels('policy draft {\n  rule r: abs(action in {deploy} and env in {<|>\n}\n');
    expect(items).toEqual(['"staging"', '"prod"']);
    const nested = await labels('policy draft {\n  rule r: abs(action in {http_post} and headers.host in {"<|>"})\n}\n');
    expect(nested).toEqual(['"collector.example"']);
  });

  it("nested keys after a dot", async () => {
    expect(await labels("policy draft {\n  rule r: abs(headers.<|>)\n}\n")).toEqual(["host"]);
  });

  it("the forms as snippets after `rule NAME:`", async () => {
    const doc = await document("draft.vigil", "policy draft {\n  rule r: <|>\n}\n");
    const list = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(list.items.map((i: any) => i.label)).toEqual([
      "abs(ψ never matches)",
      "prec(ψ trigger, ψ' required before)",
      "resp(ψ trigger, ψ' required after)",
      "bresp[N](ψ trigger, ψ' required within N events)",
      "rslv(ψ trigger, ψ' resolution)",
      "until(ψ trigger, ψ' resolution, ψb bad)",
      "always Θ",
      "limit[N per D](ψ counted)",
    ]);
    const prec = list.items[1];
    expect(prec).toMatchObject({ insertTextFormat: 2, textEdit: { newText: "prec(${1:ψ}, ${2:ψ'})" }, filterText: "prec" });
  });

  it("once and eventually only in an `always` body", async () => {
    const items = await labels("policy draft {\n  rule r: always not (action in {deploy} and <|>\n}\n");
    expect(items).toEqual(expect.arrayContaining(["once", "eventually", "action in {…}"]));
  });

  it("operators after a key, and responses after a statement", async () => {
    expect(await labels("policy draft {\n  rule r: abs(env <|>\n}\n")).toEqual(expect.arrayContaining(["in {…}", '~ "…"', "= $x", "and", "or"]));
    expect(await labels("policy draft {\n  rule r: abs(action in {deploy}) <|>\n}\n")).toEqual(expect.arrayContaining(['block "…"', "warn", "ask", "rule", "pattern"]));
    expect(await labels("policy draft {\n  rule r: abs(status = <|>\n}\n")).toEqual(["ok", "error"]);
    expect(await labels('policy draft {\n  rule r: abs(action in {deploy}) warn "Say why."\n  <|>\n}\n')).toEqual(["pattern", "rule"]);
  });

  it("declarations in a policy and a policy at the top level", async () => {
    expect(await labels("policy draft {\n  <|>\n}\n")).toEqual(["pattern", "rule"]);
    expect(await labels("<|>")).toEqual(["policy"]);
  });

  it("nothing inside a comment", async () => {
    expect(await labels("policy draft {\n  // action in {<|>\n}\n")).toEqual([]);
  });
});

describe("signature help", () => {
  it("shows the form's parameters with the active one", async () => {
    const doc = await document("draft.vigil", "policy draft {\n  rule r: prec(action in {deploy}, (action in {check} <|>\n}\n");
    const help = await server.request("textDocument/signatureHelp", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(help.signatures[0].label).toBe("prec(ψ trigger, ψ' required before)");
    expect(help.activeParameter).toBe(1);
    expect(help.signatures[0].parameters[1].label).toEqual([16, 34]);
    const first = await document("draft.vigil", "policy draft {\n  rule r: bresp[3](<|>\n}\n");
    const bresp = await server.request("textDocument/signatureHelp", { textDocument: { uri: first.uri }, position: first.position });
    expect(bresp).toMatchObject({ activeParameter: 0, signatures: [{ label: "bresp[N](ψ trigger, ψ' required within N events)" }] });
  });

  it("shows nothing outside a form", async () => {
    const doc = await document("draft.vigil", "policy draft {\n  rule r: abs(action in {deploy})<|>\n}\n");
    expect(await server.request("textDocument/signatureHelp", { textDocument: { uri: doc.uri }, position: doc.position })).toBeNull();
  });
});

describe("definition, references and rename", () => {
  const text = `policy p {
  pattern secret = action in {read_file}
  pattern leak = secret and action in {http_post}
  rule r1: abs(leak)
  rule r2: prec(action in {http_post} and url = $u, secret and path = $u)
}
`;

  it("goes from a pattern reference to its declaration", async () => {
    const doc = await document("nav.vigil", at(text, "secret and action", 2));
    const location = await server.request("textDocument/definition", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(location).toEqual({ uri: doc.uri, range: { start: { line: 1, character: 10 }, end: { line: 1, character: 16 } } });
  });

  it("finds every reference, with or without the declaration", async () => {
    const doc = await document("nav.vigil", at(text, "secret =", 1));
    const all = await server.request("textDocument/references", { textDocument: { uri: doc.uri }, position: doc.position, context: { includeDeclaration: true } });
    expect(all.map((l: any) => l.range.start.line)).toEqual([1, 2, 4]);
    const uses = await server.request("textDocument/references", { textDocument: { uri: doc.uri }, position: doc.position, context: { includeDeclaration: false } });
    expect(uses.map((l: any) => l.range.start.line)).toEqual([2, 4]);
  });

  it("renames a pattern everywhere, after preparing the rename", async () => {
    const doc = await document("nav.vigil", at(text, "secret and path", 3));
    const prepared = await server.request("textDocument/prepareRename", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(prepared).toEqual({ range: { start: { line: 4, character: 52 }, end: { line: 4, character: 58 } }, placeholder: "secret" });
    const edit = await server.request("textDocument/rename", { textDocument: { uri: doc.uri }, position: doc.position, newName: "credential_read" });
    const change = edit.documentChanges[0];
    expect(change.textDocument).toEqual({ uri: doc.uri, version });
    const renamed = applyEdits(doc.text, change.edits);
    expect(renamed).toBe(text.replaceAll("secret", "credential_read"));
    const published = await server.change(doc.uri, renamed, ++version);
    expect(published.diagnostics).toEqual([]);
  });

  it("renames a variable within its rule, and a rule", async () => {
    const doc = await document("nav.vigil", at(text, "$u)", 1));
    const edit = await server.request("textDocument/rename", { textDocument: { uri: doc.uri }, position: doc.position, newName: "$target" });
    expect(applyEdits(doc.text, edit.documentChanges[0].edits)).toBe(text.replaceAll("$u", "$target"));
    const rule = await document("nav.vigil", at(text, "r1:", 1));
    const ruleEdit = await server.request("textDocument/rename", { textDocument: { uri: rule.uri }, position: rule.position, newName: "no_leak" });
    expect(applyEdits(rule.text, ruleEdit.documentChanges[0].edits)).toBe(text.replace("r1:", "no_leak:"));
  });

  it("refuses a name that is not one, or that is taken", async () => {
    const doc = await document("nav.vigil", at(text, "leak =", 1));
    await expect(server.request("textDocument/rename", { textDocument: { uri: doc.uri }, position: doc.position, newName: "not" })).rejects.toThrow("not a valid pattern name");
    await expect(server.request("textDocument/rename", { textDocument: { uri: doc.uri }, position: doc.position, newName: "secret" })).rejects.toThrow("the pattern `secret` already exists in `p`");
  });

  it("prepares no rename where there is no symbol", async () => {
    const doc = await document("nav.vigil", at(text, "read_file", 2));
    expect(await server.request("textDocument/prepareRename", { textDocument: { uri: doc.uri }, position: doc.position })).toBeNull();
  });
});

describe("outline, folding and highlighting", () => {
  it("lists policies with their patterns and rules", async () => {
    const doc = await document("release.vigil", `<|>${releaseText}`);
    const symbols = await server.request("textDocument/documentSymbol", { textDocument: { uri: doc.uri } });
    expect(symbols).toHaveLength(1);
    expect(symbols[0]).toMatchObject({ name: "release", kind: 3 });
    expect(symbols[0].children.map((c: any) => [c.name, c.kind, c.detail])).toEqual([
      ["read_secret", 14, 'action in {read_file} and path ~ "*.env"'],
      ["check_first", 24, "prec"],
      ["no_egress", 24, "always"],
      ["staged", 24, "prec"],
      ["no_prod_rollback", 24, "abs · warn"],
    ]);
  });

  it("folds the policy, multi-line rules and doc comments", async () => {
    const doc = await document("release.vigil", `<|>${releaseText}`);
    const ranges = await server.request("textDocument/foldingRange", { textDocument: { uri: doc.uri } });
    expect(ranges).toContainEqual({ startLine: 1, endLine: 18 });
    expect(ranges).toContainEqual({ startLine: 12, endLine: 15 });
    expect(ranges.find((r: any) => r.startLine === 0)).toBeUndefined();
  });

  it("tells names apart in semantic tokens", async () => {
    const doc = await document("release.vigil", `<|>${releaseText}`);
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const decoded = decodeSemanticTokens(tokens.data, doc.text);
    expect(decoded).toContainEqual(["release", "namespace"]);
    expect(decoded).toContainEqual(["read_secret", "type"]);
    expect(decoded).toContainEqual(["check_first", "function"]);
    expect(decoded).toContainEqual(["deploy", "enumMember"]);
    expect(decoded).toContainEqual(["env", "property"]);
    expect(decoded).toContainEqual(["$v", "variable"]);
    expect(decoded).toContainEqual(["prec", "keyword"]);
    expect(decoded).toContainEqual(['"prod"', "string"]);
    expect(decoded).toContainEqual(["/// Deployments by the release agent.", "comment"]);
    expect(decoded).toContainEqual(["warn", "keyword"]);
  });
});

const tokenTypes = ["namespace", "type", "function", "variable", "property", "enumMember", "string", "number", "keyword", "operator", "comment"];

function decodeSemanticTokens(data: number[], text: string): [string, string][] {
  const lines = text.split("\n");
  const result: [string, string][] = [];
  let line = 0;
  let character = 0;
  for (let index = 0; index < data.length; index += 5) {
    line += data[index]!;
    character = data[index]! === 0 ? character + data[index + 1]! : data[index + 1]!;
    result.push([lines[line]!.slice(character, character + data[index + 2]!), tokenTypes[data[index + 3]!]!]);
  }
  return result;
}

describe("formatting", () => {
  const messy = 'policy   p{\n/// doc\nrule r :abs( action in {b,a} and x in {1})   warn\n    pattern q=action in{z}\n}';

  it("formats exactly as `vigilc fmt`", async () => {
    const doc = await document("messy.vigil", `<|>${messy}`);
    const edits = await server.request("textDocument/formatting", { textDocument: { uri: doc.uri }, options: { tabSize: 2, insertSpaces: true } });
    const file = join(workspace, "messy.vigil");
    await writeFile(file, messy);
    const vigilc = spawnSync(process.execPath, [join(root, "packages/cli/dist/main.js"), "fmt", file], { encoding: "utf8", timeout: 60_000 });
    expect(vigilc.status).toBe(0);
    expect(applyEdits(doc.text, edits)).toBe(vigilc.stdout);
  });

  it("changes nothing in a formatted file", async () => {
    const doc = await document("release.vigil", `<|>${releaseText}`);
    expect(await server.request("textDocument/formatting", { textDocument: { uri: doc.uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual([]);
  });

  it("refuses a file with syntax errors, as `vigilc fmt` does", async () => {
    const doc = await document("messy.vigil", `<|>${messy.replace("abs(", "abs((")}`);
    expect(doc.diagnostics.some((d) => d.severity === 1)).toBe(true);
    expect(await server.request("textDocument/formatting", { textDocument: { uri: doc.uri }, options: { tabSize: 2, insertSpaces: true } })).toEqual([]);
  });
});

describe("quick fixes", () => {
  const cases: { code: string; text: string; title: string }[] = [
    { code: "V1101", text: "policy p {\n  rule r: abs(action in {deplyo})\n}\n", title: "replace with `deploy`" },
    { code: "V1102", text: 'policy p {\n  rule r: abs(action in {deploy} and evn in {"prod"})\n}\n', title: "replace with `env`" },
    { code: "V1103", text: 'policy p {\n  rule r: abs(action in {deploy} and "force" in {"true"})\n}\n', title: "replace with true" },
    { code: "V0007", text: "policy p {\n  rule r: abs(action in {deploy} and env in {prod})\n}\n", title: 'write `"prod"`' },
    { code: "V1105", text: "policy p {\n  /// stray\n\n  rule r: abs(action in {deploy})\n}\n", title: "make it a plain `//` comment" },
    { code: "V1106", text: 'policy p {\n  rule r: abs(action in {deploy}) warn ""\n}\n', title: "remove the empty message" },
    { code: "V1009", text: "policy p {\n  rule r: bresp(action in {deploy}, action in {check})\n}\n", title: "add a bound of 1" },
    { code: "V0001", text: "policy p {\n  rule r: abs(action in {deploy}\n}\n", title: "insert `)`" },
    { code: "V1001", text: "policy p {\n  pattern secret = action in {read_file}\n  rule r: abs(secrte)\n}\n", title: "replace with `secret`" },
    { code: "V0008", text: "policy p {\n  rule r: abs(action in {deploy}) deny\n}\n", title: "replace with `block`" },
    { code: "V0008", text: 'policy p {\n  rule r: abs(action in {deploy}) "Do not deploy."\n}\n', title: "insert `block`" },
    { code: "V0001", text: "policy p \n  rule r: abs(action in {deploy})\n}\n", title: "insert `{`" },
    { code: "V0001", text: "policy p {\n  rule r: abs(action in {deploy})\n", title: "insert `}`" },
  ];

  it.each(cases)("$code: $title, applied, leaves no new error", async ({ code, text, title }) => {
    const doc = await document("fix.vigil", `<|>${text}`);
    const target = doc.diagnostics.find((d) => d.code === code);
    expect(target).toBeDefined();
    const actions = await server.request("textDocument/codeAction", { textDocument: { uri: doc.uri }, range: target.range, context: { diagnostics: [target] } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ title, kind: "quickfix", isPreferred: true, diagnostics: [target] });
    const fixed = applyEdits(doc.text, actions[0].edit.documentChanges[0].edits);
    const published = await server.change(doc.uri, fixed, ++version);
    const errorsBefore = doc.diagnostics.filter((d) => d.severity === 1).length;
    const errorsAfter = published.diagnostics.filter((d: any) => d.severity === 1);
    expect(errorsAfter.length).toBeLessThanOrEqual(Math.max(0, errorsBefore - (target.severity === 1 ? 1 : 0)));
    expect(published.diagnostics.filter((d: any) => d.code === code && d.message === target.message)).toEqual([]);
  });

  it("takes the fix from the current version when the diagnostic is older", async () => {
    const doc = await document("fix.vigil", "<|>policy p {\n  rule r: abs(action in {deplyo})\n}\n");
    const target = doc.diagnostics.find((d) => d.code === "V1101");
    // The document gains a line above the diagnostic: its range is stale, its fix must not be.
    const shifted = `// a comment\n${doc.text}`;
    await server.change(doc.uri, shifted, ++version);
    const moved = { ...target, range: { start: { line: 2, character: target.range.start.character }, end: { line: 2, character: target.range.end.character } } };
    const actions = await server.request("textDocument/codeAction", { textDocument: { uri: doc.uri }, range: moved.range, context: { diagnostics: [moved] } });
    expect(applyEdits(shifted, actions[0].edit.documentChanges[0].edits)).toBe(shifted.replace("deplyo", "deploy"));
  });
});
