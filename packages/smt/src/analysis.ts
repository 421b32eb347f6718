import { ruleId, statementPatterns, type CheckedPattern, type CheckedStatement, type Formula } from "@vigil/checker";
import { evaluateStatement } from "@vigil/engine";
import { keyPathId, type Signature, type TraceEvent } from "@vigil/trace";
import { atomsOf, formulasOf, universeOf } from "./candidate-values.js";
import type { Universe } from "./symbolic.js";
import { eventOf } from "./symbolic-events.js";
import { SymbolicRun } from "./symbolic-run.js";
import { acquireZ3, isRuntimeTrap, releaseZ3, replaceBrokenZ3, type Z3Api } from "./z3-runtime.js";
import { CommandTooLong, Session, Z3_L_FALSE, Z3_L_TRUE } from "./z3-session.js";

/** What a bounded search found: the shortest run, none up to the bound, or no answer (and why). */
export type SearchResult = { readonly found: TraceEvent[] } | { readonly none: true } | { readonly unknown: string };

export interface SymbolicSearchOptions {
  /** Per solver call, in milliseconds (default 30 s): a backstop; `rlimit` is what bounds a call. */
  readonly timeoutMs?: number;
  /**
   * Per solver call, Z3's resource limit (default `defaultSearchRlimit`): a count of the solver's
   * work, deterministic, so that a query stops at the same point on every machine, before its
   * memory can grow without bound. A call that reaches it is undecided.
   */
  readonly rlimit?: number;
  /** The longest query handed to Z3, in characters (default `maximumSearchQueryLength`). */
  readonly maxQueryLength?: number;
}

/**
 * Z3's resource units per solver call. Measured (docs/performance.md): every question of
 * `vigilc analyze` on the examples takes less than 300,000 (the τ-bench airline policy under the
 * signature of its 200 runs, less than 200,000), and a pigeonhole problem Z3 needs about ten
 * seconds for here, less than ten million. A question that needs more is undecided rather than
 * left to run on, and to fill Z3's heap, which cannot grow.
 */
export const defaultSearchRlimit = 10_000_000;

/**
 * The longest query text a search hands to Z3 (characters). Z3's WebAssembly heap is 2 GiB and
 * cannot grow; a query's terms take many times its text. Longer queries are undecided.
 */
export const maximumSearchQueryLength = 16 * 2 ** 20;

/**
 * Bounded searches over symbolic runs: the shortest run of at most `depth` events (of a universe)
 * on which a constraint holds, one Z3 call per length, from one event up.
 *
 * Each call has its own Z3 context, made for it and deleted after it, with a resource limit: what
 * one query takes is given back before the next, and a query that runs out is undecided
 * (`unknown`), never an error. A query too long to build or to hand to Z3 is undecided before Z3
 * sees it. Should Z3's runtime itself fail (a WebAssembly trap), it is replaced by a new one and
 * the query is undecided: the searches after it are answered as if it had not happened.
 */
export class SymbolicSearch {
  private disposed = false;

  private constructor(
    private api: Z3Api,
    private readonly options: Required<SymbolicSearchOptions>,
  ) {}

  static async create(options: SymbolicSearchOptions = {}): Promise<SymbolicSearch> {
    return new SymbolicSearch(await acquireZ3(), {
      timeoutMs: options.timeoutMs ?? 30_000,
      rlimit: options.rlimit ?? defaultSearchRlimit,
      maxQueryLength: options.maxQueryLength ?? maximumSearchQueryLength,
    });
  }

