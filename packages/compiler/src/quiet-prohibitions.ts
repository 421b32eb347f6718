import { ruleId, statementPatterns, walkFormula, type CheckedStatement, type Formula } from "@vigil/checker";
import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import { analyzeStatements, type Finding, type SymbolicSearch } from "@vigil/smt";
import { keyPathId, type KeyInfo, type Signature } from "@vigil/trace";

/**
 * Prohibitions read against sample runs (`AnalyzeOptions.samples`: a draft's runs, which the
 * policy is meant to accept). A prohibition forbids what good runs do not do, so that no run under
 * their signature Σ breaks it is what it should be when the only reason is what Σ lacks: a value
 * the runs never show, a longer list, an action or an argument they never have (a draft keeps such
 * a name in a prohibition whose cited lines name it). That is said once, as a note, instead of
 * "never fires" at each rule. The question that tells the two apart is asked again of a world
 * opened around the rule (`openedFor`): any action and argument it names, any value, lists of any
 * length; only what Σ says of the shape of the arguments it shows is kept (a key the runs give one
 * value at a time holds one value). A prohibition a run of that world breaks is quiet only for what
 * the runs lack; one that none breaks cannot fire on any run whose arguments have the samples'
 * shape (its conditions contradict each other, or ask `amount > 5 and amount < 3` of a key the
 * runs give one number, which only a list could meet), and stays a finding.
 */

/** Whether a rule forbids what it names outright: `abs(ψ)` or `always not (…)`, scoped or not. */
export function isProhibition(statement: CheckedStatement): boolean {
  return statement.form === "abs" || (statement.form === "always" && statement.body.kind === "not");
}

/** Every formula of a statement: its patterns, its `always` body, its scope's patterns. */
function formulasOf(statement: CheckedStatement): Formula[] {
  const scope = statement.scope === undefined ? [] : [statement.scope.open, ...(statement.scope.close !== undefined ? [statement.scope.close] : [])];
  return [...statementPatterns(statement).map((p) => p.formula), ...(statement.form === "always" ? [statement.body] : []), ...scope];
}

/** The actions a statement names, and the arguments (the first name of each key path) it reads. */
function namesOf(statement: CheckedStatement): { readonly actions: Set<string>; readonly arguments: Set<string> } {
  const actions = new Set<string>();
  const names = new Set<string>();
  for (const formula of formulasOf(statement)) {
    walkFormula(formula, (node) => {
      if (node.kind === "action") node.actions.forEach((action) => actions.add(action));
      else if ("subject" in node && node.subject === "args" && typeof node.key[0] === "string") names.add(node.key[0]);
    });
  }
  const measure = statement.form === "limit" ? statement.measure : undefined;
  if (measure?.kind === "sum" && measure.subject === "args" && typeof measure.key[0] === "string") names.add(measure.key[0]);
  return { actions, arguments: names };
}

/**
 * Σ opened around a statement: Σ's actions and those the statement names; every argument Σ shows,
 * with any value, and lists of any length where Σ shows lists (how many passengers is a value
 * too); every argument the statement reads that Σ lacks, with any value and any shape. What stays
 * of Σ is that a key it shows with one value at a time holds one value.
 */
export function openedFor(signature: Signature, statement: CheckedStatement): Signature {
  const named = namesOf(statement);
  const open = (info: KeyInfo): KeyInfo => ({ ...info, openValues: true, ...(info.listLength !== undefined ? { listLength: Infinity } : {}) });
  const keys = new Map([...signature.keys].map(([id, info]) => [id, open(info)]));
  const shown = new Set([...signature.keys.values()].map((info) => info.segments[0]));
  for (const name of named.arguments) {
    if (!shown.has(name)) keys.set(keyPathId([name]), { segments: [name], values: new Map(), openValues: true, listLength: Infinity });
  }
  return { ...signature, actions: new Set([...signature.actions, ...named.actions]), keys };
}

/** The prohibitions quiet on the samples only for what they lack, and the patterns of theirs no event can match even so. */
export interface QuietProhibitions {
  /** Rules that no run under Σ breaks and a run of the world opened around them does. */
  readonly quiet: ReadonlySet<CheckedStatement>;
  /** Of their patterns, those no event of that world matches (by span: `start:end`): still findings. */
  readonly deadPatterns: ReadonlySet<string>;
}

/** A pattern's place, to know it again in another analysis's findings. */
export function spanKey(span: { readonly start: number; readonly end: number }): string {
  return `${span.start}:${span.end}`;
}

/**
 * Of the rules `findings` (an analysis under Σ) calls vacuous, the prohibitions that a run of the
 * world opened around each (`openedFor`) breaks, each asked on its own, of up to `depth` events. A
 * question the solver cannot decide leaves the rule a finding.
 */
export async function quietProhibitions(search: SymbolicSearch, findings: readonly Finding[], depth: number, signature: Signature): Promise<QuietProhibitions> {
  const quiet = new Set<CheckedStatement>();
  const deadPatterns = new Set<string>();
  for (const finding of findings) {
    if (finding.kind !== "vacuous" || !isProhibition(finding.statement)) continue;
    let again: Finding[];
    try {
      again = await analyzeStatements(search, [finding.statement], depth, openedFor(signature, finding.statement));
    } catch {
      continue; // Not known to fire elsewhere: the finding stands.
    }
    if (again.some((f) => f.kind === "vacuous" || f.kind === "unknown")) continue;
    quiet.add(finding.statement);
    for (const f of again) if (f.kind === "unmatchable") deadPatterns.add(spanKey(f.pattern.span));
  }
  return { quiet, deadPatterns };
}

/**
 * The one note that stands for every quiet prohibition (A0002 as an info, with no place of its
 * own: it is about the draft's reading of its runs, not one rule), each rule named and pointed at.
 */
export function quietProhibitionsNote(quiet: readonly CheckedStatement[], file: { readonly file?: string }): Diagnostic {
  const names = quiet.map((s) => `\`${ruleId(s)}\``);
  const elsewhere = "a run with a value, an action or an argument the samples never show";
  const message =
    quiet.length === 1
      ? `rule ${names[0]} prohibits what no sample run does (as a prohibition should): no run under the signature breaks it, and ${elsewhere} does`
      : `${quiet.length} rules prohibit what no sample run does (as a prohibition should): ${names.join(", ")}; no run under the signature breaks them, and ${elsewhere} breaks each`;
  return diagnostic("A0002", message, {
    ...file,
    severity: "info",
    help: "not a finding: a prohibition fires only on what the good runs do not do; read each to see that it forbids what the specification forbids",
    related: quiet.map((s) => ({ span: s.span, ...file, message: `\`${ruleId(s)}\` fires only on what the sample runs never show` })),
  });
}

/** The help of a prohibition that no run whose arguments have the samples' shape breaks. */
export const deadProhibitionHelp =
  "it cannot fire even on values, actions or arguments the sample runs never show: its conditions contradict each other (a key the runs give one value at a time is read as holding one)";
