import { ruleId, type CheckedProgram } from "@vigil/checker";
import { compareStatements, SymbolicSearch, type Difference } from "@vigil/smt";
import { automaticPairing, pairByName, pairBySource, pairHasRule, type RulePairing } from "./diff-pairing.js";

/** What changed between two versions of a policy file: the whole, and each rule (by its name, or by the lines it cites). */
export interface PolicyDiff {
  /** The depth asked for; each comparison says how far it searched (`Difference.depth`, widened for limits). */
  readonly depth: number;
  /** How rules were paired, and whether that was chosen by the diff (`pairBy: "auto"`) rather than asked for. */
  readonly pairedBy: RulePairing;
  readonly automatic: boolean;
  /** All the rules of the old file against all of the new one's. */
  readonly whole: Difference;
  readonly rules: readonly RuleDiff[];
}

export interface RuleDiff {
  /** `POLICY.RULE`; paired by source, `OLD ↔ NEW` for a couple, `OLD + OLD ↔ NEW` for rules compared together. */
  readonly rule: string;
  /** `added` and `removed` rules are compared with no rule (the empty policy). */
  readonly change: "unchanged" | "changed" | "added" | "removed";
  readonly difference: Difference;
  /** Paired by source: the rules compared (`POLICY.RULE`), what kind of comparison, and the lines cited (in common, or by a rule in no couple). */
  readonly paired?: { readonly old: readonly string[]; readonly new: readonly string[]; readonly kind: "couple" | "together" | "unpaired"; readonly cites: readonly string[] };
}

export interface DiffOptions {
  /** The longest run searched (default 5 events). */
  readonly depth?: number;
  /** Only this rule (`NAME` or `POLICY.NAME`) is compared on its own; the whole is still every rule of each file. */
  readonly rule?: string;
  /** Per solver call (default 30 s): a backstop to `rlimit`. */
  readonly timeoutMs?: number;
  /** Per solver call, Z3's resource limit (default `defaultSearchRlimit` of @vigil/smt). */
  readonly rlimit?: number;
  /**
   * How rules of the two versions are paired (default `name`): by `POLICY.RULE`, by the
   * specification lines their `/// source:` lines cite (diff-pairing.ts), or `auto`: by source when
   * no name is in both versions and both cite lines, by name otherwise.
   */
  readonly pairBy?: RulePairing | "auto";
}

export const defaultDiffDepth = 5;

/**
 * Compares two checked programs (`compile(…).program` of each version): per rule (paired by
 * `POLICY.RULE`, or by the lines cited: `pairBy`) and as a whole, whether the new version is equivalent, stricter, looser or
 * incomparable, with the shortest runs on which they differ, each replayed through the forward
 * engine (`compareStatements`). Each search goes to `depth` events, or further when the rules
 * compared need it (a limit of N needs N + 1 events), and says how far it went and what it left out.
 * With `rule`, only that rule is compared on its own; the whole is every rule of each file, as
 * ever (docs/cli.md: "the whole file's runs are judged with every rule").
 */
export async function diffPolicies(old: CheckedProgram, next: CheckedProgram, options: DiffOptions = {}): Promise<PolicyDiff> {
  const depth = options.depth ?? defaultDiffDepth;
  const every = (program: CheckedProgram) => program.policies.flatMap((policy) => policy.statements);
  const asked = options.pairBy ?? "name";
  const pairedBy = asked === "auto" ? automaticPairing(every(old), every(next)) : asked;
  const pairs = (pairedBy === "source" ? pairBySource : pairByName)(every(old), every(next)).filter((pair) => options.rule === undefined || pairHasRule(pair, options.rule));
  const search = await SymbolicSearch.create({
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.rlimit !== undefined ? { rlimit: options.rlimit } : {}),
  });
  try {
    const whole = await compareStatements(search, every(old), every(next), depth);
    const rules: RuleDiff[] = [];
    for (const pair of pairs) {
      const difference = await compareStatements(search, pair.old, pair.new, depth);
      const change = pair.old.length === 0 ? "added" : pair.new.length === 0 ? "removed" : difference.relation === "equivalent" && difference.basis === "proof" ? "unchanged" : "changed";
      const paired = pair.kind !== undefined ? { paired: { old: pair.old.map(ruleId), new: pair.new.map(ruleId), kind: pair.kind, cites: pair.cites ?? [] } } : {};
      rules.push({ rule: pair.rule, change, difference, ...paired });
    }
    return { depth, pairedBy, automatic: asked === "auto", whole, rules };
  } finally {
    await search.dispose();
  }
}
