import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { init, killThreads } from "z3-solver";
import { lowerStatement, type Encoding } from "./lower-smt.js";

type Z3Api = Awaited<ReturnType<typeof init>>;
type Z3Context = import("z3-solver").Context<"vigil">;

export interface SmtDeciderOptions {
  /** Per solver call, in milliseconds. A call that runs out is undecided (fail closed). Default 30 s. */
  readonly timeoutMs?: number;
  readonly encoding?: Encoding;
}

/**
 * Decides statements with Z3 (Algorithm 1, lines 7–10): asserts ⟦τ⟧ ∧ R_φ with each R_φ(e) under
 * an assumption literal, and reads the offending events off unsatisfiable cores. Because ⟦τ⟧ is
 * complete, each R_φ(e) is either entailed or refuted by the facts, and every minimal core is one
 * refuted condition; the decider asks for minimized cores, retires the events they name and asks
 * again until the rest is satisfiable, so it reports every event whose condition is false.
 *
 * One solver call runs at a time per context; create one decider per concurrent user.
 */
export class SmtDecider {
  private constructor(
    private readonly api: Z3Api,
    private readonly context: Z3Context,
    private readonly options: SmtDeciderOptions,
  ) {}

  static async create(options: SmtDeciderOptions = {}): Promise<SmtDecider> {
    const api = await init();
    return new SmtDecider(api, new api.Context("vigil"), options);
  }

  async decide(statement: CheckedStatement, events: readonly TraceEvent[]): Promise<StatementOutcome> {
    const query = lowerStatement(statement, events, this.options.encoding === undefined ? {} : { encoding: this.options.encoding });
    const solver = new this.context.Solver();
    try {
      solver.set("timeout", this.options.timeoutMs ?? 30_000);
      solver.set("core.minimize", true);
      try {
        solver.fromString(query.body);
      } catch (error) {
        return undecided(`the solver rejected the query: ${(error as Error).message}`);
      }
      const literals = new Map(query.conditions.map((c) => [c.literal, c.position]));
      let remaining = query.conditions.map((c) => c.literal);
      const witnesses: number[] = [];
      for (;;) {
        const assumptions = remaining.map((name) => this.context.Bool.const(name));
        const result = await solver.check(...assumptions);
        if (result === "sat") break;
        if (result === "unknown") {
          return { ...undecided(`the solver could not decide the statement: ${solver.reasonUnknown()}`), witnesses: witnesses.sort((a, b) => a - b) };
        }
        const core = solver.unsatCore();
        const named = new Set<string>();
        for (let k = 0; k < core.length(); k++) named.add(core.get(k).toString());
        if (named.size === 0) {
          // The facts alone are inconsistent: that would be a bug in the fact base, never a verdict.
          return undecided("internal error: the fact base is inconsistent without any condition");
        }
        for (const name of named) {
          const position = literals.get(name);
          if (position === undefined) return undecided(`internal error: the core names an unknown literal \`${name}\``);
          witnesses.push(position);
        }
        remaining = remaining.filter((name) => !named.has(name));
      }
      witnesses.sort((a, b) => a - b);
      return { holds: witnesses.length === 0, witnesses };
    } catch (error) {
      return undecided(`the solver failed: ${(error as Error).message}`);
    } finally {
      solver.release();
    }
  }

  /** Stops a running solver call; the statement being decided is reported undecided. */
  interrupt(): void {
    this.context.interrupt();
  }

  /** Releases the solver's worker threads so that the process can exit. */
  async dispose(): Promise<void> {
    await killThreads(this.api.em);
  }
}

function undecided(reason: string): StatementOutcome {
  return { holds: false, witnesses: [], undecided: reason };
}
