import { judgeRun, ruleId, signatureToJson, type CompiledPolicy, type Diagnostic, type EngineName, type Signature } from "@vigil/compiler";
import type { TextPositions } from "../positions.js";
import { witnessLimit, type CheckTraceResult, type CheckTraceStatement, type SignatureResult } from "../protocol.js";
import type { SampleSet } from "../workspace/samples.js";

/** The answers to the server's own requests (`vigil/checkTrace`, `vigil/signature`). */

/** How many of the policy's or the trace's errors `vigil/checkTrace` lists. */
const listedErrors = 20;

/**
 * Judges a trace file against a compiled policy document (`vigil/checkTrace`), as `vigilc check`
 * would (with `--messages` when the policy's config reads messages).
 */
export async function checkTrace(policy: CompiledPolicy, positions: TextPositions, trace: string, engine: EngineName, signal?: AbortSignal, messages = false): Promise<CheckTraceResult> {
  const refused = (errors: string[]): CheckTraceResult => ({ verdict: "unsafe", trace, statements: [], errors });
  if (!policy.ok) {
    const errors = policy.diagnostics.filter((d) => d.severity === "error");
    return refused([`the policy has ${errors.length === 1 ? "1 error" : `${errors.length} errors`}; no rule was checked`, ...errors.slice(0, listedErrors).map(describe)]);
  }
  let run: Awaited<ReturnType<typeof judgeRun>>;
  try {
    run = await judgeRun(policy, { file: trace }, { engine, locateWitnesses: witnessLimit, ...(signal !== undefined ? { signal } : {}), ...(messages ? { messages: true } : {}) });
  } catch (error) {
    // A cancelled request is not a failure of the trace: the caller answers it as cancelled.
    if (signal?.aborted === true) throw error;
    return refused([`the trace could not be judged with the ${engine} engine: ${(error as Error).message}`]);
  }
  if (run.report === undefined) {
    const errors = run.traceDiagnostics.filter((d) => d.severity === "error");
    return refused([`the trace has ${errors.length === 1 ? "1 error" : `${errors.length} errors`}; no rule was checked`, ...errors.slice(0, listedErrors).map(describe)]);
  }
  const names = new Map<string, { start: number; end: number }>();
  for (const declaration of policy.syntax.policies) {
    for (const item of declaration.items) if (item.kind === "RuleDecl") names.set(ruleId({ policy: declaration.name.text, name: item.name.text }), item.name.span);
  }
  const statements: CheckTraceStatement[] = run.report.statements.map((statement) => {
    const name = names.get(ruleId(statement));
    return {
      policy: statement.policy,
      name: statement.name,
      holds: statement.holds,
      ...(statement.undecided !== undefined ? { undecided: statement.undecided } : {}),
      witnesses: statement.witnesses.slice(0, witnessLimit).map((event) => {
        const line = run.witnessEvents?.get(event)?.source?.line;
        return line !== undefined ? { event, line } : { event };
      }),
      witnessCount: statement.witnesses.length,
      range: name !== undefined ? positions.rangeOf(name) : positions.range(0, 0),
    };
  });
  return { verdict: run.report.verdict, trace, statements, errors: [] };
}

/** A diagnostic on one line: where in its file, code, message. */
function describe(diagnostic: Diagnostic): string {
  const where = diagnostic.span !== undefined ? `line ${diagnostic.span.line}:${diagnostic.span.column}: ` : "";
  return `${where}${diagnostic.code}: ${diagnostic.message}`;
}

/** The signature a policy document is checked against, and where it came from (`vigil/signature`). */
export function signatureOfSamples(samples: SampleSet | undefined): SignatureResult {
  if (samples === undefined) return { sources: [], signature: signatureToJson(emptySignature), problems: [] };
  const problems = [...samples.problems];
  for (const source of [...samples.traces, ...samples.schemas]) {
    if (!source.usable) {
      const error = source.diagnostics.find((d) => d.severity === "error");
      problems.push(`${source.file} is left out: ${error !== undefined ? describe(error) : "it cannot be read"}`);
    }
  }
  return {
    sources: [...samples.traces, ...samples.schemas].filter((source) => source.usable).map((source) => source.file),
    signature: signatureToJson(samples.signature ?? emptySignature),
    problems,
  };
}

const emptySignature: Signature = { actions: new Set(), keys: new Map(), outputCount: 0 };
