import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { copyFixture, cursor, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * List indexes in the editor (`argv.0`), against sample traces whose `argv` holds lists: completion
 * offers the indexes after `argv.`, hover says what an index reads, the closed-world check knows
 * them, and semantic tokens show an index as a number.
 */

let server: TestServer;
let workspace: string;
let version = 1;

beforeAll(async () => {
  workspace = await copyFixture("lists");
  server = await TestServer.start({ folders: [workspace] });
  // The samples are read once the first document is open.
  await server.open(uriOf(join(workspace, "warmup.vigil")), "policy warmup {\n  rule r: abs(action in {rm})\n}\n", 1);
  await server.waitFor("vigil/status", (params) => String(params.text).includes("1 sample trace"), 20_000, 0);
});
afterAll(async () => {
  await server?.close();
});

const opened = new Set<string>();
async function document(marked: string): Promise<{ uri: string; text: string; position: { line: number; character: number }; diagnostics: any[] }> {
  const uri = uriOf(join(workspace, "draft.vigil"));
  const { text, position } = cursor(marked);
  version++;
  const published = opened.has(uri) ? await server.change(uri, text, version) : await server.open(uri, text, version);
  opened.add(uri);
  return { uri, text, position, diagnostics: published.diagnostics };
}

async function labels(marked: string): Promise<string[]> {
  const doc = await document(marked);
  const list = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
  return list.items.map((item: any) => item.label);
}

async function hover(marked: string): Promise<string> {
  const doc = await document(marked);
  const answer = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
  return answer.contents.value as string;
}

describe("list indexes in the editor", () => {
  it("completes the indexes of a list after `KEY.`, and the names and indexes under a list of objects", async () => {
    expect(await labels("policy draft {\n  rule r: abs(argv.<|>)\n}\n")).toEqual(["0", "1", "2"]);
    expect(await labels("policy draft {\n  rule r: abs(argv.1<|>)\n}\n")).toEqual(["0", "1", "2"]);
    expect(await labels("policy draft {\n  rule r: abs(items.<|>)\n}\n")).toEqual(["id", "0"]);
    expect(await labels("policy draft {\n  rule r: abs(items.0.<|>)\n}\n")).toEqual(["id", "0"]);
  });

  it("completes the operators after an index, and the values of the list after `in {`", async () => {
    expect(await labels("policy draft {\n  rule r: abs(argv.0 <|>\n}\n")).toEqual(expect.arrayContaining(["in {…}", '~ "…"', "= $x"]));
    expect(await labels("policy draft {\n  rule r: abs(argv.0 in {<|>\n}\n")).toEqual(expect.arrayContaining(['"push"', '"-rf"']));
  });

  it("says on hover what an index reads, and how long the lists are", async () => {
    const element = await hover('policy draft {\n  rule r: abs(argv.<|>0 in {"push"})\n}\n');
    expect(element).toContain("**argument** `argv.0`");
    expect(element).toContain("An element of a list (index 0, counted from 0)");
    const list = await hover('policy draft {\n  rule r: abs(ar<|>gv in {"push"})\n}\n');
    expect(list).toContain("A list in the samples, of up to 3 elements: `argv.0` is its first.");
  });

  it("checks an index against the samples' lists, and shows it as a number", async () => {
    const doc = await document('<|>policy draft {\n  rule r: abs(argv.2 in {"origin"} or argv.3 in {"x"})\n}\n');
    expect(doc.diagnostics.map((d) => `${d.code} ${d.message}`)).toEqual([
      "V1102 no event of the trace has an argument `argv.3`: the longest list under `argv` has 3 elements, so a condition on it is false\nhelp: its elements are numbered from 0 to 2",
    ]);
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const legend = ["namespace", "type", "function", "variable", "property", "enumMember", "string", "number", "keyword", "operator", "comment"];
    const line = doc.text.split("\n")[1]!;
    const kinds: [string, string][] = [];
    let character = 0;
    let row = 0;
    for (let index = 0; index < tokens.data.length; index += 5) {
      row += tokens.data[index];
      character = tokens.data[index] === 0 ? character + tokens.data[index + 1] : tokens.data[index + 1];
      if (row === 1) kinds.push([line.slice(character, character + tokens.data[index + 2]), legend[tokens.data[index + 3]]!]);
    }
    expect(kinds).toEqual(expect.arrayContaining([["argv", "property"], ["2", "number"], ["3", "number"]]));
  });
});
