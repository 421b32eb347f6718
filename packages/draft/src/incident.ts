import { canonicalEvent, checkAgainstSignature, compile, format, ruleId, startMonitorRun, TraceRun, type CompiledPolicy, type Signature, type TraceEvent } from "@vigil/compiler";
import { readAnswer } from "./answer.js";
import { guardrailRequest, guardrailSystemPrompt, languageReference, repairRequest } from "./prompt.js";
import type { ModelProvider, ModelRequest, ProviderName } from "./providers.js";

/**
 * From an incident to a guardrail (AIR's eradication): a run broke a rule, found after the fact;
 * the model proposes one rule that the online monitor would have used to refuse a call of that run,
 * at or before the rule's first witness, before it ran. The proposal is kept only if the monitor,
 * replaying the run call by call, does refuse such a call, and refuses no call of the benign runs
 * given; otherwise the model is told which call it missed or which benign call it refused, a
 * bounded number of times.
 */

export interface Run {
  readonly name: string;
  readonly events: readonly TraceEvent[];
}

export interface GuardrailOptions {
  /** The policy the incident broke, and its text (the rule is shown to the model as written). */
  readonly policy: CompiledPolicy;
  readonly policyText: string;
  /** `RULE` or `POLICY.RULE`. */
  readonly rule: string;
  readonly incident: Run;
  /** Runs the guardrail must let through, every call. */
  readonly benign: readonly Run[];
  /** The vocabulary (the incident's and the benign runs'); also the closed world the rule is checked in. */
  readonly signature?: Signature;
  readonly provider: ModelProvider;
  readonly maxRepairs?: number;
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
  readonly onRound?: (round: number, problems: readonly string[]) => void;
  readonly reference?: string;
}

export interface GuardrailResult {
  /** The guardrail policy, formatted. */
  readonly policy: string;
  /** `POLICY.RULE` of the guardrail. */
  readonly rule: string;
  /** The rule the incident broke, and its first witness. */
  readonly broken: string;
  readonly witness: number;
  /** The event of the incident whose call the monitor refuses with the guardrail (≤ `witness`), and its action. */
  readonly refusesAt: number;
  readonly refusedAction: string;
  /** How many benign runs (and their calls) it lets through. */
  readonly benignRuns: number;
  readonly benignCalls: number;
  readonly rounds: number;
  readonly provider: ProviderName;
  readonly model: string;
}

/** Why no guardrail can be drafted (the rule holds on the run, no such rule) or none passed. */
export class GuardrailFailed extends Error {}

/** The incident: the broken rule (its name and text as written) and its first witness in the run. */
export interface Incident {
  readonly broken: string;
  readonly ruleText: string;
  readonly witness: number;
}

/** Finds the broken rule and replays the incident run through it; GuardrailFailed if there is no such rule or it holds. */
export function incidentOf(options: Pick<GuardrailOptions, "policy" | "policyText" | "rule" | "incident">): Incident {
  if (!options.policy.ok) throw new GuardrailFailed("the policy has errors");
  const statements = options.policy.program.policies.flatMap((policy) => policy.statements);
  const statement = statements.find((s) => s.name === options.rule || ruleId(s) === options.rule);
  if (statement === undefined) throw new GuardrailFailed(`the policy has no rule \`${options.rule}\``);
  const trace = new TraceRun([statement]);
  for (const event of options.incident.events) trace.step(event);
  const outcome = trace.finish()[0]!;
  if (outcome.holds) throw new GuardrailFailed(`rule \`${ruleId(statement)}\` holds on ${options.incident.name}: there is no incident to guard against`);
  return {
    broken: ruleId(statement),
    ruleText: options.policyText.slice(statement.span.start, statement.span.end),
    witness: outcome.witnesses[0] ?? options.incident.events.length,
  };
}

/** The first request for a guardrail: what a model is sent, word for word (`vigilc draft --from-incident --show-request`). */
export function guardrailMessages(options: Omit<GuardrailOptions, "provider">, incident: Incident = incidentOf(options)): ModelRequest {
  return {
    system: guardrailSystemPrompt(options.reference ?? languageReference()),
    messages: [{ role: "user", content: guardrailRequest({ name: options.incident.name, events: options.incident.events.map(canonicalEvent) }, { text: incident.ruleText, witness: incident.witness }, options.signature, options.benign.length) }],
    maxTokens: options.maxTokens ?? 8_000,
  };
}

