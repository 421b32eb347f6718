/**
 * A leading byte-order mark is an encoding artifact, not part of the text: every reader of input
 * text (files, standard input, text given by a caller) drops it here before reading on.
 */
export function stripByteOrderMark(text: string): string {
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}
