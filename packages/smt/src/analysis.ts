import { statementPatterns, type CheckedPattern, type CheckedStatement, type Formula } from "@vigil/checker";
import { evaluateStatement } from "@vigil/engine";
import type { Signature, TraceEvent } from "@vigil/trace";
import { atomsOf, eventOf, formulasOf, SymbolicRun, universeOf, type Universe } from "./symbolic.js";
import { acquireZ3, releaseZ3, type Z3Api } from "./z3-runtime.js";
import { Session, Z3_L_FALSE, Z3_L_TRUE } from "./z3-session.js";

/** What a bounded search found: the shortest run, none up to the bound, or no answer (and why). */
export type SearchResult = { readonly found: TraceEvent[] } | { readonly none: true } | { readonly unknown: string };

/**
 * Bounded searches over symbolic runs: the shortest run of at most `depth` events (of a universe)
 * on which a constraint holds, one Z3 call per length, from one event up.
 */
export class SymbolicSearch {
  private disposed = false;

  private constructor(
    private readonly api: Z3Api,
    private readonly timeoutMs: number,
  ) {}

  static async create(options: { readonly timeoutMs?: number } = {}): Promise<SymbolicSearch> {
    return new SymbolicSearch(await acquireZ3(), options.timeoutMs ?? 30_000);
  }

