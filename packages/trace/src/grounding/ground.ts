import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { EventStatus, TraceEvent } from "../event.js";
import type { JsonValue } from "../value.js";
import { toolCatalog, type ToolSpec } from "./catalog.js";
import type { EvaluatedText } from "./evaluated.js";
import { parseCommandLine, type DirectoryStep, type LineNode, type ParsedCommandLine, type Redirection, type SimpleCommand } from "./shell.js";

/**
 * Argument grounding (the paper's Section 6 ablation): a shell tool call is opaque to a policy —
 * `{"command": "cp out.xlsx /shared && rm out.xlsx"}` — until it becomes the events it performs.
 * Each simple command of the line becomes an event whose action is the program (with subcommands
 * folded in: `git push`) and whose arguments are named by the catalog's roles; each file
 * redirection becomes a `write` (or `read`) event of its path.
 */

export interface GroundedCommand {
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  /** For a call that ran: the command's status, where it is known (see docs/grounding.md). */
  readonly status?: EventStatus;
  /** The command whose output the call's output is: the line's last command. */
  readonly receivesOutput?: true;
}

/** What grounding knows of where a line runs. */
export interface GroundingContext {
  /** The working directory the line starts in, absolute; undefined when not known. */
  readonly cwd?: string;
  /** `cd NAME` may search CDPATH (the shell's environment has it set). */
  readonly cdpath?: boolean;
}

/**
 * Grounds the simple commands of a parsed command line, in order. A command that reads a pipe
 * (`a | b`) gets `piped_from`, the action of the command writing into it.
 */
export function groundCommandLine(
  commands: readonly SimpleCommand[],
  catalog: Readonly<Record<string, ToolSpec>> = toolCatalog,
  depth = 0,
  context: GroundingContext = {},
): GroundedCommand[] {
  return emitLine(groundLine({ commands }, catalog, depth, context), undefined, noRun);
}

/** Grounds one parsed simple command (and its redirections) into events, in execution order. */
export function groundSimpleCommand(command: SimpleCommand, catalog: Readonly<Record<string, ToolSpec>> = toolCatalog, depth = 0, context: GroundingContext = {}): GroundedCommand[] {
  return emitLine(groundLine({ commands: [command], structure: { kind: "command", index: 0 } }, catalog, depth, context), undefined, noRun);
}

/**
 * The action of an event standing for what cannot be known from the command line: a command whose
 * name is an expansion (`$CMD x`), a script made of expanded text (`eval "$VAR"`, `bash -c "$X"`),
 * a script piped in from a program (`curl … | bash`), or a script nested beyond the depth grounded.
 * A policy forbids it to fail closed: `abs(action in {unknown_command})`.
 */
const unknownCommandAction = "unknown_command";

/** A command's own event, with the roles whose values hold text the shell expands. */
interface GroundedCall {
  readonly command: GroundedCommand;
  readonly expandedRoles: ReadonlySet<string>;
  /** Whether a wrapper adds arguments from standard input (`xargs`). */
  readonly stdinArguments: boolean;
  /** The commands the program runs, given as words (`find -exec CMD … ;`), with the option that runs them. */
  readonly runs: readonly { readonly option: string; readonly words: Words }[];
  /** The argument keys whose values name files (the catalog's `paths`, a wrapper's prefixed). */
  readonly pathKeys: readonly string[];
  /** Keys of paths looked up in PATH when they hold no slash (`source NAME`). */
  readonly searchedKeys: readonly string[];
  /** Where the program works, from the outermost wrapper in: a directory argument's key, or not known. */
  readonly directories: readonly ({ readonly key: string } | "unknown")[];
}

/** Words with, for each, whether the shell expands it (see {@link SimpleCommand.expanded}). */
interface Words {
  readonly texts: readonly string[];
  readonly expanded: readonly boolean[];
}

/**
 * The events of one command, before the call's result is known: the files it reads through its
 * arguments, its own event, what cannot be known of it, the script it runs (a line of its own),
 * the commands it runs (`find -exec`), the files it writes with a known content (`tee`), and its
 * redirections.
 */
interface CommandPieces {
  readonly reads: readonly GroundedCommand[];
  readonly own?: GroundedCommand;
  readonly writes: readonly GroundedCommand[];
  readonly unknown: readonly GroundedCommand[];
  /** The script it runs; `passesStatus`: the program's exit status is the script's (a shell, `eval`). */
  readonly script?: { readonly line?: LinePieces; readonly events: readonly GroundedCommand[]; readonly passesStatus: boolean };
  readonly runs: readonly CommandPieces[];
  readonly redirections: readonly GroundedCommand[];
}

interface LinePieces {
  readonly commands: readonly CommandPieces[];
  readonly structure?: LineNode;
  readonly pipefail?: boolean;
  /** What the line has the shell evaluate as code that is not known to be harmless (`$((x))` of a value from outside). */
  readonly evaluated?: readonly GroundedCommand[];
}

/** What is known of a line's run: its exit status, and the programs the output shows were not found. */
interface LineRun {
  readonly notFound: ReadonlySet<string>;
  /** The line ran: its output is its last command's. */
  readonly ran: boolean;
}

const noRun: LineRun = { notFound: new Set(), ran: false };

function groundLine(
  line: { readonly commands: readonly SimpleCommand[]; readonly structure?: LineNode; readonly pipefail?: true; readonly cdpath?: true; readonly evaluated?: readonly EvaluatedText[] },
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  lineContext: GroundingContext,
): LinePieces {
  const context = line.cdpath === true ? { ...lineContext, cdpath: true } : lineContext;
  const own: (GroundedCall | undefined)[] = [];
  const commands: CommandPieces[] = [];
  for (const command of line.commands) {
    const producerIndex = command.pipedFrom;
    const producer = producerIndex !== undefined ? { call: own[producerIndex], command: line.commands[producerIndex]! } : undefined;
    const cwd = commandDirectory(context.cwd, command);
    const grounded = groundOne(command, catalog, depth, producer, { ...context, ...(cwd !== undefined ? { cwd } : { cwd: undefined }) });
    own.push(grounded.call);
    commands.push(grounded.pieces);
  }
  const evaluated = (line.evaluated ?? []).map((text) => evaluatedTextEvent(text, depth));
  return {
    commands,
    ...(line.structure !== undefined ? { structure: line.structure } : {}),
    ...(line.pipefail === true ? { pipefail: true } : {}),
    ...(evaluated.length > 0 ? { evaluated } : {}),
  };
}

/**
 * An `unknown_command` event (reason `evaluated_text`) for text the shell evaluates as code that the
 * line does not show to be harmless: `by` is the construct, `text` it as written, and `environment`
 * the variables whose value in the shell's environment alone decides it (each with how it is
 * evaluated: see `evaluatedValueSafe`). A script nested in the line (`bash -c '…'`) starts from the
 * line's variables, not the environment: there, nothing decides it.
 */
