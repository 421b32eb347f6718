import { closestName, diagnosticCodes, type DiagnosticCode } from "@vigil/diagnostics";
import type { Command } from "commander";
import type { CommandContext } from "./context.js";
import { InputError } from "./shared.js";

/** `vigilc explain CODE`: what a diagnostic code means. */
export function registerExplain(program: Command, context: CommandContext): void {
  program
    .command("explain")
    .description("say what a diagnostic code means")
    .argument("<code>", "a code such as V1006")
    .action((code: string) => explain(context, code));
}

/** Prints the code's severity and summary; stops with exit 2, suggesting the nearest, when there is no such code. */
function explain(context: CommandContext, code: string): void {
  const { io } = context;
  const codes = diagnosticCodes as Record<string, { severity: string; summary: string }>;
  const key = code.trim().toUpperCase();
  if (!Object.hasOwn(codes, key)) {
    const near = closestName(key, Object.keys(codes));
    io.stderr(`error: \`${code}\` is not a Vigil diagnostic code${near !== undefined ? `; did you mean \`${near}\`?` : ""}\n`);
    io.stderr("  help: codes are V0xxx (policy syntax), V1xxx (policy checking), V2xxx (test files), T0xxx (traces), E0xxx (decision procedures)\n");
    throw new InputError();
  }
  const entry = codes[key]!;
  io.stdout(`${key as DiagnosticCode} (${entry.severity}): ${entry.summary}\n`);
}

