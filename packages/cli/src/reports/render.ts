import { codeFrameColumns } from "@babel/code-frame";
import { ruleId, type CheckReport, type Diagnostic, type StatementVerdict, type TraceEvent } from "@vigil/compiler";
import pc from "picocolors";
import { formatDuration } from "@vigil/syntax";
import { statusLabel } from "./outcome.js";

export interface Colors {
  readonly enabled: boolean;
}

export function paint(colors: Colors) {
  return colors.enabled ? pc : pc.createColors(false);
}

/**
 * Control characters and bidirectional-text controls made visible. Traces and policies are
 * untrusted text: a raw ESC in an action name is a terminal escape sequence (it can recolour,
 * move the cursor, rewrite what was printed before), a carriage return overwrites the line, and a
 * right-to-left override makes text read differently from what it is. Every value from a trace or
 * a policy goes through one of these before it is printed; each such character becomes its escape
 * (`\u001b`, `\u202e`, or `\r`, `\n`, `\t`), so the text stays readable and nothing is hidden.
 */
const controlCharacters = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const controlCharactersButLayout = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const namedEscapes: Readonly<Record<string, string>> = { "\n": "\\n", "\r": "\\r", "\t": "\\t" };

function escapeCharacter(character: string): string {
  return namedEscapes[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, "0")}`;
}

/** A value printed on one line (a name, an action, a message from a rule): every control character escaped. */
export function printableLine(text: string): string {
  return text.replace(controlCharacters, escapeCharacter);
}

/** Text whose line breaks and tabs are layout (a message, a line of a code frame): the other controls escaped. */
export function printableText(text: string): string {
  return text.replace(controlCharactersButLayout, escapeCharacter);
}

/** Renders one diagnostic the way compilers do: header, location, code frame, help. */
export function renderDiagnostic(d: Diagnostic, sources: ReadonlyMap<string, string>, colors: Colors): string {
  const c = paint(colors);
  const severity = d.severity === "error" ? c.red(c.bold("error")) : d.severity === "warning" ? c.yellow(c.bold("warning")) : c.cyan(c.bold("info"));
  // Messages quote the policy and the trace, so they are escaped like the values they quote.
  const lines = [`${severity}${c.bold(`[${d.code}]`)}: ${c.bold(printableText(clip(d.message)))}`];
  const file = printableLine(d.file ?? "<input>");
  if (d.span !== undefined) {
    lines.push(`  ${c.blue("-->")} ${file}:${d.span.line}:${d.span.column}`);
    const source = d.file !== undefined ? sources.get(d.file) : undefined;
    if (source !== undefined) lines.push(indent(frame(source, d.span, colors), 2));
  } else if (d.file !== undefined) {
    lines.push(`  ${c.blue("-->")} ${file}`);
  }
  for (const related of d.related ?? []) {
    const relatedFile = related.file !== undefined ? printableLine(related.file) : file;
    lines.push(`  ${c.blue("note:")} ${printableText(clip(related.message))} at ${relatedFile}:${related.span.line}:${related.span.column}`);
  }
  if (d.help !== undefined) lines.push(`  ${c.cyan("help:")} ${printableText(clip(d.help))}`);
  if (d.fix !== undefined) lines.push(`  ${c.green("fix:")} ${printableText(clip(d.fix.title))}`);
  return lines.join("\n");
}

function frame(source: string, span: NonNullable<Diagnostic["span"]>, colors: Colors): string {
  const end =
    span.endLine === span.line && span.endColumn <= span.column
      ? { line: span.line, column: span.column + 1 }
      : { line: span.endLine, column: span.endColumn };
  return codeFrame(source, { line: span.line, column: span.column }, end, 1, colors);
}

/** Code frames show at most this many columns of a line, and this many lines of a span. */
export const FRAME_WIDTH = 120;
export const FRAME_LINES = 12;
/** How many columns of context a cropped frame keeps left of the span. */
const FRAME_LEAD = 30;

let cachedSource: string | undefined;
let cachedLines: string[] = [];

function linesOf(source: string): string[] {
  if (source !== cachedSource) {
    cachedSource = source;
    cachedLines = source.split("\n").map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line));
  }
  return cachedLines;
}

interface Position {
  readonly line: number;
  readonly column: number;
}

/**
 * A code frame of `start`–`end` (1-based, end exclusive) with `linesAbove` lines of context. Only
 * the lines shown are handed to the frame printer, cut to a window of {@link FRAME_WIDTH} columns
 * around the span (a cut is marked `…`), and a span over many lines shows its first
 * {@link FRAME_LINES}: a 100 kB line or a 10,000-line rule gives a frame of a few lines.
 */
export function codeFrame(source: string, start: Position, end: Position, linesAbove: number, colors: Colors): string {
  const all = linesOf(source);
  const startLine = Math.min(Math.max(1, start.line), all.length);
  let endLine = Math.min(Math.max(startLine, end.line), all.length);
  let endColumn = end.line > all.length ? (all[all.length - 1]?.length ?? 0) + 1 : end.column;
  if (endLine - startLine + 1 > FRAME_LINES) {
    endLine = startLine + FRAME_LINES - 1;
    endColumn = all[endLine - 1]!.length + 1;
  }
  const first = Math.max(1, startLine - linesAbove);
  // The frame shows a policy's or a trace's text, so its control characters are escaped; the span's
  // columns move with the text they point at.
  const shown = all.slice(first - 1, endLine).map(printableText);
  const shownColumn = (line: number, c: number): number => {
    const raw = all[line - 1]!;
    return printableText(raw.slice(0, Math.max(0, c - 1))).length + 1 + Math.max(0, c - 1 - raw.length);
  };
  const spanStart = shownColumn(startLine, start.column);
  const spanEnd = shownColumn(endLine, endColumn);
  let widest = 0;
  for (const line of shown) widest = Math.max(widest, line.length);
  // Left edge of the window (0-based): 0 when everything fits, else a little left of the span.
  const from = widest <= FRAME_WIDTH || spanStart - 1 <= FRAME_WIDTH - FRAME_LEAD ? 0 : spanStart - 1 - FRAME_LEAD;
  const lead = from > 0 ? "…" : "";
  const crop = (line: string): string => {
    const cut = line.slice(from, from + FRAME_WIDTH);
    return (line.length > from ? lead : "") + cut + (line.length > from + FRAME_WIDTH ? "…" : "");
  };
  const column = (line: string, c: number): number => {
    const inWindow = Math.min(Math.max(c - 1 - from, 0), FRAME_WIDTH);
    return inWindow + 1 + (line.length > from ? lead.length : 0);
  };
  const startText = shown[startLine - first]!;
  const endText = shown[endLine - first]!;
  let startColumn = column(startText, spanStart);
  let lastColumn = column(endText, spanEnd);
  if (endLine === startLine && lastColumn <= startColumn) lastColumn = startColumn + 1;
  if (startLine === endLine && startColumn > crop(startText).length + 1) startColumn = crop(startText).length + 1;
  return codeFrameColumns(
    shown.map(crop).join("\n"),
    { start: { line: startLine, column: startColumn }, end: { line: endLine, column: lastColumn } },
    // `startLine` numbers the excerpt as the lines of the file (the option exists since
    // @babel/code-frame 7.23; its type declarations lag behind).
    { highlightCode: colors.enabled, forceColor: colors.enabled, linesAbove, linesBelow: 0, startLine: first } as Parameters<typeof codeFrameColumns>[2],
  );
}

/** Cuts a message that quotes user input (a 100 kB action name, say) to a readable length. */
export function clip(text: string, max = 400): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function indent(text: string, by: number): string {
  const pad = " ".repeat(by);
  return text
    .split("\n")
    .map((line) => pad + line)
    .join("\n");
}

export interface RenderReportInput {
  readonly report: CheckReport;
  readonly policySource: string;
  readonly policyFile: string;
  readonly traceFile: string;
  /** How many events the run has. */
  readonly eventCount: number;
  /** The event at a position (a streamed run keeps only the events a report shows). */
  readonly eventAt: (position: number) => TraceEvent | undefined;
  /** Say, for every rule, why it holds or not (`--why`). */
  readonly why?: boolean;
  /**
   * Why an event matching a sum limit could not be counted, if it could not (the compiler's
   * `uncountedAmount`, passed in so that rendering loads no compiler): said beside such a witness.
   */
  readonly uncountedAmount?: UncountedAmount;
}

/** Why a sum limit's event could not be counted (`uncountedAmount` of @vigil/compiler). */
export type UncountedAmount = (statement: StatementVerdict["statement"], event: TraceEvent) => string | undefined;

/** The human report: every violated (or undecided) rule with its requirement, code frame and witnesses. */
export function renderReport(input: RenderReportInput, colors: Colors): string {
  const c = paint(colors);
  const { report } = input;
  const out: string[] = [];
  for (const verdict of report.statements) {
    if (verdict.holds) continue;
    out.push(renderViolation(verdict, input, colors), "");
  }
  const amounts = input.uncountedAmount !== undefined ? { eventAt: input.eventAt, uncountedAmount: input.uncountedAmount } : undefined;
  if (input.why === true) out.push(c.bold("why:"), ...report.statements.map((verdict) => `  ${whyLine(verdict, amounts)}`), "");
  const held = report.statements.filter((v) => v.holds).length;
  const violated = report.statements.filter((v) => !v.holds && v.undecided === undefined);
  const undecided = report.statements.filter((v) => v.undecided !== undefined);
  const names = (vs: readonly StatementVerdict[]) =>
    vs
      .slice(0, 10)
      .map((v) => printableLine(ruleId(v)))
      .join(", ") + (vs.length > 10 ? `, … ${vs.length - 10} more` : "");
  out.push(
    `${c.bold("checked")} ${report.statements.length} rule${report.statements.length === 1 ? "" : "s"} of ${printableLine(input.policyFile)} against ${input.eventCount} event${input.eventCount === 1 ? "" : "s"} of ${printableLine(input.traceFile)} (engine: ${report.engine})`,
  );
  out.push(`  ${c.green(`${held} hold`)}` + (violated.length > 0 ? `, ${c.red(`${violated.length} violated`)} (${names(violated)})` : "") + (undecided.length > 0 ? `, ${c.magenta(`${undecided.length} undecided`)} (${names(undecided)})` : ""));
  out.push(`verdict: ${report.verdict === "safe" ? c.green(c.bold("safe")) : c.red(c.bold("unsafe"))}`);
  return out.join("\n") + "\n";
}

/**
 * Why a rule holds or not, in one line, from how often its trigger held and how each was answered:
 * a rule whose trigger matched no event holds vacuously (nothing it speaks of happened); one whose
 * trigger matched holds because every such event got what the form asks for, from the events named
 * (`2 by 4`: the trigger at 2 answered by event 4). An `until` trigger whose interval is still open
 * at the end is not answered, and is counted so. A scoped rule says first whether and where its
 * scope opened: one that never opened holds without judging any event, and a `between` stretch
 * that never closed is not judged, whatever happened in it. With the events at hand (`eventAt`), a
 * witness of a sum limit whose amount could not be counted says so.
 */
export function whyLine(verdict: StatementVerdict, amounts?: WitnessAmounts): string {
  const patterns = verdict.patterns === undefined ? "" : `; patterns matched: ${verdict.patterns.map((p) => `${p.role} ${p.count === 0 ? "none" : `${p.count} (${listed(p.first, p.count)})`}`).join(", ")}`;
  return `${verdictWhy(verdict, amounts)}${patterns}`;
}

/** The events at hand, and why a sum limit's event could not be counted: for the witnesses of a sum limit. */
export interface WitnessAmounts {
  readonly eventAt: (position: number) => TraceEvent | undefined;
  readonly uncountedAmount: UncountedAmount;
}

/** What a scoped rule's scope did over the run, and the stretch left unjudged (a `between` stretch that never closed). */
interface ScopeWhy {
  /** `its scope opened at 3 (closed at 6)`, …; `its scope never opened (…)`. */
  readonly text: string;
  readonly opened: boolean;
  /** Where the stretch that is not judged opened. */
  readonly unjudgedFrom?: number;
}

/** Stretches listed, at most ten and the last: `at 3 (closed at 6), at 9 (never closed: not judged)`. */
function stretchesText(scope: NonNullable<StatementVerdict["scope"]>, unclosed: string): string {
  const one = (stretch: { open: number; close?: number }) => `at ${stretch.open} (${stretch.close !== undefined ? `closed at ${stretch.close}` : unclosed})`;
  const shown = scope.first.map(one);
  if (scope.last === undefined) return shown.join(", ");
  const skipped = scope.count - scope.first.length - 1;
  return `${shown.join(", ")}, …${skipped > 0 ? ` ${skipped} more, ` : " "}${one(scope.last)}`;
}

function scopeWhy(verdict: StatementVerdict): ScopeWhy | undefined {
  const scope = verdict.scope;
  const kind = verdict.statement.scope?.kind;
  if (scope === undefined || kind === undefined) return undefined;
  const last = scope.last ?? scope.first[scope.first.length - 1];
  switch (kind) {
    case "after":
      return scope.count === 0
        ? { text: "its scope never opened: no event matched its `after` pattern", opened: false }
        : { text: `its scope opened at event ${scope.first[0]!.open}`, opened: true };
    case "before": {
      const stretch = scope.first[0];
      if (stretch === undefined) return { text: "its scope is the whole run, which has no event", opened: false };
      if (stretch.close === undefined) return { text: "its scope is the whole run: no event matched its `before` pattern", opened: true };
      return stretch.close === 1
        ? { text: "its scope is empty: event 1 matched its `before` pattern", opened: false }
        : { text: `its scope is events 1 to ${stretch.close - 1}: event ${stretch.close} matched its \`before\` pattern`, opened: true };
    }
    case "between":
    case "afterUntil": {
      const opening = kind === "between" ? "the first pattern of its `between`" : "its `after` pattern";
      if (scope.count === 0) return { text: `its scope never opened: no event matched ${opening}`, opened: false };
      const unclosed = kind === "between" ? "never closed: not judged" : "still open at the end: judged";
      const text = `its scope opened ${scope.count === 1 ? "once" : `${scope.count} times`}: ${stretchesText(scope, unclosed)}`;
      const unjudged = kind === "between" && last !== undefined && last.close === undefined;
      // A `between` stretch that only opened is judged nowhere: it is as if the scope never opened.
      return { text, opened: !(unjudged && scope.count === 1), ...(unjudged ? { unjudgedFrom: last!.open } : {}) };
    }
  }
}

