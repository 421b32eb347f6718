import { readFileSync } from "node:fs";
import { join } from "node:path";
import { grammarRuleNames, keywords } from "@vigil/syntax";
import { expect, it } from "vitest";

/** The normative grammar and the parser describe the same language. */
const grammar = readFileSync(join(import.meta.dirname, "../../../grammar/vigil.ebnf"), "utf8");
const productions = [...grammar.matchAll(/^([A-Za-z]+)\s+::=/gm)].map((match) => match[1]!);
// The outline (file, policy, a rule's response) is found before parsing; the rest are lexical productions.
const notParserRules = ["file", "policy", "response", "Identifier", "Variable", "String", "Escape", "Regex", "Number", "Index", "LineComment", "DocComment", "WhiteSpace"];

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
