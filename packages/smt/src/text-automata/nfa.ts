import { Condition } from "./position-conditions.js";
import type { Node } from "./re2-pattern.js";
import { intersect, MAX_CODE_POINT, MAX_UNIT, normalized, pairs, type Ranges } from "./unit-ranges.js";

/**
 * An automaton over UTF-16 code units with conditional ε-moves (`Condition`), as Thompson's
 * construction builds it from a pattern's tree.
 */
export interface Nfa {
  /** Per state, the unit-consuming moves: the set of units, and the state reached. */
  readonly moves: { readonly set: Ranges; readonly to: number }[][];
  readonly epsilons: { readonly to: number; readonly condition: Condition }[][];
  readonly start: number;
  readonly final: number;
  /** Whether the condition holds when some substring matches (a regular expression's search), rather than the whole text. */
  readonly search: boolean;
  /** Whether some ε-move reads the unit before its position (`\b`, `\B`, a lone low surrogate). */
  readonly readsBefore: boolean;
}

/** Builds an `Nfa`: fresh states, moves, and a fragment per node of a pattern. */
export class NfaBuilder {
  readonly moves: { set: Ranges; to: number }[][] = [];
  readonly epsilons: { to: number; condition: Condition }[][] = [];
  private states = 0;

  constructor(private readonly units: "units" | "codePoints") {}

  state(): number {
    this.moves.push([]);
    this.epsilons.push([]);
    return this.states++;
  }

  epsilon(from: number, to: number, condition: Condition = Condition.None): void {
    this.epsilons[from]!.push({ to, condition });
  }

  move(from: number, set: Ranges, to: number): void {
    if (set.length > 0) this.moves[from]!.push({ set, to });
  }

  /** A fragment for the node, between fresh states. */
  build(node: Node): { from: number; to: number } {
    const from = this.state();
    const to = this.state();
    switch (node.t) {
      case "set":
        this.character(from, node.ranges, to);
        break;
      case "assert":
        this.epsilon(from, to, node.kind);
        break;
      case "cat": {
        let at = from;
        for (const item of node.items) {
          const part = this.build(item);
          this.epsilon(at, part.from);
          at = part.to;
        }
        this.epsilon(at, to);
        break;
      }
      case "alt":
        for (const item of node.items) {
          const part = this.build(item);
          this.epsilon(from, part.from);
          this.epsilon(part.to, to);
        }
        break;
      case "rep": {
        let at = from;
        for (let k = 0; k < node.min; k++) {
          const part = this.build(node.item);
          this.epsilon(at, part.from);
          at = part.to;
        }
        if (node.max === Infinity) {
          const loop = this.state();
          this.epsilon(at, loop);
          const part = this.build(node.item);
          this.epsilon(loop, part.from);
          this.epsilon(part.to, loop);
          this.epsilon(loop, to);
        } else {
          for (let k = node.min; k < node.max; k++) {
            this.epsilon(at, to);
            const part = this.build(node.item);
            this.epsilon(at, part.from);
            at = part.to;
          }
          this.epsilon(at, to);
        }
        break;
      }
    }
    return { from, to };
  }

  /** One character of the set: one unit, or for code points, a surrogate pair or a lone surrogate. */
  private character(from: number, ranges: Ranges, to: number): void {
    if (this.units === "units") {
      // `compileRegex` writes a surrogate unit as a code point of plane 15 (U+F0000 + its offset).
      const plain = intersect(ranges, 0, MAX_UNIT);
      const moved = intersect(ranges, 0xf0000, 0xf07ff).map((point) => point - 0xf0000 + 0xd800);
      this.move(from, normalized([...pairs(plain), ...pairs(moved)]), to);
      return;
    }
    this.move(from, normalized([...pairs(intersect(ranges, 0, 0xd7ff)), ...pairs(intersect(ranges, 0xe000, MAX_UNIT))]), to);
    const highs = intersect(ranges, 0xd800, 0xdbff);
    if (highs.length > 0) {
      const middle = this.state();
      this.move(from, highs, middle);
      this.epsilon(middle, to, Condition.NextNotLow);
    }
    const lows = intersect(ranges, 0xdc00, 0xdfff);
    if (lows.length > 0) {
      const middle = this.state();
      this.epsilon(from, middle, Condition.PreviousNotHigh);
      this.move(middle, lows, to);
    }
    // Astral code points: each range as boxes of (high surrogates) × (low surrogates).
    for (const [lo, hi] of pairs(intersect(ranges, 0x10000, MAX_CODE_POINT))) {
      const high = (point: number) => 0xd800 + ((point - 0x10000) >> 10);
      const low = (point: number) => 0xdc00 + ((point - 0x10000) & 0x3ff);
      const box = (highs: [number, number], lows: [number, number]) => {
        if (highs[0] > highs[1] || lows[0] > lows[1]) return;
        const middle = this.state();
        this.move(from, [highs[0], highs[1]], middle);
        this.move(middle, [lows[0], lows[1]], to);
      };
      if (high(lo) === high(hi)) box([high(lo), high(lo)], [low(lo), low(hi)]);
      else {
        box([high(lo), high(lo)], [low(lo), 0xdfff]);
        box([high(lo) + 1, high(hi) - 1], [0xdc00, 0xdfff]);
        box([high(hi), high(hi)], [0xdc00, low(hi)]);
      }
    }
  }
}
