import type { JsonValue } from "../value.js";
import { toolCatalog, type ToolSpec } from "./catalog.js";
import { unknownCommandAction, type GroundedCommand } from "./grounded-command.js";

/**
 * One command's words read into its event, by the catalog: the program (with its subcommand words
 * folded into the action: `git push`) and its arguments named by the catalog's roles, options and
 * positionals alike, looking through wrappers (`sudo`, `env`, `xargs`) to the command they run.
 * Beside the event comes what the grounding of the line needs to know of the words: which roles
 * hold text the shell expands, which name files or directories, and the commands the program runs.
 */

/** A command's own event, with the roles whose values hold text the shell expands. */
export interface GroundedCall {
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

/** Words with, for each, whether the shell expands it (see `SimpleCommand.expanded` in parsed-line.ts). */
export interface Words {
  readonly texts: readonly string[];
  readonly expanded: readonly boolean[];
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

/**
 * The event of a command given as words, with what grounding needs beyond it (see
 * {@link GroundedCall}); `via` names the programs that run it (`find -exec`), as wrappers do.
 */
export function groundCall(
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
export function copyArguments(args: Record<string, JsonValue>, from: Record<string, JsonValue>): void {
  for (const key of Object.keys(from)) Object.defineProperty(args, key, { value: from[key], writable: true, enumerable: true, configurable: true });
}

function keyOf(flag: string): string {
  return flag.replace(/^-+/, "").replace(/-/g, "_");
}

export function basename(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

function prefixed(wrapper: string, named: Record<string, JsonValue>): Record<string, JsonValue> {
  return Object.fromEntries(Object.entries(named).map(([key, value]) => [`${wrapper}_${key}`, value]));
}