function evaluatedTextEvent(text: EvaluatedText, depth: number): GroundedCommand {
  const nested = depth > 0 && text.environment !== undefined;
  const why = text.why ?? (nested ? "a script the line runs starts from the line's own variables" : undefined);
  return {
    action: unknownCommandAction,
    args: {
      reason: "evaluated_text",
      by: text.by,
      text: text.text,
      ...(why !== undefined ? { why } : {}),
      ...(text.environment !== undefined && !nested ? { environment: { ...text.environment } } : {}),
    },
  };
}

/** The working directory of a command of a line that starts in `start`: undefined when not known. */
function commandDirectory(start: string | undefined, command: SimpleCommand): string | undefined {
  if (command.directoryUnknown === true) return undefined;
  let directory = start;
  for (const step of command.cd ?? []) directory = changeDirectory(directory, step);
  return directory;
}

/** Where `cd` goes: the path joined to the directory it starts from, `..` climbed as written unless physical. */
function changeDirectory(from: string | undefined, step: DirectoryStep): string | undefined {
  const joined = step.path.startsWith("/") ? step.path : from !== undefined ? `${from}/${step.path}` : undefined;
  return joined === undefined ? undefined : normalizePath(joined, !step.physical);
}

/**
 * An absolute path with `.` segments and repeated slashes removed; `..` is climbed as written only
 * when `logical` (as `cd` does), and otherwise kept, since the system climbs it from where a
 * symbolic link before it leads; `/..` is `/`. A final slash is kept.
 */
function normalizePath(path: string, logical: boolean): string {
  const parts: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part === ".." && (parts.length === 0 || (logical && parts[parts.length - 1] !== ".."))) {
      parts.pop();
      continue;
    }
    parts.push(part);
  }
  const trailing = path.length > 1 && path.endsWith("/") && parts.length > 0;
  return `/${parts.join("/")}${trailing ? "/" : ""}`;
}

/**
 * A path argument taken against the working directory: a relative one is joined to it when it is
 * known; `.` segments and repeated slashes go; `..` stays (see {@link normalizePath}). What is not
 * a path on this machine, or not known as written, stays as it is: `-` (standard input), a word
 * starting with `~`, an expansion (`$…`, a backquote) or a brace (`{}` of `find -exec`), a
 * remote or URL form (a `:` before any `/`: `host:path`, `s3://…`), and `!`, `(`, `)`, `,` (the
 * syntax of `find`).
 */
