import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import { normalizePath } from "./absolute-paths.js";
import { toolCatalog, type ToolSpec } from "./catalog.js";
import { emitLine, lineRun } from "./command-status.js";
import { groundArgv, groundLine, type GroundingContext } from "./ground-line.js";
import { unknownCommand, type LinePieces } from "./grounded-command.js";
import { parseCommandLine } from "./parse-command-line.js";
import type { ParsedCommandLine } from "./parsed-line.js";

/** The shell tools whose `command` argument is grounded, by the names agent frameworks give them. */
export const shellToolNames: readonly string[] = [
  "Bash",
  "bash",
  "shell",
  "local_shell",
  "run_shell",
  "run_shell_command",
  "execute_bash",
  "execute_command",
  "run_command",
  "run_terminal_cmd",
  "exec_command",
  "terminal",
];

export interface GroundTraceOptions {
  readonly shellTools?: readonly string[];
  readonly catalog?: Readonly<Record<string, ToolSpec>>;
  /**
   * What grounding keeps from one call to the next of the same recording (a reader grounding it in
   * batches passes the same object each time): where a call may have left its shell's directory.
   */
  readonly state?: GroundingState;
  /** `cd NAME` may search CDPATH (the shell's environment has it set). */
  readonly cdpath?: boolean;
  /**
   * Whether a working directory the call's own arguments name (`workdir`, `cwd`) is taken (default:
   * yes, for a recording of a tool that honours it). Never for a call about to run: its arguments
   * are the agent's, and a directory it names must not move the paths enforcement sees.
   */
  readonly directoryArguments?: boolean;
}

/** See {@link GroundTraceOptions.state}. */
export interface GroundingState {
  /**
   * The line of the latest shell call that may have moved its shell to another directory (an agent's
   * shell may keep its directory from one call to the next): a working directory the recording
   * states on an earlier line is not taken for the calls after it.
   */
  movedAt?: number;
}

/** The argument names under which a shell call may give the directory it runs in (`workdir` of Codex's shell). */
const workingDirectoryArguments = ["workdir", "cwd", "working_directory"];

/**
 * Grounds every shell call of a trace: the call's event stays (policies may speak of it), and the
 * events of its commands follow it, with the call's source (and `groundedFrom`, the call's
 * position) and time, each with the status its run shows, the last command with the call's output
 * (docs/grounding.md says how). A command line that does not parse is reported (T0011) and left as
 * is. Positions are renumbered.
 */
export function groundTrace(events: readonly TraceEvent[], options: GroundTraceOptions = {}): { events: TraceEvent[]; diagnostics: Diagnostic[] } {
  const tools = new Set(options.shellTools ?? shellToolNames);
  const catalog = options.catalog ?? toolCatalog;
  const state = options.state ?? {};
  const result: TraceEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const event of events) {
    const position = result.length + 1;
    result.push({ ...event, position });
    if (!tools.has(event.action)) continue;
    const context: GroundingContext = { ...(options.cdpath === true ? { cdpath: true } : {}), cwd: callDirectory(event, state, options.directoryArguments !== false) };
    // An argument vector: `argv`, or a `command` given as a list (`["bash", "-lc", "…"]`).
    const argv = [event.args["argv"], event.args["command"], event.args["cmd"]].find((value) => Array.isArray(value) && value.length > 0);
    let line: LinePieces;
    if (Array.isArray(argv) && argv.every((word) => typeof word === "string")) {
      line = groundArgv(argv as string[], catalog, context);
    } else {
      const command = event.args["command"] ?? event.args["cmd"];
      if (typeof command !== "string") continue;
      const parsed: ParsedCommandLine = parseCommandLine(command, options.cdpath === true ? { cdpath: true } : {});
      if (!parsed.ok && parsed.tooComplex === true) {
        // What the line runs cannot be known: an event a policy can forbid (fail closed).
        line = { commands: [{ reads: [], own: unknownCommand("too_complex", { action: event.action, args: {} }, command.slice(0, 200)), writes: [], unknown: [], runs: [], redirections: [] }] };
        state.movedAt = event.source?.line ?? Number.MAX_SAFE_INTEGER;
      } else if (!parsed.ok) {
        const where = event.source?.line !== undefined ? ` on line ${event.source.line}` : "";
        diagnostics.push(
          diagnostic("T0011", `the \`command\` of the ${event.action} call${where} is not a valid shell command line (${parsed.message}); it is not grounded`, {
            ...(event.source?.file !== undefined ? { file: event.source.file } : {}),
            ...(event.source?.span !== undefined ? { span: event.source.span } : {}),
            help: "policies can still match the call itself, e.g. `command ~ \"…\"`",
          }),
        );
        continue;
      } else {
        line = groundLine(parsed, catalog, 0, context);
        if (parsed.changesDirectory === true) state.movedAt = event.source?.line ?? Number.MAX_SAFE_INTEGER;
      }
    }
    const run = lineRun(event);
    for (const command of emitLine(line, run.status, run, true)) {
      const output = command.receivesOutput === true && event.output !== undefined;
      result.push({
        position: result.length + 1,
        action: command.action,
        args: command.args,
        ...(command.status !== undefined ? { status: command.status } : {}),
        ...(output ? { output: event.output } : {}),
        ...(output && event.outputTruncated === true ? { outputTruncated: true } : {}),
        ...(event.argsTruncated === true ? { argsTruncated: true } : {}),
        // A command runs when its call does: it has the call's time.
        ...(event.time !== undefined ? { time: event.time } : {}),
        source: { ...event.source, groundedFrom: position },
      });
    }
  }
  return { events: result, diagnostics };
}

/**
 * The directory a shell call runs in, when it is known: the one its arguments name (`workdir`),
 * or the one the recording states for it (Claude Code's `cwd`), unless an earlier call may have
 * moved the shell since the line stating it.
 */
function callDirectory(event: TraceEvent, state: GroundingState, fromArguments: boolean): string | undefined {
  for (const name of fromArguments ? workingDirectoryArguments : []) {
    const value = event.args[name];
    if (typeof value === "string" && value.startsWith("/")) return normalizePath(value, false);
  }
  const stated = event.source?.cwd;
  if (stated === undefined || !stated.startsWith("/")) return undefined;
  if (state.movedAt !== undefined && (event.source?.cwdLine ?? 0) <= state.movedAt) return undefined;
  return normalizePath(stated, false);
}
