import type { ReplayReport } from "@vigil/runtime";
import type { CliIo } from "../io.js";
import { openStore } from "./open-enforcement.js";
import { printableLine } from "../reports/render.js";

/**
 * `vigilc audit verify DB` and `vigilc replay --audit DB --policy FILE…`: the audit log of an
 * enforcement database checked link by link, and its runs decided again under another policy.
 * Exit codes: 0 the log verifies (replay: no decision changes), 1 a broken link (replay: some
 * decisions change), 2 the database or the policy cannot be read.
 */

const EXIT_OK = 0;
const EXIT_FOUND = 1;
const EXIT_INPUT_ERROR = 2;


export async function auditVerifyCommand(database: string, options: { format: "human" | "json" }, io: CliIo): Promise<number> {
  const { checkState, verifyAudit } = await import("@vigil/runtime");
  const store = await openStore(database, io, { mustExist: true });
  if (store === 2) return EXIT_INPUT_ERROR;
  try {
    const chain = verifyAudit(store);
    const state = checkState(store);
    const ok = chain.ok && state.length === 0;
    if (options.format === "json") {
      io.stdout(JSON.stringify({ ok, database, chain, state: { ok: state.length === 0, problems: state } }, null, 2) + "\n");
    } else if (!chain.ok && chain.problem === "downgraded") {
      io.stdout(`${printableLine(database)}: the audit log is refused (${chain.problem}): ${printableLine(chain.message)}\n`);
      io.stdout(`  it holds ${chain.records} record${chain.records === 1 ? "" : "s"} on a ${chain.chain} chain; with a key, a log is ${chain.expected}\n`);
    } else if (!chain.ok) {
      io.stdout(`${printableLine(database)}: the audit log is broken at record ${chain.seq} (${chain.problem}): ${printableLine(chain.message)}\n`);
      io.stdout(`  ${chain.records} record${chain.records === 1 ? "" : "s"} before it verify (${chain.chain} chain)\n`);
    } else {
      io.stdout(`${printableLine(database)}: the audit log verifies: ${chain.records} record${chain.records === 1 ? "" : "s"}, ${chain.chain} chain, head ${chain.head}\n`);
    }
    if (options.format === "human" && state.length > 0) {
      io.stdout(`the runs' state disagrees with the log:\n${state.map((problem) => `  ${printableLine(problem)}\n`).join("")}`);
    }
    return ok ? EXIT_OK : EXIT_FOUND;
  } finally {
    store.close();
  }
}

export async function replayCommand(options: { audit: string; policy: string[]; run?: string; format: "human" | "json" }, io: CliIo): Promise<number> {
  const { loadPolicy, PolicyError, replayAudit, verifyAudit } = await import("@vigil/runtime");
  const store = await openStore(options.audit, io, { mustExist: true });
  if (store === 2) return EXIT_INPUT_ERROR;
  try {
    const chain = verifyAudit(store);
    if (!chain.ok) {
      const where = chain.problem === "downgraded" ? chain.message : `record ${chain.seq}: ${chain.message}`;
      io.stderr(`error: the audit log of \`${printableLine(options.audit)}\` does not verify (${printableLine(where)}); a tampered log is not replayed\n`);
      return EXIT_INPUT_ERROR;
    }
    let policy;
    try {
      // Compiled here, not taken from the database: replay reads the log and writes nothing.
      policy = await loadPolicy(options.policy);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      io.stderr(`error: ${printableLine(error.message)}\n`);
      return EXIT_INPUT_ERROR;
    }
    const report = replayAudit(store, policy, options.run !== undefined ? { runId: options.run } : {});
    io.stdout(options.format === "json" ? JSON.stringify(report, null, 2) + "\n" : renderReplay(report, options.audit));
    return report.changed > 0 ? EXIT_FOUND : EXIT_OK;
  } finally {
    store.close();
  }
}

function renderReplay(report: ReplayReport, database: string): string {
  const lines: string[] = [];
  const plural = (n: number, noun: string) => `${n} ${noun}${n === 1 ? "" : "s"}`;
  lines.push(`replayed ${plural(report.runs.length, "run")} of ${printableLine(database)} (${plural(report.decisions, "decision")}) under ${report.policy.files.map(printableLine).join(", ")}`);
  for (const run of report.runs) {
    const unjudged =
      (run.unjudged > 0 ? `; ${plural(run.unjudged, "call")} refused before it could be judged, not replayed` : "") +
      (run.guarded > 0 ? `; ${plural(run.guarded, "call")} decided by the guard whatever the policy, not replayed` : "");
    if (run.changed.length === 0) {
      lines.push(`run ${printableLine(JSON.stringify(run.runId))}: no decision changes (${plural(run.decisions, "decision")})${unjudged}`);
      continue;
    }
    lines.push(`run ${printableLine(JSON.stringify(run.runId))}: ${run.changed.length} of ${plural(run.decisions, "decision")} change${unjudged}`);
    for (const call of run.changed) {
      let args = JSON.stringify(call.args);
      if (args.length > 120) args = `${args.slice(0, 119)}…`;
      const rules = (names: readonly string[]) => (names.length > 0 ? ` (${names.join(", ")})` : "");
      lines.push(
        `  record ${call.seq}${call.callId !== undefined ? `, call ${printableLine(call.callId)}` : ""}: ${printableLine(call.action)} ${printableLine(args)}: ` +
          `${call.was}${rules(call.wasRules)} → ${call.now}${rules(call.nowRules)}`,
      );
    }
  }
  lines.push(report.changed === 0 ? "no decision would change" : `${plural(report.changed, "decision")} would change`);
  return lines.join("\n") + "\n";
}