function pathArgument(value: string, cwd: string | undefined): string {
  if (value === "" || value === "-" || /^[~$`{]/.test(value) || /^[^/]*:/.test(value) || ["!", "(", ")", ","].includes(value)) return value;
  if (value.startsWith("/")) return normalizePath(value, false);
  return cwd !== undefined ? normalizePath(`${cwd}/${value}`, false) : value;
}

function pathValue(value: JsonValue, cwd: string | undefined, searched: boolean): JsonValue {
  const one = (text: string) => (searched && !text.includes("/") ? text : pathArgument(text, cwd));
  if (typeof value === "string") return one(value);
  if (Array.isArray(value)) return value.map((item) => (typeof item === "string" ? one(item) : item));
  return value;
}

/** The pieces of one parsed simple command (and its redirections), in execution order. */
function groundOne(
  command: SimpleCommand,
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  producer: { readonly call: GroundedCall | undefined; readonly command: SimpleCommand } | undefined,
  context: GroundingContext,
): { readonly call?: GroundedCall; readonly pieces: CommandPieces } {
  let call: GroundedCall | undefined;
  let pieces: CommandPieces = { reads: [], writes: [], unknown: [], runs: [], redirections: [] };
  if (command.words.length > 0) {
    const words = { texts: command.words, expanded: command.expanded ?? [] };
    const grounded = groundCallEvents(words, command.assignments, catalog, depth, [], { command, producer }, context);
    call = grounded.call;
    pieces = grounded.pieces;
  }
  const input = knownInput(command, producer);
  const redirections: GroundedCommand[] = [];
  for (const redirection of command.redirections) {
    const event = redirectionEvent(redirection, context.cwd);
    if (event === undefined) continue;
    // `cat <<EOF > f`: what cat writes is what it reads, when that is known.
    const writesInput = call !== undefined && event.action === "write" && call.command.action === "cat" && call.command.args["path"] === undefined && input !== undefined;
    redirections.push(writesInput ? { action: event.action, args: { ...event.args, content: input.content } } : event);
  }
  return { ...(call !== undefined ? { call } : {}), pieces: { ...pieces, redirections } };
}

/**
 * The pieces of one command given as words: the files it reads through its arguments, its own
 * event, what cannot be known of the script it runs, that script, and the commands it runs (`find
 * -exec`). `input` is where its standard input comes from, when it is a command of a parsed line.
 */
function groundCallEvents(
  words: Words,
  assignments: readonly { readonly name: string; readonly value: string }[],
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  via: readonly string[],
  input: { readonly command: SimpleCommand; readonly producer: { readonly call: GroundedCall | undefined; readonly command: SimpleCommand } | undefined } | undefined,
  context: GroundingContext,
): { readonly call: GroundedCall; readonly pieces: CommandPieces } {
  let call = groundCall(words, assignments, catalog, via);
  const producer = input?.producer?.call;
  if (producer !== undefined) call = { ...call, command: withArgs(call.command, { piped_from: producer.command.action }) };
  const spec = specOf(call.command, catalog);
  const script = spec?.script;
  const unknown: GroundedCommand[] = [];
  let scriptRole = script?.role;
  let scriptExpanded = scriptRole !== undefined && call.expandedRoles.has(scriptRole);
  const stdinFlag = script?.stdinFlag !== undefined && call.command.args[script.stdinFlag] === true;
  if (stdinFlag && script?.fromFile !== undefined && call.command.args[script.fromFile] !== undefined) {
    // `sh -s a b`: the script is standard input; the words are its arguments.
    const { [script.fromFile]: file, ...rest } = call.command.args;
    const argument = rest["argument"];
    const files = Array.isArray(file) ? file : [file!];
    call = { ...call, command: { action: call.command.action, args: { ...rest, argument: [...files, ...(argument === undefined ? [] : Array.isArray(argument) ? argument : [argument])] } } };
  }
  const hasScript = (scriptRole !== undefined && typeof call.command.args[scriptRole] === "string") || (script?.fromFile !== undefined && typeof call.command.args[script.fromFile] === "string");
  const known = input !== undefined ? knownInput(input.command, input.producer) : undefined;
  if (script !== undefined && !hasScript) {
    if (script.stdin === true && known !== undefined && scriptRole !== undefined) {
      call = { ...call, command: withArgs(call.command, { [scriptRole]: known.text }) };
      scriptExpanded = known.expanded;
    } else if (call.stdinArguments) {
      // `… | xargs bash`: the script (or its file) is an argument read from standard input.
      unknown.push(unknownCommand("dynamic_script", call.command));
    } else if (script.stdin === true && input?.command.readsPipe === true) {
      // `curl … | bash`: the script is what another program writes, unknown until it runs.
      unknown.push(unknownCommand("piped_script", call.command, undefined, producer !== undefined ? { piped_from: producer.command.action } : {}));
    }
  }
  // `python3 <<'EOF'`, `node <<< 'code'`: an interpreter given no program runs its standard input.
  const code = spec?.stdinCode;
  if (code !== undefined && known !== undefined && !code.unless.some((role) => call.command.args[role] !== undefined && call.command.args[role] !== "-")) {
    call = { ...call, command: withArgs(call.command, { [code.role]: known.text }) };
  }
  let scriptText = scriptRole !== undefined ? call.command.args[scriptRole] : undefined;
  if (typeof scriptText === "string") {
    if (scriptExpanded) unknown.push(unknownCommand("dynamic_script", call.command, scriptText));
  } else {
    scriptRole = undefined;
    const file = script?.fromFile !== undefined ? call.command.args[script.fromFile] : undefined;
    if (typeof file === "string" && call.expandedRoles.has(script!.fromFile!)) unknown.push(unknownCommand("dynamic_script", call.command, file));
    else if (typeof file === "string" && STANDARD_INPUT_FILE.test(file)) {
      // `source /dev/stdin <<'EOF'`: the script is standard input, known or not.
      if (known !== undefined && !known.expanded) scriptText = known.text;
      else if (known === undefined && input?.command.readsPipe === true) unknown.push(unknownCommand("piped_script", call.command, file, producer !== undefined ? { piped_from: producer.command.action } : {}));
      else unknown.push(unknownCommand("dynamic_script", call.command, file));
    }
  }
  // Where the program works: the line's directory, or the one a wrapper or an option names.
  let cwd = context.cwd;
  const keyDirectory = new Map<string, string | undefined>();
  for (const directory of call.directories) {
    if (directory === "unknown") {
      cwd = undefined;
      continue;
    }
    keyDirectory.set(directory.key, cwd);
    const named = call.command.args[directory.key];
    cwd = typeof named === "string" ? pathDirectory(named, cwd) : undefined;
  }
  const args: Record<string, JsonValue> = {};
  copyArguments(args, call.command.args);
  for (const key of call.pathKeys) {
    const value = args[key];
    if (value === undefined || value === true) continue;
    // With CDPATH, `cd NAME` may go to a NAME in one of its directories: not known.
    if (call.command.action === "cd" && context.cdpath === true && typeof value === "string" && !/^\.{0,2}\//.test(value) && value !== "." && value !== "..") continue;
    copyArguments(args, { [key]: pathValue(value, keyDirectory.has(key) ? keyDirectory.get(key) : cwd, call.searchedKeys.includes(key)) });
  }
  call = { ...call, command: { action: call.command.action, args } };
  const reads = fileReads(call.command, spec, scriptRole !== undefined ? script?.fromFile : undefined).map((read) => {
    const path = read.args["path"] as string;
    const searched = call.searchedKeys.includes(read.args["argument"] as string);
    return { action: read.action, args: { ...read.args, path: pathValue(path, cwd, searched) } };
  });
  const writes: GroundedCommand[] = [];
  if (call.command.action === "tee" && known !== undefined) {
    // `tee f <<EOF`: each file gets what tee reads.
    const paths = call.command.args["path"];
    for (const path of Array.isArray(paths) ? paths : paths !== undefined ? [paths] : []) {
      if (typeof path === "string") writes.push({ action: "write", args: { path, append: call.command.args["append"] === true, content: known.content, by: "tee", argument: "path" } });
    }
  }
  let scriptPieces: CommandPieces["script"];
  if (typeof scriptText === "string") {
    const nested = scriptLine(call.command, scriptText, catalog, depth, { ...context, ...(cwd !== undefined ? { cwd } : { cwd: undefined }) });
    // A shell's (or eval's) exit status is its script's; `watch` runs it again and again.
    scriptPieces = { ...nested, passesStatus: spec?.script?.words !== true || call.command.action === "eval" };
  }
  const runs = call.runs.map(
    (run) =>
      // `-execdir` and `-okdir` run the command in the directory of what find finds.
      groundCallEvents(run.words, [], catalog, depth, [call.command.action], undefined, { ...context, cwd: run.option.endsWith("dir") ? undefined : cwd }).pieces,
  );
  return {
    call,
    pieces: { reads, own: call.command, writes, unknown, ...(scriptPieces !== undefined ? { script: scriptPieces } : {}), runs, redirections: [] },
  };
}

/** The directory a directory argument names, against the one it is given in; undefined when not known. */
function pathDirectory(value: string, cwd: string | undefined): string | undefined {
  if (value.startsWith("/")) return normalizePath(value, false);
  if (cwd === undefined || /^[~$`{]/.test(value) || value === "") return undefined;
  return normalizePath(`${cwd}/${value}`, false);
}

function withArgs(command: GroundedCommand, args: Record<string, JsonValue>): GroundedCommand {
  const merged: Record<string, JsonValue> = {};
  copyArguments(merged, command.args);
  copyArguments(merged, args);
  return { action: command.action, args: merged };
}

/**
 * An event for what the command line does not show. `reason` says what: `dynamic_command` (the
 * command's name is an expansion), `dynamic_script` (the script a program runs, or its file, is
 * expanded text or arguments from standard input), `piped_script` (a shell runs what a program
 * pipes into it), `too_deep` (a script nested beyond the depth grounded), `too_complex` (a line that
 * nests or chains beyond what is parsed), `evaluated_text` (text the shell evaluates as code, see
 * {@link evaluatedTextEvent}). `by` is the program
 * that runs the script, and `text` what is known of it, as written.
 */
function unknownCommand(reason: string, by: GroundedCommand, text?: string, extra: Record<string, JsonValue> = {}): GroundedCommand {
  return { action: unknownCommandAction, args: { reason, by: by.action, ...(text !== undefined ? { text } : {}), ...extra } };
}

/** The catalog entry of a grounded command's program. */
function specOf(command: GroundedCommand, catalog: Readonly<Record<string, ToolSpec>>): ToolSpec | undefined {
  if (command.action === unknownCommandAction) return undefined;
  const program = command.args["program"];
  return typeof program === "string" ? catalog[basename(program)] : undefined;
}

/**
 * What a command reads on standard input, when the line shows it: a here-document (`<<'EOF'` …
 * `EOF`), a here-string (`<<< "…"`), or the text an `echo`, a `printf` or a `cat` of a
 * here-document writes into its pipe (`echo "rm -rf x" | sh`); not another program's output
 * (`curl … | sh`), which `piped_from` names instead. `text` is it as a script or code is given
 * (without the final line break), `content` the exact text read; `expanded` says whether the shell
 * expands something in it first (`<<EOF` with `$X` in the body).
 */
function knownInput(
  command: SimpleCommand,
  producer: { readonly call: GroundedCall | undefined; readonly command: SimpleCommand } | undefined,
  nested = false,
): { text: string; content: string; expanded: boolean } | undefined {
  // The last redirection of standard input is the one the command reads.
  const input = [...command.redirections].reverse().find((r) => r.operator.startsWith("<<") || r.operator === "<");
  if (input !== undefined && input.operator !== "<") {
    if (input.operator === "<<<") return { text: input.target, content: `${input.target}\n`, expanded: input.expanded === true };
    if (input.body !== undefined) return { text: input.body, content: input.body === "" ? "" : `${input.body}\n`, expanded: input.expanded === true };
    return undefined;
  }
  if (input !== undefined || nested) return undefined;
  const written = producer?.call?.command;
  if (written === undefined || producer?.call === undefined) return undefined;
  if (written.action === "echo") {
    const text = written.args["text"];
    const joined = Array.isArray(text) ? text.join(" ") : typeof text === "string" ? text : undefined;
    if (joined === undefined) return undefined;
    return { text: joined, content: written.args["no_newline"] === true ? joined : `${joined}\n`, expanded: producer.call.expandedRoles.has("text") };
  }
  if (written.action === "printf" && written.args["argument"] === undefined) {
    const format = written.args["format"];
    if (typeof format !== "string") return undefined;
    const text = format.replace(/\\n/g, "\n");
    return { text, content: text, expanded: producer.call.expandedRoles.has("format") };
  }
  if (written.action === "cat" && written.args["path"] === undefined) return knownInput(producer.command, undefined, true);
  return undefined;
}

/**
 * The files a command reads through its arguments' values (the catalog's `reads`): a `read` event
 * for each, with the program and the argument it came from. They precede the command's event,
 * because the command reads them before it acts. `skip` is a role not read this time (a shell's
 * script file, when it is given `-c`: its positionals are then the script's arguments).
 */
function fileReads(command: GroundedCommand, spec: ToolSpec | undefined, skip: string | undefined): GroundedCommand[] {
  if (spec?.reads === undefined) return [];
  const reads: GroundedCommand[] = [];
  for (const [role, pattern] of Object.entries(spec.reads)) {
    if (role === skip) continue;
    const value = command.args[role];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== "string") continue;
      const path = pattern.exec(item)?.[1];
      if (path !== undefined && path !== "-") reads.push({ action: "read", args: { path, by: command.action, argument: role } });
    }
  }
  return reads;
}

