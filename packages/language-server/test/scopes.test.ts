import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEdits, copyFixture, cursor, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The editing features on scoped rules (`after ψ`, `before ψ`, `between ψ and ψ'`, `after ψ until
 * ψ'`) over JSON-RPC: highlighting of the scope's words (contextual: names elsewhere), completion of
 * the scopes after a statement and of patterns inside one, hovers, formatting, navigation and rename
 * of a pattern used in a scope, signature help and the outline.
 */

let server: TestServer;
let workspace: string;
let version = 1;
const opened = new Set<string>();

beforeAll(async () => {
  workspace = await copyFixture("workspace");
  server = await TestServer.start({ folders: [workspace] });
});
afterAll(async () => {
  await server?.close();
});

async function document(name: string, marked: string): Promise<{ uri: string; text: string; position: { line: number; character: number }; diagnostics: any[] }> {
  const uri = uriOf(join(workspace, name));
  const { text, position } = cursor(marked);
  version++;
  const published = opened.has(uri) ? await server.change(uri, text, version) : await server.open(uri, text, version);
  opened.add(uri);
  return { uri, text, position, diagnostics: published.diagnostics };
}

/** The text with a cursor before the `occurrence`-th (from 1) `marker`, moved by `shift`. */
function at(text: string, marker: string, shift = 0, occurrence = 1): string {
  let index = -1;
  for (let count = 0; count < occurrence; count++) {
    index = text.indexOf(marker, index + 1);
    if (index < 0) throw new Error(`no ${marker} #${occurrence} in the text`);
  }
  return `${text.slice(0, index + shift)}<|>${text.slice(index + shift)}`;
}

const scoped = `policy scoped {
  /// Deploying to prod.
  pattern skill = action in {deploy} and env in {"prod"}
  pattern after = action in {check}

  /// Checks come first once deploying has started.
  rule first: prec(action in {check}, after) after skill
  rule quiet: abs(action in {http_post}) before action in {check} warn
  rule paired: resp(action in {read_file}, action in {check}) between (skill and version in {"1.2.0"}) and action in {rollback}
  rule locked: always not action in {http_post} after skill until action in {check} ask
}
`;