  async shortest(universe: Universe, depth: number, constraint: (run: SymbolicRun) => string): Promise<SearchResult> {
    for (let length = 1; length <= depth; length++) {
      const run = new SymbolicRun(universe, length);
      const session = Session.open(this.api.Z3, this.timeoutMs);
      try {
        const solver = session.solver();
        session.load(solver, [...run.declarations, `(assert ${constraint(run)})`].join("\n"));
        const result = await session.check(solver, []);
        if (result === Z3_L_TRUE) {
          const values = session.modelValues(solver, run.constants()) as number[];
          return { found: run.choicesOf(values).map((choice, index) => eventOf(universe, choice, index + 1)) };
        }
        if (result !== Z3_L_FALSE) return { unknown: `the solver could not decide runs of ${length} events: ${session.reasonUnknown(solver)}` };
      } finally {
        session.close();
      }
    }
    return { none: true };
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    await releaseZ3();
  }
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
   * `proof` when the relation is proven for all runs (identical statements, or a fragment with a
   * small-model bound); otherwise `bounded`: no other difference in runs of up to `depth` events
   * over the candidate values (docs/analysis.md).
   */
  readonly basis: "proof" | "bounded";
  readonly depth: number;
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
 * that the other accepts, the shortest found up to `depth` events, each replayed through the
 * forward engine. Identical meanings are equivalent by proof; so are two versions made only of
 * one-event rules (`abs`, no scope) over exact values (no wildcard, regular expression or
 * `contains`): one event decides them, and the candidates cover every value class.
 */
export async function compareStatements(search: SymbolicSearch, old: readonly CheckedStatement[], next: readonly CheckedStatement[], depth: number): Promise<Difference> {
  if (meaningOf(old) === meaningOf(next)) return { relation: "equivalent", basis: "proof", depth, counterexamples: [] };
  const universe = universeOf([...old, ...next]);
  const holdsAll = (run: SymbolicRun, statements: readonly CheckedStatement[]) => `(and true ${statements.map((s) => run.holds(s)).join(" ")})`;
  const counterexamples: Counterexample[] = [];
  let unknown: string | undefined;
  for (const [rejecting, accepting, rejectedBy] of [[next, old, "new"], [old, next, "old"]] as const) {
    const result = await search.shortest(universe, depth, (run) => `(and ${holdsAll(run, accepting)} (not ${holdsAll(run, rejecting)}))`);
    if ("unknown" in result) unknown ??= result.unknown;
    if ("found" in result) counterexamples.push(simplified(replay(result.found, rejecting, accepting, rejectedBy), rejecting, accepting));
  }
  const newRejects = counterexamples.some((c) => c.rejectedBy === "new");
  const oldRejects = counterexamples.some((c) => c.rejectedBy === "old");
  const relation: Relation = newRejects && oldRejects ? "incomparable" : newRejects ? "stricter" : oldRejects ? "looser" : "equivalent";
  const basis = relation === "equivalent" && unknown === undefined && singleEventFragment([...old, ...next]) ? "proof" : "bounded";
  return { relation, basis, depth, counterexamples, ...(unknown !== undefined ? { unknown } : {}) };
}

/** The run judged by the forward engine, the one semantics: which rules it breaks, and whether that confirms the search. */
function replay(events: readonly TraceEvent[], rejecting: readonly CheckedStatement[], accepting: readonly CheckedStatement[], rejectedBy: "old" | "new"): Counterexample {
  const broken = rejecting.filter((statement) => !evaluateStatement(statement, events).holds).map((s) => `${s.policy}.${s.name}`);
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

/** Rules decided by one event each, over values the candidates cover exactly. */
function singleEventFragment(statements: readonly CheckedStatement[]): boolean {
  return statements.every((s) => s.form === "abs" && s.scope === undefined && overExactValues(s.pattern.formula));
}

/** What `analyzeStatements` finds, each about a statement (or an action) and the pattern concerned. */
export type Finding =
  | { readonly kind: "unmatchable"; readonly statement: CheckedStatement; readonly pattern: CheckedPattern; readonly exact: boolean }
  | { readonly kind: "vacuous"; readonly statement: CheckedStatement; readonly depth: number }
  | { readonly kind: "alwaysBroken"; readonly statement: CheckedStatement; readonly trigger: CheckedPattern }
  | { readonly kind: "impossibleAction"; readonly action: string; readonly statements: readonly CheckedStatement[] }
  | { readonly kind: "redundant"; readonly statement: CheckedStatement; readonly depth: number }
  | { readonly kind: "conflict"; readonly statement: CheckedStatement; readonly trigger: CheckedPattern }
  | { readonly kind: "unknown"; readonly statement?: CheckedStatement; readonly reason: string };

/** The longest run searched to break a count limit (one more event than its maximum). */
const LONGEST_LIMIT_SEARCH = 12;

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
 * (`unmatchable`; `exact` when over exact values, where the candidates are every class of values),
 * rules no run breaks (`vacuous`), rules every run reaching their trigger breaks (`alwaysBroken`),
 * actions no run satisfying every rule calls successfully (`impossibleAction`), rules the others
 * imply (`redundant`), and triggers after which no run satisfies every rule (`conflict`). Under a
 * signature, over the runs it allows (`universeOf`).
 */
export async function analyzeStatements(search: SymbolicSearch, statements: readonly CheckedStatement[], depth: number, signature?: Signature): Promise<Finding[]> {
  const findings: Finding[] = [];
  if (statements.length === 0) return findings;
  const universe = universeOf(statements, signature !== undefined ? { signature } : {});
  const all = (run: SymbolicRun, list: readonly CheckedStatement[]) => `(and true ${list.map((s) => run.holds(s)).join(" ")})`;
  const somewhere = (run: SymbolicRun, test: (i: number) => string) => `(or false ${Array.from({ length: run.length }, (_, k) => test(k + 1)).join(" ")})`;
  const none = async (statement: CheckedStatement | undefined, length: number, constraint: (run: SymbolicRun) => string): Promise<boolean> => {
    const result = await search.shortest(universe, length, constraint);
    if ("unknown" in result) findings.push({ kind: "unknown", ...(statement !== undefined ? { statement } : {}), reason: result.unknown });
    return "none" in result;
  };
  for (const statement of statements) {
    const patterns = statementPatterns(statement);
    const dead = new Set<CheckedPattern>();
    for (const pattern of patterns) {
      // `action in {}` is written to match nothing (an `until` with no resolution).
      if (pattern.formula.kind === "action" && pattern.formula.actions.length === 0) continue;
      if (await none(statement, 1, (run) => run.matchesAt({ ...statement, scope: undefined } as CheckedStatement, pattern, 1))) {
        dead.add(pattern);
        findings.push({ kind: "unmatchable", statement, pattern, exact: overExactValues(pattern.formula) });
      }
    }
    // A count of M is broken by M + 1 events: the search goes that far for it (up to a point).
    const needed = statement.form === "limit" && statement.measure.kind === "count" ? statement.measure.maximum + 1 : 1;
    // Too long a run to search: nothing is said of whether it fires, or whether others imply it.
    const reach = needed > Math.max(depth, LONGEST_LIMIT_SEARCH) ? undefined : Math.max(depth, needed);
    if (reach !== undefined && (await none(statement, reach, (run) => `(not ${run.holds(statement)})`))) {
      findings.push({ kind: "vacuous", statement, depth: reach });
      continue;
    }
    const others = statements.filter((s) => s !== statement);
    const trigger = triggerOf(statement);
    if (trigger !== undefined && !dead.has(trigger) && statement.form !== "limit") {
      if (await none(statement, depth, (run) => `(and ${run.holds(statement)} ${somewhere(run, (i) => run.matchesAt(statement, trigger, i))})`)) {
        findings.push({ kind: "alwaysBroken", statement, trigger });
        continue;
      }
      if (others.length > 0 && (await none(statement, depth, (run) => `(and ${all(run, statements)} ${somewhere(run, (i) => run.matchesAt(statement, trigger, i))})`))) {
        findings.push({ kind: "conflict", statement, trigger });
      }
    }
    if (reach !== undefined && others.length > 0 && (await none(statement, reach, (run) => `(and ${all(run, others)} (not ${run.holds(statement)}))`))) {
      findings.push({ kind: "redundant", statement, depth: reach });
    }
  }
  // Actions the rules together never let succeed.
  for (const action of universe.named) {
    const index = universe.actions.indexOf(action);
    if (await none(undefined, depth, (run) => `(and ${all(run, statements)} ${somewhere(run, (i) => `(and (= ${run.act(i)} ${index}) (= ${run.st(i)} 1))`)})`)) {
      findings.push({ kind: "impossibleAction", action, statements: statements.filter((s) => mentions(s, action)) });
    }
  }
  return findings;
}

function mentions(statement: CheckedStatement, action: string): boolean {
  return formulasOf(statement).some((formula) => atomsOf(formula).some((atom) => atom.kind === "action" && atom.actions.includes(action)));
}

/** Whether a formula's atoms compare values exactly (no wildcard, regular expression or `contains`): the candidates then cover every class of values. */
function overExactValues(formula: Formula): boolean {
  return atomsOf(formula).every((atom) => atom.kind !== "keyMatch" && atom.kind !== "keyRegex" && atom.kind !== "keyContains");
}
