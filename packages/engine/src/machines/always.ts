import type { Formula, TemporalFormula } from "@vigil/checker";
import { hasTimeWindow, isTemporal } from "@vigil/checker/ir";
import type { TraceEvent } from "@vigil/trace";
import { compilePattern, compilePendingPattern, type EventPredicate, type PendingPredicate } from "../atoms.js";
import type { MachineState, StateOf } from "../machine-state.js";
import { junctionTruth, notTruth, Truth, truthOf } from "../truth.js";
import { DecidedAtEachEvent, NONE } from "./shared.js";
import type { StatementMachine } from "./statement-machine.js";

/**
 * A temporal body as a list of nodes in evaluation order (children before parents). Leaves are its
 * largest subformulas without `once` or `eventually`: one-event predicates.
 */
type BodyNode =
  | { readonly kind: "leaf"; readonly predicate: EventPredicate; readonly pending: PendingPredicate; readonly leaf: number }
  | { readonly kind: "and" | "or"; readonly operands: readonly number[] }
  | { readonly kind: "not" | "once" | "eventually"; readonly operand: number; readonly summary: number; readonly within?: number };

interface CompiledBody {
  readonly nodes: readonly BodyNode[];
  readonly leaves: number;
  /** How many `once`/`eventually` nodes: each keeps one running summary. */
  readonly summaries: number;
}

function compileBody(body: Formula): CompiledBody {
  const nodes: BodyNode[] = [];
  let leaves = 0;
  let summaries = 0;
  const visit = (formula: Formula): number => {
    if (!isTemporal(formula)) {
      nodes.push({ kind: "leaf", predicate: compilePattern(formula), pending: compilePendingPattern(formula), leaf: leaves++ });
      return nodes.length - 1;
    }
    switch (formula.kind) {
      case "and":
      case "or": {
        const operands = formula.operands.map(visit);
        nodes.push({ kind: formula.kind, operands });
        return nodes.length - 1;
      }
      case "not": {
        const operand = visit(formula.operand);
        nodes.push({ kind: "not", operand, summary: -1 });
        return nodes.length - 1;
      }
      case "once":
      case "eventually": {
        const operand = visit(formula.operand);
        const within = (formula as TemporalFormula).within;
        nodes.push({ kind: formula.kind, operand, summary: summaries++, ...(within !== undefined ? { within } : {}) });
        return nodes.length - 1;
      }
      default:
        throw new Error("internal error: an atom is not temporal");
    }
  };
  visit(body);
  return { nodes, leaves, summaries };
}

/** The value of a body's node by its index: `junctionTruth`'s reader, shared so that no event allocates one. */
const valueAt = (node: number, values: readonly Truth[]): Truth => values[node]!;

/**
 * □Θ with a body that looks only at the present and the past: R(e) = Θ(e), decided at e. Each
 * `once Θ'` keeps whether Θ' held at some earlier event ((◇⁻Θ')(e_i) = ∨_{j < i} Θ'(e_j)), and each
 * `once[d] Θ'` the time of the latest such event: Θ' held within d before e_i when t(e_i) minus that
 * time is at most d (times never go back, so the latest is the nearest).
 */
