import type { Diagnostic } from "@vigil/compiler";

/**
 * What the language server asks of its analysis worker, and what the worker answers. The worker
 * compiles the texts itself (a compiled policy does not cross threads), so spans in its answers
 * are offsets into the texts it was given.
 */

export type WorkerRequest =
  | {
      readonly kind: "analyze";
      readonly id: number;
      readonly text: string;
      readonly file?: string;
      readonly depth: number;
      readonly timeoutMs: number;
    }
  | {
      readonly kind: "diff";
      readonly id: number;
      readonly oldText: string;
      readonly oldName: string;
      readonly newText: string;
      readonly newName: string;
      readonly depth: number;
      readonly timeoutMs: number;
    };

/** The diff of two versions, rendered where it was computed (`diff-report` of the compiler). */
export interface DiffAnswer {
  /** The whole policy's relation (`equivalent` only when proven or found within the depth, as `basis` says). */
  readonly relation: "equivalent" | "stricter" | "looser" | "incomparable";
  readonly basis: "proof" | "bounded";
  /** Whether every rule is unchanged or equivalent and the whole is too. */
  readonly same: boolean;
  readonly markdown: string;
  /** `vigilc diff --format json`'s shape. */
  readonly json: object;
  /** Runs the forward engine did not confirm (a bug when there are any). */
  readonly unconfirmed: number;
}

export type WorkerAnswer =
  | { readonly id: number; readonly ok: true; readonly diagnostics: readonly Diagnostic[] }
  | { readonly id: number; readonly ok: true; readonly diff: DiffAnswer }
  | { readonly id: number; readonly ok: false; readonly error: string };