export async function draftGuardrail(options: GuardrailOptions): Promise<GuardrailResult> {
  const incident = incidentOf(options);
  const first = guardrailMessages(options, incident);
  const messages: { role: "user" | "assistant"; content: string }[] = [...first.messages];
  const maxRepairs = options.maxRepairs ?? 3;
  let rounds = 0;
  for (;;) {
    const answer = await options.provider.complete({ system: first.system, messages: [...messages], maxTokens: first.maxTokens }, { ...(options.signal !== undefined ? { signal: options.signal } : {}) });
    rounds++;
    const read = readAnswer(answer.text);
    const checked = read.policy !== undefined ? await checkGuardrail(read.policy, incident, options) : undefined;
    const problems = [...read.problems, ...(checked?.problems ?? [])];
    options.onRound?.(rounds, problems);
    if (problems.length === 0 && checked?.result !== undefined) return { ...checked.result, rounds, provider: options.provider.name, model: answer.model };
    if (rounds > maxRepairs) throw new GuardrailFailed(`no guardrail passed the checks in ${rounds} ${rounds === 1 ? "answer" : "answers"}: ${problems.join("; ")}`);
    messages.push({ role: "assistant", content: answer.text }, { role: "user", content: repairRequest(problems) });
  }
}

/**
 * A guardrail drafted before (from the cache), checked again against the same incident and benign
 * runs: the model's answer is never trusted, not even a remembered one. The result as checked now,
 * or the problems.
 */
export async function recheckGuardrail(kept: GuardrailResult, options: Omit<GuardrailOptions, "provider">): Promise<{ ok: true; result: GuardrailResult } | { ok: false; problems: string[] }> {
  const checked = await checkGuardrail(kept.policy, incidentOf(options), options);
  if (checked.problems.length > 0 || checked.result === undefined) return { ok: false, problems: checked.problems };
  return { ok: true, result: { ...checked.result, rounds: kept.rounds, provider: kept.provider, model: kept.model } };
}

type Checked = Omit<GuardrailResult, "rounds" | "provider" | "model">;

/** The checks of a proposed guardrail: it compiles in the closed world, refuses a call of the incident in time, and no benign call. */
async function checkGuardrail(text: string, incident: Incident, options: Omit<GuardrailOptions, "provider">): Promise<{ problems: string[]; result?: Checked }> {
  const compiled = compile(text);
  const problems = compiled.diagnostics.filter((d) => d.severity === "error").map((d) => `${d.span !== undefined ? `line ${d.span.line}:${d.span.column}: ` : ""}${d.code}: ${d.message}`);
  if (!compiled.ok) return { problems };
  if (options.signature !== undefined) {
    for (const d of checkAgainstSignature(compiled, options.signature).filter((d) => d.severity !== "info")) problems.push(`${d.code}: ${d.message}`);
  }
  const statements = compiled.program.policies.flatMap((policy) => policy.statements);
  if (statements.length !== 1) problems.push(`the answer has ${statements.length} rules: write exactly one`);
  const rule = statements[0] !== undefined ? ruleId(statements[0]) : "";
  const refusals = async (run: Run): Promise<number[]> => {
    const monitored = startMonitorRun(statements);
    for (const event of run.events) monitored.step(event);
    // A call is decided once the run shows it complete (the commands grounded from it follow it):
    // the run's last call, when its end does.
    await monitored.finish();
    return [...monitored.decisions].filter(([, decision]) => decision.decision === "block" || decision.decision === "ask").map(([position]) => position).sort((a, b) => a - b);
  };
  const refusal = (await refusals(options.incident)).find((position) => position <= incident.witness);
  if (refusal === undefined) problems.push(`the rule refuses no call of ${options.incident.name} at or before event ${incident.witness}: the monitor lets every one of them run`);
  for (const run of options.benign) {
    const refused = await refusals(run);
    if (refused.length > 0) problems.push(`the rule refuses event ${refused[0]} (\`${run.events[refused[0]! - 1]?.action}\`) of the benign run ${run.name}${refused.length > 1 ? ` and ${refused.length - 1} more of its calls` : ""}: it must let benign runs through`);
  }
  if (refusal === undefined) return { problems };
  return {
    problems,
    result: {
      policy: format(text).text ?? text,
      rule,
      broken: incident.broken,
      witness: incident.witness,
      refusesAt: refusal,
      refusedAction: options.incident.events[refusal - 1]!.action,
      benignRuns: options.benign.length,
      benignCalls: options.benign.reduce((sum, run) => sum + run.events.length, 0),
    },
  };
}
