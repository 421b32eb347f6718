import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEdits, copyFixture, cursor, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The editing features on comparisons, `every(KEY)`, `some(KEY)` and `count(KEY)` over JSON-RPC:
 * hovers that say the condition in words, completion of the words, of the keys inside their
 * parentheses and of the operators after them, highlighting (the words are keywords only before
 * `(KEY)`), and the quick fix of V1109, against a sample trace whose `to`, `tags` and `passengers`
 * hold lists.
 */

let server: TestServer;
let workspace: string;
let version = 1;
const opened = new Set<string>();

beforeAll(async () => {
  workspace = await copyFixture("conditions");
  server = await TestServer.start({ folders: [workspace] });
  // The samples are read once the first document is open.
  await server.open(uriOf(join(workspace, "warmup.vigil")), "policy warmup {\n  rule r: abs(action in {book})\n}\n", 1);
  await server.waitFor("vigil/status", (params) => String(params.text).includes("1 sample trace"), 20_000, 0);
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

const mail = `policy mail {
  rule internal: always action in {send_email} implies every(to) ~ "*@acme.com"
  rule tagged: abs(action in {book} and not some(tags) in {"travel"})
  rule small: abs(action in {book} and count(passengers) <= 5 and amount > 100)
  rule refunds: abs(action in {refund} and every(amount) != 0 and some(amount) >= -1.5e2) warn
}
`;

describe("hover", () => {
  async function hoverAt(marked: string, name = "mail.vigil"): Promise<{ text: string; range: any } | null> {
    const doc = await document(name, marked);
    const hover = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
    if (hover === null) return null;
    expect(hover.contents.kind).toBe("markdown");
    return { text: hover.contents.value as string, range: hover.range };
  }

  it("on `every`: the condition in words, for every value and on an event without the key", async () => {
    const hover = await hoverAt(at(mail, "every(to)", 2));
    expect(hover!.text).toMatch(/^`every\(to\) ~ "\*@acme\.com"` holds on an event when `to` has a value and every value under it \(each element of a list\) matches `\*@acme\.com`; on an event without `to`/);
    expect(hover!.text).toContain("`null` and an object are no text, and one such value makes the condition false.");
    // The range is the word.
    expect(hover!.range).toEqual({ start: { line: 1, character: 55 }, end: { line: 1, character: 60 } });
  });

  it("on `some`: the same as the plain condition, with the set's values", async () => {
    const text = (await hoverAt(at(mail, "some(tags)", 1)))!.text;
    expect(text).toMatch(/^`some\(tags\) in \{"travel"\}` holds on an event when some value under `tags` \(an element of a list counts\) is `"travel"`; on an event without `tags`, it does not hold\./);
    expect(text).toContain("`some(tags)` is the same as the condition written without a word");
  });

  it("on a comparison's operator: numbers and strings spelling them, compared exactly; any other value never", async () => {
    const text = (await hoverAt(at(mail, "> 100")))!.text;
    expect(text).toMatch(/^`amount > 100` holds on an event when some value under `amount` \(an element of a list counts\) is a number \(or a string spelling one, such as "150\.00"\) greater than 100, compared exactly/);
    expect(text).toContain("never compares, not even with `!=`; a text or a missing key never satisfies it.");
    expect(text).toContain("With `every(amount)`, every value must meet it");
    const every = (await hoverAt(at(mail, "!= 0")))!.text;
    expect(every).toMatch(/^`every\(amount\) != 0` holds on an event when `amount` has a value and every value under it \(each element of a list\) is a number .* different from 0, compared exactly/);
    expect(every).toContain("one such value under the key makes the condition false.");
    expect((await hoverAt(at(mail, ">= -1.5e2", 1)))!.text).toMatch(/^`some\(amount\) >= -1\.5e2` holds on an event when some value under `amount` .* at least -1\.5e2, compared exactly/);
  });

  it("on `count` and on its operator: the number of values, a list's elements, 0 when missing", async () => {
    for (const marker of ["count(", "<= 5"]) {
      const hover = await hoverAt(at(mail, marker, 1));
      expect(hover!.text).toMatch(/^`count\(passengers\) <= 5` holds on an event when the number of values under `passengers` — a list's elements, 0 when it is missing — is at most 5\./);
      expect(hover!.text).toContain("A single value counts 1");
    }
    const onWord = await hoverAt(at(mail, "count(", 2));
    expect(onWord!.range).toEqual({ start: { line: 3, character: 39 }, end: { line: 3, character: 44 } });
  });

  it("on the key inside the parentheses: the argument, as for a plain key", async () => {
    const text = (await hoverAt(at(mail, "passengers)", 2)))!.text;
    expect(text).toContain("**argument** `passengers`");
    expect(text).toContain("A list in the samples, of up to 2 elements");
  });

  it("on a word or an operator the tree has no condition for yet: what it means", async () => {
    const text = (await hoverAt("policy t {\n  rule r: abs(ev<|>ery(\n}\n", "typing.vigil"))!.text;
    expect(text).toMatch(/^`every\(KEY\) COND`: the key has a value and every value under it/);
    const operator = await hoverAt("policy t {\n  rule r: abs(amount <<|>= )\n}\n", "typing.vigil");
    expect(operator!.text).toBe("`KEY <= N`: some value of the argument is a number (or a string spelling one) at most N, compared exactly; any other value, and a missing key, never is.");
  });
});

describe("completion", () => {
  async function list(marked: string): Promise<any[]> {
    const doc = await document("draft.vigil", marked);
    const result = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
    return result.items;
  }
  const labels = async (marked: string) => (await list(marked)).map((item) => item.label);
  const comparisons = ["< N", "<= N", "> N", ">= N", "= N", "!= N"];

  it("offers `every(…)`, `some(…)` and `count(…)` as snippets where a condition starts", async () => {
    const items = await list("policy draft {\n  rule r: abs(<|>\n}\n");
    for (const word of ["every", "some", "count"]) {
      const item = items.find((candidate) => candidate.label === `${word}(…)`);
      expect(item).toMatchObject({ filterText: word, insertTextFormat: 2, textEdit: { newText: `${word}(\${1:key}) \${2}` } });
    }
    expect(items.find((item) => item.label === "every(…)").detail).toMatch(/^`every\(KEY\) COND`: the key has a value and every value under it/);
    expect(await labels("policy draft {\n  rule r: always action in {book} implies not ev<|>\n}\n")).toEqual(expect.arrayContaining(["every(…)", "some(…)", "count(…)"]));
    expect(await labels("policy draft {\n  pattern p = <|>\n}\n")).toEqual(expect.arrayContaining(["every(…)", "some(…)", "count(…)"]));
  });

  it("offers the keys inside the parentheses, those holding lists first", async () => {
    const keys = await list("policy draft {\n  rule r: abs(every(<|>\n}\n");
    expect(keys.slice(0, 3).map((item) => item.label).sort()).toEqual(["passengers", "tags", "to"]);
    expect(keys[0].detail).toMatch(/^argument holding lists \(every\)/);
    expect(keys.map((item) => item.label)).toEqual(expect.arrayContaining(["amount", "subject"]));
    expect(await labels("policy draft {\n  rule r: abs(count(pa<|>\n}\n")).toContain("passengers");
    expect(await labels("policy draft {\n  rule r: abs(some(passengers.<|>\n}\n")).toEqual(expect.arrayContaining(["name", "age", "0", "1"]));
    // Before the closing parenthesis, nothing.
    expect(await labels("policy draft {\n  rule r: abs(every(to <|>\n}\n")).toEqual([]);
  });

  it("offers a condition's operators after `every(KEY)` and `some(KEY)` (no `= $x`), and the comparisons after `count(KEY)`", async () => {
    expect(await labels("policy draft {\n  rule r: abs(every(to) <|>\n}\n")).toEqual(["in {…}", '~ "…"', "matches /…/", "contains $x", ...comparisons]);
    expect(await labels("policy draft {\n  rule r: abs(not some(tags) <|>\n}\n")).toEqual(["in {…}", '~ "…"', "matches /…/", "contains $x", ...comparisons]);
    const counted = await list("policy draft {\n  rule r: abs(count(passengers) <|>\n}\n");
    expect(counted.map((item) => item.label)).toEqual(comparisons);
    expect(counted[1]).toMatchObject({ filterText: "<=", textEdit: { newText: "<= ${1:0}" }, detail: "the number of values under the key is at most N" });
  });

  it("offers the comparisons after a plain key, beside the other operators", async () => {
    const items = await list("policy draft {\n  rule r: abs(action in {book} and amount <|>\n}\n");
    expect(items.map((item) => item.label)).toEqual(expect.arrayContaining(["in {…}", "= $x", ...comparisons, "and"]));
    expect(items.find((item) => item.label === "> N").detail).toBe("some value of the argument is a number (or a string spelling one) greater than N");
  });

  it("offers the key's values after `every(KEY) in {` and `some(KEY) ~`", async () => {
    expect(await labels('policy draft {\n  rule r: abs(every(tags) in {<|>\n}\n')).toEqual(expect.arrayContaining(['"travel"', '"urgent"', '"refund"']));
    expect(await labels("policy draft {\n  rule r: abs(some(to) ~ <|>\n}\n")).toEqual(expect.arrayContaining(['"*"', '"ann@acme.com"', '"carl@acme.com"']));
  });
});

describe("signature help", () => {
  it("shows the form's signature inside `every(…)`, with the operand it is in", async () => {
    const doc = await document("draft.vigil", "policy d {\n  rule r: prec(action in {a}, every(<|>\n}\n");
    const help = await server.request("textDocument/signatureHelp", { textDocument: { uri: doc.uri }, position: doc.position });
    expect(help.signatures[0].label).toBe("prec(ψ trigger, ψ' required before)");
    expect(help.activeParameter).toBe(1);
  });
});

describe("semantic tokens", () => {
  it("make `every`, `some` and `count` keywords before `(KEY)` and names elsewhere, the comparisons operators, and the keys properties", async () => {
    const text = "policy p {\n  rule r: abs(every(to) ~ \"*@acme.com\" and count(passengers) <= 5 and amount > 100 and count < 2 and some(every) != 1)\n}\n";
    const doc = await document("tokens.vigil", `<|>${text}`);
    expect(doc.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const decoded = decodeSemanticTokens(tokens.data, doc.text);
    const of = (word: string) => decoded.filter(([token]) => token === word).map(([, type]) => type);
    expect(of("every")).toEqual(["keyword", "property"]);
    expect(of("some")).toEqual(["keyword"]);
    expect(of("count")).toEqual(["keyword", "property"]);
    for (const key of ["to", "passengers", "amount"]) expect(of(key)).toEqual(["property"]);
    for (const operator of ["<=", ">", "<", "!=", "~"]) expect(of(operator)).toEqual(["operator"]);
  });
});

describe("the quick fix of V1109", () => {
  it("turns a negated condition on a list into `every(KEY)`, and the warning goes", async () => {
    const doc = await document("fix.vigil", '<|>policy p {\n  rule r: abs(action in {book} and not (tags in {"travel"}))\n}\n');
    const target = doc.diagnostics.find((d) => d.code === "V1109");
    expect(target).toBeDefined();
    const actions = await server.request("textDocument/codeAction", { textDocument: { uri: doc.uri }, range: target.range, context: { diagnostics: [target] } });
    expect(actions).toHaveLength(1);
    expect(actions[0]).toMatchObject({ title: 'say "some element does not meet it": `every(tags)`', kind: "quickfix", isPreferred: true, diagnostics: [target] });
    const fixed = applyEdits(doc.text, actions[0].edit.documentChanges[0].edits);
    expect(fixed).toBe('policy p {\n  rule r: abs(action in {book} and not (every(tags) in {"travel"}))\n}\n');
    const published = await server.change(doc.uri, fixed, ++version);
    expect(published.diagnostics.filter((d: any) => d.severity === 1 || d.code === "V1109")).toEqual([]);
  });
});

const tokenTypes = ["namespace", "type", "function", "variable", "property", "enumMember", "string", "number", "keyword", "operator", "comment", "regexp"];

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
