import { walkFormula, type CheckedProgram } from "@vigil/checker";
import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { analyzeStatements, SymbolicSearch, type Finding } from "@vigil/smt";
import type { Signature } from "@vigil/trace";

export interface AnalyzeOptions {
  /** The longest run searched (default 5 events). */
  readonly depth?: number;
  /** The policy file, for the diagnostics. */
  readonly file?: string;
  /** Per solver call (default 30 s). */
  readonly timeoutMs?: number;
  /** Runs under this signature only (a trace's, or tool schemas'): the closed world. */
  readonly signature?: Signature;
}

export const defaultAnalysisDepth = 5;

/**
 * What a checked policy means, as diagnostics (A0001–A0007) at the rules and patterns concerned:
 * patterns no event matches, rules that never fire or always break, actions the rules make
 * impossible, redundant rules, conflicts. Found over symbolic runs of up to `depth` events
 * (`analyzeStatements`); every message says how far it looked where that is all it knows.
 */
export async function analyzePolicy(program: CheckedProgram, options: AnalyzeOptions = {}): Promise<Diagnostic[]> {
  const depth = options.depth ?? defaultAnalysisDepth;
  const statements = program.policies.flatMap((policy) => policy.statements);
  const search = await SymbolicSearch.create({ ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}) });
  let findings: Finding[];
  try {
    findings = await analyzeStatements(search, statements, depth, options.signature);
  } finally {
    await search.dispose();
  }
  const file = options.file !== undefined ? { file: options.file } : {};
  const runs = `runs of up to ${depth} events`;
  const under = options.signature !== undefined ? " under the signature" : "";
  const impossible = new Set(findings.flatMap((f) => (f.kind === "impossibleAction" ? [f.action] : [])));
  const diagnostics: Diagnostic[] = [];
  for (const finding of findings) {
    switch (finding.kind) {
      case "unmatchable": {
        const name = `${finding.statement.policy}.${finding.statement.name}`;
        diagnostics.push(
          finding.exact
            ? diagnostic("A0001", `no event${under} can match this pattern of rule \`${name}\``, { span: finding.pattern.span, ...file, help: "its conditions contradict each other, so the rule never sees it hold" })
            : diagnostic("A0001", `no event among the values searched matches this pattern of rule \`${name}\``, {
                span: finding.pattern.span,
                ...file,
                severity: "info",
                help: "its wildcards, regular expressions or `contains` may match values the search did not try (docs/analysis.md)",
              }),
        );
        break;
      }
      case "vacuous":
        diagnostics.push(
          diagnostic("A0002", `no run${under} of up to ${finding.depth} events breaks rule \`${finding.statement.policy}.${finding.statement.name}\`: it never fires`, {
            span: finding.statement.span,
            ...file,
            help: "a rule that cannot be broken enforces nothing; check its patterns and scope",
          }),
        );
        break;
      case "alwaysBroken":
        diagnostics.push(
          diagnostic("A0003", `every one of the ${runs} in which this trigger holds breaks rule \`${finding.statement.policy}.${finding.statement.name}\``, {
            span: finding.trigger.span,
            ...file,
            help: "what the rule asks for after (or before) its trigger can never happen",
          }),
        );
        break;
      case "impossibleAction": {
        const [first, ...rest] = finding.statements;
        diagnostics.push(
          diagnostic("A0004", `no run${under} of up to ${depth} events that keeps every rule calls \`${finding.action}\` successfully: the policy makes it impossible`, {
            ...(first !== undefined ? { span: first.span } : {}),
            ...file,
            help: `the rules that name it: ${finding.statements.map((s) => `\`${s.policy}.${s.name}\``).join(", ") || "none"}`,
            ...(rest.length > 0 ? { related: rest.map((s) => ({ span: s.span, ...file, message: `\`${s.policy}.${s.name}\` names \`${finding.action}\` too` })) } : {}),
          }),
        );
        break;
      }
      case "redundant":
        diagnostics.push(
          diagnostic("A0005", `rule \`${finding.statement.policy}.${finding.statement.name}\` is implied by the other rules: no run of up to ${finding.depth} events keeps them and breaks it`, {
            span: finding.statement.span,
            ...file,
          }),
        );
        break;
      case "conflict": {
        // A trigger that is an action the policy already makes impossible says nothing more.
        const actions: string[] = [];
        walkFormula(finding.trigger.formula, (node) => {
          if (node.kind === "action") actions.push(...node.actions);
        });
        if (actions.length > 0 && actions.every((action) => impossible.has(action))) break;
        diagnostics.push(
          diagnostic("A0006", `once this trigger of rule \`${finding.statement.policy}.${finding.statement.name}\` holds, no run of up to ${depth} events keeps every rule`, {
            span: finding.trigger.span,
            ...file,
            help: "what this rule asks for breaks another rule",
          }),
        );
        break;
      }
      case "unknown":
        diagnostics.push(diagnostic("A0007", `the analysis could not decide: ${finding.reason}`, { ...(finding.statement !== undefined ? { span: finding.statement.span } : {}), ...file }));
        break;
    }
  }
  return diagnostics;
}
