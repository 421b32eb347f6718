import type { IToken } from "chevrotain";

/** Doc comments of test files: the `///` text above a test is its description in reports and the editor. */

/** The `///` lines right above a token (no blank line or other text between), joined. */
export function docText(docs: readonly IToken[], token: IToken, text: string): string | undefined {
  const lines: string[] = [];
  let before = token.startOffset;
  for (let index = docs.length - 1; index >= 0; index--) {
    const doc = docs[index]!;
    if (doc.startOffset >= before) continue;
    if (text.slice(doc.endOffset! + 1, before).trim() !== "") break;
    lines.unshift(doc.image.slice(3).replace(/^ /, ""));
    before = doc.startOffset;
  }
  return lines.length > 0 ? lines.join("\n") : undefined;
}
