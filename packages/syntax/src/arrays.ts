/**
 * Appends every element of `items` to `target`. `target.push(...items)` passes each element as an
 * argument of the call, which fails (a stack overflow) beyond about a hundred thousand elements; a
 * policy with one rule per line or a set of every value of a trace easily has more.
 */
export function pushAll<T>(target: T[], items: readonly T[]): void {
  for (const item of items) target.push(item);
}
