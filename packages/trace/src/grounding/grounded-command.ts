import type { EventStatus } from "../event.js";
import type { JsonValue } from "../value.js";
import type { CommandDirectories, LineNode } from "./parsed-line.js";

/**
 * What grounding makes of a command line: an event per command ({@link GroundedCommand}), and,
 * before the call's result is taken into account, the pieces of each command and of the line
 * ({@link CommandPieces}, {@link LinePieces}), which command-status.ts turns into events once it
 * knows what the result shows of the line's run.
 */

/** An event a command line performs: its action and its named arguments. */
export interface GroundedCommand {
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  /** For a call that ran: the command's status, where it is known (see docs/grounding.md). */
  readonly status?: EventStatus;
  /** The command whose output the call's output is: the line's last command. */
  readonly receivesOutput?: true;
}

/**
 * Where a grounded command runs, from where the call's line starts (see {@link CommandDirectories}):
 * `at`, the directories it may run in; `to`, for a `cd` or `pushd`, where it takes the shell when
 * it succeeds. A script a command runs (`bash -c '…'`) starts where that command runs, or where
 * its directory option (`env -C DIR`) takes it.
 */
export interface GroundedDirectory {
  readonly at: CommandDirectories;
  readonly to?: CommandDirectories;
}

/**
 * The directory of each grounded command, by its arguments' object. It is kept beside the
 * arguments, not among them: arguments are what policies match, and this is no argument. The
 * events grounded from a line carry their command's arguments' object, so a reader of those events
 * finds it there (see `liveCallEvents`); a weak map, so it goes when the arguments go.
 */
const directories = new WeakMap<object, GroundedDirectory>();

/** The command, noted as running where `directory` says. */
export function placedCommand(command: GroundedCommand, directory: GroundedDirectory): GroundedCommand {
  directories.set(command.args, directory);
  return command;
}

/** Where grounding placed the command with these arguments; undefined when it placed none there. */
export function groundedDirectory(args: GroundedCommand["args"]): GroundedDirectory | undefined {
  return directories.get(args);
}

/**
 * The action of an event standing for what cannot be known from the command line: a command whose
 * name is an expansion (`$CMD x`), a script made of expanded text (`eval "$VAR"`, `bash -c "$X"`),
 * a script piped in from a program (`curl … | bash`), or a script nested beyond the depth grounded.
 * A policy forbids it to fail closed: `abs(action in {unknown_command})`.
 */
export const unknownCommandAction = "unknown_command";

/**
 * An event for what the command line does not show. `reason` says what: `dynamic_command` (the
 * command's name is an expansion), `dynamic_script` (the script a program runs, or its file, is
 * expanded text or arguments from standard input), `piped_script` (a shell runs what a program
 * pipes into it), `too_deep` (a script nested beyond the depth grounded), `too_complex` (a line that
 * nests or chains beyond what is parsed), `evaluated_text` (text the shell evaluates as code, see
 * `evaluatedTextEvent` in ground-line.ts). `by` is the program that runs the script, and `text`
 * what is known of it, as written.
 */
export function unknownCommand(reason: string, by: GroundedCommand, text?: string, extra: Record<string, JsonValue> = {}): GroundedCommand {
  return { action: unknownCommandAction, args: { reason, by: by.action, ...(text !== undefined ? { text } : {}), ...extra } };
}

/**
 * The events of one command, before the call's result is known: the files it reads through its
 * arguments, its own event, what cannot be known of it, the script it runs (a line of its own),
 * the commands it runs (`find -exec`), the files it writes with a known content (`tee`), and its
 * redirections.
 */
export interface CommandPieces {
  readonly reads: readonly GroundedCommand[];
  readonly own?: GroundedCommand;
  readonly writes: readonly GroundedCommand[];
  readonly unknown: readonly GroundedCommand[];
  /** The script it runs; `passesStatus`: the program's exit status is the script's (a shell, `eval`). */
  readonly script?: { readonly line?: LinePieces; readonly events: readonly GroundedCommand[]; readonly passesStatus: boolean };
  readonly runs: readonly CommandPieces[];
  readonly redirections: readonly GroundedCommand[];
}

/** The pieces of a line's commands, in order, with what their statuses follow from. */
export interface LinePieces {
  readonly commands: readonly CommandPieces[];
  readonly structure?: LineNode;
  readonly pipefail?: boolean;
  /** What the line has the shell evaluate as code that is not known to be harmless (`$((x))` of a value from outside). */
  readonly evaluated?: readonly GroundedCommand[];
}