/** Why the verdict: the trigger's matches and how they were answered, or the witnesses. */
function verdictWhy(verdict: StatementVerdict, amounts: WitnessAmounts | undefined): string {
  const id = printableLine(ruleId(verdict));
  if (verdict.undecided !== undefined) return `${id} undecided: ${printableLine(verdict.undecided)}`;
  const scope = scopeWhy(verdict);
  // A scope that never opened judged no event: that is the whole reason.
  if (verdict.holds && scope !== undefined && !scope.opened) return `${id} holds vacuously: ${scope.text}`;
  const inScope = scope === undefined ? "" : `${scope.text}; `;
  const unjudged =
    scope?.unjudgedFrom === undefined ? "" : `; what happened in the stretch opened at ${scope.unjudgedFrom} is not judged, since it never closed`;
  const triggers = verdict.triggers;
  if (triggers === undefined) {
    if (!verdict.holds) return `${id} violated: ${inScope}its body failed at event${verdict.witnesses.length === 1 ? "" : "s"} ${listed(verdict.witnesses)}`;
    if (unjudged !== "") return `${id} holds: ${inScope}its body held at every event of the stretches that closed${unjudged}`;
    return `${id} holds: ${inScope}its body held at every event${scope !== undefined ? " in its scope" : ""} (an \`always\` has no single trigger)`;
  }
  const what = verdict.form === "abs" || verdict.form === "limit" ? "its pattern" : "its trigger";
  const inIt = scope !== undefined ? " in its scope" : "";
  if (triggers.count === 0) return `${id} holds vacuously: ${inScope}${what} matched no event${inIt}`;
  const matched = `${what} matched ${triggers.count} event${triggers.count === 1 ? "" : "s"}${inIt} (${listed(triggers.first, triggers.count)})`;
  const answers = verdict.answers;
  const answeredBy = answers === undefined ? "" : listedAnswers(answers.first, answers.count);
  if (!verdict.holds) {
    const others = answers !== undefined && answers.count > 0 ? `; ${answers.count} answered (${answeredBy})` : "";
    return `${id} violated: ${inScope}${matched}; ${verdict.witnesses.length} broke it (${witnessesWhy(verdict, amounts)})${others}`;
  }
  // Past a stretch that never closed, nothing is claimed of each trigger: what happened in it is not judged.
  if (unjudged !== "") {
    const answeredPart = answers !== undefined && answers.count > 0 ? `; ${answers.count} answered (${answeredBy})` : "";
    return `${id} holds: ${inScope}${matched}${answeredPart}${unjudged}`;
  }
  const statement = verdict.statement;
  const answered: Record<string, string> = {
    prec: "each after an event that meets its prerequisite",
    resp: "each followed by a response",
    bresp: `each answered within ${statement.form === "bresp" ? (statement.window.unit === "events" ? `${statement.window.size} events` : formatDuration(statement.window.size)) : "its window"}`,
    limit: "none over the limit",
    rslv: "each resolved before the end",
    until: "no interval broken by a bad event before its resolution",
  };
  const how = `${id} holds: ${inScope}${matched}, ${answered[verdict.form] ?? "each as the rule asks"}`;
  if (answers === undefined) return how;
  if (answers.count === triggers.count) return `${how} (${answeredBy})`;
  // Only an `until` holds with triggers unanswered: intervals no resolution closed, and no bad event broke.
  const open = triggers.count - answers.count;
  const closed = answers.count === 0 ? "none resolved" : `${answers.count} resolved (${answeredBy})`;
  return `${how}; ${closed}, ${open} still open at the end`;
}

