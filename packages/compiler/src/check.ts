import type { CheckedStatement, StatementOutcome } from "@vigil/checker";
import { evaluateStatement } from "@vigil/engine";
import { SmtDecider, type SmtDeciderOptions } from "@vigil/smt";
import type { Trace, TraceEvent } from "@vigil/trace";
import type { CompiledPolicy } from "./compile.js";

export type EngineName = "eval" | "smt";

export interface CheckTraceOptions {
  /** `eval` (the direct evaluator, the default) or `smt` (Z3 over the Figure 5 lowering). */
  readonly engine?: EngineName;
  /** For `smt`: a decider to reuse across calls. Without one, a decider is created and disposed. */
  readonly decider?: SmtDecider;
  readonly smt?: SmtDeciderOptions;
}

/** The verdict on one statement, with what a report needs to show it. */
export interface StatementVerdict extends StatementOutcome {
  readonly policy: string;
  readonly name: string;
  readonly form: CheckedStatement["form"];
  readonly doc?: string;
  readonly statement: CheckedStatement;
}

export interface CheckReport {
  /** `safe` when every statement holds; `unsafe` when one is violated or could not be decided. */
  readonly verdict: "safe" | "unsafe";
  readonly engine: EngineName;
  readonly statements: readonly StatementVerdict[];
}

/**
 * Judges a trace against a compiled policy, statement by statement (Algorithm 1). The policy must
 * be `ok`; a policy with errors cannot judge anything, and this throws rather than pass silently.
 */
export async function check(policy: CompiledPolicy, trace: Trace | readonly TraceEvent[], options: CheckTraceOptions = {}): Promise<CheckReport> {
  if (!policy.ok) throw new Error("the policy has errors; fix them before checking a trace (see its diagnostics)");
  const events = "events" in trace ? trace.events : trace;
  const engine = options.engine ?? "eval";
  const statements = policy.program.policies.flatMap((p) => p.statements);
  const verdicts: StatementVerdict[] = [];
  let decider = options.decider;
  const ownsDecider = engine === "smt" && decider === undefined;
  if (ownsDecider) decider = await SmtDecider.create(options.smt ?? {});
  try {
    for (const statement of statements) {
      const outcome = engine === "smt" ? await decider!.decide(statement, events) : evaluateStatement(statement, events);
      verdicts.push({
        policy: statement.policy,
        name: statement.name,
        form: statement.form,
        ...(statement.doc !== undefined ? { doc: statement.doc } : {}),
        statement,
        ...outcome,
      });
    }
  } finally {
    if (ownsDecider) await decider!.dispose();
  }
  return { verdict: verdicts.every((v) => v.holds) ? "safe" : "unsafe", engine, statements: verdicts };
}

/** The machine-readable form of a report: exactly the documented JSON shape, plus optional fields. */
export function reportToJson(report: CheckReport): {
  verdict: "safe" | "unsafe";
  statements: { policy: string; name: string; holds: boolean; witnesses: number[]; undecided?: string }[];
} {
  return {
    verdict: report.verdict,
    statements: report.statements.map((v) => ({
      policy: v.policy,
      name: v.name,
      holds: v.holds,
      witnesses: [...v.witnesses],
      ...(v.undecided !== undefined ? { undecided: v.undecided } : {}),
    })),
  };
}
