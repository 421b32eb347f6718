/**
 * The cost of the cheapest typing slips that turn `a` into `b`, with an early exit once it exceeds
 * `limit`: a character left out or typed in costs 1, two neighbours swapped cost 1, and a wrong
 * character costs 2. A wrong character is priced as a deletion and an insertion because it is
 * what separates unrelated words: `head` and `read` differ in one character but are not one slip
 * apart, while `wran` and `warn` are.
 */
function slipDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return Infinity;
  // Three rows of the optimal-string-alignment table: two back, one back, and the current one.
  let twoBack: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const same = a[i - 1] === b[j - 1];
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (same ? 0 : 2));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1] && !same) value = Math.min(value, twoBack[j - 2]! + 1);
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return Infinity;
    twoBack = previous;
    previous = current;
  }
  return previous[b.length]!;
}

/** Names shorter than this are suggested only for a difference of case: any slip changes them too much. */
const shortestMisspelledName = 3;

/**
 * The known name nearest to `name`, if it is plausibly the same name misspelled: the same letters in
 * another case (`block` for `Block`), or a few slips apart relative to the names' length (see
 * {@link slipDistance}): at most 0.4 per character of the longer name, so one slip for names of
 * three or four characters (`wran`), two (or one wrong character) from five (`V10066`, `validat`),
 * and more for longer ones. Names of fewer than three characters, and names that share only
 * some of their letters (`head` and `Read`), are never suggested. Among several, the nearest wins, then the one closest in case,
 * then the first in code-point order.
 */
export function closestName(name: string, known: Iterable<string>): string | undefined {
  const folded = name.toLowerCase();
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of known) {
    if (candidate === name) return candidate;
    const candidateFolded = candidate.toLowerCase();
    let distance: number;
    if (candidateFolded === folded) distance = 0;
    else if (Math.min(name.length, candidate.length) < shortestMisspelledName) continue;
    else {
      const limit = 0.4 * Math.max(name.length, candidate.length);
      distance = slipDistance(folded, candidateFolded, limit);
      if (distance > limit) continue;
    }
    // A difference of case breaks ties: `Validate` for `validat` loses to `validate`.
    const score = distance + 0.01 * Math.min(slipDistance(name, candidate, Infinity), 99);
    if (score < bestScore || (score === bestScore && best !== undefined && candidate < best)) {
      best = candidate;
      bestScore = score;
    }
  }
  return best;
}