/** A script file that is the program's standard input (`source /dev/stdin`, `bash /dev/fd/0`). */
const STANDARD_INPUT_FILE = /^\/(dev\/stdin|dev\/fd\/0|proc\/[^/]+\/fd\/0)$/;

/** `bash -c "bash -c …"` is grounded this many levels deep. */
const maximumScriptDepth = 4;

/**
 * The commands of the script a tool runs (the catalog's `script`: `bash -c SCRIPT`), grounded
 * after the tool's own event, from the directory the tool runs in. A script that does not parse
 * gives none: the shell would refuse it and run nothing, and the tool's event keeps the script as
 * an argument. A script nested deeper than is grounded is an unknown command, so that nesting
 * cannot hide what it runs.
 */
function scriptLine(command: GroundedCommand, script: string, catalog: Readonly<Record<string, ToolSpec>>, depth: number, context: GroundingContext): { line?: LinePieces; events: GroundedCommand[] } {
  if (depth >= maximumScriptDepth) return { events: [unknownCommand("too_deep", command, script)] };
  const parsed = parseCommandLine(script, context.cdpath === true ? { cdpath: true } : {});
  if (!parsed.ok) return { events: parsed.tooComplex === true ? [unknownCommand("too_complex", command, script.slice(0, 200))] : [] };
  return { line: groundLine(parsed, catalog, depth + 1, context), events: [] };
}

/**
 * The words of an argument vector (a `subprocess`-style call) as events: the program's, then what
 * it reads and what its script runs, as for a parsed command line.
 */
function groundArgv(argv: readonly string[], catalog: Readonly<Record<string, ToolSpec>>, context: GroundingContext): LinePieces {
  return groundLine({ commands: [{ words: argv, assignments: [], redirections: [], offset: 0 }], structure: { kind: "command", index: 0 } }, catalog, 0, context);
}

function redirectionEvent(redirection: Redirection, cwd: string | undefined): GroundedCommand | undefined {
  const { operator, target } = redirection;
  // `2>&1` duplicates a descriptor; here-documents and here-strings carry text, not a file.
  if (/&$/.test(operator) || operator.startsWith("<<")) return undefined;
  const path = pathArgument(target, cwd);
  if (operator === "<") return { action: "read", args: { path, redirection: operator } };
  if (operator.includes(">")) return { action: "write", args: { path, append: operator.includes(">>"), redirection: operator } };
  return undefined;
}

/**
 * The events of a grounded line, given what is known of its run: each command's status follows
 * from the line's exit status and its structure (see {@link solveLine}); the files a command reads
 * and writes, and its redirections, are known to have been read and written when it succeeded;
 * the script a shell or `eval` runs ends with its status; and the last command of the line gets
 * the call's output when the line ran.
 */
function emitLine(line: LinePieces, status: EventStatus | undefined, run: LineRun, output = false): GroundedCommand[] {
  const solved = solveLine(line, status, run);
  const events: GroundedCommand[] = [];
  line.commands.forEach((pieces, index) => {
    const known = solved.notRun.has(index) ? undefined : solved.statuses.has(index) ? solved.statuses.get(index) : evidence(pieces, run);
    events.push(...emitCommand(pieces, known, run, output && run.ran && solved.final === index));
  });
  events.push(...(line.evaluated ?? []));
  return events;
}

function emitCommand(pieces: CommandPieces, status: EventStatus | undefined, run: LineRun, output: boolean): GroundedCommand[] {
  const done = (event: GroundedCommand): GroundedCommand => (status === "ok" ? { ...event, status } : event);
  const events: GroundedCommand[] = pieces.reads.map(done);
  if (pieces.own !== undefined) events.push({ ...pieces.own, ...(status !== undefined ? { status } : {}), ...(output ? { receivesOutput: true as const } : {}) });
  events.push(...pieces.writes.map(done), ...pieces.unknown);
  if (pieces.script !== undefined) {
    events.push(...pieces.script.events);
    if (pieces.script.line !== undefined) events.push(...emitLine(pieces.script.line, pieces.script.passesStatus ? status : undefined, run));
  }
  for (const ran of pieces.runs) events.push(...emitCommand(ran, evidence(ran, run), run, false));
  events.push(...pieces.redirections.map(done));
  return events;
}

/** A command's failure the output shows: the shell found no program by its name. */
function evidence(pieces: CommandPieces, run: LineRun): EventStatus | undefined {
  const program = pieces.own?.args["program"];
  return typeof program === "string" && run.notFound.has(program) ? "error" : undefined;
}

