import { readFileSync } from "node:fs";
import { join } from "node:path";
import { grammarRuleNames, keywords, parseDuration, tokenize } from "@vigil/syntax";
import { expect, it } from "vitest";

/** The normative grammar and the parser describe the same language. */
const grammar = readFileSync(join(import.meta.dirname, "../../../grammar/vigil.ebnf"), "utf8");
const productions = [...grammar.matchAll(/^([A-Za-z]+)\s+::=/gm)].map((match) => match[1]!);
// The outline (file, policy, a rule's response) is found before parsing; the rest are lexical
// productions. A Duration is one too: the lexer reads `5m` as one NumberLiteral, and the AST reads
// a duration off that token where a bound holds one (checked below).
const notParserRules = ["file", "policy", "response", "Identifier", "Variable", "String", "Escape", "Regex", "Number", "Index", "Duration", "LineComment", "DocComment", "WhiteSpace"];

it("defines every parser rule", () => {
  expect(grammarRuleNames().filter((rule) => !productions.includes(rule))).toEqual([]);
});

it("defines nothing the parser does not have, except the outline and the lexical productions", () => {
  expect(productions.filter((name) => !grammarRuleNames().includes(name) && !notParserRules.includes(name))).toEqual([]);
});

it("lists exactly the reserved words of the lexer", () => {
  const listed = /Reserved words[^:]*:\s*([\s\S]*?)\*\)/.exec(grammar)![1]!.replace(/\([^)]*\)/g, " ").split(/\s+/).filter(Boolean);
  expect([...listed].sort()).toEqual([...keywords].sort());
});

it("defines Duration as the lexer and the AST read one: one number token of a unit `parseDuration` knows", () => {
  const production = /^Duration\s+::=([^\n]*)/m.exec(grammar)![1]!;
  const units = [...production.matchAll(/'([^']+)'/g)].map((match) => match[1]!);
  expect(units).toEqual(["ms", "s", "m", "h", "d"]);
  for (const unit of units) {
    const lexed = tokenize(`30${unit}`);
    expect(lexed.tokens.map((token) => token.tokenType.name)).toEqual(["NumberLiteral"]);
    expect(parseDuration(`30${unit}`)).toBeGreaterThan(0);
  }
  expect(parseDuration("30w")).toBeUndefined();
});
