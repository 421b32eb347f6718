import { diagnostic, LineIndex, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import type { SourceFile } from "./ast.js";
import { cstToAst, type PolicyCst } from "./cst-to-ast.js";
import { outlineFile, splitResponse } from "./declarations.js";
import { attachDocComments, commentsFromTokens } from "./doc-comments.js";
import { pushAll } from "./arrays.js";
import { cutTooDeepRegions, maximumNestingDepth } from "./nesting.js";
import { lexingErrorsToDiagnostics, literalDiagnostics, parseErrorsToDiagnostics } from "./syntax-errors.js";
import { declarationToCst } from "./text-to-cst.js";
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
 * The data path: text → tokens (comments set aside) → too-deep regions cut out → the file's
 * outline (policies and where each declaration starts) → one CST per declaration → AST.
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

  const outline = outlineFile(tokens, lines);
  pushAll(diagnostics, outline.diagnostics);
  const errorOffsets: number[] = [];
  const policies: PolicyCst[] = outline.policies.map((policy) => ({
    keyword: policy.keyword,
    ...(policy.name ? { name: policy.name } : {}),
    start: policy.start,
    end: policy.end,
    items: policy.items.map((itemTokens) => {
      // A rule's response is found by position and kept out of the parser (see `splitResponse`).
      const { declaration, response } = splitResponse(itemTokens);
      const { cst, errors } = declarationToCst(declaration);
      pushAll(diagnostics, parseErrorsToDiagnostics(errors, text, lines));
      for (const error of errors) if (Number.isFinite(error.token.startOffset)) errorOffsets.push(error.token.startOffset);
      return { cst, response };
    }),
  }));
  const docs = attachDocComments(tokens, comments, text, lines);
  const built = cstToAst(policies, { text, lines, docs, comments, errorOffsets });
  pushAll(diagnostics, built.diagnostics);
  // A malformed number the parser also rejected (`rule 4bad:`) is one mistake: keep the parser's error.
  const parserErrorOffsets = new Set(errorOffsets);
  const kept = diagnostics.filter((d) => !(d.code === "V0005" && d.span !== undefined && parserErrorOffsets.has(d.span.start)));
  return { file: built.file, diagnostics: sortDiagnostics(kept), lines };
}
