import { resolve } from "node:path";
import type { Command } from "commander";
import type { CommandContext } from "./context.js";
import { readRuns } from "./runs.js";
import { InputError, parsePositiveInteger, plural, writeOutput } from "./shared.js";

/**
 * `vigilc mine RUN… [--against BAD…]`: the rules of Vigil's forms that hold on every given run
 * (precedence and response between actions, values that flow from an output into a later call;
 * with bad runs, absences of what only they did), each checked by the forward engine on every run,
 * ranked by how often the runs exercised it. No model is involved.
 * Exit: 0 rules were found; 1 none; 2 bad input.
 */
export function registerMine(program: Command, context: CommandContext): void {
  program
    .command("mine")
    .description("the rules that hold on every given good run, checked by the engine and ranked by how often the runs exercised them")
    .argument("<run...>", "good runs: files, directories or globs")
    .option("--against <run...>", "bad runs: keep only the rules some of them break")
    .option("--min-runs <count>", "a rule must have been exercised in this many good runs", parsePositiveInteger, 2)
    .option("--top <count>", "at most this many rules, the best ranked", parsePositiveInteger)
    .option("--name <policy>", "the policy's name", "mined")
    .option("-o, --output <file>", "write the policy here (default: standard output)")
    .action(async (runs: string[], options: MineCommandOptions) => {
      context.exitCode = await mine(context, runs, options);
    });
}

type MineCommandOptions = { against?: string[]; minRuns: number; top?: number; name: string; output?: string };

async function mine(context: CommandContext, runs: string[], options: MineCommandOptions): Promise<number> {
  const { io } = context;
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(options.name)) {
    io.stderr(`error: \`${options.name}\` is not a policy name: use letters, digits and _\n`);
    throw new InputError();
  }
  const good = (await readRuns(context, runs, "mined")).map((run) => run.events);
  const bad = options.against !== undefined ? (await readRuns(context, options.against, "mined")).map((run) => run.events) : [];
  const { mineRules } = await import("@vigil/draft");
  const result = mineRules(good, { ...(bad.length > 0 ? { bad } : {}), minRuns: options.minRuns, ...(options.top !== undefined ? { top: options.top } : {}), policyName: options.name });
  io.stderr(
    `${plural(result.candidates, "candidate")} over ${plural(good.length, "good run")}: ${result.held} held on every one; ${plural(result.rules.length, "rule")} kept${bad.length > 0 ? ` (broken by some of ${plural(bad.length, "bad run")})` : ` (exercised in at least ${plural(options.minRuns, "run")})`}\n`,
  );
  if (result.rules.length === 0) return 1;
  if (options.output !== undefined) {
    await writeOutput(resolve(io.cwd, options.output), result.policy);
    io.stderr(`wrote ${options.output}\n`);
  } else io.stdout(result.policy);
  return 0;
}
