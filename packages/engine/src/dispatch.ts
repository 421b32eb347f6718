import type { StatementMachine } from "./machines/statement-machine.js";

/**
 * Which machines an event of a given action must go through: those whose patterns can hold on that
 * action, and those that must see every event. Most rules name their actions, so an event usually
 * reaches a few machines instead of all of them. The lists are cached per action name, up to a
 * bound: an agent can make up action names, and the cache must not grow with the trace.
 */
export class Dispatch {
  private readonly cache = new Map<string, readonly number[]>();
  private readonly always: readonly number[];

  constructor(private readonly machines: readonly StatementMachine[]) {
    this.always = machines.flatMap((machine, index) => (machine.relevantActions === undefined ? [index] : []));
  }

  /** The indices of the machines an event of `action` must go through, ascending. */
  machinesFor(action: string): readonly number[] {
    const cached = this.cache.get(action);
    if (cached !== undefined) return cached;
    const indices: number[] = [];
    this.machines.forEach((machine, index) => {
      if (machine.relevantActions === undefined || machine.relevantActions.has(action)) indices.push(index);
    });
    const result = indices.length === this.always.length ? this.always : indices;
    if (this.cache.size < MAXIMUM_CACHED_ACTIONS) this.cache.set(action, result);
    return result;
  }
}

const MAXIMUM_CACHED_ACTIONS = 4096;
