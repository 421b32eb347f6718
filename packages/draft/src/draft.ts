import { compile, format, ruleId, type Diagnostic, type Signature } from "@vigil/compiler";
import { readAnswer, type Unsupported } from "./answer.js";
import { closedWorld, reviewedName, type Review } from "./closed-world.js";
import { draftRequest, languageReference, repairRequest, systemPrompt } from "./prompt.js";
import type { ModelProvider, ModelRequest, ProviderName } from "./providers.js";
import { citedText, type SpecSource } from "./spec.js";
import type { Vocabulary } from "./vocabulary.js";

/**
 * The draft loop (the paper's Compile): the model drafts a policy from the specification and the
 * runs' vocabulary; the draft goes through the real parser and checker, the closed-world check
 * against the signature, and a check that every rule cites a line of the specification; the
 * problems go back to the model for a bounded number of repair rounds. What still fails after
 * them is taken out and reported, never kept: the model proposes, the checks decide. A name no run
 * shows, in a prohibition or a limit whose cited lines name it, is kept and marked for review
 * (`closed-world.ts`).
 */

export interface DraftOptions {
  readonly sources: readonly SpecSource[];
  /** The runs' signature: the vocabulary the model may use, and the closed world the draft is checked in. */
  readonly signature?: Signature;
  /**
   * The runs' vocabulary per action (`readRunsVocabulary`, from the same runs as the signature):
   * what the model is shown, and what a key on the wrong action or an unseen output path is found
   * with. Without it (tool schemas), the model is shown the signature.
   */
  readonly vocabulary?: Vocabulary;
  readonly provider: ModelProvider;
  /** The name of the policy block. */
  readonly policyName: string;
  /** Repair rounds after the first draft (default 3). */
  readonly maxRepairs?: number;
  /** The longest answer asked for, in tokens (default 16,000). */
  readonly maxTokens?: number;
  readonly signal?: AbortSignal;
  /** Told after each answer: the round (from 1) and the problems found in it. */
  readonly onRound?: (round: number, problems: readonly string[]) => void;
  /** The language reference given to the model (default: docs/language.md). */
  readonly reference?: string;
}

export interface DraftedRule {
  readonly policy: string;
  readonly name: string;
  /** The requirement, as the rule's `///` text says it. */
  readonly requirement: string;
  /** `NAME:LINE` in the specification. */
  readonly source: string;
  /** The specification's text at that place. */
  readonly cited: string;
}

export interface RejectedRule {
  readonly name: string;
  readonly requirement?: string;
  readonly source?: string;
  /** Why it was taken out: the checks it still failed after the last round. */
  readonly problems: readonly string[];
}

export interface DraftResult {
  /** The policy, formatted; empty when no rule survived. */
  readonly policy: string;
  readonly rules: readonly DraftedRule[];
  /** The requirements the model said cannot be written, with why. */
  readonly unsupported: readonly (Unsupported & { readonly cited?: string })[];
  readonly rejected: readonly RejectedRule[];
  /** How many answers the model gave (1 + the repair rounds used). */
  readonly rounds: number;
  readonly provider: ProviderName;
  readonly model: string;
  /** The checker's warnings and notes that remain (the closed world's notes on values the runs never show among them). */
  readonly warnings: readonly string[];
  /**
   * The names no run shows that were kept, in a prohibition or a limit whose cited lines name them:
   * the declaration, its source, and the `/// review:` line written above it. (Absent in drafts
   * kept before there were any.)
   */
  readonly reviews?: readonly KeptForReview[];
}

export interface KeptForReview {
  /** `POLICY.NAME` of the rule or pattern. */
  readonly name: string;
  readonly source?: string;
  /** What no run shows and why it was kept, as the `/// review:` line says. */
  readonly review: string;
}

/** A draft that could not be made: no policy block after the last round, or errors outside any rule. */
export class DraftFailed extends Error {
  constructor(
    message: string,
    /** The model's last answer, for the report. */
    readonly lastAnswer: string,
  ) {
    super(message);
  }
}

