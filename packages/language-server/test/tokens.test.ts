import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
// The lexer of @vigil/syntax, read from its sources: the editor's scanner must split every text as it does.
import { commentGroup, tokenize } from "../../syntax/src/tokens.js";
import { scanTokens, type Token } from "../src/tokens.js";
import { examples, fixtures } from "./support/lsp-client.js";

/**
 * The scanner behind completion, signature help and highlighting follows the lexer of
 * `@vigil/syntax` token for token: the same boundaries, keywords where it sees keywords, strings,
 * numbers, variables and comments where it does. Checked on every shipped policy and on random text.
 */

function lexerTokens(text: string): { start: number; end: number; kind: string }[] {
  const lexed = tokenize(text);
  const tokens = [...lexed.tokens, ...(lexed.groups[commentGroup] ?? [])].map((token) => ({
    start: token.startOffset,
    end: token.startOffset + token.image.length,
    kind: kindOf(token.tokenType.name, token.tokenType.CATEGORIES?.map((c) => c.name) ?? []),
  }));
  return tokens.sort((a, b) => a.start - b.start);
}

function kindOf(name: string, categories: readonly string[]): string {
  if (categories.includes("Keyword")) return "keyword";
  switch (name) {
    case "Identifier":
      return "identifier";
    case "Variable":
      return "variable";
    case "StringLiteral":
      return "string";
    case "UnterminatedString":
      return "unterminated-string";
    case "NumberLiteral":
      return "number";
    case "LineComment":
      return "comment";
    case "DocComment":
      return "doc-comment";
    default:
      return "punctuation";
  }
}

function scannerTokens(text: string): { start: number; end: number; kind: string }[] {
  // The lexer drops a character no token starts (and reports it); the scanner keeps it as `unknown`.
  return scanTokens(text)
    .filter((token: Token) => token.kind !== "unknown")
    .map((token) => ({ start: token.start, end: token.end, kind: token.kind }));
}

function policies(directory: string): string[] {
  return readdirSync(directory, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".vigil"))
    .map((entry) => readFileSync(join(entry.parentPath, entry.name), "utf8"));
}

describe("the scanner", () => {
  it("splits every shipped policy as the lexer does", () => {
    const texts = [...policies(examples), ...policies(fixtures), ...policies(join(examples, "..", "packages/syntax/test/golden"))];
    expect(texts.length).toBeGreaterThan(10);
    for (const text of texts) expect(scannerTokens(text)).toEqual(lexerTokens(text));
  });

  it("splits random text as the lexer does", () => {
    const pieces = ["policy", "pattern", "rule", "prec", "bresp", "always", "□", "¬", "∧", "∨", "->", "⇒", "→", "◇⁻", "◇⁺", "in", "index", "action", "ok", "true", "{", "}", "(", ")", "[", "]", ",", ":", "=", "~", ".", "$x", "$", '"a"', '"\\q', '"open', "6", "-6", "6.0e+3", ".5", "01", "6fps", "// c", "/// d", "\n", " ", "\t", "é", "#", "-", "x_1"];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 40 }), (parts) => {
        const text = parts.join("");
        expect(scannerTokens(text)).toEqual(lexerTokens(text));
      }),
      { numRuns: 2000 },
    );
  });

  it("spells Unicode keywords in ASCII", () => {
    expect(scanTokens("□ ¬ ∧ ∨ ⇒ → -> ◇⁻ ◇⁺").map((token) => token.keyword)).toEqual(["always", "not", "and", "or", "implies", "implies", "implies", "once", "eventually"]);
  });
});
