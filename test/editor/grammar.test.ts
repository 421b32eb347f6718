import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parse, type SourceFile } from "@vigil/syntax";
import type { IToken, TokenType } from "chevrotain";
import oniguruma from "vscode-oniguruma";
import textmate from "vscode-textmate";
import { beforeAll, describe, expect, it } from "vitest";
import { allTokens, tokenize } from "@vigil/syntax";

/**
 * The editor's TextMate grammar (extension/syntaxes/vigil.tmLanguage.json) kept in step with the
 * language: every terminal of grammar/vigil.ebnf and every token of the lexer
 * (packages/syntax/src/tokens.ts) is highlighted with the scope of its kind. Texts are tokenized
 * twice, by the lexer and by the grammar run in VS Code's own TextMate engine (vscode-textmate on
 * the Oniguruma regular expressions VS Code uses), and each lexer token is looked up in the
 * grammar's tokens.
 */

const root = join(import.meta.dirname, "..", "..");
const require = createRequire(import.meta.url);

/** The scope each lexer token must get, by token type. A token type missing here fails the test. */
const scopeOfTokenType: Readonly<Record<string, string>> = {
  DocComment: "comment.line.documentation.vigil",
  LineComment: "comment.line.double-slash.vigil",
  PolicyKeyword: "storage.type.declaration",
  PatternKeyword: "storage.type.declaration",
  RuleKeyword: "storage.type.declaration",
  AbsKeyword: "keyword.control.form.vigil",
  PrecKeyword: "keyword.control.form.vigil",
  RespKeyword: "keyword.control.form.vigil",
  BrespKeyword: "keyword.control.form.vigil",
  RslvKeyword: "keyword.control.form.vigil",
  UntilKeyword: "keyword.control.form.vigil",
  AlwaysKeyword: "keyword.control.form.vigil",
  NotKeyword: "keyword.operator.logical.vigil",
  AndKeyword: "keyword.operator.logical.vigil",
  OrKeyword: "keyword.operator.logical.vigil",
  ImpliesKeyword: "keyword.operator.logical.vigil",
  OnceKeyword: "keyword.operator.temporal.vigil",
  EventuallyKeyword: "keyword.operator.temporal.vigil",
  InKeyword: "keyword.other.atom.vigil",
  ActionKeyword: "keyword.other.atom.vigil",
  StatusKeyword: "keyword.other.atom.vigil",
  OutputKeyword: "keyword.other.atom.vigil",
  OkKeyword: "constant.language.vigil",
  ErrorKeyword: "constant.language.vigil",
  TrueKeyword: "constant.language.vigil",
  FalseKeyword: "constant.language.vigil",
  NullKeyword: "constant.language.vigil",
  LeftBrace: "punctuation.section.braces.begin.vigil",
  RightBrace: "punctuation.section.braces.end.vigil",
  LeftParen: "punctuation.section.parens.begin.vigil",
  RightParen: "punctuation.section.parens.end.vigil",
  LeftBracket: "punctuation.section.brackets.begin.vigil",
  RightBracket: "punctuation.section.brackets.end.vigil",
  Comma: "punctuation.separator.comma.vigil",
  Colon: "punctuation.separator.colon.vigil",
  Equals: "keyword.operator.equals.vigil",
  Tilde: "keyword.operator.match.vigil",
  Dot: "punctuation.accessor.dot.vigil",
  Variable: "variable.other.binding.vigil",
  StringLiteral: "string.quoted.double.vigil",
  UnterminatedString: "string.quoted.double.vigil",
  RegexLiteral: "string.regexp.vigil",
  UnterminatedRegex: "string.regexp.vigil",
  NumberLiteral: "constant.numeric.vigil",
};

/** The scope of `matches` and `contains`, operators only before their operand (they are not reserved). */
const operatorWordScope = "keyword.operator.word.vigil";
const operandsOfWords = new Set(["Variable", "RegexLiteral", "UnterminatedRegex"]);

/** Token types that never reach the grammar's text: categories, skipped white space, the parser's placeholder. */
const notHighlighted = new Set(["Keyword", "FormKeyword", "SimpleFormKeyword", "OperatorKeyword", "ConstantKeyword", "StringToken", "RegexToken", "NestingLimit", "WhiteSpace", "Identifier"]);

/** Scopes a plain name (a pattern, an action, a key) must not get: it is not a keyword. */
const keywordLike = /^(keyword|storage|constant)\./;

const responseScope = "keyword.control.response.vigil";

interface GrammarToken {
  readonly start: number;
  readonly end: number;
  readonly scopes: readonly string[];
}

let grammar: textmate.IGrammar;

