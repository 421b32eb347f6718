/**
 * What lowering a statement is asked for (`LowerOptions`) and gives back (`SmtQuery`), and the
 * budget of text that stops it (`QueryTooLarge`).
 */

/**
 * How the disjunctions of Figure 5 are written.
 * - `literal`: exactly as in the figure, ∨_{e' ≺ e} … spelled out for every event. Quadratic in
 *   the trace; meant for reading and for cross-checking the shared encoding on small traces.
 * - `shared`: the same formulas, with the running disjunctions named once and reused
 *   (named constants and `define-fun`s, arrays for sets of bound values). Linear in the trace. Each
 *   definition states which disjunction it abbreviates.
 */
export type Encoding = "literal" | "shared";

/** In the shared encoding, by default, `bresp[ℓ]` windows up to this size are spelled out as in Figure 5. */
export const defaultWindowSpelledOutUpTo = 16;

/** The SMT query of one statement: ⟦τ⟧ ∧ R_φ, with one tracked condition R_φ(e) per event. */
export interface SmtQuery {
  /**
   * Declarations, facts and definitions, then per event the condition `c_i = R_φ(e_i)` and
   * `(assert (=> r_i c_i))`.
   */
  readonly body: string;
  /** Per event position: the assumption literal r_i and the constant c_i naming R_φ(e_i). */
  readonly conditions: readonly { readonly position: number; readonly literal: string; readonly condition: string }[];
}

export interface LowerOptions {
  readonly encoding?: Encoding;
  /**
   * The longest query text to write, in characters: lowering stops with `QueryTooLarge` as soon as
   * the text would be longer, before it is all built. Default: no limit.
   */
  readonly maxLength?: number;
  /** Shared encoding: the largest `bresp` bound whose window is spelled out (default 16). */
  readonly windowSpelledOutUpTo?: number;
}

/** A query longer than `LowerOptions.maxLength`: how long it had grown when lowering stopped. */
export class QueryTooLarge extends Error {
  constructor(readonly length: number, readonly limit: number) {
    super(`the SMT query is over ${limit} characters`);
  }
}

/** The characters written so far, against the limit. */
export class TextBudget {
  private used = 0;
  constructor(private readonly limit: number) {}
  charge(length: number): void {
    this.used += length;
    if (this.used > this.limit) throw new QueryTooLarge(this.used, this.limit);
  }
}