describe("semantic tokens", () => {
  it("make a scope's words keywords, and a pattern named `after` a pattern", async () => {
    const doc = await document("scoped.vigil", `<|>${scoped}`);
    expect(doc.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const decoded = decodeSemanticTokens(tokens.data, doc.text);
    const of = (word: string) => decoded.filter(([text]) => text === word).map(([, type]) => type);
    // `pattern after` (declared), `prec(…, after)` (used): a pattern; the three scopes' `after`: keywords.
    expect(of("after")).toEqual(["type", "type", "keyword", "keyword"]);
    expect(of("before")).toEqual(["keyword"]);
    expect(of("between")).toEqual(["keyword"]);
    expect(of("until")).toEqual(["keyword"]);
    expect(of("skill")).toEqual(["type", "type", "type", "type"]);
    expect(decoded).toContainEqual(["rollback", "enumMember"]);
    expect(decoded).toContainEqual(["ask", "keyword"]);
  });
});

describe("completion", () => {
  async function list(marked: string): Promise<any[]> {
    const doc = await document("draft.vigil", marked);
    const result = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
    return result.items;
  }
  const labels = async (marked: string) => (await list(marked)).map((item) => item.label);
  const scopes = ["after ψ", "before ψ", "between ψ and ψ'", "after ψ until ψ'"];

  it("offers the scopes as snippets after a form's operands, before the responses", async () => {
    const items = await list("policy draft {\n  rule r: abs(action in {deploy}) <|>\n}\n");
    expect(items.slice(0, 4).map((item) => [item.label, item.filterText, item.textEdit.newText, item.insertTextFormat])).toEqual([
      ["after ψ", "after", "after ${1:ψ}", 2],
      ["before ψ", "before", "before ${1:ψ}", 2],
      ["between ψ and ψ'", "between", "between ${1:ψ} and ${2:ψ'}", 2],
      ["after ψ until ψ'", "after", "after ${1:ψ} until ${2:ψ'}", 2],
    ]);
    expect(items[0].detail).toBe("judged from the first event matching ψ on");
    expect(items.map((item) => item.label)).toEqual(expect.arrayContaining(['block "…"', "warn", "ask", "rule", "pattern"]));
  });

  it("offers them while one is typed, replacing the word", async () => {
    const items = await list("policy draft {\n  rule r: abs(action in {deploy}) betw<|>\n}\n");
    const between = items.find((item) => item.label === "between ψ and ψ'");
    expect(between.textEdit.range).toEqual({ start: { line: 1, character: 34 }, end: { line: 1, character: 38 } });
    const whole = await labels("policy draft {\n  rule r: abs(action in {deploy}) after<|>\n}\n");
    expect(whole).toEqual(expect.arrayContaining(scopes));
  });

  it("offers them after an `always` body, and not inside a form's operands", async () => {
    expect(await labels("policy draft {\n  rule r: always not action in {deploy} <|>\n}\n")).toEqual(expect.arrayContaining([...scopes, "and", "warn"]));
    const inside = await labels("policy draft {\n  rule r: abs(action in {deploy} <|>\n}\n");
    expect(inside.filter((label) => scopes.includes(label))).toEqual([]);
  });

  it("offers the patterns, keys and atoms in a scope's pattern", async () => {
    const operand = ["action in {…}", "status = ok", 'output ~ "…"', "not", "secret", "env", "version", "path"];
    const preamble = "policy draft {\n  pattern secret = action in {read_file}\n";
    const after = await labels(`${preamble}  rule r: abs(action in {deploy}) after <|>\n}\n`);
    expect(after).toEqual(expect.arrayContaining(operand));
    expect(after).not.toContain("once");
    expect(after).not.toContain("after ψ");
    expect(await labels(`${preamble}  rule r: abs(action in {deploy}) between secret and <|>\n}\n`)).toEqual(expect.arrayContaining(operand));
    expect(await labels(`${preamble}  rule r: always not secret after action in {check} until <|>\n}\n`)).toEqual(expect.arrayContaining(operand));
    expect(await labels(`${preamble}  rule r: abs(action in {deploy}) before (<|>\n}\n`)).toEqual(expect.arrayContaining(operand));
    expect(await labels(`${preamble}  rule r: abs(action in {deploy}) after sec<|>\n}\n`)).toEqual(expect.arrayContaining(["secret"]));
  });

  it("the samples' actions, values and key operators in a scope", async () => {
    expect(await labels("policy draft {\n  rule r: abs(action in {deploy}) after action in {<|>\n}\n")).toEqual(["deploy", "read_file", "check", "http_post", "rollback"]);
    expect(await labels("policy draft {\n  rule r: abs(action in {deploy}) before action in {check} and env in {<|>\n}\n")).toEqual(['"staging"', '"prod"']);
    expect(await labels("policy draft {\n  rule r: abs(action in {deploy}) after env <|>\n}\n")).toEqual(expect.arrayContaining(["in {…}", '~ "…"', "= $x"]));
  });

  it("after a scope's pattern: the word that ends it, the connectives, a response, no second scope", async () => {
    const after = await list("policy draft {\n  rule r: abs(action in {deploy}) after action in {check} <|>\n}\n");
    expect(after.map((item) => item.label)).toEqual(expect.arrayContaining(["until", "and", "or", "warn", "rule"]));
    expect(after.find((item) => item.label === "until").detail).toContain("ends the first pattern");
    expect(after.map((item) => item.label).filter((label) => scopes.includes(label) || label === "implies")).toEqual([]);
    const between = await list("policy draft {\n  rule r: abs(action in {deploy}) between action in {check} <|>\n}\n");
    expect(between.find((item) => item.label === "and").detail).toContain("ends the first pattern");
    expect(between.map((item) => item.label)).not.toContain("until");
    const closed = await list("policy draft {\n  rule r: abs(action in {deploy}) between action in {check} and action in {deploy} <|>\n}\n");
    expect(closed.find((item) => item.label === "and").detail).toBe("`ψ and ψ'`: both hold at this event.");
    const until = await labels("policy draft {\n  rule r: abs(action in {deploy}) after action in {check} until action in {deploy} <|>\n}\n");
    expect(until).not.toContain("until");
    expect(until).toEqual(expect.arrayContaining(["warn", "ask"]));
    expect(await labels("policy draft {\n  rule r: abs(action in {deploy}) before action in {check} <|>\n}\n")).not.toContain("until");
  });
});

describe("hover", () => {
  async function hoverText(marked: string): Promise<string> {
    const doc = await document("scoped.vigil", marked);
    const hover = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(hover?.contents.kind).toBe("markdown");
    return hover.contents.value as string;
  }

  it("on a scope's word: where the rule is judged", async () => {
    expect(await hoverText(at(scoped, ") after skill", 3))).toBe(
      "**after ψ**: the rule is judged from the first event matching ψ (included) to the end of the run; before it, nothing is judged.\n\n`after` is not reserved: it starts a scope only right after a statement.",
    );
    expect(await hoverText(at(scoped, "before action", 2))).toContain(
      "**before ψ**: the rule is judged from the start of the run up to the first event matching ψ (excluded), or on the whole run if no event does.",
    );
    expect(await hoverText(at(scoped, "between", 1))).toContain("**between ψ and ψ'**: the rule is judged on each stretch from an event matching ψ (included) to the next event matching ψ' (excluded)");
    expect(await hoverText(at(scoped, "after skill until", 1))).toContain("**after ψ until ψ'**:");
  });

  it("on the `and` of `between` and the `until` of `after`, the scope; elsewhere, the connective and the form", async () => {
    expect(await hoverText(at(scoped, ") and action in {rollback}", 3))).toBe(
      "**between ψ and ψ'**: the rule is judged on each stretch from an event matching ψ (included) to the next event matching ψ' (excluded), each as a run of its own; a stretch that never closes is not judged.",
    );
    expect(await hoverText(at(scoped, "until action", 1))).toContain("the stretch still open at the end is judged too");
    expect(await hoverText(at(scoped, "and version", 1))).toBe("`ψ and ψ'`: both hold at this event.");
    const form = await document("form.vigil", "policy f {\n  rule u: unt<|>il(action in {a}, action in {b}, action in {c}) after action in {d} until action in {e}\n}\n");
    const hover = await server.request("textDocument/hover", { textDocument: { uri: form.uri }, position: form.position });
    expect(hover.contents.value).toContain("`until` holds when after every event matching ψ");
  });

  it("on a scope word still being typed", async () => {
    const doc = await document("typing.vigil", "policy t {\n  rule r: abs(action in {a}) bef<|>ore\n}\n");
    const hover = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(hover.contents.value).toContain("**before ψ**");
    expect(hover.range).toEqual({ start: { line: 1, character: 29 }, end: { line: 1, character: 35 } });
  });

  it("on a rule: its scope with its patterns", async () => {
    const first = await hoverText(at(scoped, "first:", 1));
    expect(first).toContain("**scope** `after skill`: the rule is judged from the first event matching `skill` (included) to the end of the run; before it, nothing is judged.");
    expect(first.indexOf("**scope**")).toBeLessThan(first.indexOf("**response**"));
    const paired = await hoverText(at(scoped, "resp(", 1));
    expect(paired).toContain(
      '**scope** `between (skill and version in {"1.2.0"}) and action in {rollback}`: the rule is judged on each stretch from an event matching `skill and version in {"1.2.0"}` (included) to the next event matching `action in {rollback}` (excluded)',
    );
    const locked = await hoverText(at(scoped, "locked:", 1));
    expect(locked).toContain("**scope** `after skill until action in {check}`:");
    expect(locked).toContain("the stretch still open at the end is judged too.");
  });
});

describe("formatting", () => {
  const messy =
    'policy   scoped{\npattern skill=action in{deploy}\nrule r :prec( action in {deploy},action in {check})  after   skill until action in {check}   warn\nrule s: abs(action in {rollback}) between (skill and env in {"prod"}) and action in {check}\nrule t: always not action in {http_post} before action in {check}\n}';
  const formatted = [
    "policy scoped {",
    "  pattern skill = action in {deploy}",
    "  rule r: prec(action in {deploy}, action in {check}) after skill until action in {check} warn",
    '  rule s: abs(action in {rollback}) between (skill and env in {"prod"}) and action in {check}',
    "  rule t: always not action in {http_post} before action in {check}",
    "}",
    "",
  ].join("\n");

  it("prints scoped rules canonically, and then changes nothing", async () => {
    const doc = await document("format.vigil", `<|>${messy}`);
    const options = { tabSize: 2, insertSpaces: true };
    const edits = await server.request("textDocument/formatting", { textDocument: { uri: doc.uri }, options });
    expect(applyEdits(doc.text, edits)).toBe(formatted);
    const again = await document("format.vigil", `<|>${formatted}`);
    expect(again.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    expect(await server.request("textDocument/formatting", { textDocument: { uri: again.uri }, options })).toEqual([]);
  });
});

describe("definition, references and rename of a pattern used in a scope", () => {
  it("goes from a scope's pattern to its declaration", async () => {
    const doc = await document("scoped.vigil", at(scoped, "skill\n", 1));
    const location = await server.request("textDocument/definition", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(location).toEqual({ uri: doc.uri, range: { start: { line: 2, character: 10 }, end: { line: 2, character: 15 } } });
  });

  it("finds the references in scopes", async () => {
    const doc = await document("scoped.vigil", at(scoped, "skill =", 1));
    const all = await server.request("textDocument/references", { textDocument: { uri: doc.uri }, position: doc.position, context: { includeDeclaration: false } });
    expect(all.map((location: any) => location.range.start.line)).toEqual([6, 8, 9]);
  });

  it("renames a pattern in the scopes, and one named like a scope word", async () => {
    const doc = await document("scoped.vigil", at(scoped, "skill until", 1));
    const edit = await server.request("textDocument/rename", { textDocument: { uri: doc.uri }, position: doc.position, newName: "deploying" });
    const renamed = applyEdits(doc.text, edit.documentChanges[0].edits);
    expect(renamed).toBe(scoped.replace(/\bskill\b/g, "deploying"));
    expect((await server.change(doc.uri, renamed, ++version)).diagnostics.filter((d: any) => d.severity === 1)).toEqual([]);
    // The pattern `after`: its declaration and its use in an operand, never the scopes' words.
    const named = await document("scoped.vigil", at(scoped, "after =", 1));
    const references = await server.request("textDocument/references", { textDocument: { uri: named.uri }, position: named.position, context: { includeDeclaration: true } });
    expect(references.map((location: any) => [location.range.start.line, location.range.start.character])).toEqual([
      [3, 10],
      [6, 38],
    ]);
    const renameAfter = await server.request("textDocument/rename", { textDocument: { uri: named.uri }, position: named.position, newName: "checked" });
    expect(applyEdits(named.text, renameAfter.documentChanges[0].edits)).toBe(scoped.replace("pattern after", "pattern checked").replace(", after)", ", checked)"));
  });
});

describe("signature help and outline", () => {
  it("shows no form's signature in a scope's parentheses", async () => {
    const doc = await document("draft.vigil", "policy draft {\n  rule r: until(action in {a}, action in {b}, action in {c}) after action in {d} until (action in {e}, <|>\n}\n");
    expect(await server.request("textDocument/signatureHelp", { textDocument: { uri: doc.uri }, position: doc.position })).toBeNull();
  });

  it("names each rule's scope in the outline", async () => {
    const doc = await document("scoped.vigil", `<|>${scoped}`);
    const symbols = await server.request("textDocument/documentSymbol", { textDocument: { uri: doc.uri } });
    expect(symbols[0].children.map((child: any) => [child.name, child.detail])).toEqual([
      ["skill", 'action in {deploy} and env in {"prod"}'],
      ["after", "action in {check}"],
      ["first", "prec · after"],
      ["quiet", "abs · before · warn"],
      ["paired", "resp · between"],
      ["locked", "always · after … until · ask"],
    ]);
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