  /**
   * The shortest run of at most `depth` events on which the constraint holds. The constraint is a
   * term, or a list of terms that must all hold (each handed to Z3 as its own assertion).
   */
  async shortest(universe: Universe, depth: number, constraint: (run: SymbolicRun) => string | readonly string[]): Promise<SearchResult> {
    for (let length = 1; length <= depth; length++) {
      const run = new SymbolicRun(universe, length);
      let query: string;
      try {
        const terms = constraint(run);
        // The constraint first: building it may declare constants of its own.
        const asserted = (typeof terms === "string" ? [terms] : terms).map((term) => `(assert ${term})`);
        let size = 0;
        for (const line of [...run.declarations, ...asserted]) size += line.length + 1;
        if (size > this.options.maxQueryLength) return { unknown: tooLarge(length, size, this.options.maxQueryLength) };
        query = [...run.declarations, ...asserted].join("\n");
      } catch (error) {
        // A query whose text is more than a string can hold.
        if (error instanceof RangeError) return { unknown: `the query for runs of ${eventCount(length)} is too large to write` };
        throw error;
      }
      const result = await this.solve(universe, run, query);
      if (!("none" in result)) return result.found !== undefined ? { found: result.found } : { unknown: `the solver could not decide runs of ${eventCount(length)}: ${result.unknown}` };
    }
    return { none: true };
  }

