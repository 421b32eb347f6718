import { ruleId, type Encoding } from "@vigil/compiler";
import { closestName } from "@vigil/diagnostics";
import { Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { InputError, loadCompiler, plural, traceFormatOption, type TraceReading } from "./shared.js";

/** `vigilc lower POLICY --trace FILE`: the SMT-LIB query of each rule on the trace, for any solver. */
export function registerLower(program: Command, context: CommandContext): void {
  program
    .command("lower")
    .description("print the SMT-LIB query of each rule (Figure 5 lowering) for re-checking with any solver")
    .argument("<policy>", "a .vigil file")
    .requiredOption("-t, --trace <file>", "the trace whose facts the query asserts (- for standard input)")
    .addOption(traceFormatOption())
    .option("--ground", "ground shell calls into the events of their commands (the default for recordings)")
    .option("--no-ground", "do not ground shell calls")
    .option("--messages", "the conversation's messages are events too: user_message and agent_message, with their text")
    .option("--run <name>", "of a file holding several runs (τ-bench), the run to lower (such as 'task 0 trial 0'); required for such a file")
    .option("-r, --rule <name>", "only this rule (NAME or POLICY.NAME)")
    .addOption(new Option("--encoding <encoding>", "literal: the disjunctions of Figure 5 spelled out; shared: the same, with running disjunctions named once").choices(["shared", "literal"]).default("shared"))
    .action((policyFile: string, options: LowerOptions) => lower(context, policyFile, options));
}

/** The options of `lower`, as commander gives them. */
type LowerOptions = { trace: string; rule?: string; encoding: Encoding } & TraceReading;

async function lower(context: CommandContext, policyFile: string, options: LowerOptions): Promise<void> {
  const { io, printDiagnostics, reportUnrendered } = context;
  const source = await context.readText(policyFile, "policy");
  const { trace } = await context.loadTrace(options.trace, "nothing was lowered", options);
  const { compile, renderSmtLib, signatureOf, TraceRun } = await loadCompiler();
  const compiled = compile(source, { signature: signatureOf(trace.events), file: policyFile });
  const errors = compiled.diagnostics.filter((d) => d.severity === "error");
  printDiagnostics(errors);
  reportUnrendered();
  if (!compiled.ok) {
    io.stderr(`error: the policy \`${policyFile}\` has ${plural(errors.length, "error")}; nothing was lowered\n`);
    throw new InputError();
  }
  const statements = compiled.program.policies
    .flatMap((p) => p.statements)
    .filter((s) => options.rule === undefined || s.name === options.rule || ruleId(s) === options.rule);
  if (statements.length === 0) {
    if (options.rule === undefined) io.stderr(`error: the policy \`${policyFile}\` declares no rule; nothing to lower\n`);
    else {
      const near = closestName(
        options.rule,
        compiled.program.policies.flatMap((p) => p.statements.flatMap((s) => [s.name, ruleId(s)])),
      );
      io.stderr(`error: no rule named \`${options.rule}\` in \`${policyFile}\`${near !== undefined ? `; did you mean \`${near}\`?` : ""}\n`);
    }
    throw new InputError();
  }
  // A rule that measures time is lowered over the events' times: on a run without them, none is.
  const times = new TraceRun(statements);
  for (const event of trace.events) times.step(event);
  if (times.timeError !== undefined) {
    io.stderr(`error: ${times.timeError.reason}; a rule that measures time cannot be lowered over \`${options.trace}\`, so nothing was lowered\n`);
    throw new InputError();
  }
  // One script per rule. Each declares the same sorts and functions, so `(reset)` separates them
  // and the whole output is one SMT-LIB script that a solver reads from start to end.
  io.stdout(statements.map((s) => renderSmtLib(s, trace.events, { encoding: options.encoding })).join("\n(reset)\n\n"));
}
