import { ruleId, type CheckedProgram, type CheckedStatement } from "@vigil/checker";
import { compareStatements, SymbolicSearch, type Difference } from "@vigil/smt";

/** What changed between two versions of a policy file: the whole, and each rule by its name. */
export interface PolicyDiff {
  /** The depth asked for; each comparison says how far it searched (`Difference.depth`, widened for limits). */
  readonly depth: number;
  /** All the rules of the old file against all of the new one's. */
  readonly whole: Difference;
  readonly rules: readonly RuleDiff[];
}

export interface RuleDiff {
  /** `POLICY.RULE`. */
  readonly rule: string;
  /** `added` and `removed` rules are compared with no rule (the empty policy). */
  readonly change: "unchanged" | "changed" | "added" | "removed";
  readonly difference: Difference;
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
}

export const defaultDiffDepth = 5;

/**
 * Compares two checked programs (`compile(…).program` of each version): per rule (paired by
 * `POLICY.RULE`) and as a whole, whether the new version is equivalent, stricter, looser or
 * incomparable, with the shortest runs on which they differ, each replayed through the forward
 * engine (`compareStatements`). Each search goes to `depth` events, or further when the rules
 * compared need it (a limit of N needs N + 1 events), and says how far it went and what it left out.
 * With `rule`, only that rule is compared on its own; the whole is every rule of each file, as
 * ever (docs/cli.md: "the whole file's runs are judged with every rule").
 */
export async function diffPolicies(old: CheckedProgram, next: CheckedProgram, options: DiffOptions = {}): Promise<PolicyDiff> {
  const depth = options.depth ?? defaultDiffDepth;
  const every = (program: CheckedProgram) => program.policies.flatMap((policy) => policy.statements);
  const chosen = (program: CheckedProgram) => every(program).filter((s) => options.rule === undefined || s.name === options.rule || ruleId(s) === options.rule);
  const before = chosen(old);
  const after = chosen(next);
  const search = await SymbolicSearch.create({
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.rlimit !== undefined ? { rlimit: options.rlimit } : {}),
  });
  try {
    const whole = await compareStatements(search, every(old), every(next), depth);
    const names = [...new Set([...before, ...after].map(nameOf))];
    const rules: RuleDiff[] = [];
    for (const rule of names) {
      const was = before.filter((s) => nameOf(s) === rule);
      const is = after.filter((s) => nameOf(s) === rule);
      const difference = await compareStatements(search, was, is, depth);
      const change = was.length === 0 ? "added" : is.length === 0 ? "removed" : difference.relation === "equivalent" && difference.basis === "proof" ? "unchanged" : "changed";
      rules.push({ rule, change, difference });
    }
    return { depth, whole, rules };
  } finally {
    await search.dispose();
  }
}

function nameOf(statement: CheckedStatement): string {
  return ruleId(statement);
}
