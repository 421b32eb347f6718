import { ruleId, walkFormula, type CheckedPattern, type Formula, type CheckedProgram, type CheckedStatement } from "@vigil/checker";
import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { evaluateStatement, TraceRun } from "@vigil/engine";
import { analyzeStatements, SymbolicSearch, universeOf, type Finding } from "@vigil/smt";
import type { Signature, TraceEvent } from "@vigil/trace";
import { deadProhibitionHelp, isProhibition, quietProhibitions, quietProhibitionsNote, spanKey, type QuietProhibitions } from "./quiet-prohibitions.js";

export interface AnalyzeOptions {
  /** The longest run searched (default 5 events). */
  readonly depth?: number;
  /** The policy file, for the diagnostics. */
  readonly file?: string;
  /** Per solver call (default 30 s): a backstop to `rlimit`. */
  readonly timeoutMs?: number;
  /** Per solver call, Z3's resource limit (default `defaultSearchRlimit` of @vigil/smt); a question that reaches it is A0007. */
  readonly rlimit?: number;
  /** Runs under this signature only (a trace's, or tool schemas'): the closed world. */
  readonly signature?: Signature;
  /**
   * The signature is that of sample runs the policy is meant to accept (a draft's runs, read by
   * `vigilc draft --explain`). A prohibition (`abs`, `always not`) that no run under it breaks only
   * because it forbids what the runs never show (a value, a longer list, an action, an argument) is
   * then what a prohibition should be: one note names every such rule (A0002, info), instead of
   * "never fires" (and "no event can match") at each. One that no run breaks even in a world opened
   * around it, the shape of the runs' arguments kept, stays a finding (quiet-prohibitions.ts).
   * Without a signature, nothing changes.
   */
  readonly samples?: boolean;
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
  const search = await SymbolicSearch.create({
    ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    ...(options.rlimit !== undefined ? { rlimit: options.rlimit } : {}),
  });
  let findings: Finding[];
  const conflicts = new Map<Finding, ConflictExample>();
  let samples: QuietProhibitions = { quiet: new Set(), deadPatterns: new Set() };
  try {
    findings = await analyzeStatements(search, statements, depth, options.signature);
    for (const finding of findings) {
      if (finding.kind !== "conflict") continue;
      const example = await conflictExample(search, statements, finding.statement, finding.trigger, depth, options.signature);
      if (example !== undefined) conflicts.set(finding, example);
    }
    if (options.samples === true && options.signature !== undefined) samples = await quietProhibitions(search, findings, depth, options.signature);
  } finally {
    await search.dispose();
  }
  const file = options.file !== undefined ? { file: options.file } : {};
  const runs = `runs of up to ${depth} events`;
  const under = options.signature !== undefined ? " under the signature" : "";
  const impossible = new Set(findings.flatMap((f) => (f.kind === "impossibleAction" ? [f.action] : [])));
  const diagnostics: Diagnostic[] = [];
  for (const finding of findings) {
    if (quietOnSamples(finding, samples)) continue;
    const made = diagnostics.length;
    switch (finding.kind) {
      case "unmatchable": {
        const name = ruleId(finding.statement);
        diagnostics.push(
          finding.exact
            ? diagnostic("A0001", `no event${under} can match this pattern of rule \`${name}\``, { span: finding.pattern.span, ...file, help: unmatchableHelp(finding.pattern, options.signature) })
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
          diagnostic("A0002", `no run${under} of up to ${finding.depth} events breaks rule \`${ruleId(finding.statement)}\`: it never fires`, {
            span: finding.statement.span,
            ...file,
            help: options.samples === true && options.signature !== undefined && isProhibition(finding.statement) ? deadProhibitionHelp : "a rule that cannot be broken enforces nothing; check its patterns and scope",
          }),
        );
        break;
      case "alwaysBroken":
        diagnostics.push(
          diagnostic("A0003", `every one of the ${runs} in which this trigger holds breaks rule \`${ruleId(finding.statement)}\``, {
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
            help: `the rules that name it: ${finding.statements.map((s) => `\`${ruleId(s)}\``).join(", ") || "none"}`,
            ...(rest.length > 0 ? { related: rest.map((s) => ({ span: s.span, ...file, message: `\`${ruleId(s)}\` names \`${finding.action}\` too` })) } : {}),
          }),
        );
        break;
      }
      case "redundant":
        diagnostics.push(
          diagnostic("A0005", `rule \`${ruleId(finding.statement)}\` is implied by the other rules: no run of up to ${finding.depth} events keeps them and breaks it`, {
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
        const name = `\`${ruleId(finding.statement)}\``;
        const example = conflicts.get(finding);
        const broken = example?.broken.map((s) => `\`${ruleId(s)}\``).join(", ");
        diagnostics.push(
          diagnostic("A0006", `once this trigger of rule ${name} holds, no run of up to ${depth} events keeps every rule`, {
            span: finding.trigger.span,
            ...file,
            help:
              example === undefined
                ? "what this rule asks for breaks another rule"
                : `what ${name} asks for breaks ${broken}: the run ${runText(example.events)} keeps ${name} and breaks ${broken}`,
            ...(example !== undefined
              ? { related: example.broken.map((s) => ({ span: s.span, ...file, message: `the conflicting rule \`${ruleId(s)}\`` })) }
              : {}),
          }),
        );
        break;
      }
      case "unknown":
        diagnostics.push(diagnostic("A0007", `the analysis could not decide: ${finding.reason}`, { ...(finding.statement !== undefined ? { span: finding.statement.span } : {}), ...file }));
        break;
    }
    // A finding over values that leave something out says what: it holds of the runs searched only.
    const leftOut = "leftOut" in finding ? finding.leftOut : [];
    if (leftOut.length > 0) {
      for (let k = made; k < diagnostics.length; k++) {
        const d = diagnostics[k]!;
        diagnostics[k] =
          finding.kind === "unmatchable"
            ? { ...d, help: `the values searched leave out ${leftOut.join("; ")} (docs/analysis.md)` }
            : { ...d, message: `${d.message} (among the values searched, which leave out ${leftOut.join("; ")})` };
      }
    }
  }
  const quiet = statements.filter((s) => samples.quiet.has(s));
  if (quiet.length > 0) diagnostics.push(quietProhibitionsNote(quiet, file));
  return diagnostics;
}

