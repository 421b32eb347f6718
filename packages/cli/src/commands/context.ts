import type { Diagnostic } from "@vigil/compiler";
import type { Command } from "commander";
import type { CliIo } from "../io.js";
import { renderDiagnostic, type Colors } from "../reports/render.js";
import { createInputs, type DiagnosticPrinter, type Inputs } from "./inputs.js";
import { EXIT_SAFE, MAX_RENDERED_DIAGNOSTICS, plural } from "./shared.js";

export type { DiagnosticPrinter } from "./inputs.js";

/**
 * What every command is given: the caller's io, the exit code it sets, and the helpers that share
 * one run's state (the texts read so far, for code frames; how many diagnostics were printed;
 * standard input, read once).
 */
export interface CommandContext extends DiagnosticPrinter, Inputs {
  readonly io: CliIo;
  readonly colors: Colors;
  /**
   * The exit code `run` returns when the command ends; `EXIT_SAFE` unless the command sets it. A
   * command stops with `EXIT_INPUT_ERROR` by throwing an `InputError` instead.
   */
  exitCode: number;
}

/** Adds one command (or a group of them) to `vigilc`'s program; one per module of this directory. */
export type RegisterCommand = (program: Command, context: CommandContext) => void;

/** The context of one run of `vigilc`. */
export function createContext(io: CliIo): CommandContext {
  const colors = { enabled: io.colors };
  const sources = new Map<string, string>();
  const printer = createDiagnosticPrinter(io, sources, colors);
  return { io, colors, exitCode: EXIT_SAFE, ...printer, ...createInputs(io, sources, printer) };
}

/** Renders diagnostics with code frames from `sources`, and counts those past the limit. */
function createDiagnosticPrinter(io: CliIo, sources: ReadonlyMap<string, string>, colors: Colors): DiagnosticPrinter {
  let rendered = 0;
  const unrendered = { error: 0, warning: 0, info: 0 };
  const printDiagnostics = (diagnostics: readonly Diagnostic[]): void => {
    for (const d of diagnostics) {
      if (rendered >= MAX_RENDERED_DIAGNOSTICS) {
        unrendered[d.severity]++;
        continue;
      }
      rendered++;
      io.stderr(renderDiagnostic(d, sources, colors) + "\n\n");
    }
  };
  const reportUnrendered = (): void => {
    const parts = (["error", "warning", "info"] as const).filter((s) => unrendered[s] > 0).map((s) => plural(unrendered[s], s === "info" ? "more note" : `more ${s}`));
    if (parts.length === 0) return;
    io.stderr(`… and ${parts.join(", ")}, not shown (at most ${MAX_RENDERED_DIAGNOSTICS} diagnostics are printed)\n`);
    unrendered.error = unrendered.warning = unrendered.info = 0;
  };
  return { printDiagnostics, reportUnrendered };
}