/**
 * The witnesses of a violated rule as a short list; with the events at hand, a witness of a sum
 * limit whose amount could not be counted says so (`2: its amount at \`amount\` is not a number …`).
 */
function witnessesWhy(verdict: StatementVerdict, amounts: WitnessAmounts | undefined): string {
  const statement = verdict.statement;
  if (amounts === undefined || statement.form !== "limit" || statement.measure.kind !== "sum") return listed(verdict.witnesses);
  const shown = verdict.witnesses.slice(0, 10).map((position) => {
    const event = amounts.eventAt(position);
    const why = event === undefined ? undefined : amounts.uncountedAmount(statement, event);
    return why === undefined ? `${position}` : `${position}, where ${printableLine(why)}: a witness by itself`;
  });
  const more = verdict.witnesses.length - shown.length;
  return more > 0 ? `${shown.join(", ")}, … ${more} more` : shown.join(", ");
}

/** Answers as a short list, `2 by 4, 5 by 7`: the first ten, and how many more. */
function listedAnswers(first: NonNullable<StatementVerdict["answers"]>["first"], total: number): string {
  const shown = first.slice(0, 10).map(({ trigger, by }) => `${trigger} by ${by}`);
  return total > shown.length ? `${shown.join(", ")}, … ${total - shown.length} more` : shown.join(", ");
}

