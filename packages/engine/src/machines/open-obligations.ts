import { NONE } from "./shared.js";

/**
 * The bookkeeping of obligations still open per binding, shared by the machines whose triggers wait
 * for later events (`resp`, `rslv`, `until`).
 */

/**
 * For an observer: per trigger still open under more than one binding, how many of its bindings are
 * still open (a trigger open under one binding is not kept: its first discharge is its last). Only
 * a machine with an observer has one.
 */
export class OpenBindings {
  private readonly counts = new Map<number, number>();

  /** Counted from the positions a machine's state holds open, one per binding (a resumed machine). */
  static of(positions: Iterable<number>): OpenBindings {
    const open = new OpenBindings();
    for (const position of positions) open.counts.set(position, (open.counts.get(position) ?? 0) + 1);
    for (const [position, count] of open.counts) if (count === 1) open.counts.delete(position);
    return open;
  }

  /** A trigger opens under `bindings` bindings. */
  opened(position: number, bindings: number): void {
    if (bindings > 1) this.counts.set(position, bindings);
  }

  /** One binding of the trigger is discharged: whether it was its last. */
  discharged(position: number): boolean {
    const count = this.counts.get(position);
    if (count === undefined) return true;
    if (count === 1) {
      this.counts.delete(position);
      return true;
    }
    this.counts.set(position, count - 1);
    return false;
  }

  /** The trigger is a witness: it will never be answered. */
  forget(position: number): void {
    this.counts.delete(position);
  }
}

/**
 * Positions of events waiting per binding (the triggers of `resp` still waiting for a response, the
 * triggers of `until` whose interval is open), with a running count of them all: the machine's open
 * obligations, read at every budget check.
 */
export class WaitingByBinding {
  private readonly byBinding: Map<string, number[]>;
  private total = 0;

  constructor(saved: readonly (readonly [string, readonly number[]])[] = []) {
    this.byBinding = new Map(saved.map(([binding, positions]) => [binding, [...positions]]));
    for (const positions of this.byBinding.values()) this.total += positions.length;
  }

  add(binding: string, position: number): void {
    const positions = this.byBinding.get(binding);
    if (positions === undefined) this.byBinding.set(binding, [position]);
    else positions.push(position);
    this.total++;
  }

  of(binding: string): readonly number[] {
    return this.byBinding.get(binding) ?? NONE;
  }

  bindings(): string[] {
    return [...this.byBinding.keys()];
  }

  delete(binding: string): void {
    this.total -= this.byBinding.get(binding)?.length ?? 0;
    this.byBinding.delete(binding);
  }

  clear(): void {
    this.byBinding.clear();
    this.total = 0;
  }

  /** Every waiting position (a position waiting under several bindings appears once per binding). */
  positions(): number[] {
    const all: number[] = [];
    for (const positions of this.byBinding.values()) for (const position of positions) all.push(position);
    return all;
  }

  get size(): number {
    return this.total;
  }

  saved(): [string, number[]][] {
    return [...this.byBinding].map(([binding, positions]) => [binding, [...positions]]);
  }
}
