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
  const own: (GroundedCall | undefined)[] = [];
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
  /** The commands the program runs, given as words (`find -exec CMD … ;`). */
  readonly runs: readonly Words[];
}

/** Words with, for each, whether the shell expands it (see {@link SimpleCommand.expanded}). */
interface Words {
  readonly texts: readonly string[];
  readonly expanded: readonly boolean[];
}

function groundOne(
  command: SimpleCommand,
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  producer: GroundedCall | undefined,
): { readonly own?: GroundedCall; readonly events: GroundedCommand[] } {
  const events: GroundedCommand[] = [];
  let own: GroundedCall | undefined;
  if (command.words.length > 0) {
    const words = { texts: command.words, expanded: command.expanded ?? [] };
    const grounded = groundCallEvents(words, command.assignments, catalog, depth, [], { command, producer });
    own = grounded.own;
    events.push(...grounded.events);
  }
  for (const redirection of command.redirections) {
    const event = redirectionEvent(redirection);
    if (event !== undefined) events.push(event);
  }
  return own !== undefined ? { own, events } : { events };
}

/**
 * The events of one command given as words: the files it reads through its arguments, its own
 * event, what cannot be known of the script it runs, the events of that script, and the events
 * of the commands it runs (`find -exec`). `input` is where its standard input comes from, when it
 * is a command of a parsed line.
 */
function groundCallEvents(
  words: Words,
  assignments: readonly { readonly name: string; readonly value: string }[],
  catalog: Readonly<Record<string, ToolSpec>>,
  depth: number,
  via: readonly string[],
  input: { readonly command: SimpleCommand; readonly producer: GroundedCall | undefined } | undefined,
): { readonly own: GroundedCall; readonly events: GroundedCommand[] } {
  let call = groundCall(words, assignments, catalog, via);
  const producer = input?.producer;
  if (producer !== undefined) call = { ...call, command: withArgs(call.command, { piped_from: producer.command.action }) };
  const spec = specOf(call.command, catalog);
  const script = spec?.script;
  const unknown: GroundedCommand[] = [];
  let scriptRole = script?.role;
  let scriptExpanded = scriptRole !== undefined && call.expandedRoles.has(scriptRole);
  const hasScript = (scriptRole !== undefined && typeof call.command.args[scriptRole] === "string") || (script?.fromFile !== undefined && typeof call.command.args[script.fromFile] === "string");
  if (script !== undefined && !hasScript) {
    const fromStdin = script.stdin === true && input !== undefined ? standardInputScript(input.command, producer) : undefined;
    if (fromStdin !== undefined && scriptRole !== undefined) {
      call = { ...call, command: withArgs(call.command, { [scriptRole]: fromStdin.text }) };
      scriptExpanded = fromStdin.expanded;
    } else if (call.stdinArguments) {
      // `… | xargs bash`: the script (or its file) is an argument read from standard input.
      unknown.push(unknownCommand("dynamic_script", call.command));
    } else if (script.stdin === true && input?.command.readsPipe === true) {
      // `curl … | bash`: the script is what another program writes, unknown until it runs.
      unknown.push(unknownCommand("piped_script", call.command, undefined, producer !== undefined ? { piped_from: producer.command.action } : {}));
    }
  }
  const scriptText = scriptRole !== undefined ? call.command.args[scriptRole] : undefined;
  if (typeof scriptText === "string") {
    if (scriptExpanded) unknown.push(unknownCommand("dynamic_script", call.command, scriptText));
  } else {
    scriptRole = undefined;
    const file = script?.fromFile !== undefined ? call.command.args[script.fromFile] : undefined;
    if (typeof file === "string" && call.expandedRoles.has(script!.fromFile!)) unknown.push(unknownCommand("dynamic_script", call.command, file));
  }
  const events = [...fileReads(call.command, spec, scriptRole !== undefined ? script?.fromFile : undefined), call.command, ...unknown];
  if (typeof scriptText === "string") events.push(...scriptCommands(call.command, scriptText, catalog, depth));
  for (const run of call.runs) {
    events.push(...groundCallEvents(run, [], catalog, depth, [call.command.action], undefined).events);
  }
  return { own: call, events };
}

function withArgs(command: GroundedCommand, args: Record<string, JsonValue>): GroundedCommand {
  return { action: command.action, args: { ...command.args, ...args } };
}

