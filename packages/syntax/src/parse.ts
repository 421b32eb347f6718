import { diagnostic, LineIndex, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import type { SourceFile } from "./ast.js";
import type { IToken } from "chevrotain";
import type { DocText } from "./ast.js";
import { tokenEnd } from "./cst-access.js";
import { cstToAst, type BuiltDeclaration, type DeclarationCst, type PolicyCst } from "./cst-to-ast.js";
import { shiftSpans } from "./shift-spans.js";
import { outlineFile, splitResponse, splitScope } from "./declarations.js";
import { attachDocComments, commentsFromTokens } from "./doc-comments.js";
import { pushAll } from "./arrays.js";
import { cutTooDeepRegions, maximumNestingDepth } from "./nesting.js";
import { lexingErrorsToDiagnostics, literalDiagnostics, parseErrorsToDiagnostics } from "./syntax-errors.js";
import { declarationToCst, scopeToCst } from "./text-to-cst.js";
import { commentGroup, tokenize } from "./tokens.js";

export interface ParseOptions {
  /**
   * An earlier parse of the same document: declarations whose text (with their doc comment) is
   * unchanged and that start at the same column are reused from it instead of parsed again, so an
   * edit re-parses only the declarations it touched.
   */
  readonly reuse?: ParseResult;
}

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
export function parse(text: string, options: ParseOptions = {}): ParseResult {
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

  const unread = lexed.errors.map((error) => error.offset).sort((a, b) => a - b);
  const outline = outlineFile(tokens, lines);
  pushAll(diagnostics, outline.diagnostics);
  const docs = attachDocComments(tokens, comments, text, lines);
  const previous = options.reuse === undefined ? undefined : declarationCaches.get(options.reuse);
  const cache = new Map<string, CachedDeclaration>();
  const keys: string[][] = [];
  const errorOffsets: number[] = [];
  const parseErrors = new Map<string, { diagnostics: Diagnostic[]; errorOffsets: number[] }>();
  const reusedErrorOffsets = new Map<string, readonly number[]>();
  const policies: PolicyCst[] = outline.policies.map((policy) => {
    const policyKeys: string[] = [];
    keys.push(policyKeys);
    return {
      keyword: policy.keyword,
      ...(policy.name ? { name: policy.name } : {}),
      start: policy.start,
      end: policy.end,
      items: policy.items.map((itemTokens): DeclarationCst => {
        const key = declarationKey(itemTokens, docs, text, lines);
        policyKeys.push(key.text);
        const cached = previous?.get(key.text);
        if (cached !== undefined) {
          const offsets = key.start - cached.start;
          const lineShift = key.line - cached.line;
          for (const offset of cached.errorOffsets) errorOffsets.push(key.start + offset);
          reusedErrorOffsets.set(key.text, cached.errorOffsets);
          return { reused: shiftSpans(cached.built, offsets, lineShift) };
        }
        // A rule's response and scope are found by position and parsed apart from its statement
        // (see `splitResponse`, `splitScope`).
        const { declaration, response } = splitResponse(itemTokens);
        const { statement, scope: scopeTokens } = splitScope(declaration);
        const parsed = declarationToCst(statement);
        const scoped = scopeTokens.length > 0 ? scopeToCst(scopeTokens) : undefined;
        const cst = parsed.cst;
        const errors = [...parsed.errors, ...(scoped?.errors ?? [])];
        const own = { diagnostics: parseErrorsToDiagnostics(errors, text, lines, unread), errorOffsets: [] as number[] };
        for (const error of errors) if (Number.isFinite(error.token.startOffset)) own.errorOffsets.push(error.token.startOffset);
        pushAll(errorOffsets, own.errorOffsets);
        parseErrors.set(key.text, own);
        return { cst, response, ...(scoped?.cst !== undefined ? { scope: scoped.cst } : {}) };
      }),
    };
  });
  const built = cstToAst(policies, { text, lines, docs, comments, errorOffsets });
  pushAll(diagnostics, built.diagnostics);
  // Remember every declaration as built here (parser errors included), for the next parse to reuse.
  built.declarations.forEach((declarations, policyIndex) =>
    declarations.forEach((declaration, itemIndex) => {
      const keyText = keys[policyIndex]![itemIndex]!;
      const own = parseErrors.get(keyText);
      if (own !== undefined) pushAll(diagnostics, own.diagnostics);
      if (cache.has(keyText)) return;
      const first = outline.policies[policyIndex]!.items[itemIndex]![0]!;
      const start = declarationStart(first, docs);
      cache.set(keyText, {
        built: own === undefined ? declaration : { item: declaration.item, diagnostics: [...own.diagnostics, ...declaration.diagnostics] },
        errorOffsets: own?.errorOffsets.map((offset) => offset - start) ?? reusedErrorOffsets.get(keyText) ?? [],
        start,
        line: lines.position(start).line,
      });
    }),
  );
  // A malformed number the parser also rejected (`rule 4bad:`) is one mistake: keep the parser's error.
  const parserErrorOffsets = new Set(errorOffsets);
  const kept = diagnostics.filter((d) => !(d.code === "V0005" && d.span !== undefined && parserErrorOffsets.has(d.span.start)));
  const result: ParseResult = { file: built.file, diagnostics: sortDiagnostics(kept), lines };
  declarationCaches.set(result, cache);
  return result;
}

/** A declaration as an earlier parse built it, where it started, and its parser errors' offsets. */
interface CachedDeclaration {
  readonly built: BuiltDeclaration;
  /** Relative to `start`. */
  readonly errorOffsets: readonly number[];
  readonly start: number;
  readonly line: number;
}

/** Each parse's declarations by their key, for a later parse of the next version to reuse. */
const declarationCaches = new WeakMap<ParseResult, ReadonlyMap<string, CachedDeclaration>>();

/** Where a declaration's reusable text starts: at its doc comment, or its keyword when it has none. */
function declarationStart(keyword: IToken, docs: ReadonlyMap<number, DocText>): number {
  return docs.get(keyword.startOffset)?.span.start ?? keyword.startOffset;
}

/**
 * What a declaration's tree and diagnostics are a function of: its text from its doc comment (or
 * keyword) to the end of its last line, and the column it starts at (columns on its first line count from
 * the start of the line). Two declarations with the same key parse to the same tree, moved.
 */
function declarationKey(itemTokens: readonly IToken[], docs: ReadonlyMap<number, DocText>, text: string, lines: LineIndex): { text: string; start: number; line: number } {
  const first = itemTokens[0]!;
  const last = itemTokens[itemTokens.length - 1]!;
  const start = declarationStart(first, docs);
  const position = lines.position(start);
  const doc = docs.has(first.startOffset) ? "doc" : "plain";
  // To the end of the last token's line: what follows it there can change the declaration's diagnostics.
  const newline = text.indexOf("\n", tokenEnd(last));
  const end = newline === -1 ? text.length : newline;
  return { text: `${position.column}:${doc}:${text.slice(start, end)}`, start, line: position.line };
}
