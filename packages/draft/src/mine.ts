import { compile, TraceRun, type CheckedStatement, type JsonValue, type TraceEvent } from "@vigil/compiler";
import { thresholdCandidates } from "./thresholds.js";

/**
 * Rules mined from runs known to be good (no model): Declare-style templates instantiated over the
 * runs' actions, arguments and outputs, each kept only if the forward engine finds it holding on
 * every good run. The templates:
 *
 * - precedence, `prec(action in {b}, action in {a})`: every b comes after some a;
 * - response, `resp(action in {a}, action in {b})`: every a is followed by some b;
 * - value flow, `prec(action in {b} and k = $x, output contains $x)`: the value b passes as `k` was
 *   in some earlier call's output;
 * - allowed values, `abs(action in {a} and k ~ "*" and not k in {v, w})`: a always passed one of
 *   a few values as `k` (at most three, each seen at least twice as often as there are of them);
 * - threshold, `abs(action in {a} and k > max)`: a never passed a number under `k` above the
 *   largest the good runs show (every value a number, or a string spelling one, in at least three
 *   events; `k` may be a path into objects and lists of objects, `payment_methods.amount`);
 * - count, `abs(action in {a} and count(k) > n)`: a never passed a list under `k` longer than the
 *   longest the good runs show (in at least as many events);
 * - absence, `abs(action in {a})` and `abs(action in {a} and k in {v})`: only with bad runs to
 *   name them (an action, or an argument value, that bad runs show and good runs never do).
 *
 * The miner only proposes; the engine decides which hold. A rule is ranked by how often the good
 * runs exercised it (its trigger's events, in how many runs); with bad runs, only the rules some
 * bad run breaks are kept, ranked by how many.
 */

export interface MineOptions {
  /** Runs known to be bad: keep only the rules some of them break (and name absences from them). */
  readonly bad?: readonly (readonly TraceEvent[])[];
  /** A rule must have been exercised in at least this many good runs (default 2). */
  readonly minRuns?: number;
  /** At most this many rules, the best ranked (default: all). */
  readonly top?: number;
  /** The policy's name (default `mined`). */
  readonly policyName?: string;
}

export interface MinedRule {
  readonly name: string;
  /** What it says, in words (its `///` line). */
  readonly says: string;
  readonly template: "precedence" | "response" | "flow" | "values" | "threshold" | "count" | "absence";
  /** The statement, in the language. */
  readonly statement: string;
  /** Events of the good runs that triggered it, and in how many runs. */
  readonly exercised: { readonly events: number; readonly runs: number };
  /** With bad runs: how many of them it breaks. */
  readonly breaks?: number;
}

export interface MineResult {
  /** The policy (empty when no rule was found). */
  readonly policy: string;
  readonly rules: readonly MinedRule[];
  /** How many candidates were tried, and how many held on every good run. */
  readonly candidates: number;
  readonly held: number;
  readonly goodRuns: number;
  readonly badRuns: number;
}

interface Candidate {
  readonly template: MinedRule["template"];
  readonly statement: string;
  readonly name: string;
  /** What it says, in words. */
  readonly says: string;
  /**
   * For an `abs` (whose trigger, on a good run, never holds): the events that could have broken it,
   * for the support count. Every other form's support is the events its trigger held on, as the
   * forward engine counts them.
   */
  readonly support?: (event: TraceEvent) => boolean;
}

