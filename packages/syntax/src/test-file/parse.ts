import { diagnostic, LineIndex, type Diagnostic, type Span } from "@vigil/diagnostics";
import type { TestCase, TestFile } from "./ast.js";
import { docText } from "./doc-comments.js";
import { timesWithoutValue } from "./misread-words.js";
import { syntaxError } from "./syntax-errors.js";
import { TestFileParser } from "./text-to-ast.js";
import { DocComment, testLexer } from "./tokens.js";

/**
 * Reading a test file from text to tree: lex (`tokens.ts`), parse with the tree built as it goes
 * (`text-to-ast.ts`), look for a bare `at` read as an event (`misread-words.ts`), and sort every
 * problem by position. One parser serves every file, made on first use.
 */

let parserInstance: TestFileParser | undefined;

/**
 * Reads a test file. Never throws on user input: lexing and parsing problems are diagnostics
 * (V2001 unexpected text, V2002 an unclosed string, V2003 a bad escape, V2004 a bad number,
 * V2005 a character no token starts with, V2006 an event's time that is neither a duration nor a
 * date-time), and the tests are whatever could be read.
 */
export function parseTestFile(text: string): TestFile {
  const lines = new LineIndex(text);
  const spanOfOffsets = (start: number, end: number): Span => {
    const from = lines.position(start);
    const to = lines.position(end);
    return { start, end, line: from.line, column: from.column, endLine: to.line, endColumn: to.column };
  };
  const lexed = testLexer.tokenize(text);
  const diagnostics: Diagnostic[] = lexed.errors.map((error) =>
    diagnostic("V2005", `\`${text.slice(error.offset, error.offset + error.length).slice(0, 20)}\` cannot start anything in a test file`, {
      span: spanOfOffsets(error.offset, error.offset + error.length),
      help: "a test file holds `policy \"…\"` and `test \"…\" { … }`; comments start with `//`",
    }),
  );
  const docs = (lexed.groups["comments"] ?? []).filter((token) => token.tokenType === DocComment);
  const parser = (parserInstance ??= new TestFileParser());
  parser.problems = [];
  parser.spanOf = (from, to) => {
    const start = from.isInsertedInRecovery === true || Number.isNaN(from.startOffset) ? (to.isInsertedInRecovery === true || Number.isNaN(to.startOffset) ? 0 : to.startOffset) : from.startOffset;
    const end = to.isInsertedInRecovery === true || Number.isNaN(to.endOffset ?? NaN) ? start : to.endOffset! + 1;
    return spanOfOffsets(start, Math.max(start, end));
  };
  parser.docBefore = (token) => docText(docs, token, text);
  parser.input = lexed.tokens;
  // A file the parser could not recover in gives nothing back: it was reported.
  const result = (parser.file() as { policy?: TestFile["policy"]; tests?: TestCase[] } | undefined) ?? {};
  diagnostics.push(...parser.problems, ...timesWithoutValue(result, text), ...parser.errors.map((error) => syntaxError(error, spanOfOffsets, text.length)));
  return { ...(result.policy !== undefined ? { policy: result.policy } : {}), tests: (result.tests ?? []).filter((test) => test !== undefined && test !== null), diagnostics: diagnostics.sort((a, b) => (a.span?.start ?? 0) - (b.span?.start ?? 0)) };
}
