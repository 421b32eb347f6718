import { writeFile } from "node:fs/promises";
import type { CompiledPolicy, EngineName } from "@vigil/compiler";
import type { CliIo } from "../io.js";
import { toHtml, type RuleText } from "../reports/html.js";
import type { FailOn, RunOutcome } from "../reports/outcome.js";
import { toSarif } from "../reports/sarif.js";
import { InputError, loadCompiler, loadTraceReader, type TraceReading } from "./shared.js";

/** What the modes of `check` share: its options, the note on messages, the SARIF and HTML reports. */

/** The options of `check`, as commander gives them. */
export type CheckOptions = {
  trace?: string;
  schema?: string;
  /** With `--engine sql`: an events table instead of a trace, its values table, and their names in a database file. */
  events?: string;
  values?: string;
  table?: string;
  valuesTable?: string;
  sarif?: string;
  html?: string;
  engine: EngineName;
  format: "human" | "json";
  strict?: boolean;
  exitZero?: boolean;
  failOn: FailOn;
  why?: boolean;
  timeout: number;
  budget: number;
} & TraceReading;

/**
 * Says, once, that the policy names message actions that make no event without `--messages`:
 * the conditions on them would match nothing, silently but for a closed-world warning.
 */
export async function noteMessagesOff(io: CliIo, compiled: CompiledPolicy, reading: TraceReading): Promise<void> {
  if (reading.messages === true || !compiled.ok) return;
  const { checkAgainstSignature } = await loadCompiler();
  const { emptySignature } = await loadTraceReader();
  const named = new Set<string>();
  for (const d of checkAgainstSignature(compiled, emptySignature())) {
    const action = d.code === "V1101" ? /^the action `(user_message|agent_message)`/.exec(d.message)?.[1] : undefined;
    if (action !== undefined) named.add(action);
  }
  if (named.size === 0) return;
  const names = [...named].map((name) => `\`${name}\``).join(" and ");
  io.stderr(`note: the policy names ${names}: messages are events only with --messages, so without it the conditions on them match nothing\n\n`);
}

/** `--sarif FILE`: the outcomes as SARIF 2.1.0; stops with exit 2 when the file cannot be written. */
export async function writeSarif(io: CliIo, file: string, outcomes: readonly RunOutcome[], policyFile: string): Promise<void> {
  try {
    await writeFile(file, JSON.stringify(toSarif(outcomes, { policyFile, cwd: io.cwd, version: "0.1.0" }), null, 2) + "\n");
  } catch (error) {
    io.stderr(`error: cannot write the SARIF report \`${file}\`: ${(error as Error).message}\n`);
    throw new InputError();
  }
}

/** `--html FILE`: the outcomes as a self-contained HTML report; stops with exit 2 when the file cannot be written. */
export async function writeHtml(io: CliIo, file: string, outcomes: readonly RunOutcome[], policyFile: string, rules: readonly RuleText[]): Promise<void> {
  try {
    await writeFile(file, toHtml(outcomes, { policyFile, rules, version: "0.1.0", generatedAt: new Date().toISOString() }));
  } catch (error) {
    io.stderr(`error: cannot write the HTML report \`${file}\`: ${(error as Error).message}\n`);
    throw new InputError();
  }
}
