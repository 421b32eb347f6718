import { diagnostic, LineIndex, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import type { SourceFile } from "./ast.js";
import { cstToAst } from "./cst-to-ast.js";
import { attachDocComments, commentsFromTokens } from "./doc-comments.js";
import { cutTooDeepRegions, maximumNestingDepth } from "./nesting.js";
import { lexingErrorsToDiagnostics, literalDiagnostics, parseErrorsToDiagnostics } from "./syntax-errors.js";
import { tokensToCst } from "./text-to-cst.js";
import { commentGroup, tokenize } from "./tokens.js";

export interface ParseResult {
  /** Always a complete tree: recovery fills holes with `Missing` nodes and `recovered` identifiers. */
  readonly file: SourceFile;
  /** Syntax diagnostics (V0001–V0006), sorted by position. */
  readonly diagnostics: readonly Diagnostic[];
  /** Maps offsets of the parsed text to lines and columns. */
  readonly lines: LineIndex;
}

/**
 * Parses the text of a `.vigil` file. Never throws on any input: every problem becomes a
 * diagnostic, and the parser recovers so that all of a file's errors are reported at once.
 *
 * The data path: text → tokens (comments set aside) → too-deep regions cut out → CST → AST.
 */
export function parse(text: string): ParseResult {
  const lines = new LineIndex(text);
  const lexed = tokenize(text);
  const comments = commentsFromTokens(lexed.groups[commentGroup] ?? [], lines);
  const diagnostics: Diagnostic[] = [...lexingErrorsToDiagnostics(lexed.errors, text, lines), ...literalDiagnostics(lexed.tokens, lines)];

  const { tokens, regions } = cutTooDeepRegions(lexed.tokens, text);
  for (const region of regions) {
    diagnostics.push(
      diagnostic("V0006", `expression nested too deeply: more than ${maximumNestingDepth} levels of parentheses`, {
        span: lines.span(region.start, region.end),
        help: "split the expression into named `pattern`s",
      }),
    );
  }

  const { cst, errors } = tokensToCst(tokens);
  diagnostics.push(...parseErrorsToDiagnostics(errors, text, lines));
  const docs = attachDocComments(tokens, comments, text, lines);
  const built = cstToAst(cst, {
    text,
    lines,
    docs,
    comments,
    errorOffsets: errors.map((error) => error.token.startOffset).filter((offset) => Number.isFinite(offset)),
  });
  diagnostics.push(...built.diagnostics);
  return { file: built.file, diagnostics: sortDiagnostics(diagnostics), lines };
}
