import type { JsonValue } from "../value.js";
import { commandDirectories, commandDirectory, directoriesFrom, directoriesThrough, pathArgument, pathDirectory, pathValue, someDirectories } from "./absolute-paths.js";
import { toolCatalog, type ToolSpec } from "./catalog.js";
import { emitLine, noRun } from "./command-status.js";
import type { EvaluatedText } from "./evaluated.js";
import { placedCommand, unknownCommand, unknownCommandAction, type CommandPieces, type GroundedCommand, type GroundedDirectory, type LinePieces } from "./grounded-command.js";
import { parseCommandLine } from "./parse-command-line.js";
import type { CommandDirectories, LineNode, Redirection, SimpleCommand } from "./parsed-line.js";
import { basename, copyArguments, groundCall, type GroundedCall, type Words } from "./words-to-arguments.js";

/**
 * Argument grounding (the paper's Section 6 ablation): a shell tool call is opaque to a policy —
 * `{"command": "cp out.xlsx /shared && rm out.xlsx"}` — until it becomes the events it performs.
 * Each simple command of the line becomes an event whose action is the program (with subcommands
 * folded in: `git push`) and whose arguments are named by the catalog's roles; each file
 * redirection becomes a `write` (or `read`) event of its path.
 */

/** What grounding knows of where a line runs. */
export interface GroundingContext {
  /** The working directory the line starts in, absolute; undefined when not known. */
  readonly cwd?: string;
  /** `cd NAME` may search CDPATH (the shell's environment has it set). */
  readonly cdpath?: boolean;
  /**
   * Where the line starts, as ways from the start of the line it is nested in (a script a command
   * runs starts where that command runs); absent, the line is the outermost one. Each grounded
   * command is noted as running where its line's walk says, from here (see `groundedDirectory`).
   */
  readonly from?: CommandDirectories;
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

/** The pieces of a parsed line's commands, in order, each from the directory it runs in. */
export function groundLine(
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
    const directory: GroundedDirectory = {
      at: directoriesFrom(context.from, commandDirectories(command)),
      ...(command.leadsTo !== undefined ? { to: directoriesFrom(context.from, command.leadsTo) } : {}),
    };
    const grounded = groundOne(command, catalog, depth, producer, { ...context, ...(cwd !== undefined ? { cwd } : { cwd: undefined }) }, directory);
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

/** The pieces of one parsed simple command (and its redirections), in execution order; each noted as running where `directory` says. */
function groundOne(
  command: SimpleCommand,
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  producer: { readonly call: GroundedCall | undefined; readonly command: SimpleCommand } | undefined,
  context: GroundingContext,
  directory: GroundedDirectory,
): { readonly call?: GroundedCall; readonly pieces: CommandPieces } {
  let call: GroundedCall | undefined;
  let pieces: CommandPieces = { reads: [], writes: [], unknown: [], runs: [], redirections: [] };
  if (command.words.length > 0) {
    const words = { texts: command.words, expanded: command.expanded ?? [] };
    const grounded = groundCallEvents(words, command.assignments, catalog, depth, [], { command, producer }, context, directory);
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
    redirections.push(placedCommand(writesInput ? { action: event.action, args: { ...event.args, content: input.content } } : event, { at: directory.at }));
  }
  return { ...(call !== undefined ? { call } : {}), pieces: { ...pieces, redirections } };
}

/**
 * The pieces of one command given as words: the files it reads through its arguments, its own
 * event, what cannot be known of the script it runs, that script, and the commands it runs (`find
 * -exec`). `input` is where its standard input comes from, when it is a command of a parsed line;
 * `directory`, where it runs (its events are noted so).
 */
function groundCallEvents(
  words: Words,
  assignments: readonly { readonly name: string; readonly value: string }[],
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  via: readonly string[],
  input: { readonly command: SimpleCommand; readonly producer: { readonly call: GroundedCall | undefined; readonly command: SimpleCommand } | undefined } | undefined,
  context: GroundingContext,
  directory: GroundedDirectory,
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
  // Where what it runs starts: where it runs, or where its options take it (kept both ways: an
  // option is read as the catalog says, and the command's own directory stays among the ways).
  let optioned = directory.at;
  const keyDirectory = new Map<string, string | undefined>();
  for (const option of call.directories) {
    if (option === "unknown") {
      cwd = undefined;
      optioned = { ways: optioned.ways, elsewhere: true };
      continue;
    }
    keyDirectory.set(option.key, cwd);
    const named = call.command.args[option.key];
    cwd = typeof named === "string" ? pathDirectory(named, cwd) : undefined;
    optioned =
      typeof named === "string" && named !== ""
        ? directoriesThrough(optioned, { path: named, physical: true, ...(call.expandedRoles.has(option.key) ? { unresolved: true as const } : {}) })
        : { ways: optioned.ways, elsewhere: true };
  }
  const inner = optioned === directory.at ? optioned : someDirectories([...directory.at.ways, ...optioned.ways], directory.at.elsewhere || optioned.elsewhere);
  const args: Record<string, JsonValue> = {};
  copyArguments(args, call.command.args);
  for (const key of call.pathKeys) {
    const value = args[key];
    if (value === undefined || value === true) continue;
    // With CDPATH, `cd NAME` may go to a NAME in one of its directories: not known.
    if (call.command.action === "cd" && context.cdpath === true && typeof value === "string" && !/^\.{0,2}\//.test(value) && value !== "." && value !== "..") continue;
    copyArguments(args, { [key]: pathValue(value, keyDirectory.has(key) ? keyDirectory.get(key) : cwd, call.searchedKeys.includes(key)) });
  }
  call = { ...call, command: placedCommand({ action: call.command.action, args }, directory) };
  const at = { at: directory.at };
  const reads = fileReads(call.command, spec, scriptRole !== undefined ? script?.fromFile : undefined).map((read) => {
    const path = read.args["path"] as string;
    const searched = call.searchedKeys.includes(read.args["argument"] as string);
    return placedCommand({ action: read.action, args: { ...read.args, path: pathValue(path, cwd, searched) } }, at);
  });
  const writes: GroundedCommand[] = [];
  if (call.command.action === "tee" && known !== undefined) {
    // `tee f <<EOF`: each file gets what tee reads.
    const paths = call.command.args["path"];
    for (const path of Array.isArray(paths) ? paths : paths !== undefined ? [paths] : []) {
      if (typeof path === "string") writes.push(placedCommand({ action: "write", args: { path, append: call.command.args["append"] === true, content: known.content, by: "tee", argument: "path" } }, at));
    }
  }
  let scriptPieces: CommandPieces["script"];
  if (typeof scriptText === "string") {
    const nested = scriptLine(call.command, scriptText, catalog, depth, { ...context, ...(cwd !== undefined ? { cwd } : { cwd: undefined }), from: inner });
    // A shell's (or eval's) exit status is its script's; `watch` runs it again and again.
    scriptPieces = { ...nested, passesStatus: spec?.script?.words !== true || call.command.action === "eval" };
  }
  const runs = call.runs.map((run) => {
    // `-execdir` and `-okdir` run the command in the directory of what find finds.
    const inFound = run.option.endsWith("dir");
    return groundCallEvents(run.words, [], catalog, depth, [call.command.action], undefined, { ...context, cwd: inFound ? undefined : cwd }, { at: inFound ? { ways: inner.ways, elsewhere: true } : inner }).pieces;
  });
  return {
    call,
    pieces: {
      reads,
      own: call.command,
      writes,
      unknown: unknown.map((event) => placedCommand(event, at)),
      ...(scriptPieces !== undefined ? { script: { ...scriptPieces, events: scriptPieces.events.map((event) => placedCommand(event, { at: inner })) } } : {}),
      runs,
      redirections: [],
    },
  };
}

function withArgs(command: GroundedCommand, args: Record<string, JsonValue>): GroundedCommand {
  const merged: Record<string, JsonValue> = {};
  copyArguments(merged, command.args);
  copyArguments(merged, args);
  return { action: command.action, args: merged };
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
export function groundArgv(argv: readonly string[], catalog: Readonly<Record<string, ToolSpec>>, context: GroundingContext): LinePieces {
  return groundLine({ commands: [{ words: argv, assignments: [], redirections: [], offset: 0 }], structure: { kind: "command", index: 0 } }, catalog, 0, context);
}

/** The event of a file redirection (`> f`, `>> f`, `< f`); none for one that names no file. */
function redirectionEvent(redirection: Redirection, cwd: string | undefined): GroundedCommand | undefined {
  const { operator, target } = redirection;
  // `2>&1` duplicates a descriptor; here-documents and here-strings carry text, not a file.
  if (/&$/.test(operator) || operator.startsWith("<<")) return undefined;
  const path = pathArgument(target, cwd);
  if (operator === "<") return { action: "read", args: { path, redirection: operator } };
  if (operator.includes(">")) return { action: "write", args: { path, append: operator.includes(">>"), redirection: operator } };
  return undefined;
}