/**
 * The status of each command of a line whose exit status is `status` (undefined: not known), by
 * the line's structure: in `a && b` that succeeded both did, and in one that failed, if `a` is
 * known to have failed, `b` did not run; in `a || b` that failed both did, and in one that
 * succeeded, if `a` is known to have failed, `b` succeeded; `a | b` and `a; b` end with `b`'s
 * status (with `pipefail`, a pipeline that succeeded has every command succeed, and one that
 * failed, none known); `! a` inverts; a group is its list's; commands in the background, in `if`,
 * loops, `case` and functions, and in substitutions, are not known. `final` is the command whose
 * output the line's is: the last that ran of the last list, pipeline or `&&`/`||` chain.
 */
function solveLine(line: LinePieces, status: EventStatus | undefined, run: LineRun): { statuses: Map<number, EventStatus>; notRun: Set<number>; final?: number } {
  const statuses = new Map<number, EventStatus>();
  const notRun = new Set<number>();
  const structure = line.structure;
  if (structure === undefined) {
    // Commands without their line's structure (grounded one by one): none known.
    return line.commands.length === 1 ? { statuses: status !== undefined ? new Map([[0, status]]) : statuses, notRun, final: 0 } : { statuses, notRun };
  }
  const evidenceOf = (node: LineNode): EventStatus | undefined => {
    switch (node.kind) {
      case "command":
        return evidence(line.commands[node.index]!, run);
      case "not": {
        const inner = evidenceOf(node.inner);
        return inner === undefined ? undefined : inner === "ok" ? "error" : "ok";
      }
      case "group":
        return evidenceOf(node.inner);
      case "list":
        return node.items.length > 0 ? evidenceOf(node.items[node.items.length - 1]!) : undefined;
      case "pipe":
        return line.pipefail === true ? undefined : evidenceOf(node.right);
      case "and": {
        const left = evidenceOf(node.left);
        return left === "error" ? "error" : left === "ok" ? evidenceOf(node.right) : undefined;
      }
      case "or": {
        const left = evidenceOf(node.left);
        return left === "ok" ? "ok" : left === "error" ? evidenceOf(node.right) : undefined;
      }
      default:
        return undefined;
    }
  };
  const skip = (node: LineNode): void => {
    switch (node.kind) {
      case "command":
        notRun.add(node.index);
        return;
      case "and":
      case "or":
      case "pipe":
        skip(node.left);
        skip(node.right);
        return;
      case "list":
        node.items.forEach(skip);
        return;
      case "not":
      case "group":
      case "background":
        skip(node.inner);
        return;
      default:
        return;
    }
  };
  const solve = (node: LineNode, result: EventStatus | undefined): void => {
    switch (node.kind) {
      case "command":
        if (result !== undefined) statuses.set(node.index, result);
        return;
      case "not":
        solve(node.inner, result === undefined ? undefined : result === "ok" ? "error" : "ok");
        return;
      case "group":
        solve(node.inner, result);
        return;
      case "background":
        solve(node.inner, undefined);
        return;
      case "list":
        node.items.forEach((item, index) => solve(item, index === node.items.length - 1 ? result : undefined));
        return;
      case "pipe":
        solve(node.left, line.pipefail === true && result === "ok" ? "ok" : undefined);
        solve(node.right, line.pipefail === true && result === "error" ? undefined : result);
        return;
      case "and": {
        const left = evidenceOf(node.left);
        if (result === "ok") {
          solve(node.left, "ok");
          solve(node.right, "ok");
        } else if (left === "error") {
          solve(node.left, "error");
          skip(node.right);
        } else {
          // A command the output shows ran after `&&` ran because the one before it succeeded.
          const leftKnown = left ?? (evidenceOf(node.right) !== undefined ? "ok" : undefined);
          solve(node.left, leftKnown);
          solve(node.right, leftKnown === "ok" ? result : undefined);
        }
        return;
      }
      case "or": {
        const left = evidenceOf(node.left);
        if (result === "error") {
          solve(node.left, "error");
          solve(node.right, "error");
        } else if (left === "ok") {
          solve(node.left, "ok");
          skip(node.right);
        } else {
          // After `||`, it ran because the one before it failed.
          const leftKnown = left ?? (evidenceOf(node.right) !== undefined ? "error" : undefined);
          solve(node.left, leftKnown);
          solve(node.right, leftKnown === "error" ? result : undefined);
        }
        return;
      }
      default:
        return;
    }
  };
  const last = (node: LineNode): number | undefined => {
    switch (node.kind) {
      case "command":
        return notRun.has(node.index) ? undefined : node.index;
      case "and":
      case "or":
        return last(node.right) ?? last(node.left);
      case "pipe":
        return last(node.right);
      case "list":
        return node.items.length > 0 ? last(node.items[node.items.length - 1]!) : undefined;
      case "not":
      case "group":
        return last(node.inner);
      default:
        return undefined;
    }
  };
  solve(structure, status);
  const final = last(structure);
  return { statuses, notRun, ...(final !== undefined ? { final } : {}) };
}

/**
 * One command's event from its words: the action (the program, with the catalog's subcommand
 * words folded in) and the arguments under the catalog's roles. Wrappers (`sudo`, `env`, `xargs`)
 * are looked through to the command they run.
 */
export function groundWords(
  words: readonly string[],
  assignments: readonly { readonly name: string; readonly value: string }[] = [],
  catalog: Readonly<Record<string, ToolSpec>> = toolCatalog,
): GroundedCommand {
  return groundCall({ texts: words, expanded: [] }, assignments, catalog, []).command;
}