  /** One query, in a context of its own: a run, none, or why it was not decided. */
  private async solve(universe: Universe, run: SymbolicRun, query: string): Promise<{ found?: TraceEvent[]; unknown?: string } | { none: true }> {
    let session: Session | undefined;
    try {
      session = Session.open(this.api.Z3, this.options.timeoutMs, this.options.rlimit);
      const solver = session.solver();
      session.load(solver, query);
      const started = performance.now();
      const checking = session.check(solver, []);
      // Should Z3's worker never answer (it failed on its thread), the runtime is replaced: a
      // backstop past Z3's own time limit, which the resource limit comes well before.
      let watchdog: ReturnType<typeof setTimeout> | undefined;
      const silent = new Promise<"silent">((resolve) => (watchdog = setTimeout(() => resolve("silent"), this.options.timeoutMs + 30_000)));
      const result = await Promise.race([checking, silent]).finally(() => clearTimeout(watchdog));
      if (result === "silent") {
        checking.catch(() => undefined);
        session = undefined;
        this.api = await replaceBrokenZ3(this.api);
        return { unknown: `the solver did not answer within ${Math.round((this.options.timeoutMs + 30_000) / 1000)} s, and was restarted` };
      }
      if (result === Z3_L_TRUE) {
        const values = session.modelValues(solver, run.constants()) as number[];
        return { found: run.choicesOf(values).map((choice, index) => eventOf(universe, choice, index + 1)) };
      }
      if (result === Z3_L_FALSE) return { none: true };
      const reason = session.reasonUnknown(solver);
      // Z3 says `canceled` when a limit stops a tactic rather than the search itself: the time
      // limit if the time is up, else the resource limit.
      const outOfTime = /timeout/.test(reason) || (/canceled/.test(reason) && performance.now() - started >= this.options.timeoutMs);
      if (outOfTime) return { unknown: `it reached the solver's time limit (${this.options.timeoutMs.toLocaleString("en")} ms)` };
      return { unknown: /resource limit|canceled/.test(reason) ? `it reached the solver's resource limit (rlimit ${this.options.rlimit.toLocaleString("en")})` : reason };
    } catch (error) {
      if (isRuntimeTrap(error)) {
        // The runtime's memory is in no known state: nothing of this session is released into it.
        session = undefined;
        this.api = await replaceBrokenZ3(this.api);
        return { unknown: `the solver failed (${(error as Error).message}) and was restarted` };
      }
      if (error instanceof CommandTooLong) return { unknown: error.message };
      return { unknown: `the solver failed: ${error instanceof Error ? error.message : String(error)}` };
    } finally {
      try {
        session?.close();
      } catch (error) {
        if (isRuntimeTrap(error)) this.api = await replaceBrokenZ3(this.api);
      }
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await releaseZ3();
  }
}

function eventCount(length: number): string {
  return length === 1 ? "1 event" : `${length} events`;
}

function tooLarge(length: number, size: number, limit: number): string {
  const shown = (n: number) => (limit >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : `${n.toLocaleString("en")} characters`);
  return `the query for runs of ${eventCount(length)} is ${shown(size)}, more than the ${shown(limit)} the search hands to the solver`;
}

/** The longest run a search is widened to for what a statement needs (a count limit, a window of events). */
export const LONGEST_SEARCH = 12;

/**
 * How many events a run needs to show everything a statement does: a count limit of M breaks only
 * at M + 1 events of its kind, and a window of ℓ events tells a response at its edge from one past
 * it with ℓ + 1 (the trigger and ℓ more). Times need no more events: they are free in a symbolic run
 * (any non-decreasing integers), so every spread of times across a window is searched.
 */
export function eventsNeeded(statement: CheckedStatement): number {
  if (statement.form === "limit" && statement.measure.kind === "count") return statement.measure.maximum + 1;
  if (statement.form === "bresp" && statement.window.unit === "events") return statement.window.size + 1;
  return 1;
}

/**
 * How far a search of these statements goes: the depth asked for, widened to what each statement
 * needs (`eventsNeeded`), as far as `LONGEST_SEARCH`; and, in words, what would need longer runs.
 */
export function searchDepth(statements: readonly CheckedStatement[], requested: number): { readonly depth: number; readonly beyond: readonly string[] } {
  let depth = requested;
  const beyond: string[] = [];
  for (const statement of statements) {
    const needed = eventsNeeded(statement);
    const longest = Math.max(requested, LONGEST_SEARCH);
    depth = Math.max(depth, Math.min(needed, longest));
    if (needed > longest) {
      const what = statement.form === "limit" ? `a limit of ${needed - 1}` : `a window of ${needed - 1} events`;
      beyond.push(`runs of ${needed} events, which rule \`${ruleId(statement)}\` (${what}) needs`);
    }
  }
  return { depth, beyond: [...new Set(beyond)] };
}

/** How a new version of a policy (or rule) relates to the old one, on the runs searched. */
export type Relation = "equivalent" | "stricter" | "looser" | "incomparable";

/** A run one version accepts and the other rejects, replayed through the forward engine. */
export interface Counterexample {
  /** Which version rejects the run. */
  readonly rejectedBy: "old" | "new";
  readonly events: readonly TraceEvent[];
  /** The rules of the rejecting version the forward engine finds broken on it (`policy.rule`). */
  readonly broken: readonly string[];
  /** Whether the forward engine confirms it: the other version holds, and the rejecting one does not. */
  readonly confirmed: boolean;
}

export interface Difference {
  readonly relation: Relation;
  /**
   * `proof` when the relation is proven for all runs (identical statements, or one-event rules
   * whose every class of values was searched); otherwise `bounded`: no other difference in runs of
   * up to `depth` events over the values searched (docs/analysis.md), which leave out `leftOut`.
   */
  readonly basis: "proof" | "bounded";
  /** The longest run searched: the depth asked for, widened to what the rules need (`searchDepth`). */
  readonly depth: number;
  /** Whether the rules read values (arguments, outputs): then every class of them was searched, but for `leftOut`. */
  readonly values: boolean;
  /** What the search left out, in words: values of kinds it did not try, runs longer than `depth`. Empty when nothing was. */
  readonly leftOut: readonly string[];
  readonly counterexamples: readonly Counterexample[];
  /** Set when a search could not be decided (a solver time-out): the relation is then not known. */
  readonly unknown?: string;
}

/** The statements' meaning with what does not change it left out: names, spans, documentation, responses. */
export function meaningOf(statements: readonly CheckedStatement[]): string {
  const ignored = new Set(["span", "doc", "remediation", "response", "name", "policy"]);
  return JSON.stringify(statements, (key, value: unknown) => (ignored.has(key) ? undefined : value));
}

/**
 * Compares two versions of a set of statements (a policy's rules, or one rule): a run each rejects
 * that the other accepts, the shortest found, each replayed through the forward engine.
 *
 * The search goes to `depth` events, widened to what the rules need (`searchDepth`: a limit of N
 * needs N + 1 events), over the values of every class the rules' atoms tell apart
 * (`universeOf`), so that "no difference" holds of every run within the bound it states; what
 * it does not reach is named (`leftOut`). Identical meanings are equivalent by proof; so are two
 * versions made only of one-event rules (`abs`, no scope) when nothing the search left out could
 * change what one event does: one event decides them, and the candidates are every class.
 */
export async function compareStatements(search: SymbolicSearch, old: readonly CheckedStatement[], next: readonly CheckedStatement[], depth: number): Promise<Difference> {
  const searched = searchDepth([...old, ...next], depth);
  if (meaningOf(old) === meaningOf(next)) return { relation: "equivalent", basis: "proof", depth: searched.depth, values: false, leftOut: [], counterexamples: [] };
  const universe = universeOf([...old, ...next], { runLength: searched.depth });
  const holdsAll = (run: SymbolicRun, statements: readonly CheckedStatement[]) => statements.map((s) => run.holds(s));
  const counterexamples: Counterexample[] = [];
  let unknown: string | undefined;
  for (const [rejecting, accepting, rejectedBy] of [[next, old, "new"], [old, next, "old"]] as const) {
    // Each rule's meaning is its own assertion (or named by its own constant), so that no one command is the whole query.
    const result = await search.shortest(universe, searched.depth, (run) => {
      const named = rejecting.map((_, k) => `rejecting_${k}`);
      for (const name of named) run.declarations.push(`(declare-const ${name} Bool)`);
      return [...holdsAll(run, accepting), ...holdsAll(run, rejecting).map((term, k) => `(= ${named[k]} ${term})`), `(not (and true ${named.join(" ")}))`];
    });
    if ("unknown" in result) unknown ??= result.unknown;
    if ("found" in result) counterexamples.push(simplified(replay(result.found, rejecting, accepting, rejectedBy), rejecting, accepting));
  }
  const newRejects = counterexamples.some((c) => c.rejectedBy === "new");
  const oldRejects = counterexamples.some((c) => c.rejectedBy === "old");
  const relation: Relation = newRejects && oldRejects ? "incomparable" : newRejects ? "stricter" : oldRejects ? "looser" : "equivalent";
  const oneEvent = [...old, ...next].every((s) => s.form === "abs" && s.scope === undefined);
  const proven = relation === "equivalent" && unknown === undefined && oneEvent && universe.gaps.every((gap) => !gap.oneEvent);
  const leftOut = proven ? [] : [...new Set([...universe.gaps.map((gap) => gap.text), ...searched.beyond])];
  return {
    relation,
    basis: proven ? "proof" : "bounded",
    depth: searched.depth,
    values: universe.roots.length > 0,
    leftOut,
    counterexamples,
    ...(unknown !== undefined ? { unknown } : {}),
  };
}

/** The run judged by the forward engine, the one semantics: which rules it breaks, and whether that confirms the search. */
function replay(events: readonly TraceEvent[], rejecting: readonly CheckedStatement[], accepting: readonly CheckedStatement[], rejectedBy: "old" | "new"): Counterexample {
  const broken = rejecting.filter((statement) => !evaluateStatement(statement, events).holds).map(ruleId);
  const acceptedWhole = accepting.every((statement) => evaluateStatement(statement, events).holds);
  return { rejectedBy, events, broken, confirmed: broken.length > 0 && acceptedWhole };
}

/**
 * A confirmed run with what does not matter taken out: each argument, output and status the
 * solver chose, removed one at a time, stays removed when the forward engine still confirms the
 * run (so a counterexample shows only what makes the difference).
 */
function simplified(counterexample: Counterexample, rejecting: readonly CheckedStatement[], accepting: readonly CheckedStatement[]): Counterexample {
  if (!counterexample.confirmed) return counterexample;
  let best = counterexample;
  const attempt = (events: TraceEvent[]) => {
    const again = replay(events, rejecting, accepting, counterexample.rejectedBy);
    if (again.confirmed) best = again;
    return again.confirmed;
  };
  for (let index = 0; index < best.events.length; index++) {
    for (const name of Object.keys(best.events[index]!.args)) {
      const events = best.events.map((event, i) => (i === index ? { ...event, args: withoutKey(event.args, name) } : event));
      attempt(events);
    }
    if (best.events[index]!.output !== undefined) {
      const { output: _removed, ...rest } = best.events[index]!;
      attempt(best.events.map((event, i) => (i === index ? (rest as TraceEvent) : event)));
    }
    // A status the run does not need is `ok`, what a call that returned has.
    if (best.events[index]!.status !== "ok") attempt(best.events.map((event, i) => (i === index ? ({ ...event, status: "ok" } as TraceEvent) : event)));
  }
  return best;
}

function withoutKey<T extends Record<string, unknown>>(record: T, name: string): T {
  const { [name]: _removed, ...rest } = record;
  return rest as T;
}

/** What `analyzeStatements` finds, each about a statement (or an action) and the pattern concerned. */
export type Finding =
  | { readonly kind: "unmatchable"; readonly statement: CheckedStatement; readonly pattern: CheckedPattern; readonly exact: boolean; readonly leftOut: readonly string[] }
  | { readonly kind: "vacuous"; readonly statement: CheckedStatement; readonly depth: number; readonly leftOut: readonly string[] }
  | { readonly kind: "alwaysBroken"; readonly statement: CheckedStatement; readonly trigger: CheckedPattern; readonly leftOut: readonly string[] }
  | { readonly kind: "impossibleAction"; readonly action: string; readonly statements: readonly CheckedStatement[]; readonly leftOut: readonly string[] }
  | { readonly kind: "redundant"; readonly statement: CheckedStatement; readonly depth: number; readonly leftOut: readonly string[] }
  | { readonly kind: "conflict"; readonly statement: CheckedStatement; readonly trigger: CheckedPattern; readonly leftOut: readonly string[] }
  | { readonly kind: "unknown"; readonly statement?: CheckedStatement; readonly reason: string };

/** The pattern whose match opens a statement's obligation (none for `abs` and `always`). */
export function triggerOf(statement: CheckedStatement): CheckedPattern | undefined {
  switch (statement.form) {
    case "prec":
    case "resp":
    case "bresp":
    case "rslv":
      return statement.first;
    case "until":
      return statement.trigger;
    case "limit":
      return statement.pattern;
    default:
      return undefined;
  }
}

/**
 * What a policy means, found over symbolic runs of up to `depth` events: patterns no event can match
 * (`unmatchable`; `exact` when the candidates are every class of values the pattern's keys can
 * hold), rules no run breaks (`vacuous`), rules every run reaching their trigger breaks
 * (`alwaysBroken`), actions no run satisfying every rule calls successfully (`impossibleAction`),
 * rules the others imply (`redundant`), and triggers after which no run satisfies every rule
 * (`conflict`). Under a signature, over the runs it allows (`universeOf`). Each finding names what
 * the values searched left out (`leftOut`, empty when nothing).
 *
 * Each statement is analysed on its own: a question the solver cannot decide (its resource limit,
 * a query too large) is an `unknown` finding for that statement, and every other question is
 * still asked; so is a failure of the analysis itself.
 */
export async function analyzeStatements(search: SymbolicSearch, statements: readonly CheckedStatement[], depth: number, signature?: Signature): Promise<Finding[]> {
  const findings: Finding[] = [];
  if (statements.length === 0) return findings;
  // A count of M is broken by M + 1 events: the search goes that far for it (up to a point), as
  // `compareStatements` does (`eventsNeeded`). A limit too large to reach is not asked whether it
  // fires, or whether others imply it.
  const reachOf = (statement: CheckedStatement): number | undefined => {
    const needed = eventsNeeded(statement);
    if (needed <= Math.max(depth, LONGEST_SEARCH)) return Math.max(depth, needed);
    return statement.form === "limit" ? undefined : Math.max(depth, LONGEST_SEARCH);
  };
  const runLength = Math.max(depth, ...statements.map((s) => reachOf(s) ?? depth));
  const universe = universeOf(statements, { runLength, ...(signature !== undefined ? { signature } : {}) });
  const rootIndex = new Map(universe.places.map((place) => [place.id, place.root]));
  const rootsOf = (formulas: readonly Formula[]): Set<number> => {
    const roots = new Set<number>();
    for (const formula of formulas) for (const atom of atomsOf(formula)) if (atom.kind !== "action" && atom.kind !== "status") roots.add(rootIndex.get(`${atom.subject}:${keyPathId(atom.key)}`)!);
    return roots;
  };
  const leftOutOf = (list: readonly CheckedStatement[]): string[] => {
    const roots = rootsOf(list.flatMap(formulasOf));
    return [...new Set(universe.gaps.filter((gap) => roots.has(gap.root)).map((gap) => gap.text))];
  };
  const everything = leftOutOf(statements);
  const all = (run: SymbolicRun, list: readonly CheckedStatement[]) => list.map((s) => run.holds(s));
  const somewhere = (run: SymbolicRun, test: (i: number) => string) => `(or false ${Array.from({ length: run.length }, (_, k) => test(k + 1)).join(" ")})`;
  const none = async (statement: CheckedStatement | undefined, length: number, constraint: (run: SymbolicRun) => string | readonly string[]): Promise<boolean> => {
    const result = await search.shortest(universe, length, constraint);
    if ("unknown" in result) findings.push({ kind: "unknown", ...(statement !== undefined ? { statement } : {}), reason: result.unknown });
    return "none" in result;
  };
  for (const statement of statements) {
    try {
      await analyzeOne(statement);
    } catch (error) {
      findings.push({ kind: "unknown", statement, reason: `the analysis of this rule failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  async function analyzeOne(statement: CheckedStatement): Promise<void> {
    const own = leftOutOf([statement]);
    const patterns = statementPatterns(statement);
    const dead = new Set<CheckedPattern>();
    for (const pattern of patterns) {
      // `action in {}` is written to match nothing (an `until` with no resolution).
      if (pattern.formula.kind === "action" && pattern.formula.actions.length === 0) continue;
      if (await none(statement, 1, (run) => run.matchesAt({ ...statement, scope: undefined } as CheckedStatement, pattern, 1))) {
        dead.add(pattern);
        const roots = rootsOf([pattern.formula]);
        const gaps = universe.gaps.filter((gap) => gap.oneEvent && roots.has(gap.root));
        findings.push({ kind: "unmatchable", statement, pattern, exact: gaps.length === 0, leftOut: [...new Set(gaps.map((gap) => gap.text))] });
      }
    }
    const reach = reachOf(statement);
    if (reach !== undefined && (await none(statement, reach, (run) => `(not ${run.holds(statement)})`))) {
      findings.push({ kind: "vacuous", statement, depth: reach, leftOut: own });
      return;
    }
    const others = statements.filter((s) => s !== statement);
    const trigger = triggerOf(statement);
    if (trigger !== undefined && !dead.has(trigger) && statement.form !== "limit") {
      if (await none(statement, depth, (run) => [run.holds(statement), somewhere(run, (i) => run.matchesAt(statement, trigger, i))])) {
        findings.push({ kind: "alwaysBroken", statement, trigger, leftOut: own });
        return;
      }
      if (others.length > 0 && (await none(statement, depth, (run) => [...all(run, statements), somewhere(run, (i) => run.matchesAt(statement, trigger, i))]))) {
        findings.push({ kind: "conflict", statement, trigger, leftOut: everything });
      }
    }
    if (reach !== undefined && others.length > 0 && (await none(statement, reach, (run) => [...all(run, others), `(not ${run.holds(statement)})`]))) {
      findings.push({ kind: "redundant", statement, depth: reach, leftOut: everything });
    }
  }
  // Actions the rules together never let succeed.
  for (const action of universe.named) {
    const index = universe.actions.indexOf(action);
    try {
      if (await none(undefined, depth, (run) => [...all(run, statements), somewhere(run, (i) => `(and (= ${run.act(i)} ${index}) (= ${run.st(i)} 1))`)])) {
        findings.push({ kind: "impossibleAction", action, statements: statements.filter((s) => mentions(s, action)), leftOut: everything });
      }
    } catch (error) {
      findings.push({ kind: "unknown", reason: `the analysis of \`${action}\` failed: ${error instanceof Error ? error.message : String(error)}` });
    }
  }
  return findings;
}

function mentions(statement: CheckedStatement, action: string): boolean {
  return formulasOf(statement).some((formula) => atomsOf(formula).some((atom) => atom.kind === "action" && atom.actions.includes(action)));
}
