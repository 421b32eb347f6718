import { ruleId } from "@vigil/checker";
import type { TraceEvent } from "@vigil/trace";
import { reportOf, type CheckReport } from "./check.js";
import type { EngineName, MonitorEngineRun } from "./engines.js";
import type { TestContext } from "./test-context.js";

/**
 * A test's run judged by each engine asked for: every rule's verdict per engine, and the monitor's
 * run, whose decisions on calls are what `decide` expects.
 */

/** What one engine says of each rule on a run: its witnesses, and for `until` the breaking events. */
export interface EngineVerdicts {
  readonly engine: EngineName;
  readonly byRule: ReadonlyMap<string, { readonly holds: boolean; readonly witnesses: readonly number[]; readonly brokenBy?: readonly number[]; readonly undecided?: string }>;
}

/** The monitor's run of a test, or why it could not run. */
export interface MonitorResult {
  readonly run?: MonitorEngineRun;
  readonly error?: string;
}

/**
 * Each engine asked for, in the order `eval`, `smt`, `monitor`, `sql`, judges the run. The forward
 * engine's verdicts are the judgement's own (the run was read through it); the others judge the
 * events read. An engine that fails leaves every rule undecided, with its error as the reason: a
 * failure of each expectation, never a pass.
 */
export async function judgeWithEngines(context: TestContext, events: readonly TraceEvent[], report: CheckReport): Promise<{ verdicts: EngineVerdicts[]; monitor?: MonitorResult }> {
  const verdicts: EngineVerdicts[] = [];
  let monitor: MonitorResult | undefined;
  const signal = context.signal !== undefined ? { signal: context.signal } : {};
  for (const judge of context.judges) {
    const engine = judge.name;
    try {
      // The forward engine's run is the one the run was read through.
      if (engine === "eval") {
        verdicts.push(verdictsOf("eval", report));
        continue;
      }
      const run = judge.start(context.statements, signal);
      for (const event of events) run.step(event);
      const outcomes = await run.finish();
      // The monitor's run (`createEngine("monitor")`) also holds its decision on each call: what `decide` expects.
      if (engine === "monitor") monitor = { run: run as MonitorEngineRun };
      // The event that broke each `until` witness comes from the forward run each run keeps beside
      // it: without it, a `broken by` expectation would go unchecked on that engine.
      verdicts.push(verdictsOf(engine, reportOf(context.statements, outcomes, engine, run.observations)));
    } catch (error) {
      // A cancelled run is cancelled, not judged.
      if (context.signal?.aborted === true) throw error;
      const reason = `the engine failed while judging: ${error instanceof Error ? error.message : String(error)}`;
      if (engine === "monitor") monitor = { error: reason };
      verdicts.push({ engine, byRule: new Map(context.statements.map((s) => [ruleId(s), { holds: false, witnesses: [], undecided: reason }])) });
    }
  }
  return { verdicts, ...(monitor !== undefined ? { monitor } : {}) };
}

function verdictsOf(engine: EngineName, report: CheckReport): EngineVerdicts {
  const byRule = new Map<string, { holds: boolean; witnesses: readonly number[]; brokenBy?: readonly number[]; undecided?: string }>();
  for (const verdict of report.statements) {
    byRule.set(ruleId(verdict), {
      holds: verdict.holds,
      witnesses: verdict.witnesses,
      ...(verdict.brokenBy !== undefined ? { brokenBy: verdict.brokenBy } : {}),
      ...(verdict.undecided !== undefined ? { undecided: verdict.undecided } : {}),
    });
  }
  return { engine, byRule };
}
