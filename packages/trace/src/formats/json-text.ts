/**
 * Where the parts of a JSON document are in its text, found by one scan that follows strings and
 * nesting without building any value: `JSON.parse` gives the values, this gives their places, so
 * that an event or a run read from a document keeps the line it was written on.
 *
 * The scans are tolerant: on text that is not valid JSON they still end (in linear time) and give
 * the places they could find, so that a document cut into parts can have each part parsed, and
 * reported, on its own.
 */

/** Where a value is in a text: its first character, and the character after its last. */
export interface TextRange {
  readonly start: number;
  readonly end: number;
}

/**
 * The elements of the array whose `[` is at `open`: where each starts (its first character that is
 * not white space) and ends (after its last such character, before the `,` or `]` after it). An
 * array that is not closed (a truncated file) ends at the end of the text.
 */
export function arrayElementRanges(text: string, open: number): TextRange[] {
  const ranges: TextRange[] = [];
  let depth = 0;
  let start = -1;
  /** The character after the last one of the current element that is not white space. */
  let last = -1;
  const close = () => {
    if (start >= 0) ranges.push({ start, end: last });
    start = -1;
  };
  for (let i = open; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    if (depth === 1 && start < 0 && c !== 93 /* ] */ && c !== 44 /* , */) start = i;
    if (c === 34 /* " */) {
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
      last = Math.min(i + 1, text.length);
      continue;
    }
    if (c === 91 /* [ */ || c === 123 /* { */) depth++;
    else if (c === 93 || c === 125 /* } */) {
      depth--;
      if (depth === 0) {
        close();
        return ranges;
      }
    } else if (c === 44 && depth === 1) {
      close();
      continue;
    }
    last = i + 1;
  }
  close();
  return ranges;
}

/**
 * The offset of the value of `key` in the top-level object of a text (the last one, as `JSON.parse`
 * keeps the last of duplicate keys), or undefined when the text is no object or has no such key.
 */
export function topLevelValueOffset(text: string, key: string): number | undefined {
  let depth = 0;
  let found: number | undefined;
  /** At depth 1: the key just read, waiting for its `:`. */
  let pendingKey: string | undefined;
  let afterColon = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) continue;
    if (depth === 0 && c !== 123 /* { */) return undefined;
    if (afterColon) {
      afterColon = false;
      if (pendingKey === key) found = i;
      pendingKey = undefined;
    }
    if (c === 34 /* " */) {
      const from = i;
      for (i++; i < text.length; i++) {
        const d = text.charCodeAt(i);
        if (d === 92 /* \ */) i++;
        else if (d === 34) break;
      }
      if (depth === 1) {
        // A string at depth 1 is a key when a `:` follows it; only then is its text decoded.
        let next = i + 1;
        while (next < text.length && /\s/.test(text[next]!)) next++;
        if (text.charCodeAt(next) === 58 /* : */) {
          try {
            pendingKey = JSON.parse(text.slice(from, i + 1)) as string;
          } catch {
            pendingKey = undefined;
          }
          i = next;
          afterColon = true;
        }
      }
      continue;
    }
    if (c === 91 /* [ */ || c === 123) depth++;
    else if (c === 93 || c === 125 /* } */) {
      depth--;
      if (depth === 0) return found;
    }
  }
  return found;
}
