import type { CheckTraceResult, DiffCommittedResult, RunTestResult, StatementVerdict, WitnessEvent } from "./protocol.js";

/**
 * The words of a trace check, for the Problems panel and the "Vigil" output channel, and of a run
 * of a test file's tests. Plain functions of the server's answer, with no VS Code in them.
 */

/** The file name at the end of a path (either separator). */
export function baseName(path: string): string {
  return path.slice(Math.max(path.lastIndexOf("/"), path.lastIndexOf("\\")) + 1);
}

/** `event 5 (line 12)`, or `event 5` when the line is not known. */
export function describeWitness(witness: WitnessEvent): string {
  return witness.line === undefined ? `event ${witness.event}` : `event ${witness.event} (line ${witness.line})`;
}

/** At most this many witnesses are named in one problem's message; the output channel lists all. */
const witnessesInMessage = 5;

/** The message of the problem a statement that does not hold puts on its rule. */
export function violationMessage(statement: StatementVerdict, trace: string): string {
  const file = baseName(trace);
  if (statement.undecided !== undefined) return `rule \`${statement.name}\` undecided on ${file}: ${statement.undecided}`;
  const shown = statement.witnesses.slice(0, witnessesInMessage).map(describeWitness);
  const more = (statement.witnessCount ?? statement.witnesses.length) - shown.length;
  const events = more > 0 ? `${shown.join(", ")} and ${more} more` : shown.join(", ");
  return statement.witnesses.length === 0
    ? `rule \`${statement.name}\` violated on ${file}`
    : `rule \`${statement.name}\` violated on ${file} at ${events}`;
}

/** The statements that do not hold (violated or undecided), in the server's order. */
export function failedStatements(result: CheckTraceResult): StatementVerdict[] {
  return result.statements.filter((statement) => !statement.holds);
}

/** One line for a notification: the verdict and how many rules failed. */
export function summaryLine(result: CheckTraceResult): string {
  const file = baseName(result.trace);
  const failed = failedStatements(result).length;
  const total = result.statements.length;
  if (result.errors.length > 0 && total === 0) return `Vigil: ${file} could not be checked: ${result.errors[0]}`;
  return result.verdict === "safe"
    ? `Vigil: ${file} is safe: all ${total} ${total === 1 ? "rule holds" : "rules hold"}`
    : `Vigil: ${file} is unsafe: ${failed} of ${total} ${total === 1 ? "rule" : "rules"} violated or undecided`;
}

/** The full report written to the output channel. */
export function reportLines(result: CheckTraceResult, policy: string, engine: string): string[] {
  const lines = [`${policy} on ${result.trace} (engine ${engine}): ${result.verdict}`];
  for (const statement of result.statements) {
    const name = `${statement.policy}.${statement.name}`;
    if (statement.holds) lines.push(`  holds      ${name}`);
    else if (statement.undecided !== undefined) lines.push(`  undecided  ${name}: ${statement.undecided}`);
    else {
      lines.push(`  violated   ${name}`);
      for (const witness of statement.witnesses) lines.push(`               at ${describeWitness(witness)}`);
      const unlisted = (statement.witnessCount ?? statement.witnesses.length) - statement.witnesses.length;
      if (unlisted > 0) lines.push(`               and ${unlisted} more`);
    }
  }
  for (const error of result.errors) lines.push(`  error: ${error}`);
  return lines;
}

/** The message of an error of any kind. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** One line for a run of a test file's tests: `dashcam.vigiltest: 3 tests, 2 passed, 1 failed`, or why none ran. */
export function testRunSummary(result: RunTestResult): string {
  const file = baseName(decodeURIComponent(result.uri));
  if (result.tests.length === 0) return result.errors.length > 0 ? `${file}: no test ran: ${result.errors[0]}` : `${file}: no tests`;
  const count = (outcome: string) => result.tests.filter((test) => test.outcome === outcome).length;
  const parts = [`${count("passed")} passed`, ...(count("failed") > 0 ? [`${count("failed")} failed`] : []), ...(count("error") > 0 ? [`${count("error")} could not run`] : [])];
  return `${file}: ${result.tests.length} ${result.tests.length === 1 ? "test" : "tests"}, ${parts.join(", ")}`;
}

/** One line on what an edit changed: the whole policy's relation against the revision it was compared with. */
export function diffSummary(result: DiffCommittedResult): string {
  const against = `${result.new} against ${result.revision}`;
  if (result.same) return result.basis === "proof" ? `${against}: no change in meaning (proven)` : `${against}: no difference found in short runs (not proven equivalent)`;
  switch (result.relation) {
    case "stricter":
      return `${against}: stricter — it rejects runs the committed version accepts`;
    case "looser":
      return `${against}: looser — it accepts runs the committed version rejects`;
    case "incomparable":
      return `${against}: each version rejects runs the other accepts`;
    case "equivalent":
      return `${against}: the whole policy is unchanged, some rules differ (see the report)`;
  }
}
