import { needsTime, type CheckedScope, type CheckedStatement, type StatementOutcome } from "@vigil/checker";
import { EventTimes, scopeStretches, sortedUnique } from "@vigil/engine";
import type { TraceEvent } from "@vigil/trace";
import type { Z3_ast, Z3_context, Z3_solver } from "z3-solver";
import { lowerStatement } from "./lower-smt.js";
import { QueryTooLarge, type LowerOptions, type SmtQuery } from "./smt-query.js";
import { acquireZ3, releaseZ3, type Z3Api } from "./z3-runtime.js";
import { Session, Z3_L_FALSE, Z3_L_TRUE, Z3_L_UNDEF } from "./z3-session.js";


/**
 * The largest query the decider hands to Z3, in characters. Z3 runs in WebAssembly with a heap of
 * 2 GiB that cannot grow, and a Z3 out of memory aborts the whole runtime (its `memory_max_size`
 * aborts too, it is no way out). Measured: an `abs` over 260,000 events (a 49 MiB query) was decided
 * with 1.9 GB resident; over 330,000 (62 MiB) it had not finished after 15 minutes. A longer query
 * than this limit is refused before it is written whole, and the statement is undecided (fail
 * closed), the message naming the direct evaluator.
 */
export const maximumQueryLength = 32 * 2 ** 20;

function formatSize(characters: number): string {
  return characters >= 2 ** 20 ? `${(characters / 2 ** 20).toFixed(0)} MiB` : `${characters.toLocaleString("en")} characters`;
}

/** How many witnesses are read off unsatisfiable cores one by one before the rest are found at once. */
const defaultCoreRounds = 8;

interface TrackedCondition {
  readonly position: number;
  /** r_i, the assumption literal. */
  readonly literal: Z3_ast;
  /** c_i, the constant equal to R_φ(e_i). */
  readonly condition: Z3_ast;
}

export interface SmtDeciderOptions extends Omit<LowerOptions, "maxLength"> {
  /** The longest query handed to Z3, in characters (default `maximumQueryLength`, 32 MiB). */
  readonly maxQueryLength?: number;
  /** Per solver call, in milliseconds. A call that runs out is undecided (fail closed). Default 30 s. */
  readonly timeoutMs?: number;
  /**
   * How many unsatisfiable cores to read one by one (each a solver call naming one witness) before
   * finding the remaining witnesses at once from a model, with certificates. Default 8.
   */
  readonly coreRounds?: number;
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
  /** The context of the decision in progress, for `interrupt`. */
  private current: Z3_context | undefined;
  private interrupted = false;
  private disposed = false;

  private constructor(
    private readonly api: Z3Api,
    private readonly options: SmtDeciderOptions,
  ) {}

  static async create(options: SmtDeciderOptions = {}): Promise<SmtDecider> {
    return new SmtDecider(await acquireZ3(), options);
  }

  /**
   * Each decision gets a fresh Z3 context, deleted when the decision ends: nothing accumulates
   * across decisions, however many a long-lived process makes. The low-level API is used on
   * purpose: its objects are freed here, explicitly, never by garbage-collector finalizers that
   * could run while a solver call is in flight on Z3's worker thread.
   */
  async decide(statement: CheckedStatement, events: readonly TraceEvent[]): Promise<StatementOutcome> {
    if (this.disposed) throw new Error("this decider has been disposed");
    if (needsTime(statement)) {
      // A window measured without times would be a guess: undecided, as the forward engine has it.
      const times = new EventTimes();
      for (const event of events) {
        const problem = times.problem(event);
        if (problem !== undefined) return undecided(problem);
      }
    }
    if (statement.scope !== undefined) return this.decideScoped(statement, statement.scope, events);
    const limit = this.options.maxQueryLength ?? maximumQueryLength;
    let query: SmtQuery;
    try {
      query = lowerStatement(statement, events, { ...this.options, maxLength: limit });
    } catch (error) {
      if (!(error instanceof QueryTooLarge)) throw error;
      // Refused before it is built whole, let alone solved: Z3's memory is bounded.
      return undecided(
        `the SMT query for this statement over ${events.length.toLocaleString("en")} events is over the decider's limit of ${formatSize(limit)} of text; the direct evaluator (--engine eval) decides it`,
      );
    }
    const z3 = this.api.Z3;
    const config = z3.mk_config();
    z3.set_param_value(config, "timeout", String(this.options.timeoutMs ?? 30_000));
    const context = z3.mk_context_rc(config);
    z3.del_config(config);
    const session = new Session(z3, context);
    this.current = context;
    this.interrupted = false;
    try {
      return await this.solve(session, query.body, query.conditions);
    } catch (error) {
      return undecided(`the solver failed: ${(error as Error).message}`);
    } finally {
      this.current = undefined;
      session.close();
    }
  }

  /**
   * A scoped statement: its stretches are ground facts, computed outside the solver as text matching
   * is (the engine's `scopeStretches`, one definition); each judged stretch is decided as a run of
   * its own, renumbered from 1, and its witnesses are mapped back to their places in the whole run.
   */
  private async decideScoped(statement: CheckedStatement, scope: CheckedScope, events: readonly TraceEvent[]): Promise<StatementOutcome> {
    const { scope: _scope, ...unscoped } = statement;
    const witnesses: number[] = [];
    for (const stretch of scopeStretches(scope, events)) {
      if (!stretch.judged || stretch.events.length === 0) continue;
      const renumbered = stretch.events.map((event, index) => ({ ...event, position: index + 1 }));
      const outcome = await this.decide(unscoped as CheckedStatement, renumbered);
      if (outcome.undecided !== undefined) return { holds: false, witnesses: sortedUnique(witnesses), undecided: outcome.undecided };
      for (const witness of outcome.witnesses) witnesses.push(stretch.events[witness - 1]!.position);
    }
    const sorted = sortedUnique(witnesses);
    return { holds: sorted.length === 0, witnesses: sorted };
  }