/**
 * An event for what the command line does not show. `reason` says what: `dynamic_command` (the
 * command's name is an expansion), `dynamic_script` (the script a program runs, or its file, is
 * expanded text or arguments from standard input), `piped_script` (a shell runs what a program
 * pipes into it), `too_deep` (a script nested beyond the depth grounded), `too_complex` (a line that
 * nests or chains beyond what is parsed). `by` is the program
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
 * What a tool that runs its standard input (a shell) reads there, when it is known: a
 * here-document (`bash <<'EOF' … EOF`), a here-string (`bash <<< "…"`) or the text an `echo` or
 * a `printf` writes into its pipe (`echo "rm -rf x" | sh`); not another program's output
 * (`curl … | sh`), which `piped_from` names instead. `expanded` says whether the shell expands
 * something in that text before the tool reads it (`<<EOF` with `$X` in the body).
 */
function standardInputScript(command: SimpleCommand, producer: GroundedCall | undefined): { text: string; expanded: boolean } | undefined {
  const hereDocument = command.redirections.find((r) => r.operator.startsWith("<<") && r.operator !== "<<<");
  if (hereDocument?.body !== undefined) return { text: hereDocument.body, expanded: hereDocument.expanded === true };
  const hereString = command.redirections.find((r) => r.operator === "<<<");
  if (hereString !== undefined) return { text: hereString.target, expanded: hereString.expanded === true };
  const written = producer?.command;
  if (written?.action === "echo") {
    const text = written.args["text"];
    const joined = Array.isArray(text) ? text.join(" ") : typeof text === "string" ? text : undefined;
    return joined !== undefined ? { text: joined, expanded: producer!.expandedRoles.has("text") } : undefined;
  }
  if (written?.action === "printf" && written.args["argument"] === undefined) {
    const format = written.args["format"];
    return typeof format === "string" ? { text: format.replace(/\\n/g, "\n"), expanded: producer!.expandedRoles.has("format") } : undefined;
  }
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

/** `bash -c "bash -c …"` is grounded this many levels deep. */
const maximumScriptDepth = 4;

/**
 * The commands of the script a tool runs (the catalog's `script`: `bash -c SCRIPT`), grounded
 * after the tool's own event. A script that does not parse gives none: the shell would refuse it
 * and run nothing, and the tool's event keeps the script as an argument. A script nested deeper
 * than is grounded is an unknown command, so that nesting cannot hide what it runs.
 */
function scriptCommands(command: GroundedCommand, script: string, catalog: Readonly<Record<string, ToolSpec>>, depth: number): GroundedCommand[] {
  if (depth >= maximumScriptDepth) return [unknownCommand("too_deep", command, script)];
  const parsed = parseCommandLine(script);
  if (!parsed.ok) return parsed.tooComplex === true ? [unknownCommand("too_complex", command, script.slice(0, 200))] : [];
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
    wrappers.push(program);
    texts = innerTexts;
    expanded = innerExpanded;
    program = basename(texts[0]!);
    spec = catalog[program];
  }
  if (wrappers.length > 0) args["via"] = wrappers.length === 1 ? wrappers[0]! : wrappers;
  if (stdinArguments) args["stdin_arguments"] = true;
  args["program"] = texts[0] ?? program;
  if (expanded[0] === true) {
    // `$CMD x`, `$(which cat) x`, `/bin/c?t x`: which program runs is known only when it runs.
    return {
      command: { action: unknownCommandAction, args: { ...args, reason: "dynamic_command", text: texts.join(" ") } },
      expandedRoles,
      stdinArguments,
      runs: [],
    };
  }

  if (spec?.script?.words === true && spec.script.role !== undefined) {
    // `eval a b`, `watch -n 5 a b`: after the program's options, the words joined by spaces are the script.
    const parsed = parseArguments(texts, expanded, spec, { stopAtFirstPositional: true });
    copyArguments(args, parsed.named);
    const words = texts.slice(parsed.stop);
    if (words.length > 0) args[spec.script.role] = words.join(" ");
    if (expanded.slice(parsed.stop).some(Boolean)) expandedRoles.add(spec.script.role);
    return { command: { action: spec.action ?? program, args }, expandedRoles, stdinArguments, runs: [] };
  }

  const runs: Words[] = [];
  if (spec?.commandOptions !== undefined) {
    const taken = takeCommandOptions(texts, expanded, spec.commandOptions);
    texts = taken.texts;
    expanded = taken.expanded;
    for (const [role, run] of taken.runs) {
      setArgument(args, role, run.texts.join(" "));
      runs.push(run);
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
  // and b into DIR, `sed -e SCRIPT FILE` edits FILE, `grep -e PATTERN FILE` searches FILE.
  const roles = allRoles.filter((role) => role.endsWith("...") || !Object.hasOwn(parsed.named, role));
  const roleOf = positionalRoles(positionals.length, roles);
  positionals.forEach((index, k) => {
    if (expanded[index]) expandedRoles.add(roleOf[k]!);
  });
  copyArguments(args, assignPositionals(positionals.map((index) => texts[index]!), roleOf));
  return { command: { action, args }, expandedRoles, stdinArguments, runs };
}

/**
 * Takes the commands out of a tool's words that follow one of its command options (`find . -exec
 * rm {} ;`), each up to a `;` word or a `+` after `{}`. In them `{}` stands for a name the tool
 * finds, so a word holding it is expanded.
 */
function takeCommandOptions(texts: readonly string[], expanded: readonly boolean[], options: Readonly<Record<string, string>>): { texts: string[]; expanded: boolean[]; runs: [string, Words][] } {
  const keptTexts: string[] = [];
  const keptExpanded: boolean[] = [];
  const runs: [string, Words][] = [];
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
    if (runTexts.length > 0) runs.push([role, { texts: runTexts, expanded: runTexts.map((text, k) => expanded[index + 1 + k]! || text.includes("{}")) }]);
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
  const options = spec.options ?? {};
  const flags = spec.flags ?? {};
  const set = (key: string, value: JsonValue, from: number) => {
    setArgument(named, key, value);
    if (expanded[from]) expandedRoles.add(key);
  };
  for (let index = 1; index < words.length; index++) {
    const word = words[index]!;
    if (word === "--") {
      if (mode.stopAtFirstPositional) return { named, positionals, stop: index + 1, expandedRoles };
      for (let rest = index + 1; rest < words.length; rest++) positionals.push(rest);
      break;
    }
    if (spec.numberOption !== undefined && /^-[0-9]+$/.test(word)) {
      set(spec.numberOption, word.slice(1), index);
      continue;
    }
    const isOption = flags[word] !== undefined || options[word] !== undefined;
    if (!isOption && (!word.startsWith("-") || word === "-" || /^-[0-9]/.test(word))) {
      if (mode.stopAtFirstPositional) return { named, positionals, stop: index, expandedRoles };
      positionals.push(index);
      continue;
    }
    if (word.startsWith("--")) {
      const equals = word.indexOf("=");
      const flag = equals >= 0 ? word.slice(0, equals) : word;
      if (equals >= 0) set(options[flag] ?? flags[flag] ?? keyOf(flag), word.slice(equals + 1), index);
      else if (options[flag] !== undefined && index + 1 < words.length) {
        index++;
        set(options[flag]!, words[index]!, index);
      } else set(flags[flag] ?? keyOf(flag), true, index);
      continue;
    }
    // A single dash: a whole-word option (`-name`, `-auto-approve`), or a cluster of letters.
    if (options[word] !== undefined && index + 1 < words.length) {
      index++;
      set(options[word]!, words[index]!, index);
      continue;
    }
    if (flags[word] !== undefined) {
      set(flags[word]!, true, index);
      continue;
    }
    const letters = word.slice(1);
    for (let k = 0; k < letters.length; k++) {
      const flag = `-${letters[k]}`;
      if (options[flag] !== undefined) {
        const attached = letters.slice(k + 1);
        if (attached !== "") set(options[flag]!, attached, index);
        else if (index + 1 < words.length) {
          index++;
          set(options[flag]!, words[index]!, index);
        } else set(options[flag]!, true, index);
        break;
      }
      set(flags[flag] ?? letters[k]!, true, index);
    }
  }
  return { named, positionals, stop: words.length, expandedRoles };
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
      if (!parsed.ok && parsed.tooComplex === true) {
        // What the line runs cannot be known: an event a policy can forbid (fail closed).
        commands = [unknownCommand("too_complex", { action: event.action, args: {} }, command.slice(0, 200))];
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
      } else commands = groundCommandLine(parsed.commands, options.catalog ?? toolCatalog);
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