/**
 * Whether a finding is one the note on quiet prohibitions stands for: such a rule's "never fires",
 * and "no event can match" at its patterns that an event with other values matches.
 */
function quietOnSamples(finding: Finding, samples: QuietProhibitions): boolean {
  if (finding.kind === "vacuous") return samples.quiet.has(finding.statement);
  if (finding.kind === "unmatchable") return samples.quiet.has(finding.statement) && !samples.deadPatterns.has(spanKey(finding.pattern.span));
  return false;
}

/** A run on which a conflicting rule's trigger holds and the rule is kept, and the rules it breaks. */
interface ConflictExample {
  readonly events: readonly TraceEvent[];
  readonly broken: readonly CheckedStatement[];
}

/**
 * For a conflict (A0006): the shortest run (of up to `depth` events, under the signature) on which
 * the trigger holds and the rule is kept, which by the conflict breaks another rule; the rules it
 * breaks are those the forward engine, the one semantics, finds broken on it. Undefined when no
 * such run is found or the engine does not confirm it, so that a finding never names a rule or
 * shows a run it cannot stand behind.
 */
async function conflictExample(
  search: SymbolicSearch,
  statements: readonly CheckedStatement[],
  statement: CheckedStatement,
  trigger: CheckedPattern,
  depth: number,
  signature: Signature | undefined,
): Promise<ConflictExample | undefined> {
  const universe = universeOf(statements, { runLength: depth, ...(signature !== undefined ? { signature } : {}) });
  const result = await search.shortest(universe, depth, (run) => {
    const somewhere = Array.from({ length: run.length }, (_, k) => run.matchesAt(statement, trigger, k + 1)).join(" ");
    return `(and ${run.holds(statement)} (or false ${somewhere}))`;
  });
  if (!("found" in result)) return undefined;
  // Confirmed by the forward engine: the trigger holds, the rule is kept, and another rule is broken.
  const confirmed = (events: readonly TraceEvent[]): ConflictExample | undefined => {
    const run = new TraceRun([statement]);
    for (const event of events) run.step(event);
    if (!run.finish()[0]!.holds || (run.triggers(0)?.count ?? 0) === 0) return undefined;
    const broken = statements.filter((other) => other !== statement && !evaluateStatement(other, events).holds);
    return broken.length === 0 ? undefined : { events, broken };
  };
  let best = confirmed(result.found);
  if (best === undefined) return undefined;
  // What the solver chose and the conflict does not need is left out: a status other than `ok`, each argument.
  for (let index = 0; index < best.events.length; index++) {
    const attempt = (change: (event: TraceEvent) => TraceEvent): void => {
      const again = confirmed(best!.events.map((event, i) => (i === index ? change(event) : event)));
      if (again !== undefined && again.broken.length >= best!.broken.length) best = again;
    };
    if (best.events[index]!.status !== "ok") attempt((event) => ({ ...event, status: "ok" }));
    for (const name of Object.keys(best.events[index]!.args)) {
      attempt((event) => {
        const { [name]: _removed, ...args } = event.args;
        return { ...event, args };
      });
    }
    if (best.events[index]!.output !== undefined) {
      attempt((event) => {
        const { output: _removed, ...rest } = event;
        return rest as TraceEvent;
      });
    }
  }
  return best;
}

/** A short run on one line: `push {"branch":"main"} → notify`, each event's status when it is not `ok`. */
function runText(events: readonly TraceEvent[]): string {
  return events
    .map((event) => {
      const args = Object.keys(event.args).length > 0 ? ` ${JSON.stringify(event.args)}` : "";
      const status = event.status === "ok" ? "" : ` [${event.status ?? "pending"}]`;
      return `${event.action}${args}${status}`;
    })
    .join(" → ");
}

/**
 * Why a pattern no event can match: its conditions contradict each other, or, under a signature,
 * the actions it names are none of the signature's (a run's conversation is events of a
 * signature only when it was read with its messages).
 */
function unmatchableHelp(pattern: CheckedPattern, signature: Signature | undefined): string {
  const contradiction = "its conditions contradict each other, so the rule never sees it hold";
  if (signature === undefined) return contradiction;
  // The actions the pattern asks for (not those it rules out, under `not`).
  const named = new Set<string>();
  const visit = (node: Formula): void => {
    if (node.kind === "action") for (const action of node.actions) named.add(action);
    else if (node.kind === "and" || node.kind === "or") node.operands.forEach(visit);
  };
  visit(pattern.formula);
  const missing = [...named].filter((action) => !signature.actions.has(action)).sort();
  if (missing.length === 0) return contradiction;
  const listed = missing.map((action) => `\`${action}\``).join(", ");
  const conversation = missing.some((action) => action === "user_message" || action === "agent_message")
    ? " (the conversation's messages are events of a signature read with --messages)"
    : "";
  return `${listed} ${missing.length === 1 ? "is not an action" : "are not actions"} of the signature: no event of its runs or schemas is one${conversation}`;
}