beforeAll(async () => {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const grammarPath = join(root, "extension", "syntaxes", "vigil.tmLanguage.json");
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
      createOnigString: (text: string) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName: string) =>
      scopeName === "source.vigil" ? textmate.parseRawGrammar(readFileSync(grammarPath, "utf8"), grammarPath) : null,
  });
  const loaded = await registry.loadGrammar("source.vigil");
  if (loaded === null) throw new Error(`the grammar at ${grammarPath} did not load`);
  grammar = loaded;
});

/** The grammar's tokens of a whole text, with offsets into the text (lines end with "\n"). */
function highlight(text: string): GrammarToken[] {
  const tokens: GrammarToken[] = [];
  let stack = textmate.INITIAL;
  let lineStart = 0;
  for (const line of text.split("\n")) {
    const result = grammar.tokenizeLine(line, stack);
    for (const token of result.tokens) {
      tokens.push({ start: lineStart + token.startIndex, end: lineStart + Math.min(token.endIndex, line.length), scopes: token.scopes });
    }
    stack = result.ruleStack;
    lineStart += line.length + 1;
  }
  return tokens;
}

/** The scopes on every character of [start, end), or the first character where they differ. */
function scopesOver(tokens: readonly GrammarToken[], start: number, end: number): string[][] {
  return tokens.filter((token) => token.end > start && token.start < end && token.end > token.start).map((token) => [...token.scopes]);
}

/** The terminals of the syntactic part of grammar/vigil.ebnf and its list of reserved words. */
function ebnfTerminals(): string[] {
  const ebnf = readFileSync(join(root, "grammar", "vigil.ebnf"), "utf8");
  const syntax = ebnf.slice(ebnf.indexOf("(* ---- Syntax"), ebnf.indexOf("(* ---- Lexical structure"));
  const identifier = ebnf.slice(ebnf.indexOf("Identifier   ::="), ebnf.indexOf("(* Any identifier-shaped name"));
  const withoutComments = (text: string) => text.replace(/\(\*[\s\S]*?\*\)/g, " ");
  const terminals = new Set<string>();
  for (const part of [withoutComments(syntax), withoutComments(identifier)]) {
    for (const match of part.matchAll(/'([^']+)'/g)) terminals.add(match[1]!);
  }
  return [...terminals];
}

/** Every spelling the lexer accepts for a keyword token (`always|□` gives both). */
function keywordSpellings(): string[] {
  return allTokens
    .filter((type) => type.CATEGORIES?.some((category) => category.name === "Keyword"))
    .flatMap((type) => (type.PATTERN as RegExp).source.split("|"))
    .map((source) => source.replace(/\\(.)/g, "$1"));
}

/** The spans of the response words, and of each declaration's name with the scope it should get, from the parser. */
function namesFromTree(file: SourceFile): { responses: Set<number>; declarations: Map<number, string> } {
  const responses = new Set<number>();
  const declarations = new Map<number, string>();
  for (const policy of file.policies) {
    declarations.set(policy.name.span.start, "entity.name.namespace.policy.vigil");
    for (const item of policy.items) {
      if (item.kind === "PatternDecl") declarations.set(item.name.span.start, "entity.name.type.pattern.vigil");
      else {
        declarations.set(item.name.span.start, "entity.name.function.rule.vigil");
        if (item.response !== undefined) responses.add(item.response.span.start);
      }
    }
  }
  return { responses, declarations };
}

/**
 * Compares the grammar with the lexer on a whole file: every token must be covered by grammar
 * tokens that all carry the scope of its kind. Returns the disagreements, readable.
 */
function disagreements(text: string): string[] {
  const parsed = parse(text);
  const { responses, declarations } = namesFromTree(parsed.file);
  const lexed = tokenize(text);
  const grammarTokens = highlight(text);
  const problems: string[] = [];
  const lexerTokens: IToken[] = [...lexed.tokens, ...(lexed.groups["comments"] ?? [])];
  // An identifier right before a variable or a regular expression is `matches` or `contains`: no
  // other name is ever followed by either.
  const operatorWords = new Set(
    lexed.tokens.filter((token, index) => token.tokenType.name === "Identifier" && operandsOfWords.has(lexed.tokens[index + 1]?.tokenType.name ?? "")).map((token) => token.startOffset),
  );
  for (const token of lexerTokens) {
    const start = token.startOffset;
    const end = start + token.image.length;
    const scopes = scopesOver(grammarTokens, start, end);
    const where = `\`${token.image}\` (${token.tokenType.name}) at offset ${start}`;
    if (scopes.length === 0) {
      problems.push(`${where}: no grammar token`);
      continue;
    }
    const typeName = token.tokenType.name;
    if (typeName === "Identifier") {
      const expected = responses.has(start) ? responseScope : operatorWords.has(start) ? operatorWordScope : declarations.get(start);
      if (expected !== undefined) {
        if (!scopes.every((list) => list.some((scope) => scope.startsWith(expected)))) problems.push(`${where}: expected ${expected}, got ${JSON.stringify(scopes)}`);
      } else if (scopes.some((list) => list.some((scope) => keywordLike.test(scope)))) {
        problems.push(`${where}: a name highlighted as a keyword: ${JSON.stringify(scopes)}`);
      }
      continue;
    }
    const expected = scopeOfTokenType[typeName];
    if (expected === undefined) {
      problems.push(`${where}: the test knows no scope for token type ${typeName}`);
      continue;
    }
    if (!scopes.every((list) => list.some((scope) => scope.startsWith(expected)))) problems.push(`${where}: expected ${expected}, got ${JSON.stringify(scopes)}`);
  }
  return problems;
}