/** The first request of a draft: what a model is sent, word for word (`vigilc draft --show-request`). */
export function draftMessages(options: Pick<DraftOptions, "sources" | "signature" | "vocabulary" | "policyName" | "reference" | "maxTokens">): ModelRequest {
  return {
    system: systemPrompt(options.reference ?? languageReference(), options.signature !== undefined || options.vocabulary !== undefined, options.vocabulary?.messages === true),
    messages: [{ role: "user", content: draftRequest(options.sources, options.signature, options.policyName, options.vocabulary) }],
    maxTokens: options.maxTokens ?? 16_000,
  };
}

export async function draftPolicy(options: DraftOptions): Promise<DraftResult> {
  const maxRepairs = options.maxRepairs ?? 3;
  const first = draftMessages(options);
  const system = first.system;
  const messages: { role: "user" | "assistant"; content: string }[] = [...first.messages];
  let answered = "";
  let model = options.provider.model;
  let rounds = 0;
  let checked: Checked | undefined;
  let unsupported: readonly Unsupported[] = [];
  for (;;) {
    const request: ModelRequest = { system, messages: [...messages], maxTokens: first.maxTokens };
    const answer = await options.provider.complete(request, { ...(options.signal !== undefined ? { signal: options.signal } : {}) });
    rounds++;
    answered = answer.text;
    model = answer.model;
    const read = readAnswer(answer.text);
    const truncated = answer.stopReason === "max_tokens" || answer.stopReason === "length" ? ["the answer was cut off at the length limit: write a shorter policy"] : [];
    checked = read.policy !== undefined ? checkDraft(read.policy, options) : undefined;
    unsupported = read.unsupported;
    const citations = read.unsupported.filter((u) => citedText(options.sources, u.source) === undefined).map((u) => `the unsupported requirement "${u.requirement}" cites \`${u.source}\`, which is not a line of the specification`);
    const problems = [...truncated, ...read.problems, ...citations, ...(checked?.problems ?? [])];
    options.onRound?.(rounds, problems);
    if (problems.length === 0 || rounds > maxRepairs) break;
    messages.push({ role: "assistant", content: answer.text }, { role: "user", content: repairRequest(problems) });
  }
  if (checked === undefined) throw new DraftFailed(`the model gave no policy in ${rounds} ${rounds === 1 ? "answer" : "answers"}`, answered);
  const kept = pruned(checked, options);
  const valid = unsupported.map((u) => {
    const cited = citedText(options.sources, u.source);
    return { ...u, ...(cited !== undefined ? { cited } : {}) };
  });
  return { policy: kept.policy, rules: kept.rules, unsupported: valid, rejected: kept.rejected, rounds, provider: options.provider.name, model, warnings: kept.warnings, reviews: kept.reviews };
}

/** What a draft is checked against: the specification its rules cite, and the runs' signature and vocabulary. */
type Grounding = Pick<DraftOptions, "sources" | "signature" | "vocabulary">;

/**
 * A draft made before (from the cache), put through the same checks again: the model's answer is
 * never trusted, not even a remembered one. The problems; none when it still passes.
 */
export function recheckDraft(kept: DraftResult, options: Grounding): readonly string[] {
  if (kept.rules.length === 0) return [];
  const checked = checkDraft(kept.policy, options);
  const names = new Set(compile(kept.policy).syntax.policies.flatMap((policy) => policy.items.filter((item) => item.kind === "RuleDecl").map((item) => ruleId({ policy: policy.name.text, name: item.name.text }))));
  const listed = kept.rules.map(ruleId);
  const mismatch = listed.length !== names.size || listed.some((name) => !names.has(name)) ? ["the kept report does not list the kept policy's rules"] : [];
  return [...checked.problems, ...mismatch];
}

interface Checked {
  readonly text: string;
  /** Every problem, in words, for the model. */
  readonly problems: readonly string[];
  /** The problems by the item (rule or pattern) they are in; `null` for those in none. */
  readonly byItem: ReadonlyMap<string | null, readonly string[]>;
  readonly warnings: readonly string[];
  /** The names kept for review (see `closed-world.ts`), by declaration. */
  readonly reviews: readonly Review[];
}