/** Positions as a short list: the first ten, and how many more. */
/** Positions as a short list, with `…` when there are more than shown. */
export function listed(positions: readonly number[], total = positions.length): string {
  const shown = positions.slice(0, 10).join(", ");
  return total > Math.min(positions.length, 10) ? `${shown}, … ${total - Math.min(positions.length, 10)} more` : shown;
}

function renderViolation(verdict: StatementVerdict, input: RenderReportInput, colors: Colors): string {
  const c = paint(colors);
  const span = verdict.statement.span;
  const id = printableLine(ruleId(verdict));
  const lines: string[] = [];
  if (verdict.undecided !== undefined) {
    lines.push(`${c.magenta(c.bold("undecided"))}${c.bold(`[${id}]`)}: ${c.bold("the rule could not be decided, so the run is judged unsafe (fail closed)")}`);
    lines.push(`  ${c.cyan("reason:")} ${printableLine(verdict.undecided)}`);
  } else {
    const requirement = verdict.doc !== undefined ? verdict.doc.split("\n").join(" ") : `the rule \`${verdict.name}\` does not hold`;
    lines.push(`${c.red(c.bold("violation"))}${c.bold(`[${id}]`)}: ${c.bold(printableLine(requirement))}`);
  }
  const traceFile = printableLine(input.traceFile);
  lines.push(`  ${c.blue("-->")} ${printableLine(input.policyFile)}:${span.line}:${span.column}`);
  lines.push(indent(codeFrame(input.policySource, { line: span.line, column: span.column }, { line: span.endLine, column: span.endColumn }, 0, colors), 2));
  const shown = verdict.witnesses.slice(0, 20);
  const where = (event: TraceEvent) => `${event.source?.file !== undefined ? printableLine(event.source.file) : traceFile}:${event.source?.line ?? "?"}`;
  shown.forEach((position, index) => {
    const event = input.eventAt(position);
    if (event === undefined) return;
    lines.push(`  ${c.red("witness")} event ${position} (${where(event)}): ${describeEvent(event)}`);
    // A sum limit's witness whose amount could not be counted is one by itself, not a total past the maximum.
    const uncounted = input.uncountedAmount?.(verdict.statement, event);
    if (uncounted !== undefined) lines.push(`    ${c.cyan("note:")} ${printableLine(uncounted)}, so it cannot be counted: it is a witness by itself, whatever the total`);
    const breaker = verdict.brokenBy?.[index];
    const breaking = breaker === undefined ? undefined : input.eventAt(breaker);
    if (breaker !== undefined && breaking !== undefined) lines.push(`    ${c.red("broken by")} event ${breaker} (${where(breaking)}): ${describeEvent(breaking)}`);
  });
  if (verdict.witnesses.length > shown.length) lines.push(`  … and ${verdict.witnesses.length - shown.length} more witness events`);
  if (verdict.form === "until" && verdict.witnesses.length > 0) lines.push(`  ${c.cyan("note:")} for \`until\`, a witness is the trigger of a broken interval, and \`broken by\` the bad event that broke it`);
  lines.push(`  ${c.cyan("=")} ${responseLine(verdict.statement.response, verdict.statement.remediation, colors)}`);
  return lines.join("\n");
}

