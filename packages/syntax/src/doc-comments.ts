import type { IToken } from "chevrotain";
import { tokenMatcher } from "./chevrotain.js";
import { joinSpans, type LineIndex } from "@vigil/diagnostics";
import type { Comment, DocText } from "./ast.js";
import { tokenEnd } from "./cst-access.js";
import { DocComment, PatternKeyword, PolicyKeyword, RuleKeyword } from "./tokens.js";

/**
 * Comments as data, and the attachment of `///` runs to the declarations they document.
 *
 * A doc comment documents the declaration that starts on the line right after it, when each
 * `///` line of the run is alone on its line (a `///` after code on the same line is a trailing
 * comment) and the lines are consecutive: a blank line or a `//` comment ends the run.
 */

export function commentsFromTokens(commentTokens: readonly IToken[], lines: LineIndex): Comment[] {
  return commentTokens.map((token) => ({
    kind: tokenMatcher(token, DocComment) ? "doc" : "line",
    text: token.image,
    span: lines.span(token.startOffset, tokenEnd(token)),
  }));
}

/** Whether only whitespace precedes the comment on its line. */
export function isFirstOnLine(comment: Comment, text: string): boolean {
  const lineStart = comment.span.start - (comment.span.column - 1);
  return text.slice(lineStart, comment.span.start).trim() === "";
}

/** The text of a doc comment line without its `///` and one following space. */
export function docLineText(commentText: string): string {
  const body = commentText.slice(3);
  return body.startsWith(" ") ? body.slice(1) : body;
}

function isDeclarationKeyword(token: IToken): boolean {
  return tokenMatcher(token, PolicyKeyword) || tokenMatcher(token, PatternKeyword) || tokenMatcher(token, RuleKeyword);
}

/**
 * Finds the doc comment of every declaration keyword in `tokens` (the parser's input, comments
 * excluded), keyed by the keyword's offset.
 */
export function attachDocComments(tokens: readonly IToken[], comments: readonly Comment[], text: string, lines: LineIndex): Map<number, DocText> {
  const docs = new Map<number, DocText>();
  let commentIndex = 0;
  for (let tokenIndex = 0; tokenIndex < tokens.length; tokenIndex++) {
    const keyword = tokens[tokenIndex]!;
    // Advance to the first comment after this keyword; the ones before it are the candidates.
    while (commentIndex < comments.length && comments[commentIndex]!.span.start < keyword.startOffset) commentIndex++;
    if (!isDeclarationKeyword(keyword)) continue;
    const previous = tokens[tokenIndex - 1];
    const previousEnd = previous ? tokenEnd(previous) : 0;
    const run: Comment[] = [];
    let expectedLine = lines.position(keyword.startOffset).line - 1;
    for (let index = commentIndex - 1; index >= 0; index--) {
      const comment = comments[index]!;
      if (comment.span.start < previousEnd) break;
      if (comment.kind !== "doc" || comment.span.line !== expectedLine || !isFirstOnLine(comment, text)) break;
      run.push(comment);
      expectedLine--;
    }
    // The run was collected upwards from the keyword; put it back in source order.
    run.reverse();
    const first = run[0];
    const last = run[run.length - 1];
    if (first === undefined || last === undefined) continue;
    docs.set(keyword.startOffset, {
      text: run.map((comment) => docLineText(comment.text)).join("\n"),
      span: joinSpans(first.span, last.span),
    });
  }
  return docs;
}