export function mineRules(good: readonly (readonly TraceEvent[])[], options: MineOptions = {}): MineResult {
  const bad = options.bad ?? [];
  const minRuns = options.minRuns ?? 2;
  const candidates = candidatesOf(good, bad);
  // Every candidate at once, through the checker and the forward engine.
  const text = `policy candidates {\n${candidates.map((c, i) => `  rule c${i}: ${c.statement}\n`).join("")}}\n`;
  const compiled = compile(text);
  if (!compiled.ok) {
    const errors = compiled.diagnostics.filter((d) => d.severity === "error").slice(0, 3).map((d) => `${d.code} ${d.message}`);
    throw new Error(`mined candidates do not compile (a bug): ${errors.join("; ")}`);
  }
  const statements = compiled.program.policies[0]!.statements;
  /** Runs every candidate over a run: whether each holds, and on how many events it was exercised. */
  const judge = (run: readonly TraceEvent[]): { holds: boolean; exercised: number }[] => {
    const trace = new TraceRun(statements as CheckedStatement[]);
    for (const event of run) trace.step(event);
    return trace.finish().map((outcome, index) => {
      const support = candidates[index]!.support;
      return { holds: outcome.holds, exercised: support !== undefined ? run.filter(support).length : (trace.triggers(index)?.count ?? 0) };
    });
  };
  const alive = candidates.map(() => true);
  const exercised = candidates.map(() => ({ events: 0, runs: 0 }));
  for (const run of good) {
    judge(run).forEach((judged, index) => {
      if (!judged.holds) alive[index] = false;
      exercised[index] = { events: exercised[index]!.events + judged.exercised, runs: exercised[index]!.runs + (judged.exercised > 0 ? 1 : 0) };
    });
  }
  const breaks = candidates.map(() => 0);
  for (const run of bad) judge(run).forEach(({ holds }, index) => holds || breaks[index]!++);
  const held = alive.filter(Boolean).length;
  let kept = candidates
    .map((candidate, index) => ({ candidate, index }))
    .filter(({ candidate, index }) => alive[index] && (candidate.template === "absence" || exercised[index]!.runs >= minRuns) && (bad.length === 0 || breaks[index]! > 0));
  kept.sort((a, b) => (bad.length > 0 ? breaks[b.index]! - breaks[a.index]! : 0) || exercised[b.index]!.runs - exercised[a.index]!.runs || exercised[b.index]!.events - exercised[a.index]!.events || a.index - b.index);
  if (options.top !== undefined) kept = kept.slice(0, options.top);
  const rules: MinedRule[] = kept.map(({ candidate, index }) => ({
    name: candidate.name,
    says: candidate.says,
    template: candidate.template,
    statement: candidate.statement,
    exercised: exercised[index]!,
    ...(bad.length > 0 ? { breaks: breaks[index]! } : {}),
  }));
  return { policy: policyText(rules, options.policyName ?? "mined", good.length, bad.length), rules, candidates: candidates.length, held, goodRuns: good.length, badRuns: bad.length };
}

function policyText(rules: readonly MinedRule[], name: string, goodRuns: number, badRuns: number): string {
  if (rules.length === 0) return "";
  const lines = [`/// Rules that hold on every one of ${goodRuns} good ${goodRuns === 1 ? "run" : "runs"}${badRuns > 0 ? `, each broken by some of ${badRuns} bad ${badRuns === 1 ? "run" : "runs"}` : ""}, mined by \`vigilc mine\`.`, `policy ${name} {`];
  for (const rule of rules) {
    const exercised = rule.template === "absence" ? "" : `Exercised ${rule.exercised.events} ${rule.exercised.events === 1 ? "time" : "times"} in ${rule.exercised.runs} of the good runs`;
    const broken = rule.breaks !== undefined ? `${exercised === "" ? "B" : "; b"}reaks ${rule.breaks} of the bad runs` : "";
    lines.push(`  /// ${rule.says}`, `  /// ${exercised}${broken}.`, `  rule ${rule.name}: ${rule.statement}`, "");
  }
  lines[lines.length - 1] = "}";
  return `${lines.join("\n")}\n`;
}

