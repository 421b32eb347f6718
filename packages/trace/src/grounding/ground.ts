import { diagnostic, type Diagnostic } from "@vigil/diagnostics";
import type { TraceEvent } from "../event.js";
import type { JsonValue } from "../value.js";
import { toolCatalog, type ToolSpec } from "./catalog.js";
import { parseCommandLine, type Redirection, type SimpleCommand } from "./shell.js";

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
}

/**
 * Grounds the simple commands of a parsed command line, in order. A command that reads a pipe
 * (`a | b`) gets `piped_from`, the action of the command writing into it.
 */
export function groundCommandLine(commands: readonly SimpleCommand[], catalog: Readonly<Record<string, ToolSpec>> = toolCatalog, depth = 0): GroundedCommand[] {
  const own: (GroundedCommand | undefined)[] = [];
  const result: GroundedCommand[] = [];
  for (const command of commands) {
    const producer = command.pipedFrom !== undefined ? own[command.pipedFrom] : undefined;
    const grounded = groundOne(command, catalog, depth, producer);
    own.push(grounded.own);
    result.push(...grounded.events);
  }
  return result;
}

/** Grounds one parsed simple command (and its redirections) into events, in execution order. */
export function groundSimpleCommand(command: SimpleCommand, catalog: Readonly<Record<string, ToolSpec>> = toolCatalog, depth = 0): GroundedCommand[] {
  return groundOne(command, catalog, depth, undefined).events;
}

function groundOne(
  command: SimpleCommand,
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  producer: GroundedCommand | undefined,
): { readonly own?: GroundedCommand; readonly events: GroundedCommand[] } {
  const events: GroundedCommand[] = [];
  let grounded: GroundedCommand | undefined;
  if (command.words.length > 0) {
    grounded = groundWords(command.words, command.assignments, catalog);
    if (producer !== undefined) grounded = { ...grounded, args: { ...grounded.args, piped_from: producer.action } };
    const script = specOf(grounded, catalog)?.script;
    if (script?.stdin === true && grounded.args[script.role] === undefined && (script.fromFile === undefined || grounded.args[script.fromFile] === undefined)) {
      const stdinScript = standardInputScript(command, producer);
      if (stdinScript !== undefined) grounded = { ...grounded, args: { ...grounded.args, [script.role]: stdinScript } };
    }
    events.push(...fileReads(grounded, catalog), grounded, ...scriptCommands(grounded, catalog, depth));
  }
  for (const redirection of command.redirections) {
    const event = redirectionEvent(redirection);
    if (event !== undefined) events.push(event);
  }
  return grounded !== undefined ? { own: grounded, events } : { events };
}

/** The catalog entry of a grounded command's program. */
function specOf(command: GroundedCommand, catalog: Readonly<Record<string, ToolSpec>>): ToolSpec | undefined {
  const program = command.args["program"];
  return typeof program === "string" ? catalog[basename(program)] : undefined;
}

/**
 * What a tool that runs its standard input (a shell) reads there, when it is known: a
 * here-document (`bash <<'EOF' … EOF`), a here-string (`bash <<< "…"`) or the text an `echo` or
 * a `printf` writes into its pipe (`echo "rm -rf x" | sh`); not another program's output
 * (`curl … | sh`), which `piped_from` names instead.
 */
function standardInputScript(command: SimpleCommand, producer: GroundedCommand | undefined): string | undefined {
  const hereDocument = command.redirections.find((r) => r.operator.startsWith("<<") && r.operator !== "<<<")?.body;
  if (hereDocument !== undefined) return hereDocument;
  const hereString = command.redirections.find((r) => r.operator === "<<<")?.target;
  if (hereString !== undefined) return hereString;
  if (producer?.action === "echo") {
    const text = producer.args["text"];
    return Array.isArray(text) ? text.join(" ") : typeof text === "string" ? text : undefined;
  }
  if (producer?.action === "printf" && producer.args["argument"] === undefined) {
    const format = producer.args["format"];
    return typeof format === "string" ? format.replace(/\\n/g, "\n") : undefined;
  }
  return undefined;
}

/**
 * The files a command reads through its arguments' values (the catalog's `reads`): a `read` event
 * for each, with the program and the argument it came from. They precede the command's event,
 * because the command reads them before it acts.
 */
function fileReads(command: GroundedCommand, catalog: Readonly<Record<string, ToolSpec>>): GroundedCommand[] {
  const spec = specOf(command, catalog);
  if (spec?.reads === undefined) return [];
  const reads: GroundedCommand[] = [];
  for (const [role, pattern] of Object.entries(spec.reads)) {
    const value = command.args[role];
    for (const item of Array.isArray(value) ? value : [value]) {
      if (typeof item !== "string") continue;
      const path = pattern.exec(item)?.[1];
      if (path !== undefined && path !== "-") reads.push({ action: "read", args: { path, by: command.action, argument: role } });
    }
  }
  return reads;
}

