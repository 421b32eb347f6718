import { Command, CommanderError } from "commander";
import { registerCheck } from "./commands/check.js";
import { createContext, type RegisterCommand } from "./commands/context.js";
import { registerAudit, registerEgress, registerRun, registerHook, registerMcpGateway, registerReplay, registerServe } from "./commands/enforcement.js";
import { registerAnalyze } from "./commands/analyze.js";
import { registerDiff } from "./commands/diff.js";
import { registerDraft } from "./commands/draft.js";
import { registerMine } from "./commands/mine.js";
import { registerExplain } from "./commands/explain.js";
import { registerExport } from "./commands/export.js";
import { registerFmt } from "./commands/fmt.js";
import { registerLower } from "./commands/lower.js";
import { EXIT_INPUT_ERROR, EXIT_SAFE, InputError, isStackOverflow } from "./commands/shared.js";
import { registerSignature } from "./commands/signature.js";
import { registerSql } from "./commands/sql.js";
import { registerTest } from "./commands/test.js";

export { EXIT_INPUT_ERROR, EXIT_SAFE, EXIT_UNSAFE, MAX_RENDERED_DIAGNOSTICS, STDIN_NAME } from "./commands/shared.js";

import type { CliIo } from "./io.js";
export type { CliIo } from "./io.js";

/**
 * Every command of `vigilc`, in the order `--help` lists them. A command is a module of commands/
 * whose register function adds it to the program.
 */
const commands: readonly RegisterCommand[] = [
  registerCheck,
  registerTest,
  registerLower,
  registerFmt,
  registerSignature,
  registerExport,
  registerSql,
  registerAnalyze,
  registerDiff,
  registerDraft,
  registerMine,
  registerHook,
  registerAudit,
  registerReplay,
  registerServe,
  registerMcpGateway,
  registerEgress,
  registerRun,
  registerExplain,
];

/** Runs `vigilc` with the given arguments and returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  // A hook parses its own arguments and loads only what a decision needs (see enforcement/hook.ts).
  if (argv[0] === "hook") return (await import("./enforcement/hook.js")).run(argv, io);
  const context = createContext(io);
  const program = new Command("vigilc")
    .description("Vigil: check agent tool-call traces against behavioral policies")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run `vigilc --help` for usage)");
  for (const register of commands) register(program, context);

  try {
    await program.parseAsync([...argv], { from: "user" });
    return context.exitCode;
  } catch (error) {
    if (error instanceof InputError) return EXIT_INPUT_ERROR;
    if (error instanceof CommanderError) {
      // `--help`, `help` and `--version` exit 0; no command at all (the help goes to stderr) and
      // every other usage mistake exit 2.
      return error.exitCode === 0 ? EXIT_SAFE : EXIT_INPUT_ERROR;
    }
    // A bug, not a verdict: say so in one line (the stack only on request) and fail closed.
    const debug = process.env["VIGIL_DEBUG"] !== undefined && process.env["VIGIL_DEBUG"] !== "" && process.env["VIGIL_DEBUG"] !== "0";
    if (isStackOverflow(error)) io.stderr("error: the input is nested too deeply for vigilc to process; nothing was judged\n");
    else io.stderr(`internal error: ${error instanceof Error ? error.message : String(error)}; nothing was judged\n`);
    io.stderr(debug ? `${(error as Error).stack ?? ""}\n` : "  help: this is a bug in vigilc; set VIGIL_DEBUG=1 to print the stack trace, and report it with the input\n");
    return EXIT_INPUT_ERROR;
  }
}
