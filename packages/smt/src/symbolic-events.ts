import type { JsonValue, TraceEvent } from "@vigil/trace";
import { eq } from "./smt-terms.js";
import type { Universe } from "./symbolic.js";

/** One symbolic event's choices: indexes into the universe's actions and each root's candidates (0 for none), and its time. */
export interface EventChoice {
  readonly action: number;
  /** 0 none, 1 ok, 2 error. */
  readonly status: number;
  /** Per root (the universe's order): 0 for none, c for the root's candidate c − 1. */
  readonly roots: readonly number[];
  readonly time?: number;
}

/** A concrete event of the choices: what a counterexample run holds, and what the engines judge. */
export function eventOf(universe: Pick<Universe, "actions" | "roots">, choice: EventChoice, position: number): TraceEvent {
  const args: Record<string, JsonValue> = {};
  let output: string | undefined;
  universe.roots.forEach((root, index) => {
    const candidate = choice.roots[index] ?? 0;
    if (candidate === 0) return;
    const value = root.candidates[candidate - 1]!;
    if (root.subject === "args") args[root.name!] = value;
    else output = String(value);
  });
  return {
    position,
    action: universe.actions[choice.action]!,
    args,
    ...(choice.status === 1 ? { status: "ok" } : choice.status === 2 ? { status: "error" } : {}),
    ...(output !== undefined ? { output } : {}),
    ...(choice.time !== undefined ? { time: choice.time } : {}),
  } as TraceEvent;
}

/**
 * The unknown events of a symbolic run of `length` events of a universe, and their reading. Each
 * event i (1-based) is the constants `act_i`, `st_i`, `r<root>_i` and, when the universe is timed,
 * `t_i`, each bounded to the choices it stands for (times never go back); a model's values of them
 * are the run's choices (`choicesOf`), which `eventOf` makes into the counterexample's events.
 */
export class SymbolicEvents {
  readonly declarations: string[] = [];

  constructor(
    readonly universe: Universe,
    readonly length: number,
  ) {
    for (let i = 1; i <= length; i++) {
      this.declarations.push(`(declare-const ${this.act(i)} Int)`, `(assert (and (<= 0 ${this.act(i)}) (< ${this.act(i)} ${universe.actions.length})))`);
      this.declarations.push(`(declare-const ${this.st(i)} Int)`, `(assert (and (<= 0 ${this.st(i)}) (<= ${this.st(i)} 2)))`);
      universe.roots.forEach((root, index) => {
        const r = this.root(index, i);
        this.declarations.push(`(declare-const ${r} Int)`, `(assert (and (<= 0 ${r}) (<= ${r} ${root.candidates.length})))`);
      });
      if (universe.timed) {
        this.declarations.push(`(declare-const ${this.time(i)} Int)`);
        this.declarations.push(i === 1 ? `(assert (>= ${this.time(i)} 0))` : `(assert (>= ${this.time(i)} ${this.time(i - 1)}))`);
      }
    }
  }

  act(i: number): string {
    return `act_${i}`;
  }
  st(i: number): string {
    return `st_${i}`;
  }
  time(i: number): string {
    return `t_${i}`;
  }
  root(root: number, i: number): string {
    return `r${root}_${i}`;
  }

  /** The constants whose values make the run's events, in order, for reading a model. */
  constants(): { name: string; sort: "Int" }[] {
    const names: string[] = [];
    for (let i = 1; i <= this.length; i++) {
      names.push(this.act(i), this.st(i), ...this.universe.roots.map((_, index) => this.root(index, i)));
      if (this.universe.timed) names.push(this.time(i));
    }
    return names.map((name) => ({ name, sort: "Int" }));
  }

  /** The run's choices from the constants' values (in the order of `constants`). */
  choicesOf(values: readonly number[]): EventChoice[] {
    const width = 2 + this.universe.roots.length + (this.universe.timed ? 1 : 0);
    return Array.from({ length: this.length }, (_, index) => {
      const row = values.slice(index * width, (index + 1) * width);
      return { action: row[0]!, status: row[1]!, roots: row.slice(2, 2 + this.universe.roots.length), ...(this.universe.timed ? { time: row[width - 1]! } : {}) };
    });
  }

  /** The constraints that fix the run to concrete choices (every event's, in order). */
  fixedTo(choices: readonly EventChoice[]): string[] {
    return choices.flatMap((choice, index) => {
      const i = index + 1;
      return [
        `(assert ${eq(this.act(i), String(choice.action))})`,
        `(assert ${eq(this.st(i), String(choice.status))})`,
        ...choice.roots.map((value, root) => `(assert ${eq(this.root(root, i), String(value))})`),
        ...(this.universe.timed ? [`(assert ${eq(this.time(i), String(choice.time ?? 0))})`] : []),
      ];
    });
  }
}