/** `bash -c "bash -c …"` is grounded this many levels deep. */
const maximumScriptDepth = 4;

/**
 * The commands of the script a tool runs (the catalog's `script`: `bash -c SCRIPT`), grounded
 * after the tool's own event. A script that does not parse gives none: the shell would refuse it
 * and run nothing, and the tool's event keeps the script as an argument.
 */
function scriptCommands(command: GroundedCommand, catalog: Readonly<Record<string, ToolSpec>>, depth: number): GroundedCommand[] {
  const role = specOf(command, catalog)?.script?.role;
  const script = role !== undefined ? command.args[role] : undefined;
  if (typeof script !== "string" || depth >= maximumScriptDepth) return [];
  const parsed = parseCommandLine(script);
  if (!parsed.ok) return [];
  return groundCommandLine(parsed.commands, catalog, depth + 1);
}

/**
 * The words of an argument vector (a `subprocess`-style call) as events: the program's, then what
 * it reads and what its script runs, as for a parsed command line.
 */
function groundArgv(argv: readonly string[], catalog: Readonly<Record<string, ToolSpec>>): GroundedCommand[] {
  return groundSimpleCommand({ words: argv, assignments: [], redirections: [], offset: 0 }, catalog);
}

function redirectionEvent(redirection: Redirection): GroundedCommand | undefined {
  const { operator, target } = redirection;
  // `2>&1` duplicates a descriptor; here-documents and here-strings carry text, not a file.
  if (/&$/.test(operator) || operator.startsWith("<<")) return undefined;
  if (operator === "<") return { action: "read", args: { path: target, redirection: operator } };
  if (operator.includes(">")) return { action: "write", args: { path: target, append: operator.includes(">>"), redirection: operator } };
  return undefined;
}

export function groundWords(
  words: readonly string[],
  assignments: readonly { readonly name: string; readonly value: string }[] = [],
  catalog: Readonly<Record<string, ToolSpec>> = toolCatalog,
): GroundedCommand {
  const args: Record<string, JsonValue> = {};
  if (assignments.length > 0) args["env"] = Object.fromEntries(assignments.map((a) => [a.name, a.value]));
  let rest = [...words];
  let program = basename(rest[0] ?? "");
  let spec = catalog[program];
  const wrappers: string[] = [];
  // Wrappers run the rest of their words as the command: ground that command, noting the wrapper.
  while (spec?.wrapper !== undefined) {
    const parsed = parseArguments(rest.slice(1), spec, { stopAtFirstPositional: true });
    Object.assign(args, prefixed(program, parsed.named));
    let inner = parsed.positionals.concat(parsed.afterStop);
    if (program === "env") {
      while (inner[0] !== undefined && /^[A-Za-z_][A-Za-z0-9_]*=/.test(inner[0])) {
        const [name, ...value] = inner[0].split("=");
        args["env"] = { ...(args["env"] as Record<string, JsonValue> | undefined), [name!]: value.join("=") };
        inner = inner.slice(1);
      }
    }
    inner = inner.slice(spec.wrapper.skip ?? 0);
    if (inner.length === 0) break;
    wrappers.push(program);
    rest = inner;
    program = basename(rest[0]!);
    spec = catalog[program];
  }
  if (wrappers.length > 0) args["via"] = wrappers.length === 1 ? wrappers[0]! : wrappers;
  args["program"] = rest[0] ?? program;

  const parsed = parseArguments(rest.slice(1), spec ?? {}, { stopAtFirstPositional: false });
  Object.assign(args, parsed.named);
  let positionals = parsed.positionals.concat(parsed.afterStop);
  const subcommandWords = positionals.slice(0, spec?.subcommands ?? 0);
  positionals = positionals.slice(subcommandWords.length);
  const action = [program, ...subcommandWords].join(" ");
  const last = subcommandWords[subcommandWords.length - 1];
  const roles = (last !== undefined ? spec?.subcommandPositionals?.[last] : undefined) ?? spec?.positionals ?? [];
  Object.assign(args, assignPositionals(positionals, roles));
  return { action, args };
}

interface ParsedArguments {
  readonly named: Record<string, JsonValue>;
  readonly positionals: string[];
  /** Words after `--`, or (for a wrapper) from its first positional on. */
  readonly afterStop: string[];
}

