import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { parse, parseTestFile, testFileKeywords, walkExpressions, declarationExpressions, type Bound, type SourceFile, type TestFile } from "@vigil/syntax";
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
 * grammar's tokens. The grammar of test files (extension/syntaxes/vigil-test.tmLanguage.json) is
 * held against the reader of packages/syntax/src/test-file/ (its tokens.ts) the same way, each word's scope
 * taken from the reader's tree (an action, a key, a rule, or a keyword).
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
  LessEquals: "keyword.operator.comparison.vigil",
  GreaterEquals: "keyword.operator.comparison.vigil",
  NotEquals: "keyword.operator.comparison.vigil",
  LessThan: "keyword.operator.comparison.vigil",
  GreaterThan: "keyword.operator.comparison.vigil",
  Tilde: "keyword.operator.match.vigil",
  Dot: "punctuation.accessor.dot.vigil",
  Variable: "variable.other.binding.vigil",
  StringLiteral: "string.quoted.double.vigil",
  UnterminatedString: "string.quoted.double.vigil",
  RegexLiteral: "string.regexp.vigil",
  UnterminatedRegex: "string.regexp.vigil",
  NumberLiteral: "constant.numeric.vigil",
  ListIndex: "constant.numeric.index.vigil",
};

/** The scope of `matches` and `contains`, operators only before their operand (they are not reserved). */
const operatorWordScope = "keyword.operator.word.vigil";
const operandsOfWords = new Set(["Variable", "RegexLiteral", "UnterminatedRegex"]);

/** Token types that never reach the grammar's text: categories, skipped white space, the parser's placeholder. */
const notHighlighted = new Set(["Keyword", "FormKeyword", "SimpleFormKeyword", "OperatorKeyword", "ConstantKeyword", "StringToken", "RegexToken", "NestingLimit", "WhiteSpace", "Identifier"]);

/** Scopes a plain name (a pattern, an action, a key) must not get: it is not a keyword. */
const keywordLike = /^(keyword|storage|constant)\./;

const responseScope = "keyword.control.response.vigil";
/** The scope of `limit` where it starts a statement (a name everywhere else), as the other forms'. */
const limitScope = "keyword.control.form.vigil";
/** The scope of a bound's `of` and `per` (names everywhere else). */
const boundWordScope = "keyword.other.bound.vigil";
/**
 * The words of the EBNF that the lexer does not reserve: each is an Identifier, a word of the
 * language only in its place (the responses after a statement, `limit` where a statement starts,
 * `of` and `per` in a bound).
 */
const contextualWords = ["block", "warn", "ask", "limit", "of", "per"];
/** The scope of a rule's scope words (`after`, `before`, `between`: names everywhere else). */
const scopeWordScope = "keyword.control.scope.vigil";
/** The scopes of `every` and `some`, and of `count`, words only before `(KEY)` (names everywhere else). */
const quantifierScope = "keyword.operator.quantifier.vigil";
const countScope = "keyword.operator.count.vigil";

interface GrammarToken {
  readonly start: number;
  readonly end: number;
  readonly scopes: readonly string[];
}

let grammar: textmate.IGrammar;
let testGrammar: textmate.IGrammar;

beforeAll(async () => {
  const wasm = readFileSync(require.resolve("vscode-oniguruma/release/onig.wasm"));
  await oniguruma.loadWASM(wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength));
  const grammarPaths: Record<string, string> = {
    "source.vigil": join(root, "extension", "syntaxes", "vigil.tmLanguage.json"),
    "source.vigil-test": join(root, "extension", "syntaxes", "vigil-test.tmLanguage.json"),
  };
  const registry = new textmate.Registry({
    onigLib: Promise.resolve({
      createOnigScanner: (sources: string[]) => new oniguruma.OnigScanner(sources),
      createOnigString: (text: string) => new oniguruma.OnigString(text),
    }),
    loadGrammar: async (scopeName: string) => {
      const path = grammarPaths[scopeName];
      return path !== undefined ? textmate.parseRawGrammar(readFileSync(path, "utf8"), path) : null;
    },
  });
  const load = async (scopeName: string) => {
    const loaded = await registry.loadGrammar(scopeName);
    if (loaded === null) throw new Error(`the grammar at ${grammarPaths[scopeName]} did not load`);
    return loaded;
  };
  grammar = await load("source.vigil");
  testGrammar = await load("source.vigil-test");
});