function groundCall(
  words: Words,
  assignments: readonly { readonly name: string; readonly value: string }[],
  catalog: Readonly<Record<string, ToolSpec>>,
  via: readonly string[],
): GroundedCall {
  const args: Record<string, JsonValue> = {};
  const expandedRoles = new Set<string>();
  const pathKeys: string[] = [];
  const searchedKeys: string[] = [];
  const directories: ({ readonly key: string } | "unknown")[] = [];
  if (assignments.length > 0) args["env"] = Object.fromEntries(assignments.map((a) => [a.name, a.value]));
  let texts = [...words.texts];
  let expanded = texts.map((_, index) => words.expanded[index] === true);
  let program = basename(texts[0] ?? "");
  let spec = catalog[program];
  const wrappers = [...via];
  let stdinArguments = false;
  // Wrappers run the rest of their words as the command: ground that command, noting the wrapper.
  while (spec?.wrapper !== undefined && !expanded[0]) {
    const wrapper = spec.wrapper;
    const parsed = parseArguments(texts, expanded, spec, { stopAtFirstPositional: true });
    if (wrapper.unless !== undefined && parsed.named[wrapper.unless] !== undefined) break;
    copyArguments(args, prefixed(program, parsed.named));
    for (const role of parsed.expandedRoles) expandedRoles.add(`${program}_${role}`);
    let innerTexts = texts.slice(parsed.stop);
    let innerExpanded = expanded.slice(parsed.stop);
    const split = wrapper.split !== undefined ? parsed.named[wrapper.split] : undefined;
    if (typeof split === "string") {
      // `env -S "cat .env"`: the string is split into words that come first in the command.
      const pieces = splitString(split);
      innerTexts = [...pieces.map((piece) => piece.text), ...innerTexts];
      innerExpanded = [...pieces.map((piece) => piece.expanded || parsed.expandedRoles.has(wrapper.split!)), ...innerExpanded];
    }
    if (program === "env") {
      while (innerTexts[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(innerTexts[0])) {
        const [name, ...value] = innerTexts[0].split("=");
        args["env"] = { ...(args["env"] as Record<string, JsonValue> | undefined), [name!]: value.join("=") };
        innerTexts = innerTexts.slice(1);
        innerExpanded = innerExpanded.slice(1);
      }
    }
    innerTexts = innerTexts.slice(wrapper.skip ?? 0);
    innerExpanded = innerExpanded.slice(wrapper.skip ?? 0);
    if (innerTexts.length === 0) break;
    if (wrapper.stdinArguments === true) {
      stdinArguments = true;
      // `xargs -I {} CMD {}`: every word holding the replacement string is read from standard input.
      const replace = parsed.named["replace"];
      if (typeof replace === "string" && replace !== "") innerExpanded = innerExpanded.map((flag, index) => flag || innerTexts[index]!.includes(replace));
    }
    for (const role of spec.paths ?? []) pathKeys.push(`${program}_${role}`);
    directories.push(...workingDirectories(spec, parsed.named, `${program}_`));
    wrappers.push(program);
    texts = innerTexts;
    expanded = innerExpanded;
    program = basename(texts[0]!);
    spec = catalog[program];
  }
  if (wrappers.length > 0) args["via"] = wrappers.length === 1 ? wrappers[0]! : wrappers;
  if (stdinArguments) args["stdin_arguments"] = true;
  args["program"] = texts[0] ?? program;
  const argv = texts.slice(1);
  const done = (command: GroundedCommand, runs: GroundedCall["runs"] = []): GroundedCall => {
    // The words after the program, as written (quotes removed), in order: `argv.0` is the first.
    Object.defineProperty(command.args as Record<string, JsonValue>, "argv", { value: argv, writable: true, enumerable: true, configurable: true });
    return { command, expandedRoles, stdinArguments, runs, pathKeys, searchedKeys, directories };
  };
  if (expanded[0] === true) {
    // `$CMD x`, `$(which cat) x`, `/bin/c?t x`: which program runs is known only when it runs.
    return done({ action: unknownCommandAction, args: { ...args, reason: "dynamic_command", text: texts.join(" ") } });
  }
  for (const role of spec?.paths ?? []) pathKeys.push(role);
  // `source NAME` (and a shell's `bash NAME`) look a name without a slash up in PATH.
  if (spec?.script?.fromFile !== undefined && spec.paths?.includes(spec.script.fromFile) === true) searchedKeys.push(spec.script.fromFile);

  if (spec?.script?.words === true && spec.script.role !== undefined) {
    // `eval a b`, `watch -n 5 a b`: after the program's options, the words joined by spaces are the script.
    const parsed = parseArguments(texts, expanded, spec, { stopAtFirstPositional: true });
    copyArguments(args, parsed.named);
    const words = texts.slice(parsed.stop);
    if (words.length > 0) args[spec.script.role] = words.join(" ");
    if (expanded.slice(parsed.stop).some(Boolean)) expandedRoles.add(spec.script.role);
    return done({ action: spec.action ?? program, args });
  }

  const runs: { option: string; words: Words }[] = [];
  if (spec?.commandOptions !== undefined) {
    const taken = takeCommandOptions(texts, expanded, spec.commandOptions);
    texts = taken.texts;
    expanded = taken.expanded;
    for (const [role, option, run] of taken.runs) {
      setArgument(args, role, run.texts.join(" "));
      runs.push({ option, words: run });
    }
  }
  const parsed = parseArguments(texts, expanded, spec ?? {}, { stopAtFirstPositional: false });
  copyArguments(args, parsed.named);
  for (const role of parsed.expandedRoles) expandedRoles.add(role);
  const subcommandCount = Math.min(spec?.subcommands ?? 0, parsed.positionals.length);
  const subcommandWords = parsed.positionals.slice(0, subcommandCount).map((index) => texts[index]!);
  const positionals = parsed.positionals.slice(subcommandCount);
  const action = [spec?.action ?? program, ...subcommandWords].join(" ");
  const last = subcommandWords[subcommandWords.length - 1];
  const allRoles = (last !== undefined ? spec?.subcommandPositionals?.[last] : undefined) ?? spec?.positionals ?? [];
  // A single role an option already gave is not the positionals' to take: `cp -t DIR a b` copies a
  // and b into DIR, `sed -e SCRIPT FILE` edits FILE, `grep -e PATTERN FILE` searches FILE; nor is
  // one an option stands for (`python -m M ARGS`, `grep -f FILE PATHS`).
  const given = new Set([...Object.keys(parsed.named), ...Object.entries(spec?.insteadOf ?? {}).flatMap(([option, role]) => (Object.hasOwn(parsed.named, option) ? [role] : []))]);
  const roles = allRoles.filter((role) => role.endsWith("...") || !given.has(role));
  const roleOf = positionalRoles(positionals.length, roles);
  positionals.forEach((index, k) => {
    if (expanded[index]) expandedRoles.add(roleOf[k]!);
  });
  copyArguments(args, assignPositionals(positionals.map((index) => texts[index]!), roleOf));
  if (spec !== undefined) directories.push(...workingDirectories(spec, args, ""));
  return done({ action, args }, runs);
}

/** The directories a program (or a wrapper, with its `prefix`) says it works in, from its arguments. */
function workingDirectories(spec: ToolSpec, named: { readonly [key: string]: JsonValue }, prefix: string): ({ readonly key: string } | "unknown")[] {
  const working = spec.workingDirectory;
  if (working === undefined) return [];
  if (working.unknown === true || (working.unknownWith ?? []).some((role) => named[role] !== undefined)) return ["unknown"];
  if (working.role === undefined || named[working.role] === undefined) return [];
  // `git -C a -C b`: the second is taken in the first; a list of them is not followed.
  return typeof named[working.role] === "string" ? [{ key: `${prefix}${working.role}` }] : ["unknown"];
}
/**
 * Takes the commands out of a tool's words that follow one of its command options (`find . -exec
 * rm {} ;`), each up to a `;` word or a `+` after `{}`. In them `{}` stands for a name the tool
 * finds, so a word holding it is expanded.
 */
function takeCommandOptions(texts: readonly string[], expanded: readonly boolean[], options: Readonly<Record<string, string>>): { texts: string[]; expanded: boolean[]; runs: [string, string, Words][] } {
  const keptTexts: string[] = [];
  const keptExpanded: boolean[] = [];
  const runs: [string, string, Words][] = [];
  for (let index = 0; index < texts.length; index++) {
    const role = index > 0 ? options[texts[index]!] : undefined;
    if (role === undefined) {
      keptTexts.push(texts[index]!);
      keptExpanded.push(expanded[index]!);
      continue;
    }
    let end = index + 1;
    while (end < texts.length && texts[end] !== ";" && !(texts[end] === "+" && texts[end - 1] === "{}")) end++;
    const runTexts = texts.slice(index + 1, end);
    if (runTexts.length > 0) runs.push([role, texts[index]!, { texts: runTexts, expanded: runTexts.map((text, k) => expanded[index + 1 + k]! || text.includes("{}")) }]);
    index = end;
  }
  return { texts: keptTexts, expanded: keptExpanded, runs };
}

/**
 * Splits the string `env -S` is given into words, as env does: blanks separate words, single and
 * double quotes group, a backslash escapes (`\_` is a space); `${NAME}` is expanded by env.
 */
function splitString(text: string): { text: string; expanded: boolean }[] {
  const words: { text: string; expanded: boolean }[] = [];
  let current: { text: string; expanded: boolean } | undefined;
  let quote: "'" | '"' | undefined;
  const add = (char: string) => {
    current ??= { text: "", expanded: false };
    current.text += char;
  };
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (quote === "'") {
      if (char === "'") quote = undefined;
      else add(char);
    } else if (char === "\\" && index + 1 < text.length) {
      const next = text[++index]!;
      add(next === "_" ? " " : next === "n" ? "\n" : next === "t" ? "\t" : next);
    } else if (quote === '"') {
      if (char === '"') quote = undefined;
      else {
        if (char === "$") (current ??= { text: "", expanded: false }).expanded = true;
        add(char);
      }
    } else if (char === "'" || char === '"') {
      quote = char;
      current ??= { text: "", expanded: false };
    } else if (/\s/.test(char)) {
      if (current !== undefined) words.push(current);
      current = undefined;
    } else {
      if (char === "$") (current ??= { text: "", expanded: false }).expanded = true;
      add(char);
    }
  }
  if (current !== undefined) words.push(current);
  return words;
}