  /**
   * Algorithm 1's loop: check ⟦τ⟧ ∧ R_φ under the assumptions r_i; while unsatisfiable, the
   * minimized core names one refuted condition, whose event is a witness and is retired. When many
   * events break the statement, a core per event costs a full solver call each; after
   * `coreRounds` cores the rest are found at once (see `findRemaining`).
   */
  private async solve(
    session: Session,
    body: string,
    conditions: readonly { position: number; literal: string; condition: string }[],
  ): Promise<StatementOutcome> {
    const solver = session.solver();
    try {
      session.load(solver, body);
    } catch (error) {
      return undecided(`the solver rejected the query: ${(error as Error).message}`);
    }
    const tracked = new Map<number, TrackedCondition>();
    for (const condition of conditions) {
      const literal = session.boolConstant(condition.literal);
      tracked.set(session.z3.get_ast_id(session.context, literal), {
        position: condition.position,
        literal,
        condition: session.boolConstant(condition.condition),
      });
    }
    let remaining = [...tracked.values()];
    const witnesses: number[] = [];
    if ((this.options.coreRounds ?? defaultCoreRounds) <= 0) {
      const all = await this.findRemaining(session, solver, remaining);
      if (typeof all === "string") return undecided(all);
      for (const position of all) witnesses.push(position);
      witnesses.sort((a, b) => a - b);
      return { holds: witnesses.length === 0, witnesses };
    }
    const done = (): StatementOutcome => {
      witnesses.sort((a, b) => a - b);
      return { holds: witnesses.length === 0, witnesses };
    };
    for (let round = 0; ; round++) {
      const result = await session.check(solver, remaining.map((c) => c.literal));
      if (result === Z3_L_TRUE) return done();
      if (result === Z3_L_UNDEF) return this.unknown(session, solver, witnesses);
      const core = session.unsatCore(solver);
      if (core.length === 0) {
        // The facts alone are inconsistent: that would be a bug in the fact base, never a verdict.
        return undecided("internal error: the fact base is inconsistent without any condition");
      }
      for (const id of core) {
        const condition = tracked.get(id);
        if (condition === undefined) return undecided("internal error: the core names an unknown literal");
        witnesses.push(condition.position);
      }
      const retired = new Set(core.map((id) => tracked.get(id)!));
      remaining = remaining.filter((c) => !retired.has(c));
      if (round + 1 >= (this.options.coreRounds ?? defaultCoreRounds)) break;
    }
    const rest = await this.findRemaining(session, solver, remaining);
    if (typeof rest === "string") return { ...undecided(rest), witnesses: witnesses.sort((a, b) => a - b) };
    for (const position of rest) witnesses.push(position);
    return done();
  }

  /**
   * The remaining witnesses in three solver calls, each a certificate: a model of ⟦τ⟧ shows which
   * conditions c_i are false (⟦τ⟧ is complete, so every model agrees on them); ⟦τ⟧ ∧ ∨ c_w being
   * unsatisfiable certifies that every one of those is refuted; and the other conditions being
   * satisfiable together certifies that no further event breaks the statement.
   */
  private async findRemaining(session: Session, solver: Z3_solver, remaining: readonly TrackedCondition[]): Promise<number[] | string> {
    const facts = await session.check(solver, []);
    if (facts === Z3_L_UNDEF) return this.reason(session, solver);
    if (facts !== Z3_L_TRUE) return "internal error: the fact base is inconsistent";
    const falsified = session.falseInModel(
      solver,
      remaining.map((c) => c.condition),
    );
    const refuted = remaining.filter((_, index) => falsified[index]);
    const others = remaining.filter((_, index) => !falsified[index]);
    if (refuted.length > 0) {
      const anyHolds = await session.checkWith(solver, session.or(refuted.map((c) => c.condition)));
      if (anyHolds === Z3_L_UNDEF) return this.reason(session, solver);
      if (anyHolds !== Z3_L_FALSE) return "internal error: a condition false in one model of the facts holds in another";
    }
    const rest = await session.check(solver, others.map((c) => c.literal));
    if (rest === Z3_L_UNDEF) return this.reason(session, solver);
    if (rest !== Z3_L_TRUE) return "internal error: the conditions true in a model of the facts are not satisfiable together";
    return refuted.map((c) => c.position);
  }

  private unknown(session: Session, solver: Z3_solver, witnesses: number[]): StatementOutcome {
    return { ...undecided(this.reason(session, solver)), witnesses: witnesses.sort((a, b) => a - b) };
  }

  private reason(session: Session, solver: Z3_solver): string {
    return `the solver could not decide the statement: ${this.interrupted ? "interrupted" : session.reasonUnknown(solver)}`;
  }

  /** Stops a running solver call; the statement being decided is reported undecided. */
  interrupt(): void {
    if (this.current === undefined) return;
    this.interrupted = true;
    this.api.Z3.interrupt(this.current);
  }

  /** Releases this decider's hold on the Z3 runtime; the last one stops its threads so that the process can exit. */
  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await releaseZ3();
  }
}

function undecided(reason: string): StatementOutcome {
  return { holds: false, witnesses: [], undecided: reason };
}