/**
 * What enforcement does with the violation, and what the rule tells the agent to do instead:
 * `response: warn — Close what you opened.` The remediation is policy text, so it is escaped.
 */
export function responseLine(response: StatementVerdict["statement"]["response"], remediation: string | undefined, colors: Colors): string {
  const c = paint(colors);
  // What refuses is red (a containment response refuses too), a person's decision magenta, a warning yellow.
  const word = response === "ask" ? c.magenta(c.bold(response)) : response === "warn" ? c.yellow(c.bold(response)) : c.red(c.bold(response));
  return `response: ${word}${remediation !== undefined ? ` — ${printableLine(remediation)}` : ""}`;
}

/**
 * One line: action, arguments (cut to 160 characters) and status. Both come from the trace: JSON
 * escapes the C0 controls of the arguments but not C1 controls or bidirectional overrides, so the
 * line is escaped as a whole.
 */
export function describeEvent(event: TraceEvent): string {
  const args = JSON.stringify(event.args);
  const shortArgs = args.length > 160 ? `${args.slice(0, 157)}...` : args;
  const status = statusLabel(event);
  return `${printableLine(clip(event.action, 80))} ${printableLine(shortArgs)} [${status}]${event.outputTruncated === true ? " (output cut to the observation cap)" : ""}`;
}