interface ParsedArguments {
  readonly named: Record<string, JsonValue>;
  /** Indices of the positional words (with every word after `--`). */
  readonly positionals: number[];
  /** For a wrapper, the index of the word that starts its command (its first positional). */
  readonly stop: number;
  /** Roles that received a value from an expanded word. */
  readonly expandedRoles: Set<string>;
}

/** The named arguments and the positional words of `words[1…]`. */
function parseArguments(words: readonly string[], expanded: readonly boolean[], spec: ToolSpec, mode: { stopAtFirstPositional: boolean }): ParsedArguments {
  const named: Record<string, JsonValue> = {};
  const positionals: number[] = [];
  const expandedRoles = new Set<string>();
  let options: Readonly<Record<string, string>> = spec.options ?? {};
  let flags: Readonly<Record<string, string>> = spec.flags ?? {};
  const optional = spec.optionalValues ?? {};
  const pairs = spec.pairOptions ?? {};
  const ending = spec.optionsEnd;
  const set = (key: string, value: JsonValue, from: number) => {
    setArgument(named, key, value);
    if (expanded[from]) expandedRoles.add(key);
  };
  /** The rest of the words are operands (`python3 -m M ARGS`, `ssh HOST CMD ARGS`). */
  const rest = (from: number): ParsedArguments => {
    for (let k = from; k < words.length; k++) positionals.push(k);
    return { named, positionals, stop: words.length, expandedRoles };
  };
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    if (word === "--") {
      if (mode.stopAtFirstPositional) return { named, positionals, stop: index + 1, expandedRoles };
      return rest(index + 1);
    }
    if (spec.numberOption !== undefined && /^-[0-9]+$/.test(word)) {
      set(spec.numberOption, word.slice(1), index);
      continue;
    }
    const isOption = flags[word] !== undefined || options[word] !== undefined || optional[word] !== undefined || pairs[word] !== undefined;
    if (!isOption && (!word.startsWith("-") || word === "-" || /^-[0-9]/.test(word) || spec.dashOperands?.test(word) === true)) {
      if (mode.stopAtFirstPositional) return { named, positionals, stop: index, expandedRoles };
      positionals.push(index);
      if (ending?.operands !== undefined && positionals.length >= ending.operands) return rest(index + 1);
      const subcommand = spec.subcommandOptions !== undefined && positionals.length === spec.subcommands ? spec.subcommandOptions[word] : undefined;
      if (subcommand !== undefined) {
        // `docker run -t`, `git log -n 5`: the subcommand's own options from here on.
        options = { ...without(options, Object.keys(subcommand.flags ?? {})), ...subcommand.options };
        flags = { ...without(flags, Object.keys(subcommand.options ?? {})), ...subcommand.flags };
      }
      continue;
    }
    const before = Object.keys(named).length;
    index = readOption(words, index, { options, flags, optional, pairs }, set);
    if (ending?.roles !== undefined && Object.keys(named).length > before && ending.roles.some((role) => Object.hasOwn(named, role))) return rest(index + 1);
  }
  return { named, positionals, stop: words.length, expandedRoles };
}

function without(map: Readonly<Record<string, string>>, keys: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(map).filter(([key]) => !keys.includes(key)));
}

/** Reads the option (or cluster of flags) at `index`; returns the index of the last word it took. */
function readOption(
  words: readonly string[],
  index: number,
  table: { readonly options: Readonly<Record<string, string>>; readonly flags: Readonly<Record<string, string>>; readonly optional: Readonly<Record<string, string>>; readonly pairs: Readonly<Record<string, string>> },
  set: (key: string, value: JsonValue, from: number) => void,
): number {
  const { options, flags, optional, pairs } = table;
  const word = words[index]!;
  const next = words[index + 1];
  if (pairs[word] !== undefined && index + 2 < words.length) {
    // `jq --arg NAME VALUE`: an object of the names given.
    set(pairs[word]!, { [words[index + 1]!]: words[index + 2]! }, index + 2);
    return index + 2;
  }
  if (optional[word] !== undefined) {
    // `make -j 4`, but `make -j test`: the value is optional, and a number when it is the next word.
    if (next !== undefined && /^[0-9]+(\.[0-9]+)?$/.test(next)) {
      set(optional[word]!, next, index + 1);
      return index + 1;
    }
    set(optional[word]!, true, index);
    return index;
  }
  const equals = word.indexOf("=");
  if (word.startsWith("--")) {
    const flag = equals >= 0 ? word.slice(0, equals) : word;
    if (equals >= 0) set(options[flag] ?? optional[flag] ?? flags[flag] ?? keyOf(flag), word.slice(equals + 1), index);
    else if (options[flag] !== undefined && next !== undefined) {
      set(options[flag]!, next, index + 1);
      return index + 1;
    } else set(flags[flag] ?? keyOf(flag), true, index);
    return index;
  }
  // A single dash: a whole-word option (`-name`, `-auto-approve`, `-chdir=DIR`), or a cluster of letters.
  if (options[word] !== undefined && next !== undefined) {
    set(options[word]!, next, index + 1);
    return index + 1;
  }
  if (flags[word] !== undefined) {
    set(flags[word]!, true, index);
    return index;
  }
  if (equals > 2 && options[word.slice(0, equals)] !== undefined) {
    set(options[word.slice(0, equals)]!, word.slice(equals + 1), index);
    return index;
  }
  const letters = word.slice(1);
  for (let k = 0; k < letters.length; k++) {
    const flag = `-${letters[k]}`;
    if (options[flag] !== undefined || optional[flag] !== undefined) {
      const attached = letters.slice(k + 1);
      const role = options[flag] ?? optional[flag]!;
      if (attached !== "") set(role, attached, index);
      else if (options[flag] !== undefined && next !== undefined) {
        set(role, next, index + 1);
        return index + 1;
      } else if (optional[flag] !== undefined && next !== undefined && /^[0-9]+(\.[0-9]+)?$/.test(next)) {
        set(role, next, index + 1);
        return index + 1;
      } else set(role, true, index);
      return index;
    }
    set(flags[flag] ?? letters[k]!, true, index);
  }
  return index;
}