/** The parser's and checker's errors, the closed world's problems, and the rules' citations of a draft. */
function checkDraft(text: string, options: Grounding): Checked {
  const compiled = compile(text);
  // An action, key or output path the runs never show matches nothing: the rule is sent back, or,
  // in a prohibition whose lines name it, kept for review. A value they never show (V1103, a
  // note) is what a prohibition names, and stays.
  const world = options.signature !== undefined && compiled.ok ? closedWorld(compiled, text, { signature: options.signature, sources: options.sources, ...(options.vocabulary !== undefined ? { vocabulary: options.vocabulary } : {}) }) : { problems: [], reviews: [], notes: [] };
  const lines = text.split("\n");
  const where = (d: Diagnostic) => (d.span !== undefined ? `line ${d.span.line}:${d.span.column}: ` : "");
  const byItem = new Map<string | null, string[]>();
  const items = compiled.syntax.policies.flatMap((policy) => policy.items.map((item) => ({ policy: policy.name.text, item })));
  const note = (start: number | undefined, problem: string) => {
    const owner = start === undefined ? undefined : items.find(({ item }) => (item.doc?.span.start ?? item.span.start) <= start && start <= item.span.end);
    const key = owner === undefined ? null : `${owner.item.kind}:${ruleId({ policy: owner.policy, name: owner.item.name.text })}`;
    byItem.set(key, [...(byItem.get(key) ?? []), problem]);
  };
  const problems: string[] = [];
  for (const d of compiled.diagnostics.filter((d) => d.severity === "error")) {
    const problem = `${where(d)}${d.code}: ${d.message}${d.span !== undefined ? ` (in \`${lines[d.span.line - 1]?.trim() ?? ""}\`)` : ""}`;
    problems.push(problem);
    note(d.span?.start, problem);
  }
  for (const problem of world.problems) {
    problems.push(problem.text);
    note(problem.start, problem.text);
  }
  for (const { policy, item } of items) {
    if (item.kind !== "RuleDecl") continue;
    const { requirement, source } = docOf(item.doc?.text);
    let problem: string | undefined;
    if (requirement === "") problem = `rule \`${item.name.text}\` has no \`///\` requirement above it`;
    else if (source === undefined) problem = `rule \`${item.name.text}\` does not say where it comes from: end its \`///\` lines with \`/// source: NAME:LINE\``;
    else if (citedText(options.sources, source) === undefined) problem = `rule \`${item.name.text}\` cites \`${source}\`, which is not a line of the specification`;
    if (problem !== undefined) {
      problems.push(problem);
      const key = `RuleDecl:${ruleId({ policy, name: item.name.text })}`;
      byItem.set(key, [...(byItem.get(key) ?? []), problem]);
    }
  }
  // Said by the declaration they are in: the text's lines move when it is formatted.
  const warnings = [...compiled.diagnostics.filter((d) => d.severity !== "error"), ...world.notes].map((d) => {
    const owner = d.span === undefined ? undefined : items.find(({ item }) => item.span.start <= d.span!.start && d.span!.start <= item.span.end);
    const at = owner === undefined ? "" : ` (${owner.item.kind === "RuleDecl" ? "rule" : "pattern"} \`${ruleId({ policy: owner.policy, name: owner.item.name.text })}\`)`;
    return `${d.severity === "info" ? "note" : d.severity} ${d.code}${at}: ${d.message}`;
  });
  return { text, problems, byItem, warnings, reviews: world.reviews };
}

/** A rule's `///` text split into its requirement and its `source:` line (`review:` lines are neither). */
export function docOf(doc: string | undefined): { requirement: string; source?: string } {
  const lines = (doc ?? "").split("\n");
  const index = lines.findLastIndex((line) => /^\s*source:\s*\S/i.test(line));
  const source = index >= 0 ? lines[index]!.replace(/^\s*source:\s*/i, "").trim() : undefined;
  const requirement = lines.filter((line, i) => i !== index && !reviewLine.test(line)).join("\n").trim();
  return { requirement, ...(source !== undefined ? { source } : {}) };
}

/**
 * The draft with every declaration that still fails a check taken out (a rule that uses a pattern
 * taken out fails in turn, and goes too), formatted; what was taken out, and why.
 */