export class PastBodyMachine extends DecidedAtEachEvent implements StatementMachine {
  private readonly body: CompiledBody;
  private readonly seen: boolean[];
  /** Per summary of a `once[d]`: the time of the latest event its operand held on (-Infinity: none). */
  private readonly last: number[];
  private readonly values: boolean[];
  /** Θ is judged on every event (a body can be false on an event that matches nothing). */
  readonly relevantActions = undefined;
  constructor(formula: Formula, state?: StateOf<"always">) {
    super();
    this.body = compileBody(formula);
    this.seen = state === undefined ? new Array<boolean>(this.body.summaries).fill(false) : [...state.seen];
    const last = state?.last;
    this.last = last === undefined ? new Array<number>(this.body.summaries).fill(-Infinity) : last.map((time) => time ?? -Infinity);
    this.values = new Array<boolean>(this.body.nodes.length).fill(false);
  }
  /** The value of a `once` node at an event of time `time`. */
  private onceValue(node: { readonly summary: number; readonly within?: number }, time: number | undefined): boolean {
    if (node.within === undefined) return this.seen[node.summary]!;
    return (time ?? 0) - this.last[node.summary]! <= node.within;
  }
  /** Evaluates every node at `event` (no short cut: each `once` operand must be known to update its summary). */
  private evaluate(event: TraceEvent): boolean {
    const { nodes } = this.body;
    const values = this.values;
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      switch (node.kind) {
        case "leaf":
          values[index] = node.predicate(event);
          break;
        // Loops, not every/some: this runs per node and per event, and a closure each time is garbage.
        case "and": {
          let all = true;
          for (let k = 0; k < node.operands.length && all; k++) all = values[node.operands[k]!]!;
          values[index] = all;
          break;
        }
        case "or": {
          let any = false;
          for (let k = 0; k < node.operands.length && !any; k++) any = values[node.operands[k]!]!;
          values[index] = any;
          break;
        }
        case "not":
          values[index] = !values[node.operand];
          break;
        case "once":
          values[index] = this.onceValue(node, event.time);
          break;
        case "eventually":
          throw new Error("internal error: `eventually` in a past-only body");
      }
    }
    return values[nodes.length - 1]!;
  }
  /** Θ on a call that has not run, in Kleene's three values: false only if false whatever its output. */
  private evaluatePending(event: TraceEvent): Truth {
    const { nodes } = this.body;
    const values: Truth[] = new Array<Truth>(nodes.length);
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      switch (node.kind) {
        case "leaf":
          values[index] = node.pending(event);
          break;
        case "and":
        case "or":
          values[index] = junctionTruth(node.kind, node.operands, valueAt, values);
          break;
        case "not":
          values[index] = notTruth(values[node.operand]!);
          break;
        case "once":
          values[index] = truthOf(this.onceValue(node, event.time));
          break;
        case "eventually":
          throw new Error("internal error: `eventually` in a past-only body");
      }
    }
    return values[nodes.length - 1]!;
  }
  probe(event: TraceEvent): number[] {
    return this.evaluatePending(event) === Truth.False ? [event.position] : NONE;
  }
  step(event: TraceEvent): number[] {
    const holds = this.evaluate(event);
    const { nodes } = this.body;
    for (const node of nodes) {
      if (node.kind !== "once" || !this.values[node.operand]) continue;
      this.seen[node.summary] = true;
      this.last[node.summary] = event.time ?? 0;
    }
    return holds ? NONE : [event.position];
  }
  snapshot(): MachineState {
    return this.body.nodes.some((node) => node.kind === "once" && node.within !== undefined)
      ? { form: "always", seen: [...this.seen], last: this.last.map((time) => (Number.isFinite(time) ? time : null)) }
      : { form: "always", seen: [...this.seen] };
  }
}

/**
 * □Θ with a body that uses `eventually`: Θ(e) depends on events after e, so no event's condition
 * is final before the run ends. The machine keeps, per event, one bit per leaf (the one-event
 * subformulas, evaluated when the event is read) and at `finish` runs the summaries over them:
 * `once` forwards, `eventually` backwards ((◇⁺Θ')(e_i) = ∨_{j > i} Θ'(e_j)).
 */
