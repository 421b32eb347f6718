import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyEdits, copyFixture, cursor, TestServer, uriOf } from "./support/lsp-client.js";

/**
 * The editing features on time and counts (docs/language.md, "Time and counts") over JSON-RPC:
 * `limit[N per D](ψ)`, `limit[X of KEY per D](ψ)`, `bresp[5m]`, `once[1h]` and `eventually[30s]`.
 * `limit`, `of` and `per` are contextual words (keywords in their places, names elsewhere) and a
 * duration is a number token: highlighting, completion in the brackets, hovers, signature help and
 * formatting, against a sample trace of payments.
 */

let server: TestServer;
let workspace: string;
let version = 1;
const opened = new Set<string>();

beforeAll(async () => {
  workspace = await copyFixture("limits");
  server = await TestServer.start({ folders: [workspace] });
  // The samples are read once the first document is open.
  await server.open(uriOf(join(workspace, "warmup.vigil")), "policy warmup {\n  rule r: abs(action in {refund})\n}\n", 1);
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

const rates = `policy rates {
  /// Named like the form, used as a pattern: a name.
  pattern limit = action in {refund} and per in {"order"}

  /// At most 10 fetches a minute.
  rule fetch_rate: limit[10 per 1m](action in {web_fetch})
  /// At most three transfers a day to each recipient.
  rule transfers: limit[3 per 1d](action in {send_money} and recipient = $r) ask "Wait until tomorrow."
  /// Refunds add up to 500 a day at most.
  rule refunds: limit[500 of amount per 1d](limit) warn
  /// A refund is followed by a balance check within five minutes.
  rule checked: bresp[5m](action in {refund}, action in {get_balance})
  /// No transfer within an hour of a refund, and every transfer is fetched within 30 seconds.
  rule cooled: always not (action in {send_money} and once[1h] action in {refund})
  rule fetched: always (action in {send_money} implies eventually[30s] action in {web_fetch})
}
`;

describe("semantic tokens", () => {
  it("make `limit` a keyword where it starts a statement, `of` and `per` keywords in a bound, durations numbers, and the summed key a property", async () => {
    const doc = await document("rates.vigil", `<|>${rates}`);
    expect(doc.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const decoded = decodeSemanticTokens(tokens.data, doc.text);
    const of = (word: string) => decoded.filter(([text]) => text === word).map(([, type]) => type);
    // `pattern limit` (declared), the three forms, `limit` used as the pattern of `refunds`.
    expect(of("limit")).toEqual(["type", "keyword", "keyword", "keyword", "type"]);
    // The key `per` in the pattern, then the three bounds' `per`.
    expect(of("per")).toEqual(["property", "keyword", "keyword", "keyword"]);
    expect(of("of")).toEqual(["keyword"]);
    expect(of("amount")).toEqual(["property"]);
    for (const duration of ["1m", "1d", "5m", "1h", "30s"]) expect(of(duration)).toEqual(duration === "1d" ? ["number", "number"] : ["number"]);
    expect(of("10")).toEqual(["number"]);
    expect(of("once")).toEqual(["keyword"]);
  });

  it("mark a `limit` being typed, and leave a misspelled form a name", async () => {
    const doc = await document("typing.vigil", "<|>policy t {\n  rule r: limit[3 per 1m](\n  rule s: limt[3 per 1m](action in {a})\n}\n");
    const tokens = await server.request("textDocument/semanticTokens/full", { textDocument: { uri: doc.uri } });
    const decoded = decodeSemanticTokens(tokens.data, doc.text);
    expect(decoded.filter(([text]) => text === "limit")).toEqual([["limit", "keyword"]]);
    expect(decoded.filter(([text]) => text === "limt")).toEqual([]);
    expect(decoded.filter(([text]) => text === "per").map(([, type]) => type)).toEqual(["keyword", "keyword"]);
  });
});

describe("completion", () => {
  async function list(marked: string): Promise<any[]> {
    const doc = await document("draft.vigil", marked);
    const result = await server.request("textDocument/completion", { textDocument: { uri: doc.uri }, position: doc.position });
    return result.items;
  }
  const labels = async (marked: string) => (await list(marked)).map((item) => item.label);
  const durations = ["500ms", "30s", "1m", "5m", "15m", "1h", "1d"];

  it("offers `limit` among the forms, as a snippet", async () => {
    const items = await list("policy draft {\n  rule r: <|>\n}\n");
    const limit = items.find((item) => item.filterText === "limit");
    expect(limit).toMatchObject({ label: "limit[N per D](ψ counted)", insertTextFormat: 2, textEdit: { newText: "limit[${1:3} per ${2:1m}](${3:ψ})" } });
    expect(limit.detail).toBe("holds when at most N events match ψ (a limit; per value of each variable ψ binds)");
    expect(items.map((item) => item.filterText)).toEqual(["abs", "prec", "resp", "bresp", "rslv", "until", "always", "limit"]);
    const typed = await list("policy draft {\n  rule r: lim<|>\n}\n");
    expect(typed.find((item) => item.filterText === "limit").textEdit.range).toEqual({ start: { line: 1, character: 10 }, end: { line: 1, character: 13 } });
  });

  it("offers durations in the brackets of `bresp`, `once` and `eventually`, and after `per`", async () => {
    const bresp = await list("policy draft {\n  rule r: bresp[<|>\n}\n");
    expect(bresp.map((item) => item.label)).toEqual(durations);
    expect(bresp.find((item) => item.label === "5m").detail).toBe("duration · five minutes (300,000 ms): a window of time (a number counts events)");
    expect(await labels("policy draft {\n  rule r: bresp[5<|>\n}\n")).toEqual(durations);
    expect(await labels("policy draft {\n  rule r: always not (action in {a} and once[<|>\n}\n")).toEqual(durations);
    expect(await labels("policy draft {\n  rule r: always action in {a} implies eventually[<|>])\n}\n")).toEqual(durations);
    const per = await list("policy draft {\n  rule r: limit[3 per <|>\n}\n");
    expect(per.map((item) => item.label)).toEqual(durations);
    expect(per.find((item) => item.label === "1d").detail).toBe("duration · one day (86,400,000 ms): the window of the limit");
    expect(await labels("policy draft {\n  rule r: limit[3 per 1<|>](action in {a})\n}\n")).toEqual(durations);
  });

  it("offers `per` and `of` after a limit's maximum, and `per` after its key", async () => {
    const after = await list("policy draft {\n  rule r: limit[3 <|>\n}\n");
    expect(after.map((item) => [item.label, item.textEdit.newText])).toEqual([
      ["per D", "per ${1:1m}"],
      ["of", "of"],
    ]);
    expect(await labels("policy draft {\n  rule r: limit[3 pe<|>\n}\n")).toEqual(["per D", "of"]);
    expect(await labels("policy draft {\n  rule r: limit[500 of amount <|>\n}\n")).toEqual(["per D"]);
    // Nothing more after the window, and nothing at a limit's maximum (a number).
    expect(await labels("policy draft {\n  rule r: limit[3 per 1m <|>\n}\n")).toEqual([]);
    expect(await labels("policy draft {\n  rule r: limit[<|>\n}\n")).toEqual([]);
    expect(await labels("policy draft {\n  rule r: bresp[3 <|>\n}\n")).toEqual([]);
  });

  it("offers the samples' keys after `of`, those holding numbers first", async () => {
    const keys = await list("policy draft {\n  rule r: limit[500 of <|>\n}\n");
    expect(keys[0]).toMatchObject({ label: "amount", detail: "argument with numbers · in 2 events of the samples" });
    expect(keys.map((item) => item.label)).toEqual(expect.arrayContaining(["amount", "recipient", "order", "url"]));
    expect(await labels("policy draft {\n  rule r: limit[500 of am<|>\n}\n")).toContain("amount");
  });

  it("goes on as before after a bound: operands in the parentheses, and after `once[1h]`", async () => {
    const operand = ["action in {…}", "status = ok", "not", "amount", "recipient"];
    expect(await labels("policy draft {\n  rule r: limit[3 per 1m](<|>\n}\n")).toEqual(expect.arrayContaining(operand));
    expect(await labels("policy draft {\n  rule r: limit[3 per 1m](action in {<|>\n}\n")).toEqual(["get_balance", "refund", "send_money", "web_fetch"]);
    expect(await labels("policy draft {\n  rule r: limit[3 per 1m](action in {send_money} and recipient <|>\n}\n")).toEqual(expect.arrayContaining(["in {…}", "= $x"]));
    const afterStatement = await labels("policy draft {\n  rule r: limit[3 per 1m](action in {send_money}) <|>\n}\n");
    expect(afterStatement).toEqual(expect.arrayContaining(["after ψ", "warn", "ask", "rule"]));
    const temporal = await labels("policy draft {\n  rule r: always not (action in {a} and once[1h] <|>\n}\n");
    expect(temporal).toEqual(expect.arrayContaining([...operand, "once", "eventually"]));
    expect(await labels("policy draft {\n  rule r: always not (action in {a} and once[1h] amount <|>\n}\n")).toEqual(expect.arrayContaining(["in {…}", '~ "…"', "and"]));
    expect(await labels("policy draft {\n  rule r: always not (action in {a} and eventually <|>\n}\n")).toEqual(expect.arrayContaining(operand));
  });
});

describe("hover", () => {
  async function hoverAt(marked: string, name = "rates.vigil"): Promise<{ text: string; range: any } | null> {
    const doc = await document(name, marked);
    const hover = await server.request("textDocument/hover", { textDocument: { uri: doc.uri }, position: doc.position });
    if (hover === null) return null;
    expect(hover.contents.kind).toBe("markdown");
    return { text: hover.contents.value as string, range: hover.range };
  }
  const hoverText = async (marked: string) => (await hoverAt(marked))!.text;

  it("on `limit`: the form, and the rule's bound in words", async () => {
    const transfers = await hoverText(at(rates, "limit[3", 2));
    expect(transfers).toContain("**rule** `transfers` in `rates`");
    expect(transfers).toContain("`limit` holds when at most N events match ψ (a limit; per value of each variable ψ binds).");
    expect(transfers).toContain("Figure 5 (Limit): R_φ(e) = ψ(e, ν) ⇒ Σ_{e′ ∈ W(e), ψ(e′, ν)} a(e′) ≤ M");
    expect(transfers).toContain("**bound** `[3 per 1d]`: at most 3 events match ψ in any window of one day (86,400,000 ms).");
    expect(transfers).toContain("**response** `ask`");
    expect(await hoverText(at(rates, "limit[500", 1))).toContain("**bound** `[500 of amount per 1d]`: the numbers at `amount` of the events matching ψ add up to at most 500 in any window of one day (86,400,000 ms).");
    expect(await hoverText(at(rates, "bresp", 1))).toContain("**bound** `[5m]`: each ψ-event is answered by a ψ′-event at most five minutes (300,000 ms) after it (at the same instant counts).");
  });

  it("on `limit` while the rule is unfinished: the form", async () => {
    const typing = await hoverAt("policy t {\n  rule r: lim<|>it[3 per 1m](\n}\n", "typing.vigil");
    expect(typing!.text).toContain("`limit` holds when at most N events match ψ (a limit; per value of each variable ψ binds).");
    expect(typing!.range).toEqual({ start: { line: 1, character: 10 }, end: { line: 1, character: 15 } });
  });

  it("on `per` and `of`: what they mean; on the pattern named `limit`: the pattern", async () => {
    expect(await hoverText(at(rates, "per 1m", 1))).toMatch(/^`limit\[N per D\]\(ψ\)`: at most N events matching ψ in any window of length D/);
    expect(await hoverText(at(rates, "of amount", 1))).toMatch(/^`limit\[X of KEY per D\]\(ψ\)`: a limit on a sum instead of a count/);
    expect(await hoverText(at(rates, "limit) warn", 1))).toContain("**pattern** `limit`");
    expect(await hoverText(at(rates, 'per in {"order"}', 1))).toContain("**argument** `per`");
  });

  it("on a duration: its meaning in words, and what it bounds there", async () => {
    expect(await hoverText(at(rates, "5m", 1))).toBe("**5m**: five minutes (300,000 ms)\n\nA window of time: each ψ-event is answered by a ψ′-event at most this long after it (at the same instant counts).");
    expect(await hoverText(at(rates, "1m", 1))).toBe(
      "**1m**: one minute (60,000 ms)\n\nThe window of the limit: an event is a witness when, with the events matching ψ less than this long before it, it makes more than the maximum.",
    );
    expect(await hoverText(at(rates, "1h", 1))).toBe("**1h**: one hour (3,600,000 ms)\n\n`once[…] Θ`: Θ held at an earlier event at most this long before.");
    expect(await hoverText(at(rates, "30s", 1))).toBe("**30s**: 30 seconds (30,000 ms)\n\n`eventually[…] Θ`: Θ holds at a later event at most this long after.");
    expect(await hoverText("policy t {\n  rule r: bresp[5<|>00ms](action in {a}, action in {b})\n}\n")).toMatch(/^\*\*500ms\*\*: 500 milliseconds\n\n/);
    // A count is no duration.
    expect(await hoverAt("policy t {\n  rule r: bresp[3<|>](action in {a}, action in {b})\n}\n")).toBeNull();
  });

  it("on the key a limit sums: what the samples say of it", async () => {
    const amount = await hoverAt(at(rates, "amount", 1));
    expect(amount!.text).toContain("**argument** `amount`");
    expect(amount!.text).toContain("2 events of 4 in 1 sample trace carry this argument");
  });
});

describe("signature help", () => {
  async function help(marked: string): Promise<any> {
    const doc = await document("draft.vigil", marked);
    return server.request("textDocument/signatureHelp", { textDocument: { uri: doc.uri }, position: doc.position });
  }

  it("shows the signature of `limit` in its parentheses, after any bound", async () => {
    for (const text of [
      "policy d {\n  rule r: limit[3 per 1m](<|>\n}\n",
      "policy d {\n  rule r: limit[500 of amount per 1d](action in {refund} and (<|>)\n}\n",
      "policy d {\n  rule r: limit[3](action in {a}<|>)\n}\n",
    ]) {
      const signature = await help(text);
      expect(signature.signatures[0].label).toBe("limit[N per D](ψ counted)");
      expect(signature.signatures[0].documentation.value).toContain("at most N events match ψ");
      expect(signature.activeParameter).toBe(0);
      expect(signature.signatures[0].parameters[0].label).toEqual([15, 24]);
    }
    const bresp = await help("policy d {\n  rule r: bresp[5m](action in {a}, <|>\n}\n");
    expect(bresp.signatures[0].label).toBe("bresp[N](ψ trigger, ψ' required within N events)");
    expect(bresp.activeParameter).toBe(1);
  });

  it("shows nothing in the brackets, nor for `once[1h] (`", async () => {
    expect(await help("policy d {\n  rule r: limit[3 per <|>\n}\n")).toBeNull();
    expect(await help("policy d {\n  rule r: always not (once[1h] (<|>\n}\n")).toBeNull();
  });
});

describe("formatting", () => {
  const messy = [
    "policy   rates{",
    "pattern refund=action in{refund}",
    "rule fetch_rate :limit[ 10 per 1m ]( action in {web_fetch})",
    'rule transfers: limit[3   per 1d](action in {send_money} and recipient = $r) ask "Wait a day."',
    "rule refunds: limit [500 of amount per 1d](refund)warn",
    "rule total:limit[2 of items.0.price](refund)",
    'rule reproduce: bresp[5m](action in {fuzz} and output ~ "*crash*",action in {reproduce})',
    "rule counted: bresp[3](action in {fuzz}, action in {reproduce})",
    "rule cooled_down: always not(action in {http_post} and once[1h] action in {read_secret})",
    "rule soon: always action in {deploy} implies eventually[30s] action in {check} after refund",
    "}",
  ].join("\n");
  const formatted = [
    "policy rates {",
    "  pattern refund = action in {refund}",
    "  rule fetch_rate: limit[10 per 1m](action in {web_fetch})",
    '  rule transfers: limit[3 per 1d](action in {send_money} and recipient = $r) ask "Wait a day."',
    "  rule refunds: limit[500 of amount per 1d](refund) warn",
    "  rule total: limit[2 of items.0.price](refund)",
    '  rule reproduce: bresp[5m](action in {fuzz} and output ~ "*crash*", action in {reproduce})',
    "  rule counted: bresp[3](action in {fuzz}, action in {reproduce})",
    "  rule cooled_down: always not (action in {http_post} and once[1h] action in {read_secret})",
    "  rule soon: always action in {deploy} implies eventually[30s] action in {check} after refund",
    "}",
    "",
  ].join("\n");

  it("prints limits, windows and durations canonically, and then changes nothing", async () => {
    const doc = await document("format.vigil", `<|>${messy}`);
    expect(doc.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    const options = { tabSize: 2, insertSpaces: true };
    const edits = await server.request("textDocument/formatting", { textDocument: { uri: doc.uri }, options });
    expect(applyEdits(doc.text, edits)).toBe(formatted);
    const again = await document("format.vigil", `<|>${formatted}`);
    expect(again.diagnostics.filter((d) => d.severity === 1)).toEqual([]);
    expect(await server.request("textDocument/formatting", { textDocument: { uri: again.uri }, options })).toEqual([]);
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
