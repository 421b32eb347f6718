import { codeFrameColumns } from "@babel/code-frame";
import type { CheckReport, Diagnostic, StatementVerdict, TraceEvent } from "@vigil/compiler";
import pc from "picocolors";

export interface Colors {
  readonly enabled: boolean;
}

function paint(colors: Colors) {
  return colors.enabled ? pc : pc.createColors(false);
}

/** Renders one diagnostic the way compilers do: header, location, code frame, help. */
export function renderDiagnostic(d: Diagnostic, sources: ReadonlyMap<string, string>, colors: Colors): string {
  const c = paint(colors);
  const severity = d.severity === "error" ? c.red(c.bold("error")) : d.severity === "warning" ? c.yellow(c.bold("warning")) : c.cyan(c.bold("info"));
  const lines = [`${severity}${c.bold(`[${d.code}]`)}: ${c.bold(d.message)}`];
  if (d.span !== undefined) {
    lines.push(`  ${c.blue("-->")} ${d.file ?? "<input>"}:${d.span.line}:${d.span.column}`);
    const source = d.file !== undefined ? sources.get(d.file) : undefined;
    if (source !== undefined) lines.push(indent(frame(source, d.span, colors), 2));
  } else if (d.file !== undefined) {
    lines.push(`  ${c.blue("-->")} ${d.file}`);
  }
  for (const related of d.related ?? []) {
    lines.push(`  ${c.blue("note:")} ${related.message} at ${related.file ?? d.file ?? "<input>"}:${related.span.line}:${related.span.column}`);
  }
  if (d.help !== undefined) lines.push(`  ${c.cyan("help:")} ${d.help}`);
  if (d.fix !== undefined) lines.push(`  ${c.green("fix:")} ${d.fix.title}`);
  return lines.join("\n");
}

function frame(source: string, span: NonNullable<Diagnostic["span"]>, colors: Colors): string {
  const end =
    span.endLine === span.line && span.endColumn <= span.column
      ? { line: span.line, column: span.column + 1 }
      : { line: span.endLine, column: span.endColumn };
  return codeFrameColumns(source, { start: { line: span.line, column: span.column }, end }, { highlightCode: colors.enabled, forceColor: colors.enabled, linesAbove: 1, linesBelow: 0 });
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
  readonly events: readonly TraceEvent[];
}

/** The human report: every violated (or undecided) rule with its requirement, code frame and witnesses. */
export function renderReport(input: RenderReportInput, colors: Colors): string {
  const c = paint(colors);
  const { report } = input;
  const out: string[] = [];
  for (const verdict of report.statements) {
    if (verdict.holds) continue;
    out.push(renderViolation(verdict, input, colors), "");
  }
  const held = report.statements.filter((v) => v.holds).length;
  const violated = report.statements.filter((v) => !v.holds && v.undecided === undefined);
  const undecided = report.statements.filter((v) => v.undecided !== undefined);
  const names = (vs: readonly StatementVerdict[]) => vs.map((v) => `${v.policy}.${v.name}`).join(", ");
  out.push(
    `${c.bold("checked")} ${report.statements.length} rule${report.statements.length === 1 ? "" : "s"} of ${input.policyFile} against ${input.events.length} event${input.events.length === 1 ? "" : "s"} of ${input.traceFile} (engine: ${report.engine})`,
  );
  out.push(`  ${c.green(`${held} hold`)}` + (violated.length > 0 ? `, ${c.red(`${violated.length} violated`)} (${names(violated)})` : "") + (undecided.length > 0 ? `, ${c.magenta(`${undecided.length} undecided`)} (${names(undecided)})` : ""));
  out.push(`verdict: ${report.verdict === "safe" ? c.green(c.bold("safe")) : c.red(c.bold("unsafe"))}`);
  return out.join("\n") + "\n";
}

function renderViolation(verdict: StatementVerdict, input: RenderReportInput, colors: Colors): string {
  const c = paint(colors);
  const span = verdict.statement.span;
  const lines: string[] = [];
  if (verdict.undecided !== undefined) {
    lines.push(`${c.magenta(c.bold("undecided"))}${c.bold(`[${verdict.policy}.${verdict.name}]`)}: ${c.bold("the rule could not be decided, so the run is judged unsafe (fail closed)")}`);
    lines.push(`  ${c.cyan("reason:")} ${verdict.undecided}`);
  } else {
    lines.push(`${c.red(c.bold("violation"))}${c.bold(`[${verdict.policy}.${verdict.name}]`)}: ${c.bold(verdict.doc?.split("\n").join(" ") ?? `the rule \`${verdict.name}\` does not hold`)}`);
  }
  lines.push(`  ${c.blue("-->")} ${input.policyFile}:${span.line}:${span.column}`);
  lines.push(indent(codeFrameColumns(input.policySource, { start: { line: span.line, column: span.column }, end: { line: span.endLine, column: span.endColumn } }, { highlightCode: colors.enabled, forceColor: colors.enabled, linesAbove: 0, linesBelow: 0 }), 2));
  const byPosition = new Map(input.events.map((e) => [e.position, e]));
  const shown = verdict.witnesses.slice(0, 20);
  for (const position of shown) {
    const event = byPosition.get(position);
    if (event === undefined) continue;
    const where = `${event.source?.file ?? input.traceFile}:${event.source?.line ?? "?"}`;
    lines.push(`  ${c.red("witness")} event ${position} (${where}): ${describeEvent(event)}`);
  }
  if (verdict.witnesses.length > shown.length) lines.push(`  … and ${verdict.witnesses.length - shown.length} more witness events`);
  if (verdict.form === "until" && verdict.witnesses.length > 0) lines.push(`  ${c.cyan("note:")} for \`until\`, a witness is the trigger of a broken interval`);
  return lines.join("\n");
}

/** One line: action, arguments, status, and the start of the output. */
export function describeEvent(event: TraceEvent): string {
  const args = JSON.stringify(event.args);
  const shortArgs = args.length > 160 ? `${args.slice(0, 157)}...` : args;
  const status = event.status === undefined ? "pending" : event.status;
  return `${event.action} ${shortArgs} [${status}]`;
}