function pruned(first: Checked, options: Grounding): { policy: string; rules: DraftedRule[]; rejected: RejectedRule[]; warnings: string[]; reviews: KeptForReview[] } {
  let checked = first;
  const rejected: RejectedRule[] = [];
  for (let pass = 0; pass < 20; pass++) {
    if (checked.problems.length === 0) break;
    const outside = checked.byItem.get(null);
    if (outside !== undefined && outside.length > 0) throw new DraftFailed(`the last draft still has errors outside any rule: ${outside.join("; ")}`, checked.text);
    const compiled = compile(checked.text);
    let text = checked.text;
    const removals: { start: number; end: number }[] = [];
    for (const policy of compiled.syntax.policies) {
      for (const item of policy.items) {
        const problems = checked.byItem.get(`${item.kind}:${ruleId({ policy: policy.name.text, name: item.name.text })}`);
        if (problems === undefined) continue;
        const { requirement, source } = docOf(item.doc?.text);
        rejected.push({ name: ruleId({ policy: policy.name.text, name: item.name.text }), ...(requirement !== "" ? { requirement } : {}), ...(source !== undefined ? { source } : {}), problems });
        const start = text.lastIndexOf("\n", (item.doc?.span.start ?? item.span.start) - 1) + 1;
        const newline = text.indexOf("\n", item.span.end);
        removals.push({ start, end: newline < 0 ? text.length : newline + 1 });
      }
    }
    for (const { start, end } of removals.sort((a, b) => b.start - a.start)) text = text.slice(0, start) + text.slice(end);
    checked = checkDraft(text, options);
  }
  const reviewed = withReviews(format(checked.text).text ?? checked.text, options);
  const formatted = reviewed.text;
  const compiled = compile(formatted);
  const rules: DraftedRule[] = [];
  for (const policy of compiled.syntax.policies) {
    for (const item of policy.items) {
      if (item.kind !== "RuleDecl") continue;
      const { requirement, source } = docOf(item.doc?.text);
      rules.push({ policy: policy.name.text, name: item.name.text, requirement, source: source ?? "", cited: citedText(options.sources, source ?? "") ?? "" });
    }
  }
  return { policy: rules.length > 0 ? formatted : "", rules, rejected, warnings: [...checked.warnings], reviews: rules.length > 0 ? reviewed.reviews : [] };
}

/** A `/// review: …` line, as the draft writes it (the model's own are replaced). */
const reviewLine = /^\s*review:/i;

/**
 * The formatted policy with a `/// review: …` line above each declaration for each name no run
 * shows that it keeps (after its other `///` lines, so that the requirement and its source come
 * first); any such line the answer wrote itself is dropped first. And the same, for the report.
 */
function withReviews(formatted: string, options: Grounding): { text: string; reviews: KeptForReview[] } {
  const text = formatted.split("\n").filter((line) => !/^\s*\/\/\/\s*review:/i.test(line)).join("\n");
  const checked = checkDraft(text, options);
  if (checked.reviews.length === 0) return { text, reviews: [] };
  const compiled = compile(text);
  const inserts: { at: number; lines: string }[] = [];
  const reviews: KeptForReview[] = [];
  for (const policy of compiled.syntax.policies) {
    for (const item of policy.items) {
      const own = checked.reviews.filter((review) => review.policy === policy.name.text && review.item === item.name.text && review.kind === item.kind);
      const unique = [...new Set(own.map((review) => review.line))];
      if (unique.length === 0) continue;
      const at = text.lastIndexOf("\n", item.span.start - 1) + 1;
      const indent = /^[ \t]*/.exec(text.slice(at))![0];
      inserts.push({ at, lines: unique.map((line) => `${indent}/// ${line}\n`).join("") });
      const { source } = docOf(item.doc?.text);
      for (const line of unique) reviews.push({ name: reviewedName(own[0]!), ...(source !== undefined ? { source } : {}), review: line.replace(reviewLine, "").trim() });
    }
  }
  let result = text;
  for (const { at, lines } of inserts.sort((a, b) => b.at - a.at)) result = result.slice(0, at) + lines + result.slice(at);
  return { text: result, reviews };
}