/** The candidates over the runs' vocabulary: action pairs, flows into string arguments, allowed values, thresholds, and the bad runs' absences. */
function candidatesOf(good: readonly (readonly TraceEvent[])[], bad: readonly (readonly TraceEvent[])[]): Candidate[] {
  const actions = new Set<string>();
  /** The string-valued arguments of each action in the good runs. */
  const stringKeys = new Map<string, Set<string>>();
  /** Each action's argument values in the good runs, by key. */
  const goodValues = new Map<string, Set<string>>();
  /** Per action and key: how many events passed it, and whether every value was a number, string or boolean. */
  const passed = new Map<string, { events: number; scalar: boolean }>();
  /** For each action, the actions its events were grounded from (a command of a shell call), `null` for an event that was not. */
  const groundedFrom = new Map<string, Set<string | null>>();
  for (const run of good) {
    for (const event of run) {
      actions.add(event.action);
      const from = event.source?.groundedFrom;
      const parent = from !== undefined ? (run.find((e) => e.position === from)?.action ?? null) : null;
      groundedFrom.set(event.action, (groundedFrom.get(event.action) ?? new Set()).add(parent));
      for (const [key, value] of Object.entries(event.args)) {
        goodValues.set(`${event.action}\u0000${key}`, (goodValues.get(`${event.action}\u0000${key}`) ?? new Set()).add(JSON.stringify(value)));
        const seen = passed.get(`${event.action}\u0000${key}`) ?? { events: 0, scalar: true };
        passed.set(`${event.action}\u0000${key}`, { events: seen.events + 1, scalar: seen.scalar && (typeof value === "string" || typeof value === "number" || typeof value === "boolean") });
        if (typeof value === "string" && value.length >= 3) stringKeys.set(event.action, (stringKeys.get(event.action) ?? new Set()).add(key));
      }
    }
  }
  const names = new Set<string>();
  const nameOf = (base: string) => {
    const clean = base.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "").slice(0, 80).replace(/_+$/, "") || "rule";
    const identifier = /^[A-Za-z_]/.test(clean) ? clean : `r_${clean}`;
    let name = identifier;
    for (let n = 2; names.has(name); n++) name = `${identifier}_${n}`;
    names.add(name);
    return name;
  };
  const act = (action: string) => `action in {${JSON.stringify(action)}}`;
  const candidates: Candidate[] = [];
  const sorted = [...actions].sort();
  for (const b of sorted) {
    for (const a of sorted) {
      if (a === b) continue;
      // Every b a command of an `a` shell call: b follows a by grounding, which says nothing.
      const parents = groundedFrom.get(b);
      const byConstruction = parents !== undefined && parents.size === 1 && parents.has(a);
      if (!byConstruction) candidates.push({ template: "precedence", statement: `prec(${act(b)}, ${act(a)})`, name: nameOf(`${a}_before_${b}`), says: `Every \`${b}\` came after some \`${a}\`.` });
      candidates.push({ template: "response", statement: `resp(${act(a)}, ${act(b)})`, name: nameOf(`${b}_after_${a}`), says: `Every \`${a}\` was followed by some \`${b}\`.` });
    }
  }
  for (const b of sorted) {
    for (const key of [...(stringKeys.get(b) ?? [])].sort()) {
      candidates.push({
        template: "flow",
        statement: `prec(${act(b)} and ${JSON.stringify(key)} = $x, output contains $x)`,
        name: nameOf(`${b}_${key}_from_output`),
        says: `The \`${key}\` of every \`${b}\` had appeared in an earlier call's output.`,
      });
    }
  }
  // Allowed values: an argument that took only a few values, each seen often enough to mean it.
  for (const [id, values] of [...goodValues].sort(([x], [y]) => x.localeCompare(y))) {
    const [action, key] = id.split("\u0000") as [string, string];
    const seen = passed.get(id)!;
    if (!seen.scalar || values.size > 3 || seen.events < 3 * values.size) continue;
    const list = [...values].sort().join(", ");
    candidates.push({
      template: "values",
      statement: `abs(${act(action)} and ${JSON.stringify(key)} ~ "*" and not ${JSON.stringify(key)} in {${list}})`,
      name: nameOf(`${action}_${key}_values`),
      says: `Every \`${action}\` passed \`${key}\` as ${values.size === 1 ? list : `one of ${list}`}.`,
      support: (e) => e.action === action && e.args[key] !== undefined,
    });
  }
  // Thresholds: no number above the largest seen, no list longer than the longest.
  for (const threshold of thresholdCandidates(good, act)) candidates.push({ ...threshold, name: nameOf(threshold.name) });
  // Absences: what bad runs did and good runs never did.
  const badActions = new Set<string>();
  const badValues = new Map<string, { action: string; key: string; value: JsonValue }>();
  for (const run of bad) {
    for (const event of run) {
      if (!actions.has(event.action)) badActions.add(event.action);
      for (const [key, value] of Object.entries(event.args)) {
        if (value !== null && typeof value === "object") continue;
        const id = `${event.action}\u0000${key}\u0000${JSON.stringify(value)}`;
        if (!goodValues.get(`${event.action}\u0000${key}`)?.has(JSON.stringify(value)) && actions.has(event.action)) badValues.set(id, { action: event.action, key, value });
      }
    }
  }
  for (const action of [...badActions].sort()) {
    candidates.push({ template: "absence", statement: `abs(${act(action)})`, name: nameOf(`no_${action}`), says: `No good run called \`${action}\`; bad runs did.` });
  }
  for (const { action, key, value } of [...badValues.values()].sort((x, y) => `${x.action}${x.key}${JSON.stringify(x.value)}`.localeCompare(`${y.action}${y.key}${JSON.stringify(y.value)}`))) {
    candidates.push({
      template: "absence",
      statement: `abs(${act(action)} and ${JSON.stringify(key)} in {${JSON.stringify(value)}})`,
      name: nameOf(`no_${action}_${key}_${String(value).slice(0, 20)}`),
      says: `No good run called \`${action}\` with \`${key}\` ${JSON.stringify(value)}; bad runs did.`,
    });
  }
  return candidates;
}