export class FutureBodyMachine implements StatementMachine {
  private readonly body: CompiledBody;
  /** 32-bit words per event: enough for one bit per leaf. */
  private readonly stride: number;
  /** Leaf values: bit `leaf % 32` of word `i * stride + ⌊leaf / 32⌋` is the leaf's value on event i + 1. */
  private bits: Uint32Array;
  private length: number;
  /** With a window of time in the body: each event's time; undefined otherwise. */
  private times: Float64Array | undefined;
  /** Θ is judged on every event (a body can be false on an event that matches nothing). */
  readonly relevantActions = undefined;
  constructor(formula: Formula, state?: StateOf<"always-future">) {
    this.body = compileBody(formula);
    this.stride = Math.max(1, Math.ceil(this.body.leaves / 32));
    const timed = hasTimeWindow(formula);
    if (state === undefined) {
      this.bits = new Uint32Array(1024 * this.stride);
      this.length = 0;
      if (timed) this.times = new Float64Array(1024);
    } else {
      const saved = Buffer.from(state.bits, "base64");
      this.length = state.length;
      this.bits = new Uint32Array(Math.max(1024, this.length) * this.stride);
      this.bits.set(new Uint32Array(saved.buffer.slice(saved.byteOffset, saved.byteOffset + this.length * this.stride * 4)));
      if (timed) {
        this.times = new Float64Array(Math.max(1024, this.length));
        const savedTimes = Buffer.from(state.times ?? "", "base64");
        this.times.set(new Float64Array(savedTimes.buffer.slice(savedTimes.byteOffset, savedTimes.byteOffset + Math.min(savedTimes.byteLength, this.length * 8))));
      }
    }
  }
  private leafValue(i: number, leaf: number): number {
    return (this.bits[i * this.stride + (leaf >>> 5)]! >>> (leaf & 31)) & 1;
  }
  step(event: TraceEvent): number[] {
    if ((this.length + 1) * this.stride > this.bits.length) {
      const grown = new Uint32Array(this.bits.length * 2);
      grown.set(this.bits);
      this.bits = grown;
    }
    if (this.times !== undefined) {
      if (this.length >= this.times.length) {
        const grown = new Float64Array(this.times.length * 2);
        grown.set(this.times);
        this.times = grown;
      }
      this.times[this.length] = event.time ?? 0;
    }
    const base = this.length * this.stride;
    for (const node of this.body.nodes) {
      if (node.kind !== "leaf" || !node.predicate(event)) continue;
      const word = base + (node.leaf >>> 5);
      this.bits[word] = this.bits[word]! | (1 << (node.leaf & 31));
    }
    this.length++;
    return NONE;
  }
  probe(): number[] {
    return NONE;
  }
  finish(): number[] {
    const n = this.length;
    const { nodes } = this.body;
    const tables: Uint8Array[] = [];
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index]!;
      const table = new Uint8Array(n);
      switch (node.kind) {
        case "leaf":
          for (let i = 0; i < n; i++) table[i] = this.leafValue(i, node.leaf);
          break;
        case "and":
          for (let i = 0; i < n; i++) table[i] = node.operands.every((operand) => tables[operand]![i] === 1) ? 1 : 0;
          break;
        case "or":
          for (let i = 0; i < n; i++) table[i] = node.operands.some((operand) => tables[operand]![i] === 1) ? 1 : 0;
          break;
        case "not": {
          const operand = tables[node.operand]!;
          for (let i = 0; i < n; i++) table[i] = operand[i] === 1 ? 0 : 1;
          break;
        }
        case "once": {
          const operand = tables[node.operand]!;
          const within = node.within;
          if (within !== undefined) {
            // The nearest earlier event the operand held on, within the window.
            const times = this.times!;
            let latest = -1;
            for (let i = 0; i < n; i++) {
              table[i] = latest >= 0 && times[i]! - times[latest]! <= within ? 1 : 0;
              if (operand[i] === 1) latest = i;
            }
            break;
          }
          let seen = 0;
          for (let i = 0; i < n; i++) {
            table[i] = seen;
            seen |= operand[i]!;
          }
          break;
        }
        case "eventually": {
          const operand = tables[node.operand]!;
          const within = node.within;
          if (within !== undefined) {
            // The nearest later event the operand holds on, within the window.
            const times = this.times!;
            let next = -1;
            for (let i = n - 1; i >= 0; i--) {
              table[i] = next >= 0 && times[next]! - times[i]! <= within ? 1 : 0;
              if (operand[i] === 1) next = i;
            }
            break;
          }
          let seen = 0;
          for (let i = n - 1; i >= 0; i--) {
            table[i] = seen;
            seen |= operand[i]!;
          }
          break;
        }
      }
      tables.push(table);
    }
    const top = tables[nodes.length - 1]!;
    const witnesses: number[] = [];
    for (let i = 0; i < n; i++) if (top[i] === 0) witnesses.push(i + 1);
    return witnesses;
  }
  openObligations(): number {
    return this.length;
  }
  snapshot(): MachineState {
    const words = this.bits.subarray(0, this.length * this.stride);
    const bits = Buffer.from(words.buffer, words.byteOffset, words.byteLength).toString("base64");
    if (this.times === undefined) return { form: "always-future", length: this.length, bits };
    const times = this.times.subarray(0, this.length);
    return { form: "always-future", length: this.length, bits, times: Buffer.from(times.buffer, times.byteOffset, times.byteLength).toString("base64") };
  }
}