/**
 * Closed-world diagnostics (the paper's Section 4.3): a name in the policy that the trace does not
 * exhibit denotes the empty set. One per occurrence is right in an editor; on the command line a
 * general policy checked against one run gets dozens of them, so beyond a few they are summed up in
 * one message. Those with a fix (a near name: likely a typo) are still shown one by one.
 */
const closedWorldKinds: Readonly<Record<string, string>> = { V1101: "actions", V1102: "arguments", V1103: "values" };
/** Up to this many closed-world diagnostics are shown one by one. */
export const CLOSED_WORLD_SHOWN_ALONE = 3;
/** Names listed per kind in the summary. */
const CLOSED_WORLD_NAMES = 12;

export function splitClosedWorld(diagnostics: readonly Diagnostic[]): { readonly alone: Diagnostic[]; readonly summed: Diagnostic[] } {
  const closedWorld = diagnostics.filter((d) => closedWorldKinds[d.code] !== undefined);
  if (closedWorld.length <= CLOSED_WORLD_SHOWN_ALONE) return { alone: [...diagnostics], summed: [] };
  const summed = closedWorld.filter((d) => d.fix === undefined && d.span !== undefined);
  const summedSet = new Set(summed);
  return { alone: diagnostics.filter((d) => !summedSet.has(d)), summed };
}

