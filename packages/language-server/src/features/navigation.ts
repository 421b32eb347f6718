import { termAt, type PolicySymbol, type Span } from "@vigil/compiler";
import { isKeyword, isPlainIdentifier } from "@vigil/syntax";
import { ErrorCodes, ResponseError, type Location, type Range, type TextEdit } from "vscode-languageserver";
import type { Analysis } from "../analysis.js";

/**
 * Go to definition, find references and rename, for policies, patterns, rules and variables: all
 * read off the compiler's symbol table, so the editor resolves a name exactly as the checker does.
 */

function symbolAt(analysis: Analysis, offset: number): { symbol: PolicySymbol; span: Span } | undefined {
  const term = termAt(analysis.compiled, offset);
  return term?.kind === "symbol" ? term : undefined;
}

export function definition(analysis: Analysis, offset: number): Location | null {
  const found = symbolAt(analysis, offset);
  if (found === undefined) return null;
  return { uri: analysis.uri, range: analysis.positions.rangeOf(found.symbol.nameSpan) };
}

export function references(analysis: Analysis, offset: number, includeDeclaration: boolean): Location[] {
  const found = symbolAt(analysis, offset);
  if (found === undefined) return [];
  const spans = includeDeclaration ? [found.symbol.nameSpan, ...found.symbol.references] : found.symbol.references;
  return spans.map((span) => ({ uri: analysis.uri, range: analysis.positions.rangeOf(span) }));
}

export function prepareRename(analysis: Analysis, offset: number): { range: Range; placeholder: string } | null {
  const found = symbolAt(analysis, offset);
  if (found === undefined) return null;
  return { range: analysis.positions.rangeOf(found.span), placeholder: found.symbol.kind === "variable" ? `$${found.symbol.name}` : found.symbol.name };
}

/**
 * The edits that rename the symbol at an offset everywhere it occurs. A new name must be a name
 * (`$name` for a variable, the `$` optional) that no other symbol of the same kind and scope has.
 */
export function rename(analysis: Analysis, offset: number, newName: string): TextEdit[] {
  const found = symbolAt(analysis, offset);
  if (found === undefined) throw new ResponseError(ErrorCodes.InvalidParams, "there is no policy, pattern, rule or variable to rename here");
  const { symbol } = found;
  const bare = symbol.kind === "variable" && newName.startsWith("$") ? newName.slice(1) : newName;
  if (!isPlainIdentifier(bare) || isKeyword(bare)) {
    throw new ResponseError(ErrorCodes.InvalidParams, `\`${newName}\` is not a valid ${symbol.kind} name: use letters, digits and _, not starting with a digit, and not a reserved word`);
  }
  const clash = analysis.compiled.symbols.symbols.find(
    (other) =>
      other !== symbol && other.kind === symbol.kind && other.name === bare && (symbol.kind === "policy" || (other.policy === symbol.policy && other.scope === symbol.scope)),
  );
  if (clash !== undefined && bare !== symbol.name) {
    throw new ResponseError(ErrorCodes.InvalidParams, `the ${symbol.kind} \`${symbol.kind === "variable" ? "$" : ""}${bare}\` already exists${symbol.kind === "policy" ? " in this file" : ` in \`${symbol.scope ?? symbol.policy}\``}`);
  }
  const text = symbol.kind === "variable" ? `$${bare}` : bare;
  return [symbol.nameSpan, ...symbol.references].map((span) => ({ range: analysis.positions.rangeOf(span), newText: text }));
}
