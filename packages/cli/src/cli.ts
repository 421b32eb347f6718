import { readFile, writeFile } from "node:fs/promises";
import {
  check,
  compile,
  diagnosticCodes,
  format,
  readTrace,
  renderSmtLib,
  reportToJson,
  signatureOf,
  signatureToJson,
  type Diagnostic,
  type DiagnosticCode,
  type EngineName,
  type Encoding,
  type Trace,
} from "@vigil/compiler";
import { Command, CommanderError, InvalidArgumentError, Option } from "commander";
import { renderDiagnostic, renderReport } from "./render.js";

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly colors: boolean;
  readonly cwd: string;
}

/** Exit codes: every statement holds; a statement is violated or undecided; bad usage or input. */
export const EXIT_SAFE = 0;
export const EXIT_UNSAFE = 1;
export const EXIT_INPUT_ERROR = 2;

/** Thrown inside a command to stop with exit code 2 after the diagnostics were printed. */
class InputError extends Error {}

/** Runs `vigilc` with the given arguments and returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: CliIo): Promise<number> {
  let exitCode = EXIT_SAFE;
  const colors = { enabled: io.colors };
  const sources = new Map<string, string>();

  const printDiagnostics = (diagnostics: readonly Diagnostic[]): void => {
    for (const d of diagnostics) io.stderr(renderDiagnostic(d, sources, colors) + "\n\n");
  };

  const readText = async (file: string, what: string): Promise<string> => {
    try {
      const text = await readFile(file, "utf8");
      sources.set(file, text);
      return text;
    } catch (error) {
      io.stderr(`error: cannot read the ${what} \`${file}\`: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}\n`);
      throw new InputError();
    }
  };

  const loadTrace = async (file: string): Promise<Trace> => {
    const text = await readText(file, "trace");
    const { trace, diagnostics } = readTrace(text, { file });
    const errors = diagnostics.filter((d) => d.severity === "error");
    printDiagnostics(errors.length > 0 ? errors : diagnostics.filter((d) => d.severity === "warning"));
    if (errors.length > 0) {
      io.stderr(`error: the trace \`${file}\` has ${errors.length} error${errors.length === 1 ? "" : "s"}; no rule was checked\n`);
      throw new InputError();
    }
    return trace;
  };

  const program = new Command("vigilc")
    .description("Vigil: check agent tool-call traces against behavioral policies")
    .version("0.1.0")
    .exitOverride()
    .configureOutput({ writeOut: io.stdout, writeErr: io.stderr })
    .showHelpAfterError("(run `vigilc --help` for usage)");

  program
    .command("check")
    .description("judge a trace against a policy: exit 0 when every rule holds, 1 on a violation, 2 on bad input")
    .argument("<policy>", "a .vigil file")
    .requiredOption("-t, --trace <file>", "the trace: JSON Lines, or a JSON array of events")
    .addOption(new Option("-e, --engine <engine>", "decision procedure").choices(["eval", "smt"]).default("eval"))
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .option("--strict", "treat warnings as errors")
    .option("--exit-zero", "exit 0 even when a rule is violated or undecided (bad input still exits 2)")
    .option("--timeout <ms>", "for --engine smt: time limit per solver call, in milliseconds", parsePositiveInteger, 30_000)
    .action(
      async (
        policyFile: string,
        options: { trace: string; engine: EngineName; format: "human" | "json"; strict?: boolean; exitZero?: boolean; timeout: number },
      ) => {
      const source = await readText(policyFile, "policy");
      const trace = await loadTrace(options.trace);
      const compiled = compile(source, { signature: signatureOf(trace.events), file: policyFile });
      printDiagnostics(compiled.diagnostics);
      const warnings = compiled.diagnostics.filter((d) => d.severity === "warning");
      if (!compiled.ok || (options.strict === true && warnings.length > 0)) {
        const errors = compiled.diagnostics.filter((d) => d.severity === "error").length;
        io.stderr(
          errors > 0
            ? `error: the policy \`${policyFile}\` has ${errors} error${errors === 1 ? "" : "s"}; no rule was checked\n`
            : `error: --strict: the policy \`${policyFile}\` has ${warnings.length} warning${warnings.length === 1 ? "" : "s"}; no rule was checked\n`,
        );
        throw new InputError();
      }
      const report = await check(compiled, trace, { engine: options.engine, smt: { timeoutMs: options.timeout } });
      if (options.format === "json") io.stdout(JSON.stringify(reportToJson(report), null, 2) + "\n");
      else io.stdout(renderReport({ report, policySource: source, policyFile, traceFile: options.trace, events: trace.events }, colors));
      exitCode = report.verdict === "safe" || options.exitZero === true ? EXIT_SAFE : EXIT_UNSAFE;
      },
    );

  program
    .command("lower")
    .description("print the SMT-LIB query of each rule (Figure 5 lowering) for re-checking with any solver")
    .argument("<policy>", "a .vigil file")
    .requiredOption("-t, --trace <file>", "the trace whose facts the query asserts")
    .option("-r, --rule <name>", "only this rule (NAME or POLICY.NAME)")
    .addOption(new Option("--encoding <encoding>", "literal: the disjunctions of Figure 5 spelled out; shared: the same, with running disjunctions named once").choices(["shared", "literal"]).default("shared"))
    .action(async (policyFile: string, options: { trace: string; rule?: string; encoding: Encoding }) => {
      const source = await readText(policyFile, "policy");
      const trace = await loadTrace(options.trace);
      const compiled = compile(source, { signature: signatureOf(trace.events), file: policyFile });
      printDiagnostics(compiled.diagnostics.filter((d) => d.severity === "error"));
      if (!compiled.ok) throw new InputError();
      const statements = compiled.program.policies
        .flatMap((p) => p.statements)
        .filter((s) => options.rule === undefined || s.name === options.rule || `${s.policy}.${s.name}` === options.rule);
      if (statements.length === 0) {
        io.stderr(`error: no rule named \`${options.rule}\` in \`${policyFile}\`\n`);
        throw new InputError();
      }
      io.stdout(statements.map((s) => renderSmtLib(s, trace.events, { encoding: options.encoding })).join("\n"));
    });

  program
    .command("fmt")
    .description("format .vigil files canonically (comments preserved; idempotent)")
    .argument("<files...>", ".vigil files")
    .option("-w, --write", "rewrite the files in place")
    .option("--check", "exit 1 if a file is not formatted, print nothing else")
    .action(async (files: string[], options: { write?: boolean; check?: boolean }) => {
      let unformatted = 0;
      let failed = false;
      for (const file of files) {
        const source = await readText(file, "policy");
        const result = format(source);
        if (result.text === undefined) {
          printDiagnostics(result.diagnostics.map((d) => ({ ...d, file })));
          failed = true;
          continue;
        }
        if (options.check === true) {
          if (result.text !== source) {
            unformatted++;
            io.stdout(`${file}: not formatted\n`);
          }
        } else if (options.write === true) {
          if (result.text !== source) await writeFile(file, result.text);
        } else io.stdout(result.text);
      }
      if (failed) throw new InputError();
      if (unformatted > 0) exitCode = EXIT_UNSAFE;
    });

  program
    .command("signature")
    .description("print the signature Σ = (A, K, V) of a trace: its actions, argument names and values")
    .argument("<trace>", "the trace")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json"]).default("human"))
    .action(async (traceFile: string, options: { format: "human" | "json" }) => {
      const trace = await loadTrace(traceFile);
      const signature = signatureToJson(signatureOf(trace.events));
      if (options.format === "json") {
        io.stdout(JSON.stringify({ events: trace.events.length, ...signature }, null, 2) + "\n");
        return;
      }
      const lines = [`${trace.events.length} events`, `actions (A): ${signature.actions.join(", ") || "(none)"}`, "argument names (K) and values (V):"];
      for (const key of signature.keys) {
        const more = key.distinctValues > key.values.length ? `, … (${key.distinctValues} distinct)` : "";
        lines.push(`  ${key.key}: ${key.values.join(", ")}${more}`);
      }
      if (signature.keys.length === 0) lines.push("  (none)");
      lines.push(`outputs: ${signature.outputs} event${signature.outputs === 1 ? "" : "s"} carry one`);
      io.stdout(lines.join("\n") + "\n");
    });

  program
    .command("explain")
    .description("say what a diagnostic code means")
    .argument("<code>", "a code such as V1006")
    .action((code: string) => {
      const entry = (diagnosticCodes as Record<string, { severity: string; summary: string }>)[code.toUpperCase()];
      if (entry === undefined) {
        io.stderr(`error: \`${code}\` is not a Vigil diagnostic code\n`);
        throw new InputError();
      }
      io.stdout(`${code.toUpperCase() as DiagnosticCode} (${entry.severity}): ${entry.summary}\n`);
    });

  try {
    await program.parseAsync([...argv], { from: "user" });
    return exitCode;
  } catch (error) {
    if (error instanceof InputError) return EXIT_INPUT_ERROR;
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version" || error.code === "commander.help") return EXIT_SAFE;
      return EXIT_INPUT_ERROR;
    }
    io.stderr(`internal error: ${(error as Error).stack ?? String(error)}\n`);
    return EXIT_INPUT_ERROR;
  }
}

function parsePositiveInteger(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value < 1) throw new InvalidArgumentError("must be a positive integer");
  return value;
}