/** The grammar's tokens of a whole text, with offsets into the text (lines end with "\n"). */
function highlight(text: string, using = grammar): GrammarToken[] {
  const tokens: GrammarToken[] = [];
  let stack = textmate.INITIAL;
  let lineStart = 0;
  for (const line of text.split("\n")) {
    const result = using.tokenizeLine(line, stack);
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

const ebnf = readFileSync(join(root, "grammar", "vigil.ebnf"), "utf8");

/** A production of the EBNF's lexical part, up to the blank line that ends it. */
function lexicalProduction(name: string): string {
  const start = ebnf.indexOf(`\n${name} `);
  if (start < 0) throw new Error(`grammar/vigil.ebnf has no production ${name}`);
  const end = ebnf.indexOf("\n\n", start + 1);
  return ebnf.slice(start, end < 0 ? undefined : end);
}

/** The terminals of the syntactic part of grammar/vigil.ebnf and its list of reserved words (the Identifier production). */
function ebnfTerminals(): string[] {
  const syntax = ebnf.slice(ebnf.indexOf("(* ---- Syntax"), ebnf.indexOf("(* ---- Lexical structure"));
  const identifier = lexicalProduction("Identifier");
  const withoutComments = (text: string) => text.replace(/\(\*[\s\S]*?\*\)/g, " ");
  const terminals = new Set<string>();
  for (const part of [withoutComments(syntax), withoutComments(identifier)]) {
    for (const match of part.matchAll(/'([^']+)'/g)) terminals.add(match[1]!);
  }
  return [...terminals];
}

/**
 * The units of the Duration production (`5m`): a duration is a lexical production, read by the lexer
 * as one NumberLiteral of that shape, so its units are not tokens of their own.
 */
function durationUnits(): string[] {
  return [...lexicalProduction("Duration").matchAll(/'([^']+)'/g)].map((match) => match[1]!);
}

/** The values and windows of every bound of a file (`bresp[5m]`, `limit[3 per 1d]`, `once[1h]`). */
function boundLiterals(file: SourceFile): { text: string; duration?: number }[] {
  const literals: { text: string; duration?: number }[] = [];
  const add = (bound: Bound | undefined) => {
    if (bound !== undefined) literals.push(bound.value, ...(bound.per !== undefined ? [bound.per] : []));
  };
  for (const policy of file.policies) {
    for (const item of policy.items) {
      if (item.kind === "RuleDecl") add(item.statement.bound);
      walkExpressions(declarationExpressions(item), (expr) => {
        if (expr.kind === "Once" || expr.kind === "Eventually") add(expr.window);
      });
    }
  }
  return literals;
}

/** Every spelling the lexer accepts for a keyword token (`always|□` gives both). */
function keywordSpellings(): string[] {
  return allTokens
    .filter((type) => type.CATEGORIES?.some((category) => category.name === "Keyword"))
    .flatMap((type) => (type.PATTERN as RegExp).source.split("|"))
    .map((source) => source.replace(/\\(.)/g, "$1"));
}

/**
 * The spans of the response words, of the scopes' words, of each `limit` form and each bound's `of`
 * and `per`, of each condition's `every`, `some` and `count` (with the scope each should get), and of
 * each declaration's name with the scope it should get, from the parser. (The tree keeps a bound's
 * key path and window; its `of` and `per` are the lexer's tokens right before them.)
 */
function namesFromTree(
  file: SourceFile,
  tokens: readonly IToken[] = [],
): { responses: Set<number>; scopeWords: Set<number>; limits: Set<number>; boundWords: Set<number>; conditionWords: Map<number, string>; declarations: Map<number, string> } {
  const conditionWords = new Map<number, string>();
  const responses = new Set<number>();
  const scopeWords = new Set<number>();
  const limits = new Set<number>();
  const boundWords = new Set<number>();
  const declarations = new Map<number, string>();
  const tokenBefore = (offset: number) => tokens[tokens.findIndex((token) => token.startOffset === offset) - 1]?.startOffset;
  const addBound = (bound: Bound | undefined) => {
    for (const part of [bound?.of, bound?.per]) {
      const word = part !== undefined ? tokenBefore(part.span.start) : undefined;
      if (word !== undefined) boundWords.add(word);
    }
  };
  for (const policy of file.policies) {
    declarations.set(policy.name.span.start, "entity.name.namespace.policy.vigil");
    for (const item of policy.items) {
      if (item.kind === "PatternDecl") declarations.set(item.name.span.start, "entity.name.type.pattern.vigil");
      else {
        declarations.set(item.name.span.start, "entity.name.function.rule.vigil");
        if (item.response !== undefined) responses.add(item.response.span.start);
        if (item.statement.scope !== undefined) scopeWords.add(item.statement.scope.wordSpan.start);
        if (item.statement.form === "limit") limits.add(item.statement.formSpan.start);
        addBound(item.statement.bound);
      }
      walkExpressions(declarationExpressions(item), (expr) => {
        if (expr.kind === "Once" || expr.kind === "Eventually") addBound(expr.window);
        if (expr.kind === "KeyCount") conditionWords.set(expr.countSpan.start, countScope);
        else if ("quantifier" in expr && expr.quantifier !== undefined) conditionWords.set(expr.quantifier.span.start, quantifierScope);
      });
    }
  }
  return { responses, scopeWords, limits, boundWords, conditionWords, declarations };
}

/**
 * Compares the grammar with the lexer on a whole file: every token must be covered by grammar
 * tokens that all carry the scope of its kind. Returns the disagreements, readable.
 */
function disagreements(text: string): string[] {
  const parsed = parse(text);
  const lexed = tokenize(text);
  const { responses, scopeWords, limits, boundWords, conditionWords, declarations } = namesFromTree(parsed.file, lexed.tokens);
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
      const expected = responses.has(start)
        ? responseScope
        : scopeWords.has(start)
          ? scopeWordScope
          : limits.has(start)
            ? limitScope
            : boundWords.has(start)
              ? boundWordScope
              : operatorWords.has(start)
                ? operatorWordScope
                : (conditionWords.get(start) ?? declarations.get(start));
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
    // Each unit of a Duration, in a duration the parser reads (a bound's value or window).
    const units = durationUnits();
    expect(units).toEqual(["ms", "s", "m", "h", "d"]);
    const durations = boundLiterals(parse(fixture).file).flatMap((literal) => (literal.duration !== undefined ? [literal.text] : []));
    expect(units.filter((unit) => !durations.some((text) => new RegExp(`^[0-9]+${unit}$`).test(text)))).toEqual([]);
  });

  it("lexes each EBNF terminal as one token of the lexer (or a name, for the contextual words), and a Duration as one number", () => {
    const problems: string[] = [];
    for (const terminal of ebnfTerminals()) {
      const lexed = tokenize(terminal);
      if (lexed.errors.length > 0 || lexed.tokens.length !== 1) problems.push(`${terminal}: ${lexed.tokens.length} tokens`);
      const type = lexed.tokens[0]?.tokenType.name;
      if (contextualWords.includes(terminal) ? type !== "Identifier" : type === "Identifier") problems.push(`${terminal}: lexed as ${type}`);
    }
    for (const duration of durationUnits().flatMap((unit) => [`5${unit}`, `500${unit}`])) {
      const lexed = tokenize(duration);
      if (lexed.errors.length > 0 || lexed.tokens.length !== 1 || lexed.tokens[0]!.tokenType.name !== "NumberLiteral") problems.push(`${duration}: not one NumberLiteral`);
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

  it("has a scope of every kind in its fixture, its words also used as names", () => {
    const { scopeWords } = namesFromTree(parse(fixture).file);
    const kinds = parse(fixture).file.policies.flatMap((policy) => policy.items.flatMap((item) => (item.kind === "RuleDecl" && item.statement.scope !== undefined ? [item.statement.scope.kind] : [])));
    expect(new Set(kinds)).toEqual(new Set(["after", "before", "between", "afterUntil"]));
    const names = tokenize(fixture).tokens.filter((token) => ["after", "before", "between"].includes(token.image) && !scopeWords.has(token.startOffset));
    expect(new Set(names.map((token) => token.image))).toEqual(new Set(["after", "before", "between"]));
  });

  it("highlights a scope's word only where the parser reads a scope", () => {
    // Each text is one policy; the words of its scopes, from the parser, must be keywords and every
    // other `after`, `before` or `between` a name (checked by `disagreements`).
    const texts = [
      "policy p {\n  rule r: abs(x) after y\n}",
      "policy p {\n  rule r: abs(x)after(y)\n}",
      "policy p {\n  rule r: always x before y\n}",
      "policy p {\n  rule r: always status = ok between y and z\n}",
      'policy p {\n  rule r: always k ~ "a" after y until z warn\n}',
      "policy p {\n  rule r: always output matches /a/i before y\n}",
      "policy p {\n  rule r: always output matches /a/ before y\n}",
      "policy p {\n  rule r: always k = $x after y\n}",
      "policy p {\n  rule r: always after before between\n}",
      "policy p {\n  rule r: always not after after before\n}",
      "policy p {\n  rule r: abs(after) between before and after\n}",
      "policy p {\n  rule r: abs(x) after between.k in {1} and after in {2}\n}",
      "policy p {\n  rule r: resp(x, y)\n    between (a and b) and c\n}",
      "policy p {\n  rule r: prec(x, y)\n    after x until y ask\n}",
      "policy p {\n  rule r: always x and\n    after and y\n}",
      "policy p {\n  rule r: prec(\n    after,\n    before in {1}\n  ) before (a)\n}",
      "policy p {\n  rule r: always x and\n    between ~ \"a\"\n}",
    ];
    for (const text of texts) {
      expect(parse(text).diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
      expect({ text, problems: disagreements(text) }).toEqual({ text, problems: [] });
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

  it("highlights `limit`, `of` and `per` only where the parser reads them", () => {
    // The words of the parser's statements and bounds must be keywords and every other `limit`,
    // `of` or `per` a name (checked by `disagreements`, from the tree).
    const texts = [
      "policy p {\n  rule r: limit[3](x)\n}",
      "policy p {\n  rule r: limit [3 per 1m] (x)\n}",
      "policy p {\n  rule r: limit[500 of amount per 1d](x) warn\n}",
      "policy p {\n  rule r: limit[500 of output.items.0.price](action in {limit})\n}",
      'policy p {\n  rule r: limit[2 of "per" per 2h](of and per in {1} and limit ~ "x")\n}',
      "policy p {\n  rule r: limit[3 of per per 500ms](limit)\n}",
      "policy p {\n  pattern limit = of in {1}\n  rule limit: abs(limit) after limit\n}",
      "policy p {\n  rule r: bresp[5m](x, y) before limit\n}",
      "policy p {\n  rule r: always not (x and once[1h] per) and eventually[30s] of\n}",
      "policy p {\n  rule r: resp(limit, per)\n}",
    ];
    for (const text of texts) {
      expect(parse(text).diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
      expect({ text, problems: disagreements(text) }).toEqual({ text, problems: [] });
    }
  });

  it("highlights `every`, `some` and `count` only where the parser reads them, and the comparisons after a key", () => {
    // The words of the parser's conditions must be keywords and every other `every`, `some` or
    // `count` a name (checked by `disagreements`, from the tree); a response or a scope may follow a
    // comparison's number.
    const texts = [
      'policy p {\n  rule r: abs(every(to) ~ "*@acme.com" and some(tags) in {"x"})\n}',
      "policy p {\n  rule r: abs(count(passengers) <= 5 and amount > 100 and fee < -1.5 and fee >= 2e3 and n != 0) warn\n}",
      "policy p {\n  rule r: always every(amount) != 0 and count(items.0.tags) > 1 ask \"Check it.\"\n}",
      "policy p {\n  rule r: abs(every in {1} and some ~ \"x\" and count > 2 and count(count) = 1 and every(every) < 3)\n}",
      "policy p {\n  pattern count = some(output.items.0) matches /a/ and every(\"content-type\") contains $v\n  rule every: abs(count and v = $v)\n}",
      "policy p {\n  rule r: abs(action in {a}) after count(x) >= 1 until some.y > 2\n}",
      "policy p {\n  rule r: always x and amount > 100\n    before count (x) < 2\n}",
      "policy p {\n  rule r: abs(every ( to ) ~ \"a\" and some(\n    tags) in {1})\n}",
    ];
    for (const text of texts) {
      expect(parse(text).diagnostics.filter((d) => d.severity === "error").map((d) => d.message)).toEqual([]);
      expect({ text, problems: disagreements(text) }).toEqual({ text, problems: [] });
    }
  });

  it("marks the key inside `every(…)` as a key, and each comparison as one operator", () => {
    const text = 'every(items.0.price) >= 1 and count("a b") != 2 and some(output.x) < 3 and y <= 4 and z > 5';
    const tokens = grammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("keyword.operator.comparison.vigil")).toEqual([">=", "!=", "<", "<=", ">"]);
    expect(scoped("variable.other.property.key.vigil")).toEqual(["items", "price", "x", "y", "z"]);
    expect(scoped("keyword.operator.quantifier.vigil")).toEqual(["every", "some"]);
    expect(scoped("keyword.operator.count.vigil")).toEqual(["count"]);
    expect(scoped("constant.numeric.index.vigil")).toEqual(["0"]);
    expect(scoped("keyword.other.atom.vigil")).toEqual(["output"]);
    expect(scoped("string.quoted.double.vigil")).toEqual(['"', "a b", '"']);
    // Where a statement starts, no condition does: the word stays a name, as `scanTokens` leaves it.
    for (const line of ["rule r: every(x) > 1", "rule r:count(x) > 1"]) {
      const word = grammar.tokenizeLine(line, textmate.INITIAL).tokens.find((token) => /every|count/.test(line.slice(token.startIndex, token.endIndex)));
      expect(word?.scopes.filter((scope) => keywordLike.test(scope))).toEqual([]);
    }
  });

  it("marks a duration's unit, and a duration where no bound reads one as a malformed number", () => {
    const text = "rule r: bresp[500ms](a, b) and once[1h] c and limit[3 per 1d] and x in {5m}";
    const tokens = grammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("keyword.other.unit.vigil")).toEqual(["ms", "h", "d"]);
    expect(scoped("constant.numeric.vigil")).toEqual(["500", "ms", "1", "h", "3", "1", "d"]);
    expect(scoped("invalid.illegal.number.vigil")).toEqual(["5m"]);
  });

  it("marks the numbers the lexer reports as malformed", () => {
    const text = "x in {01, 6fps, 1.5, -3e-2}";
    const tokens = grammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("invalid.illegal.number.vigil")).toEqual(["01", "6fps"]);
    expect(scoped("constant.numeric.vigil")).toEqual(["1.5", "-3e-2"]);
  });

  it("marks list indexes in key paths, and the ones the lexer reports as malformed", () => {
    const text = "argv.0 in {1} and a. 12.b in {2} and c.01 in {3} and d.0x in {4}";
    const tokens = grammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("constant.numeric.index.vigil")).toEqual(["0", "12"]);
    expect(scoped("invalid.illegal.number.vigil")).toEqual(["01", "0x"]);
    expect(scoped("punctuation.accessor.dot.vigil")).toEqual([".", ".", ".", ".", "."]);
  });
});

/**
 * The reader's tokens of a test file, as its lexer cuts them (packages/syntax/src/test-file/tokens.ts: the
 * same patterns, tried in the same order).
 */
const testTokenPatterns: readonly (readonly [string, RegExp])[] = [
  ["WhiteSpace", /[ \t\r\n\f\v\u00a0\ufeff]+/y],
  ["DocComment", /\/\/\/[^\r\n]*/y],
  ["LineComment", /\/\/[^\r\n]*/y],
  ["Word", /[A-Za-z_][A-Za-z0-9_\-]*/y],
  ["StringLiteral", /"(?:[^"\\\r\n]|\\[^\r\n])*"?/y],
  ["NumberLiteral", /-?(?:[0-9]|\.[0-9])(?:[eE][+-]|[0-9A-Za-z_.])*/y],
  ["Punctuation", /[{}[\],:.]/y],
];

interface TestToken {
  readonly type: string;
  readonly image: string;
  readonly start: number;
}

function testTokens(text: string): TestToken[] {
  const tokens: TestToken[] = [];
  let offset = 0;
  while (offset < text.length) {
    const found = testTokenPatterns.find(([, pattern]) => {
      pattern.lastIndex = offset;
      return pattern.test(text);
    });
    if (found === undefined) throw new Error(`no token at offset ${offset}: ${JSON.stringify(text.slice(offset, offset + 10))}`);
    const [type, pattern] = found;
    const image = text.slice(offset, pattern.lastIndex);
    if (type !== "WhiteSpace") tokens.push({ type, image, start: offset });
    offset = pattern.lastIndex;
  }
  return tokens;
}

/** The scope of each keyword of the test language where the reader reads it as one. */
const testKeywordScopes: Readonly<Record<string, string>> = {
  policy: "storage.type.declaration.policy.vigil-test",
  test: "storage.type.declaration.test.vigil-test",
  events: "keyword.other.run.vigil-test",
  ground: "keyword.other.run.vigil-test",
  trace: "keyword.other.run.vigil-test",
  messages: "keyword.other.run.vigil-test",
  run: "keyword.other.run.vigil-test",
  expect: "keyword.control.expectation.vigil-test",
  decide: "keyword.control.expectation.vigil-test",
  holds: "keyword.other.verdict.vigil-test",
  hold: "keyword.other.verdict.vigil-test",
  violated: "keyword.other.verdict.vigil-test",
  at: "keyword.other.verdict.vigil-test",
  broken: "keyword.other.verdict.vigil-test",
  by: "keyword.other.verdict.vigil-test",
  allow: "keyword.control.decision.vigil-test",
  block: "keyword.control.decision.vigil-test",
  ask: "keyword.control.decision.vigil-test",
  warn: "keyword.control.decision.vigil-test",
  all: "variable.language.rules.vigil-test",
  others: "variable.language.rules.vigil-test",
  ok: "constant.language.status.vigil-test",
  error: "constant.language.status.vigil-test",
  pending: "constant.language.status.vigil-test",
  output: "keyword.other.output.vigil-test",
  true: "constant.language.vigil-test",
  false: "constant.language.vigil-test",
  null: "constant.language.vigil-test",
};

const punctuationScopes: Readonly<Record<string, string>> = {
  "{": "punctuation.section.braces.begin.vigil-test",
  "}": "punctuation.section.braces.end.vigil-test",
  "[": "punctuation.section.brackets.begin.vigil-test",
  "]": "punctuation.section.brackets.end.vigil-test",
  ",": "punctuation.separator.comma.vigil-test",
  ":": "punctuation.separator.colon.vigil-test",
  ".": "punctuation.accessor.dot.vigil-test",
};

/**
 * The scope each word of a test file must get, from the reader's tree: an event's action, a key of
 * its arguments, a rule an expectation names (and its policy), a test's name; every other word is a
 * keyword of the reader.
 */
function testWordScopes(file: TestFile, tokens: readonly TestToken[]): Map<number, string> {
  const scopes = new Map<number, string>();
  for (const test of file.tests) {
    for (const expectation of test.expectations) {
      const references = expectation.kind === "verdict" ? (typeof expectation.rule === "string" ? [] : [expectation.rule]) : (expectation.rules ?? []);
      for (const reference of references) {
        if (reference.policy !== undefined) scopes.set(reference.span.start, "entity.name.namespace.policy.vigil-test");
        scopes.set(reference.span.end - reference.name.length, "entity.name.function.rule.vigil-test");
      }
    }
    if (test.input?.kind !== "events") continue;
    for (const event of test.input.events) {
      const inEvent = tokens.filter((token) => token.start >= event.span.start && token.start < event.span.end);
      let depth = 0;
      inEvent.forEach((token, index) => {
        if (token.image === "{" || token.image === "[") depth++;
        if (token.image === "}" || token.image === "]") depth--;
        if (token.type !== "Word") return;
        if (index === 0) scopes.set(token.start, event.kind === "message" ? "keyword.other.message.vigil-test" : "entity.name.function.action.vigil-test");
        else if (depth > 0 && inEvent[index + 1]?.image === ":") scopes.set(token.start, "variable.other.property.vigil-test");
      });
    }
  }
  return scopes;
}

/** Compares the test grammar with the reader on a whole file; returns the disagreements, readable. */
function testDisagreements(text: string): string[] {
  const parsed = parseTestFile(text);
  const tokens = testTokens(text);
  const words = testWordScopes(parsed, tokens);
  const names = new Set(parsed.tests.map((test) => test.nameSpan.start));
  const grammarTokens = highlight(text, testGrammar);
  const problems: string[] = [];
  for (const token of tokens) {
    const where = `\`${token.image}\` (${token.type}) at offset ${token.start}`;
    const scopes = scopesOver(grammarTokens, token.start, token.start + token.image.length);
    let expected: string | undefined;
    if (token.type === "DocComment") expected = "comment.line.documentation.vigil-test";
    else if (token.type === "LineComment") expected = "comment.line.double-slash.vigil-test";
    else if (token.type === "StringLiteral") expected = names.has(token.start) ? "entity.name.function.test.vigil-test" : "string.quoted.double.vigil-test";
    else if (token.type === "NumberLiteral") expected = "constant.numeric.vigil-test";
    else if (token.type === "Punctuation") expected = punctuationScopes[token.image];
    else expected = words.get(token.start) ?? testKeywordScopes[token.image];
    if (expected === undefined) {
      problems.push(`${where}: the reader has no keyword \`${token.image}\` and the tree does not say what it is`);
      continue;
    }
    if (scopes.length === 0 || !scopes.every((list) => list.includes(expected))) problems.push(`${where}: expected ${expected}, got ${JSON.stringify(scopes)}`);
    if (token.type === "StringLiteral" && !scopes.every((list) => list.includes("string.quoted.double.vigil-test"))) problems.push(`${where}: not a string: ${JSON.stringify(scopes)}`);
  }
  return problems;
}

const testFixture = readFileSync(join(import.meta.dirname, "fixtures", "highlighting.vigiltest"), "utf8");

describe("the TextMate grammar of test files against their reader", () => {
  it("is given a fixture that reads without a diagnostic and has every keyword of the reader in its place", () => {
    const parsed = parseTestFile(testFixture);
    expect(parsed.diagnostics.map((diagnostic) => diagnostic.message)).toEqual([]);
    const words = testWordScopes(parsed, testTokens(testFixture));
    const keywordsUsed = new Set(testTokens(testFixture).filter((token) => token.type === "Word" && !words.has(token.start)).map((token) => token.image));
    expect(testFileKeywords.filter((keyword) => !keywordsUsed.has(keyword))).toEqual([]);
    expect(Object.keys(testKeywordScopes).sort()).toEqual([...testFileKeywords].sort());
    // Keywords used as names: an action, keys and rules.
    for (const name of ["test", "expect", "at", "by", "holds", "decide"]) expect([...words.keys()].some((start) => testFixture.startsWith(name, start))).toBe(true);
  });

  it("highlights every token of the fixture with the scope of its kind", () => {
    expect(testDisagreements(testFixture)).toEqual([]);
  });

  it("highlights every shipped test file as the reader reads it", () => {
    const examples = join(root, "examples");
    const files = readdirSync(examples, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith(".vigiltest"));
    expect(files.length).toBeGreaterThan(0);
    for (const file of files) {
      const text = readFileSync(join(examples, file), "utf8");
      expect({ file, diagnostics: parseTestFile(text).diagnostics.filter((d) => d.severity === "error").length, problems: testDisagreements(text) }).toEqual({ file, diagnostics: 0, problems: [] });
    }
  });

  it("reads string escapes as JSON does, ends a string the line leaves open, and marks a malformed number", () => {
    const text = String.raw`  events { a {p: "x\"\u00e9\q", n: 6fps} output "open`;
    const tokens = testGrammar.tokenizeLine(text, textmate.INITIAL).tokens;
    const scoped = (scope: string) => tokens.filter((token) => token.scopes.includes(scope)).map((token) => text.slice(token.startIndex, token.endIndex));
    expect(scoped("constant.character.escape.vigil-test")).toEqual([String.raw`\"`, String.raw`\u00e9`]);
    expect(scoped("invalid.illegal.escape.vigil-test")).toEqual([String.raw`\q`]);
    expect(scoped("invalid.illegal.number.vigil-test")).toEqual(["6fps"]);
    expect(tokens.at(-1)?.scopes).toContain("string.quoted.double.vigil-test");
  });
});