/** One message for many closed-world diagnostics: the distinct names, by kind, as the policy writes them. */
export function renderClosedWorldSummary(summed: readonly Diagnostic[], policySource: string, traceFile: string, colors: Colors, options: { readonly corpus?: boolean } = {}): string {
  const c = paint(colors);
  // A set per kind: a policy can name a hundred thousand values, and each is counted once.
  const byKind = new Map<string, { codes: Set<string>; names: Set<string> }>();
  for (const d of summed) {
    const kind = closedWorldKinds[d.code]!;
    const entry = byKind.get(kind) ?? { codes: new Set<string>(), names: new Set<string>() };
    byKind.set(kind, entry);
    entry.codes.add(d.code);
    entry.names.add(clip(policySource.slice(d.span!.start, d.span!.end), 60));
  }
  const distinct = [...byKind.values()].reduce((sum, entry) => sum + entry.names.size, 0);
  const shownTraceFile = printableLine(traceFile);
  const onlyNotes = summed.every((d) => d.severity === "info");
  const severity = onlyNotes ? c.cyan(c.bold("info")) : c.yellow(c.bold("warning"));
  const lines = [
    `${severity}: ${c.bold(`${distinct} name${distinct === 1 ? "" : "s"} of the policy ${distinct === 1 ? "does" : "do"} not occur in ${options.corpus === true ? "any run of " : ""}\`${shownTraceFile}\`, so the conditions on them match nothing (closed world)`)}`,
  ];
  for (const kind of ["actions", "arguments", "values"]) {
    const entry = byKind.get(kind);
    if (entry === undefined) continue;
    const shown: string[] = [];
    for (const name of entry.names) {
      if (shown.length === CLOSED_WORLD_NAMES) break;
      shown.push(printableLine(name));
    }
    const more = entry.names.size > CLOSED_WORLD_NAMES ? `, … (${entry.names.size - CLOSED_WORLD_NAMES} more)` : "";
    lines.push(`  ${kind} (${[...entry.codes].join(", ")}): ${shown.join(", ")}${more}`);
  }
  lines.push(
    // Notes (values) never stop a run, even under --strict; only warnings do.
    (options.corpus === true
      ? `  ${c.cyan("help:")} usual when a general policy meets runs that do not use all of it; \`vigilc signature FILE\` lists what a run has`
      : `  ${c.cyan("help:")} usual when a general policy meets one run; \`vigilc signature ${shownTraceFile}\` lists what the run has`) +
      (onlyNotes ? "" : ", and `--strict` fails on these warnings"),
  );
  return lines.join("\n");
}