/** Sets a role; a role given several values holds them all, in order. */
function setArgument(args: Record<string, JsonValue>, key: string, value: JsonValue): void {
  // Option names come from the command line: `--__proto__=x` must be an argument named `__proto__`,
  // so the key is read as an own property and defined, never assigned through the prototype's setter.
  const previous = Object.hasOwn(args, key) ? args[key] : undefined;
  const next = previous === undefined || previous === true ? value : Array.isArray(previous) ? [...previous, value] : [previous as JsonValue, value];
  Object.defineProperty(args, key, { value: next, writable: true, enumerable: true, configurable: true });
}

/**
 * The role of each of `count` positional words: the catalog's role names in order, a name ending
 * in `...` taking every word not claimed by the names after it; the rest `arg1`, `arg2`, ….
 */
function positionalRoles(count: number, roles: readonly string[]): string[] {
  const variadic = roles.findIndex((role) => role.endsWith("..."));
  if (variadic < 0) return Array.from({ length: count }, (_, index) => roles[index] ?? `arg${index + 1}`);
  const before = roles.slice(0, variadic);
  const after = roles.slice(variadic + 1);
  const name = roles[variadic]!.slice(0, -3);
  const result: string[] = [];
  for (const role of before) if (result.length < count) result.push(role);
  const available = Math.max(0, count - result.length - after.length);
  for (let k = 0; k < available; k++) result.push(name);
  for (const role of after) if (result.length < count) result.push(role);
  return result;
}

/** Positional words under their roles; a role that receives several words holds a list. */
function assignPositionals(words: readonly string[], roleOf: readonly string[]): Record<string, JsonValue> {
  const grouped = new Map<string, string[]>();
  words.forEach((word, index) => {
    const role = roleOf[index]!;
    const group = grouped.get(role);
    if (group === undefined) grouped.set(role, [word]);
    else group.push(word);
  });
  return Object.fromEntries([...grouped].map(([role, group]) => [role, group.length === 1 ? group[0]! : group]));
}

/** Copies arguments as own properties (`Object.assign` would send a `__proto__` key to the prototype). */
function copyArguments(args: Record<string, JsonValue>, from: Record<string, JsonValue>): void {
  for (const key of Object.keys(from)) Object.defineProperty(args, key, { value: from[key], writable: true, enumerable: true, configurable: true });
}

function keyOf(flag: string): string {
  return flag.replace(/^-+/, "").replace(/-/g, "_");
}

function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function prefixed(wrapper: string, named: Record<string, JsonValue>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(named).map(([key, value]) => [`${wrapper}_${key}`, value]));
}

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

/**
 * What a call's result shows of its line's run. A call that succeeded ran its line, which exited
 * 0, unless it was sent to the background (Claude Code's `Command running in background with ID:
 * …`: neither its status nor its output is known). A call that failed ran its line when its output
 * shows the exit status (Claude Code's first line `Exit code N`) or a shell's "command not found"
 * (its program's failure, on a line of its own); otherwise whether it ran is not known (a call
 * refused before it ran fails too). A call with no result has not run.
 */
function lineRun(event: TraceEvent): LineRun & { readonly status?: EventStatus } {
  const output = event.output ?? "";
  const notFound = notFoundPrograms(output);
  if (event.status === "ok") {
    if (/^Command running in background with ID: /.test(output)) return { notFound: new Set(), ran: false };
    return { status: "ok", notFound, ran: true };
  }
  if (event.status === "error") {
    const exit = /^(?:Error: )?Exit code (\d+)[ \t]*(?:\r?\n|$)/.exec(output);
    if (exit !== null && Number(exit[1]) !== 0) return { status: "error", notFound, ran: true };
    return { notFound, ran: notFound.size > 0 };
  }
  return noRun;
}

/**
 * The programs a shell says it could not run, each on a line of the output, as Bash, dash, zsh and
 * sudo say it: `bash: line 1: NAME: command not found` (also `/bin/bash: …`, `sh: …`, without
 * `line N:`), `sh: 1: NAME: not found`, `zsh: command not found: NAME` (also `zsh:1:` and
 * `(eval):1:`), `sudo: NAME: command not found`; and, for a program named by a path, Bash's `NAME:
 * No such file or directory` or `Permission denied` and zsh's `no such file or directory: NAME` or
 * `permission denied: NAME`.
 */
function notFoundPrograms(output: string): Set<string> {
  const found = new Set<string>();
  if (output === "") return found;
  const shell = String.raw`(?:\/[\w./-]*\/)?(?:bash|sh|dash|ksh)`;
  const bash = new RegExp(String.raw`^${shell}: (?:line \d+: |\d+: )?(?:eval: (?:line \d+: )?)?(.+?): (?:command not found|not found)$`);
  const bashPath = new RegExp(String.raw`^${shell}: (?:line \d+: )?(.*\/.*?): (?:No such file or directory|Permission denied)$`);
  const zsh = /^(?:(?:\/[\w./-]*\/)?zsh|\(eval\))(?::\d+)?: (?:command not found|no such file or directory|permission denied): (.+)$/;
  const sudo = /^sudo: (.+?): command not found$/;
  for (const raw of output.slice(0, 65_536).split("\n")) {
    const line = raw.replace(/\r$/, "");
    const name = bash.exec(line)?.[1] ?? bashPath.exec(line)?.[1] ?? zsh.exec(line)?.[1] ?? sudo.exec(line)?.[1];
    if (name !== undefined) found.add(name);
  }
  return found;
}
