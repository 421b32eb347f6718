import { format } from "@vigil/compiler";
import type { TextEdit } from "vscode-languageserver";
import type { TextPositions } from "../positions.js";

/**
 * Formatting with the printer of `vigilc fmt`: the same text, byte for byte. A file with syntax
 * errors is not formatted (no edits), as `vigilc fmt` refuses it. The edit replaces only the part
 * between the unchanged beginning and end, so the cursor and folds outside it stay put.
 */
export function formatDocument(positions: TextPositions): TextEdit[] {
  const text = positions.text;
  const formatted = format(text).text;
  if (formatted === undefined || formatted === text) return [];
  let prefix = 0;
  const shortest = Math.min(text.length, formatted.length);
  while (prefix < shortest && text.charCodeAt(prefix) === formatted.charCodeAt(prefix)) prefix++;
  let suffix = 0;
  while (
    suffix < shortest - prefix &&
    text.charCodeAt(text.length - 1 - suffix) === formatted.charCodeAt(formatted.length - 1 - suffix)
  ) {
    suffix++;
  }
  // Never split a line break \r\n or a surrogate pair between the kept and the replaced parts.
  while (prefix > 0 && (isLowSurrogate(text.charCodeAt(prefix)) || (text.charCodeAt(prefix) === 10 && text.charCodeAt(prefix - 1) === 13))) prefix--;
  while (suffix > 0 && (isLowSurrogate(text.charCodeAt(text.length - suffix)) || (text.charCodeAt(text.length - suffix) === 10 && text.charCodeAt(text.length - suffix - 1) === 13))) suffix--;
  return [{ range: positions.range(prefix, text.length - suffix), newText: formatted.slice(prefix, formatted.length - suffix) }];
}

function isLowSurrogate(code: number): boolean {
  return code >= 0xdc00 && code <= 0xdfff;
}