function parseArguments(words: readonly string[], spec: ToolSpec, mode: { stopAtFirstPositional: boolean }): ParsedArguments {
  const named: Record<string, JsonValue> = {};
  const positionals: string[] = [];
  const options = spec.options ?? {};
  const flags = spec.flags ?? {};
  const set = (key: string, value: JsonValue) => {
    const previous = named[key];
    if (previous === undefined || previous === true) named[key] = value;
    else named[key] = Array.isArray(previous) ? [...previous, value] : [previous as JsonValue, value];
  };
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (word === "--") return { named, positionals, afterStop: words.slice(index + 1) };
    if (!word.startsWith("-") || word === "-" || /^-[0-9]/.test(word)) {
      if (mode.stopAtFirstPositional) return { named, positionals, afterStop: words.slice(index) };
      positionals.push(word);
      continue;
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const flag = equals >= 0 ? word.slice(0, equals) : word;
      if (equals >= 0) set(options[flag] ?? flags[flag] ?? keyOf(flag), word.slice(equals + 1));
      else if (options[flag] !== undefined && index + 1 < words.length) set(options[flag]!, words[++index]!);
      else set(flags[flag] ?? keyOf(flag), true);
      continue;
    }
    // A single dash: a whole-word option (`-name`, `-auto-approve`), or a cluster of letters.
    if (options[word] !== undefined && index + 1 < words.length) {
      set(options[word]!, words[++index]!);
      continue;
    }
    if (flags[word] !== undefined) {
      set(flags[word]!, true);
      continue;
    }
    const letters = word.slice(1);
    for (let k = 0; k < letters.length; k++) {
      const flag = `-${letters[k]}`;
      if (options[flag] !== undefined) {
        const attached = letters.slice(k + 1);
        if (attached !== "") set(options[flag]!, attached);
        else if (index + 1 < words.length) set(options[flag]!, words[++index]!);
        else set(options[flag]!, true);
        break;
      }
      set(flags[flag] ?? letters[k]!, true);
    }
  }
  return { named, positionals, afterStop: [] };
}

/** Positional words under the catalog's role names; the rest as `arg1`, `arg2`, …. */
function assignPositionals(words: readonly string[], roles: readonly string[]): Record<string, JsonValue> {
  const args: Record<string, JsonValue> = {};
  const variadic = roles.findIndex((role) => role.endsWith("..."));
  if (variadic < 0) {
    words.forEach((word, index) => (args[roles[index] ?? `arg${index + 1}`] = word));
    return args;
  }
  const before = roles.slice(0, variadic);
  const after = roles.slice(variadic + 1);
  const name = roles[variadic]!.slice(0, -3);
  let index = 0;
  for (const role of before) if (index < words.length) args[role] = words[index++]!;
  const available = Math.max(0, words.length - index - after.length);
  const many = words.slice(index, index + available);
  index += available;
  if (many.length === 1) args[name] = many[0]!;
  else if (many.length > 1) args[name] = many;
  for (const role of after) if (index < words.length) args[role] = words[index++]!;
  return args;
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
}

/**
 * Grounds every shell call of a trace: the call's event stays (policies may speak of it), and the
 * events of its commands follow it, carrying the call's status and source (with `groundedFrom`,
 * the call's position). A command line that does not parse is reported (T0011) and left as is.
 * Positions are renumbered.
 */
export function groundTrace(events: readonly TraceEvent[], options: GroundTraceOptions = {}): { events: TraceEvent[]; diagnostics: Diagnostic[] } {
  const tools = new Set(options.shellTools ?? shellToolNames);
  const result: TraceEvent[] = [];
  const diagnostics: Diagnostic[] = [];
  for (const event of events) {
    const position = result.length + 1;
    result.push({ ...event, position });
    if (!tools.has(event.action)) continue;
    // An argument vector: `argv`, or a `command` given as a list (`["bash", "-lc", "…"]`).
    const argv = [event.args["argv"], event.args["command"], event.args["cmd"]].find((value) => Array.isArray(value) && value.length > 0);
    let commands: GroundedCommand[];
    if (Array.isArray(argv) && argv.every((word) => typeof word === "string")) {
      commands = groundArgv(argv as string[], options.catalog ?? toolCatalog);
    } else {
      const command = event.args["command"] ?? event.args["cmd"];
      if (typeof command !== "string") continue;
      const parsed = parseCommandLine(command);
      if (!parsed.ok) {
        const where = event.source?.line !== undefined ? ` on line ${event.source.line}` : "";
        diagnostics.push(
          diagnostic("T0011", `the \`command\` of the ${event.action} call${where} is not a valid shell command line (${parsed.message}); it is not grounded`, {
            ...(event.source?.file !== undefined ? { file: event.source.file } : {}),
            ...(event.source?.span !== undefined ? { span: event.source.span } : {}),
            help: "policies can still match the call itself, e.g. `command ~ \"…\"`",
          }),
        );
        continue;
      }
      commands = groundCommandLine(parsed.commands, options.catalog ?? toolCatalog);
    }
    for (const command of commands) {
      result.push({
        position: result.length + 1,
        action: command.action,
        args: command.args,
        ...(event.status !== undefined ? { status: event.status } : {}),
        source: { ...event.source, groundedFrom: position },
      });
    }
  }
  return { events: result, diagnostics };
}
