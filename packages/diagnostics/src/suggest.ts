/** Levenshtein distance with an early exit once the distance exceeds `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    previous = current;
  }
  return previous[b.length]!;
}

/**
 * The known name nearest to `name`, if one is near enough to be a plausible misspelling:
 * at most a third of the name's length in edits (and at least one), case differences counting half.
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const limit = Math.max(1, Math.floor(name.length / 3));
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    if (candidate === name) return candidate;
    const folded = editDistance(name.toLowerCase(), candidate.toLowerCase(), limit);
    if (folded > limit) continue;
    const score = folded + (name.toLowerCase() === candidate.toLowerCase() ? 0.5 : 0) + editDistance(name, candidate, limit + 2) * 0.01;
    if (score < bestScore || (score === bestScore && best !== undefined && candidate < best)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
