import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
// @ts-expect-error -- a plain ES module script without type declarations
import { check, policy, runsFile, verdictTable } from "./verdicts.mjs";

/**
 * The airline policy on the 200 recorded τ-bench runs (read in place): `vigilc check --messages`
 * reports, per rule, the runs that break it, exactly as verdicts.json records them (the table of
 * README.md); and two rules are re-read literally from the raw recording, without the adapter or the engines.
 * After a change that moves a figure: `node examples/tau-airline/verdicts.mjs >
 * examples/tau-airline/verdicts.json`, and the README's table with it. That the SMT engine gives
 * every run the same verdicts is tau-airline-smt.test.ts's (the heavy tier).
 */

const root = join(import.meta.dirname, "..", "..");
const recorded = JSON.parse(readFileSync(join(import.meta.dirname, "verdicts.json"), "utf8"));

interface Statement {
  readonly policy: string;
  readonly name: string;
  readonly holds: boolean;
  readonly witnesses: readonly number[];
  readonly brokenBy?: readonly number[];
}
interface Run {
  readonly run?: string;
  readonly file: string;
  readonly verdict: string;
  readonly statements: readonly Statement[];
}

describe("the τ-bench airline policy on 200 recorded runs", async () => {
  const evaluated = await check("eval");

  it("reads and judges every run, each named by task and trial", () => {
    expect(evaluated.summary.runs).toBe(200);
    expect(evaluated.summary.failed).toBe(0);
    expect(new Set(evaluated.runs.map((run: Run) => run.run)).size).toBe(200);
    expect(evaluated.runs.every((run: Run) => /^task \d+ trial \d+$/.test(run.run ?? ""))).toBe(true);
  });

  it("breaks each rule in the runs verdicts.json records", () => {
    expect(verdictTable(evaluated)).toEqual(recorded);
  });

  it("names the runs breaking each rule in the human report, as the done-when command prints it", async () => {
    const cli = join(root, "packages", "cli", "dist", "main.js");
    const printed = await promisify(execFile)(process.execPath, [cli, "check", policy, "--messages", "--trace", runsFile], { cwd: root, maxBuffer: 64 * 1024 * 1024 }).catch(
      (error: { code?: number; stdout?: string }) => {
        if (error.code === 1 && error.stdout !== undefined) return { stdout: error.stdout };
        throw error;
      },
    );
    for (const { rule, broken } of recorded.rules as { rule: string; broken: string[] }[]) {
      if (broken.length === 0) continue;
      const named = broken.slice(0, 12).join(", ") + (broken.length > 12 ? `, … and ${broken.length - 12} more` : "");
      expect(printed.stdout).toContain(`${rule}: ${named}\n`);
    }
  });

  it("names, for each broken until interval, the bad event that broke it", () => {
    const events = (run: string) => {
      const found = evaluated.runs.find((r: Run) => r.run === run);
      return found.statements.find((s: Statement) => s.name === "no_reply_with_call");
    };
    // task 0 trial 3: the agent spoke (event 19) and booked (event 20) in the same message.
    expect(events("task 0 trial 3")).toMatchObject({ holds: false, witnesses: [19], brokenBy: [20] });
    for (const run of evaluated.runs as Run[]) {
      for (const statement of run.statements) {
        if (!["confirmed_again", "no_reply_with_call"].includes(statement.name) || statement.holds) continue;
        expect(statement.brokenBy).toHaveLength(statement.witnesses.length);
        statement.witnesses.forEach((witness, index) => expect(statement.brokenBy![index]).toBeGreaterThan(witness));
      }
    }
  });

  it("agrees with a literal reading of the recording for the confirmation and the one-call-at-a-time rules", () => {
    const runs = JSON.parse(readFileSync(join(root, runsFile), "utf8")) as {
      task_id: number;
      trial: number;
      traj: { role: string; content?: string | null; tool_calls?: { function: { name: string } }[] }[];
    }[];
    const updates = new Set(["book_reservation", "cancel_reservation", "update_reservation_flights", "update_reservation_baggages", "update_reservation_passengers", "send_certificate"]);
    const unconfirmed: string[] = [];
    const replyWithCall: string[] = [];
    for (const run of runs) {
      const name = `task ${run.task_id} trial ${run.trial}`;
      let saidYes = false;
      let agentSpoke = false;
      let unconfirmedHere = false;
      let replyHere = false;
      for (const message of run.traj) {
        if (message.role === "user") {
          if (/\byes\b/i.test(message.content ?? "")) saidYes = true;
          agentSpoke = false;
        }
        if (message.role !== "assistant") continue;
        if (message.content) agentSpoke = true;
        for (const call of message.tool_calls ?? []) {
          if (agentSpoke) replyHere = true;
          if (updates.has(call.function.name) && !saidYes) unconfirmedHere = true;
        }
      }
      if (unconfirmedHere) unconfirmed.push(name);
      if (replyHere) replyWithCall.push(name);
    }
    const broken = (rule: string) => [...recorded.rules.find((row: { rule: string }) => row.rule === rule).broken].sort();
    expect(unconfirmed.sort()).toEqual(broken("airline.confirmed_before_update"));
    expect(replyWithCall.sort()).toEqual(broken("airline.no_reply_with_call"));
  });
});
