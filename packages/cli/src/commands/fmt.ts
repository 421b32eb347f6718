import { writeFile } from "node:fs/promises";
import type { format } from "@vigil/syntax";
import type { Command } from "commander";
import type { CommandContext } from "./context.js";
import { EXIT_UNSAFE, InputError, loadSyntax } from "./shared.js";

/** `vigilc fmt FILE…`: the canonical format of policies, printed, written in place, or checked. */
export function registerFmt(program: Command, context: CommandContext): void {
  program
    .command("fmt")
    .description("format .vigil files canonically (comments preserved; idempotent)")
    .argument("<files...>", ".vigil files")
    .option("-w, --write", "rewrite the files in place")
    .option("--check", "write nothing; name each file that is not formatted and exit 1 if there is one")
    .action((files: string[], options: FmtOptions) => fmt(context, files, options));
}

/** The options of `fmt`, as commander gives them. */
type FmtOptions = { write?: boolean; check?: boolean };

/** What became of one file: formatted (or printed), found not formatted by `--check`, or not read, parsed or written. */
type FileResult = "done" | "unformatted" | "failed";

/** Every file in turn; exit 2 if one failed, else 1 if `--check` found one not formatted. */
async function fmt(context: CommandContext, files: readonly string[], options: FmtOptions): Promise<void> {
  let unformatted = 0;
  let failed = false;
  const { format } = await loadSyntax();
  for (const file of files) {
    const result = await formatFile(context, format, file, options);
    if (result === "failed") failed = true;
    else if (result === "unformatted") unformatted++;
  }
  context.reportUnrendered();
  if (failed) throw new InputError();
  if (unformatted > 0) context.exitCode = EXIT_UNSAFE;
}

/** Formats one file: prints it, rewrites it (`--write`), or only says whether it is formatted (`--check`). */
async function formatFile(context: CommandContext, formatText: typeof format, file: string, options: FmtOptions): Promise<FileResult> {
  const { io } = context;
  let source: string;
  try {
    source = await context.readText(file, "policy");
  } catch (error) {
    if (!(error instanceof InputError)) throw error;
    return "failed";
  }
  const result = formatText(source);
  if (result.text === undefined) {
    context.printDiagnostics(result.diagnostics.map((d) => ({ ...d, file })));
    return "failed";
  }
  if (options.check === true) {
    if (result.text === source) return "done";
    io.stdout(`${file}: not formatted\n`);
    return "unformatted";
  }
  if (options.write !== true) {
    io.stdout(result.text);
    return "done";
  }
  if (result.text === source) return "done";
  try {
    await writeFile(file, result.text);
    return "done";
  } catch (error) {
    io.stderr(`error: cannot write \`${file}\`: ${(error as NodeJS.ErrnoException).code === "EACCES" ? "permission denied" : (error as Error).message}\n`);
    return "failed";
  }
}
