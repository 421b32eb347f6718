/**
 * Sets of UTF-16 code units (or of code points) as sorted inclusive ranges [lo, hi, lo, hi, …]: the
 * character sets of the automata `textClasses` searches, and the few sets the search itself must
 * tell apart (surrogates, word characters).
 */
export type Ranges = number[];

export const MAX_UNIT = 0xffff;
export const HIGH: Ranges = [0xd800, 0xdbff];
export const LOW: Ranges = [0xdc00, 0xdfff];
export const WORD: Ranges = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
export const MAX_CODE_POINT = 0x10ffff;

export function normalized(pairs: readonly (readonly [number, number])[]): Ranges {
  const sorted = [...pairs].filter(([lo, hi]) => lo <= hi).sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of sorted) {
    if (out.length > 0 && lo <= out[out.length - 1]! + 1) out[out.length - 1] = Math.max(out[out.length - 1]!, hi);
    else out.push(lo, hi);
  }
  return out;
}

export function pairs(ranges: Ranges): [number, number][] {
  const out: [number, number][] = [];
  for (let k = 0; k < ranges.length; k += 2) out.push([ranges[k]!, ranges[k + 1]!]);
  return out;
}

export function intersect(a: Ranges, lo: number, hi: number): Ranges {
  const out: number[] = [];
  for (const [l, h] of pairs(a)) {
    const from = Math.max(l, lo);
    const to = Math.min(h, hi);
    if (from <= to) out.push(from, to);
  }
  return out;
}

export function complementOf(ranges: Ranges, max: number): Ranges {
  const out: number[] = [];
  let next = 0;
  for (const [lo, hi] of pairs(ranges)) {
    if (lo > next) out.push(next, lo - 1);
    next = hi + 1;
  }
  if (next <= max) out.push(next, max);
  return out;
}

export function has(ranges: Ranges, unit: number): boolean {
  for (let k = 0; k < ranges.length; k += 2) if (unit >= ranges[k]! && unit <= ranges[k + 1]!) return true;
  return false;
}
