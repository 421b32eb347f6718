import type { CstNode, IToken } from "chevrotain";
import { diagnostic } from "@vigil/diagnostics";
import type { Bound, BoundLiteral, KeyPath, KeySegment, RegexLiteral, StringLiteral, ValueLiteral } from "./ast.js";
import { childNode, childNodes, childToken, extentOf, tokenEnd } from "./cst-access.js";
import { decodeString, isJsonNumber } from "./literals.js";
import { parseDuration } from "./duration.js";
import { listIndexValue } from "./tokens.js";
import { AstBuilderBase } from "./cst-to-ast-base.js";

/**
 * The leaves of the AST: literals (strings, values, regular expressions), key paths, and the bounds
 * of forms and windows. A value written as a bare word, or a list index where a path must start, is
 * reported here, and the tree keeps what was meant or a hole.
 */
export class LiteralBuilder extends AstBuilderBase {
  protected bound(node: CstNode): Bound {
    const extent = extentOf(node)!;
    const valueToken = childToken(node, "value");
    let value: BoundLiteral;
    if (valueToken === undefined) {
      const bracket = childToken(node, "LeftBracket");
      const at = bracket ? tokenEnd(bracket) : extent.start;
      value = { text: "", span: this.span(at, at) };
    } else value = this.boundLiteral(valueToken);
    const of = this.keyPath(childNode(node, "of"));
    const perToken = childToken(node, "per");
    return {
      value,
      ...(of !== undefined ? { of } : {}),
      ...(perToken !== undefined ? { per: this.boundLiteral(perToken) } : {}),
      span: this.span(extent.start, extent.end),
    };
  }

  private boundLiteral(token: IToken): BoundLiteral {
    const text = token.image;
    const isNumberToken = token.tokenType.name === "NumberLiteral";
    const isNumber = isNumberToken && isJsonNumber(text);
    const duration = isNumberToken ? parseDuration(text) : undefined;
    return { text, ...(isNumber ? { value: Number(text) } : {}), ...(duration !== undefined ? { duration } : {}), span: this.tokenSpan(token) };
  }

  protected keyPath(node: CstNode | undefined): KeyPath | undefined {
    const extent = extentOf(node);
    if (node === undefined || extent === undefined) return undefined;
    const output = childToken(node, "OutputKeyword");
    const segments: KeySegment[] = [];
    for (const segmentNode of childNodes(node, "keySegment")) {
      const indexToken = childToken(segmentNode, "index");
      if (indexToken !== undefined) {
        // A malformed index was reported with the tokens (V0005): the atom is a hole.
        const index = listIndexValue(indexToken.image);
        if (index === undefined) return undefined;
        if (segments.length === 0) {
          // Only `output.0` gets here (an index is lexed only after a dot): a path starts at an object.
          this.diagnostics.push(
            diagnostic("V0001", `expected a field name after \`output.\`, found the list index \`${indexToken.image}\``, {
              span: this.tokenSpan(indexToken),
              help: "a path into the output reads the JSON object the output holds, so it starts with a field's name (`output.items.0`); an index picks an element of a list the path has reached",
            }),
          );
          return undefined;
        }
        segments.push({ index, span: this.tokenSpan(indexToken) });
        continue;
      }
      const token = childToken(segmentNode, "name");
      if (token === undefined) continue;
      const quoted = token.tokenType.name !== "Identifier";
      segments.push({ name: quoted ? this.stringValue(token) : token.image, quoted, span: this.tokenSpan(token) });
    }
    if (output !== undefined) return { output: this.tokenSpan(output), segments, span: this.span(extent.start, extent.end) };
    if (segments.length === 0) return undefined;
    return { segments, span: this.span(extent.start, extent.end) };
  }

  protected regexLiteral(token: IToken): RegexLiteral {
    const raw = token.image;
    const closed = token.tokenType.name === "RegexLiteral";
    const close = closed ? raw.lastIndexOf("/") : raw.length;
    return { source: raw.slice(1, close), flags: closed ? raw.slice(close + 1) : "", raw, closed, span: this.tokenSpan(token) };
  }

  protected valueLiteral(token: IToken): ValueLiteral {
    const span = this.tokenSpan(token);
    const raw = token.image;
    switch (token.tokenType.name) {
      case "NumberLiteral":
        return { value: Number(raw), raw, span };
      case "TrueKeyword":
        return { value: true, raw, span };
      case "FalseKeyword":
        return { value: false, raw, span };
      case "NullKeyword":
        return { value: null, raw, span };
      default:
        return { value: this.stringValue(token), raw, span };
    }
  }

  /**
   * A bare word where a value belongs (`module in {pytest}`): only action names are written bare.
   * Reported with a fix that quotes it; the tree keeps it as the string it was meant to be.
   */
  protected bareWord(token: IToken): ValueLiteral {
    const span = this.tokenSpan(token);
    const quoted = JSON.stringify(token.image);
    this.diagnostics.push(
      diagnostic("V0007", `the value \`${token.image}\` is a bare word; an argument's values are JSON values`, {
        span,
        help: `write the string \`${quoted}\` (only action names, in \`action in {…}\`, are written without quotes)`,
        fix: { title: `write \`${quoted}\``, edits: [{ span, newText: quoted }] },
      }),
    );
    return { value: token.image, raw: token.image, span };
  }

  protected stringLiteral(token: IToken): StringLiteral {
    return { value: this.stringValue(token), raw: token.image, span: this.tokenSpan(token) };
  }

  protected stringValue(token: IToken): string {
    return decodeString(token.image, token.tokenType.name !== "UnterminatedString").value;
  }
}
