import type { CheckedScope } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";

/**
 * A machine's state as plain data (JSON-compatible): what survives between processes, in a store
 * or a snapshot. One shape per kind of machine, named by `form`; a machine is resumed only from a
 * state of its own form (`createMachine` checks it). Bindings are tuple keys, positions 1-based,
 * times epoch milliseconds, amounts exact decimals as text.
 */
export type MachineState =
  | { readonly form: "abs" }
  | {
      readonly form: "prec";
      /** The bindings ψ' has had. */
      readonly seen: readonly string[];
      /** For a ψ' that tests with `contains`: the earlier events it may hold on, and per binding how many were searched. */
      readonly candidates?: readonly TraceEvent[];
      readonly searched?: readonly (readonly [binding: string, searched: number])[];
    }
  | { readonly form: "resp"; readonly waiting: readonly (readonly [binding: string, triggers: readonly number[]])[] }
  | {
      readonly form: "bresp";
      /** The triggers whose windows are open, with their times for a window of time. */
      readonly queue: readonly (readonly [position: number, bindings: readonly string[], time?: number])[];
      readonly latestResponse: readonly (readonly [binding: string, position: number])[];
    }
  | {
      readonly form: "limit";
      /** Per binding: its running measure and how many events make it. */
      readonly totals: readonly (readonly [binding: string, total: string, events: number])[];
      /** With a window: the counted events still in it, oldest first. */
      readonly queue: readonly (readonly [time: number, binding: string, amount: string])[];
    }
  | { readonly form: "rslv"; readonly latest: readonly (readonly [binding: string, position: number])[] }
  | { readonly form: "until"; readonly open: readonly (readonly [binding: string, triggers: readonly number[]])[]; readonly reported: readonly number[] }
  | {
      readonly form: "always";
      /** Per `once`: whether its operand held at some event read. */
      readonly seen: readonly boolean[];
      /** Per `once` (with a window): the time of the latest event its operand held on; null for none. */
      readonly last?: readonly (number | null)[];
    }
  | {
      readonly form: "always-future";
      readonly length: number;
      /** The leaf values of every event read, as base64 of 32-bit words. */
      readonly bits: string;
      /** With a window of time in the body: every event's time, as base64 of 64-bit floats. */
      readonly times?: string;
    }
  | ScopedState;

/** The state of a statement under a scope: where the reading is, the stretch's machine, and the witnesses held back. */
export interface ScopedState {
  readonly form: `scoped-${CheckedScope["kind"]}`;
  readonly phase: "outside" | "inside" | "done";
  readonly offset: number;
  readonly inner: MachineState | null;
  readonly held: readonly number[];
  readonly heldAt: readonly (readonly [witness: number, foundAt: number])[];
}

/** The state of one form. */
export type StateOf<F extends MachineState["form"]> = Extract<MachineState, { readonly form: F }>;