const fixture = readFileSync(join(import.meta.dirname, "fixtures", "highlighting.vigil"), "utf8");

describe("the TextMate grammar against the language", () => {
  it("knows a scope for every token type of the lexer", () => {
    const unknown = allTokens.map((type: TokenType) => type.name).filter((name) => !notHighlighted.has(name) && scopeOfTokenType[name] === undefined);
    expect(unknown).toEqual([]);
  });

  it("is given a fixture that parses without a diagnostic", () => {
    expect(parse(fixture).diagnostics.map((diagnostic) => diagnostic.message)).toEqual([]);
  });

  it("has every terminal of the EBNF and every keyword spelling of the lexer in its fixture", () => {
    const terminals = ebnfTerminals();
    // The EBNF's terminals include its reserved words, their other spellings and the responses.
    expect(terminals).toEqual(expect.arrayContaining(["policy", "bresp", "□", "◇⁻", "◇⁺", "->", "⇒", "→", "block", "warn", "ask", "null", "~", "."]));
    const images = new Set(tokenize(fixture).tokens.map((token) => token.image));
    const missing = [...new Set([...terminals, ...keywordSpellings()])].filter((terminal) => !images.has(terminal));
    expect(missing).toEqual([]);
  });

  it("lexes each EBNF terminal as one token of the lexer (or a name, for the responses)", () => {
    const problems: string[] = [];
    for (const terminal of ebnfTerminals()) {
      const lexed = tokenize(terminal);
      if (lexed.errors.length > 0 || lexed.tokens.length !== 1) problems.push(`${terminal}: ${lexed.tokens.length} tokens`);
      const type = lexed.tokens[0]?.tokenType.name;
      if (["block", "warn", "ask"].includes(terminal) ? type !== "Identifier" : type === "Identifier") problems.push(`${terminal}: lexed as ${type}`);
    }
    expect(problems).toEqual([]);
  });

  it("highlights every token of the fixture with the scope of its kind", () => {
    expect(disagreements(fixture)).toEqual([]);
  });

  it("highlights every shipped example as the lexer reads it", () => {
    const examples = join(root, "examples");
    const files = readdirSync(examples, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".vigil"));
    expect(files.length).toBeGreaterThan(5);
    for (const file of files) {
      expect({ file, problems: disagreements(readFileSync(join(examples, file), "utf8")) }).toEqual({ file, problems: [] });
    }
  });

  it("reads string escapes as JSON does, and ends a string the line leaves open", () => {
    const tokens = grammar.tokenizeLine(String.raw`x ~ "a\"b\\c\/d\u00e9\q" and y ~ "open`, textmate.INITIAL).tokens;
    const text = String.raw`x ~ "a\"b\\c\/d\u00e9\q" and y ~ "open`;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("constant.character.escape.vigil")).toEqual([String.raw`\"`, String.raw`\\`, String.raw`\/`, String.raw`\u00e9`]);
    expect(scoped("invalid.illegal.escape.vigil")).toEqual([String.raw`\q`]);
    const and = tokens.find((token) => text.slice(token.startIndex, token.endIndex) === "and");
    expect(and?.scopes).toContain("keyword.operator.logical.vigil");
    expect(tokens.at(-1)?.scopes).toContain("string.quoted.double.vigil");
    // The next line starts outside any string.
    const next = grammar.tokenizeLine("rule", grammar.tokenizeLine(text, textmate.INITIAL).ruleStack).tokens;
    expect(next[0]?.scopes).toContain("storage.type.declaration.vigil");
  });

  it("marks the numbers the lexer reports as malformed", () => {
    const text = "x in {01, 6fps, 1.5, -3e-2}";
    const tokens = grammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("invalid.illegal.number.vigil")).toEqual(["01", "6fps"]);
    expect(scoped("constant.numeric.vigil")).toEqual(["1.5", "-3e-2"]);
  });
});
