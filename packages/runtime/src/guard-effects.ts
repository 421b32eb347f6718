import { fileUse, groundWords, toolEffects } from "@vigil/trace";
import type { CallEvent } from "./call-events.js";
import { GROUNDING_KEYS, pathLike, positionalsOf, programOf, strings, textsOf } from "./guard-arguments.js";
import { PACKAGE_RUNNERS, runnerWords, vigilCommand, vigilInvocation } from "./guard-vigil.js";

/**
 * What an event may do to which path: the guard's model of the programs and tools it knows (what
 * they write, delete, move, link, read), of the commands their options run, and of a program it
 * has no model of (given its paths, it may do anything to them). What a tool's options write,
 * delete or run is grounding's catalog's ({@link toolEffects}), beside the roles it gives them, and
 * so is what the programs that treat every operand alike do with them ({@link fileUse}: read them
 * only, use no file, or delete them whole).
 */

/** What an event may do to a path. */
export type Effect = "write" | "delete" | "move" | "link" | "chmod" | "read" | "use";

/** What an event does to the paths its words name. */
export interface PathEffect {
  readonly effect: Effect;
  readonly words: readonly string[];
  /** Whatever the word names, the tree under it is affected (a recursive delete, a move). */
  readonly tree: boolean;
  /** The sources written into the word when it is a directory (`cp SRC… DEST`). */
  readonly into?: readonly string[];
  /** Texts that may hold paths anywhere in them (code, a statement): a mention is enough. */
  readonly texts?: readonly string[];
  /** For a tree effect, the name patterns it is limited to (`find -name`), when it is. */
  readonly names?: readonly string[];
  /** Whether what bears such a name is affected alone (`-delete`) or with all it holds (`-exec rm -rf {}`). */
  readonly namesReach?: "self" | "tree";
  /** The program is one the guard has no model of: what it does with its words is not known. */
  readonly opaque?: boolean;
}

/** What `find` looks through, for the commands it runs on what it finds (`-exec rm {} ;`). */
export interface FindScope {
  readonly roots: readonly string[];
  /** The name patterns every entry it acts on bears; undefined when not limited (`!`, `-o`). */
  readonly names?: readonly string[];
}

/** The effects of one event on paths, from its action and its arguments' roles (the grounding catalog's). */
export function effectsOf(event: CallEvent, find: FindScope | undefined): PathEffect[] {
  const effects = ownEffects(event);
  const a = event.args;
  // `time -o FILE CMD` (the program, not Bash's keyword) writes its report to FILE.
  if (a["time_output"] !== undefined) effects.push({ effect: "write", words: strings(a["time_output"]), tree: false });
  // Options that write files or delete them, as grounding's catalog has them. An option grounding
  // does not know is `key: true`, with its value among the other words: then each of those is taken as its value.
  const table = toolEffects(event.action.split(" ")[0]!);
  if (table !== undefined && !effects.some((effect) => effect.opaque === true)) {
    const valuesOf = (keys: readonly string[] = []) => keys.flatMap((key) => (a[key] === true ? textsOf(a) : strings(a[key])));
    effects.push({ effect: "write", words: valuesOf(table.writes), tree: false }, { effect: "write", words: valuesOf(table.writesUnder), tree: true });
    if ((table.deletes ?? []).some((key) => a[key] !== undefined)) effects.push({ effect: "delete", words: textsOf(a), tree: true });
  }
  // A command `find` runs on what it finds: `{}` is each path under find's roots, and when find
  // looks only for names (`-name N`), only what bears such a name, with all it holds.
  if (find === undefined || !strings(a["via"]).includes("find")) return effects;
  return effects.flatMap((effect) => {
    const exact = effect.words.filter((word) => word === "{}");
    const words = effect.words.flatMap((word) => (word === "{}" && find.names !== undefined ? [] : word.includes("{}") ? find.roots.map((root) => word.replace("{}", `${root}/$FOUND`)) : [word]));
    const named: PathEffect[] = exact.length > 0 && find.names !== undefined ? [{ ...effect, words: find.roots, tree: true, names: find.names, namesReach: "tree" }] : [];
    return [{ ...effect, words }, ...named];
  });
}

/** What `find` looks through and, when it is limited to names, which. */
export function findScope(event: CallEvent): FindScope {
  const a = event.args;
  const paths = strings(a["path"]);
  const roots = paths.filter((path) => !["!", ",", "(", ")"].includes(path));
  // `!`, `-not`, `-o`, `-or` and `,` (grounding reads `-not` and `-or` as letters, `o` among them):
  // the entries acted on need not bear the names given.
  const limited = roots.length === paths.length && a["o"] === undefined && strings(a["name"]).length > 0;
  return { roots: roots.length > 0 ? roots : ["."], ...(limited ? { names: strings(a["name"]) } : {}) };
}

export function ownEffects(event: CallEvent): PathEffect[] {
  const a = event.args;
  const action = event.action;
  const flag = (...keys: string[]) => keys.some((key) => a[key] === true);
  const all = (...keys: string[]) => keys.flatMap((key) => strings(a[key]));
  const positionals = () => positionalsOf(a);
  // `… | xargs rm`: more paths come from standard input, and may be any.
  const fromInput = flag("stdin_arguments") ? ["$STDIN"] : [];
  const e = (effect: Effect, words: string[], tree = false, more: Partial<PathEffect> = {}): PathEffect => ({ effect, words, tree, ...more });
  const recursive = flag("recursive", "archive");
  // A file a redirection or an argument opens is an event of its own (`read`, `write`, with the
  // path): never taken for the program of that name (`read` the builtin reads no file).
  const opensAFile = typeof a["redirection"] === "string" || typeof a["by"] === "string";
  // A program that changes no file and reads no file's content (`echo "$f"`, `ls`): `cd` is followed apart.
  if (!opensAFile && fileUse(programOf(event)) === "no-files") return [];
  switch (action) {
    case "write":
      return [e("write", all("path"))];
    case "read":
      return [e("read", all("path"))];
    case "rm":
      return [e("delete", [...all("target"), ...fromInput], recursive)];
    case "rmdir":
    case "unlink":
    case "shred":
      return [e("delete", [...all("target"), ...positionals(), ...fromInput])];
    case "mv": {
      const { sources, destinations } = copyOperands(a);
      return [e("move", [...sources, ...fromInput], true), e("write", destinations, false, { into: [...sources, ...fromInput] })];
    }
    case "cp":
    case "scp":
    case "rsync": {
      const { sources, destinations } = copyOperands(a);
      const local = (word: string) => action === "cp" || !/^[^/]*:/.test(word);
      const effects = [e("write", [...destinations.filter(local), ...fromInput], recursive, { into: sources }), e("read", sources.filter(local), recursive)];
      // `cp -l` and `cp -s` make links to the sources: another name to write them by.
      if (action === "cp" && flag("l", "link", "s", "symbolic_link")) effects.push(e("link", sources, recursive));
      if (action === "rsync" && Object.keys(a).some((key) => /^(delete|del)(_|$)/.test(key))) effects.push(e("delete", destinations.filter(local), true));
      if (action === "rsync" && flag("remove_source_files")) effects.push(e("delete", sources.filter(local), true));
      return effects;
    }
    case "install": {
      // `install SRC… DIR` and `install -t DIR SRC…`: each word may be the directory written into.
      const words = [...positionals(), ...all("target_directory", "t")];
      return [e("write", words, false, { into: words })];
    }
    case "ln":
      return [e("link", [...all("target", "link"), ...fromInput], true)];
    case "chmod":
    case "chown":
      return [e("chmod", [...all("path"), ...fromInput], true)];
    case "chgrp":
    case "chattr":
    case "setfacl":
      return [e("chmod", [...positionals(), ...fromInput], true)];
    case "touch":
    case "mkdir":
    case "tee":
      return [e("write", [...all("path"), ...fromInput])];
    case "truncate":
    case "mkfifo":
      return [e("write", [...positionals(), ...fromInput])];
    case "sed": {
      // The script itself may write a file (`w FILE`) or run a command (`e CMD`): a mention counts.
      const script = e("use", [], false, { texts: all("script") });
      return a["in_place"] !== undefined || a["i"] !== undefined ? [e("write", [...all("path"), ...fromInput]), script] : [e("read", all("path")), script];
    }
    case "sort":
      return [e("write", all("output")), e("read", all("path"))];
    case "uniq":
      return [e("write", all("output")), e("read", all("input"))];
    case "curl":
      return [e("write", all("output"))];
    case "grep":
    case "egrep":
    case "fgrep":
    case "rg":
    case "ag":
      // A search reads the files it is given, and a recursive one what the directories given hold.
      return [e("read", pathLike(a), action === "rg" || action === "ag" || flag("recursive", "r", "R", "d"), { texts: textsOf(a) })];
    case "wget":
      return [e("write", all("output")), e("write", all("directory"), true)];
    case "tar": {
      // Old-style options (`tar xzf A`): the first word is the letters, without a dash.
      const words = all("path");
      const letters = words[0] !== undefined && /^[A-Za-z]+$/.test(words[0]) && /[xtcru]/.test(words[0]) ? words[0] : "";
      const create = flag("create") || /[cru]/.test(letters);
      const archive = all("archive").length > 0 ? all("archive") : letters.includes("f") && words[1] !== undefined ? [words[1]] : [];
      const extract = flag("extract", "x", "get") || letters.includes("x");
      const toOutput = flag("O", "to_stdout") || letters.includes("O");
      return [
        ...(create ? [e("write", archive), e("read", words.filter((word) => word !== letters && !archive.includes(word)), true)] : []),
        // Extracting writes anywhere under its directory: whatever the archive holds.
        ...(extract && !toOutput ? [e("write", all("directory").length > 0 ? all("directory") : ["."], true)] : []),
      ];
    }
    case "unzip":
      // Listing, testing, or extracting to standard output writes no file.
      return flag("l", "t", "v", "Z", "p", "z") ? [] : [e("write", all("directory").length > 0 ? all("directory") : ["."], true)];
    case "patch": {
      // `patch FILE [PATCH]` writes FILE; otherwise (`patch -p1 < x.diff`, `-i`, `-d DIR`) whatever
      // files the patch names, anywhere under its directory.
      if (flag("dry_run")) return [];
      const named = positionals().length >= 1 && positionals().length <= 2 && !flag("i", "input", "d", "directory", "o", "output");
      return named ? [e("write", positionals().slice(0, 1))] : [e("write", [".", ...positionals()], true)];
    }
    case "dd":
      return [e("write", all("operand").flatMap((o) => (o.startsWith("of=") ? [o.slice(3)] : []))), e("read", all("operand").flatMap((o) => (o.startsWith("if=") ? [o.slice(3)] : [])))];
    case "find": {
      // `find R -name N -delete` deletes what is named N under R: with a name, a protected path is
      // at stake only when its name (or a name its directory may hold) matches. `-fprint FILE` and
      // `-fls FILE` write FILE (grounding reads these words as letters).
      const scope = findScope(event);
      const writes = [["f", "p", "r", "i", "n", "t"], ["f", "l", "s"]].some((letters) => letters.every((letter) => a[letter] === true));
      return [
        ...(flag("delete") ? [e("delete", [...scope.roots], true, { ...(scope.names !== undefined ? { names: scope.names } : {}), namesReach: "self" })] : []),
        ...(writes ? [e("write", all("path"))] : []),
      ];
    }
    case "git clean": {
      if (flag("n", "dry_run")) return [];
      // Its paths limit it (`git clean -fd build`); `-e PATTERN`, taken as one of them, only adds to what is checked.
      const paths = [...all("target", "exclude", "e"), ...positionals()];
      return [e("delete", paths.length > 0 ? paths : ["."], true)];
    }
    case "git rm":
      // `--cached` removes from the index only.
      return flag("cached") ? [] : [e("delete", all("path"), recursive)];
    case "git mv":
      return [e("move", positionals(), true)];
    case "git checkout":
    case "git restore":
      // With paths, these rewrite the files: `git checkout -- .` rewrites the whole tree (a word
      // that names no file, a branch, names no protected path either). `--staged` alone rewrites the index.
      if (action === "git restore" && flag("staged", "S") && !flag("worktree", "W")) return [];
      return [e("write", [...all("target"), ...positionals()], true)];
    case "git reset":
      // With paths, `git reset` rewrites the index only; without, `--hard` brings files back from
      // history, which the guard does not read (see "What it cannot see").
      return [];
    case "git stash":
      return flag("u", "include_untracked", "all", "a") ? [e("delete", ["."], true)] : [];
    case "git apply":
    case "git am":
      // A patch writes whatever files it names: anywhere under the repository.
      return flag("check", "stat", "numstat", "summary", "cached") ? [] : [e("write", ["."], true)];
    case "git config":
      // `git config --file F` writes F; a value may be a command Git runs later (`core.fsmonitor`).
      return [e("write", [...positionals(), ...all("file")], false, { texts: positionals() })];
    case "Write":
    case "Edit":
    case "MultiEdit":
      return [e("write", all("file_path"))];
    case "NotebookEdit":
      return [e("write", all("notebook_path"))];
    case "Read":
    case "NotebookRead":
      return [e("read", all("file_path", "notebook_path"))];
    case "write_file":
    case "edit_file":
    case "create_directory":
      return [e("write", all("path"))];
    case "move_file":
      return [e("move", all("source"), true), e("write", all("destination"))];
  }
  if (fileUse(action) === "reads-only") return [e("read", pathLike(a), false, { texts: textsOf(a) })];
  const vigil = vigilCommand(event);
  if (vigil !== undefined && vigilInvocation(event) === undefined) {
    // Checking and explaining read the files they are given; `fmt --write` rewrites them, and
    // `check --html F` and `--sarif F` write F.
    const reports = ["html", "sarif"].flatMap((key) => (a[key] === true ? vigil.rest : strings(a[key])));
    const rewrites = vigil.subcommand === "fmt" && flag("w", "write");
    return [e(rewrites ? "write" : "read", vigil.rest), e("write", reports)];
  }
  const sqlite = sqliteReads(event);
  if (sqlite !== undefined) return sqlite;
  const deleted = deleterOperands(event);
  if (deleted !== undefined) return [e("delete", deleted, true)];
  const applet = multicallApplet(event);
  if (applet !== undefined) return [...ownEffects(applet), opaqueUse(event)];
  return [opaqueUse(event)];
}

/**
 * Any other program or tool (an interpreter, a database client, `vigilc`, an MCP tool): a
 * protected path among its arguments, or mentioned in its code, may be changed by it.
 */
export function opaqueUse(event: CallEvent): PathEffect {
  const a = event.args;
  const grounded = a["program"] !== undefined;
  // awk's code is grounded under the key `program` (its catalog role), where other events name their program.
  const code = programOf(event) === "awk" ? strings(a["program"]) : [];
  return { effect: "use", words: pathLike(a), tree: false, ...(grounded ? { texts: [...textsOf(a), ...code] } : {}), opaque: true };
}

/** The operands of a program that deletes them whole (`rimraf`, `trash`), run directly or by a package runner (`npx rimraf dist`), or undefined. */
function deleterOperands(event: CallEvent): string[] | undefined {
  const program = programOf(event);
  if (fileUse(program) === "deletes-operands") return [...textsOf(event.args), ...(event.args["stdin_arguments"] === true ? ["$STDIN"] : [])];
  if (!PACKAGE_RUNNERS.has(program)) return undefined;
  const words = runnerWords(event);
  const at = words.findIndex((word) => fileUse(word.replace(/@[^/]*$/, "")) === "deletes-operands");
  return at < 0 ? undefined : words.slice(at + 1);
}

/** `busybox rm -rf x`, `toybox rm …`: the applet's own event, as grounding would make it. */
function multicallApplet(event: CallEvent): CallEvent | undefined {
  if (!["busybox", "toybox"].includes(programOf(event))) return undefined;
  const [applet, ...operands] = positionalsOf(event.args);
  if (applet === undefined) return undefined;
  // Grounding kept the options apart from the words: they are put back before the operands.
  const options = Object.entries(event.args).flatMap(([key, value]) =>
    GROUNDING_KEYS.has(key) || key === "env" || /^arg[0-9]+$/.test(key) ? [] : value === true ? [key.length === 1 ? `-${key}` : `--${key.replace(/_/g, "-")}`] : strings(value).map((text) => `--${key.replace(/_/g, "-")}=${text}`),
  );
  const grounded = groundWords([applet, ...options, ...operands]);
  return { action: grounded.action, args: grounded.args };
}

/**
 * The sources and the destinations of `cp`, `mv`, `scp`, `rsync`. Grounding gives the directory of
 * `-t DIR` the role of the last operand (`dest`), so when there are several, each may be the
 * directory the others go into.
 */
function copyOperands(a: CallEvent["args"]): { sources: string[]; destinations: string[] } {
  const sources = strings(a["source"]);
  const destinations = strings(a["dest"]);
  if (destinations.length <= 1) return { sources, destinations };
  return { sources: [...sources, ...destinations], destinations };
}

/** Dot-commands of SQLite's shell that only read or print. */
const SQLITE_READING_COMMANDS = new Set([
  "tables", "schema", "fullschema", "indexes", "indices", "databases", "dbinfo", "dump", "headers", "header", "mode", "show", "width",
  "nullvalue", "separator", "print", "timer", "stats", "help", "quit", "exit", "eqp", "changes", "echo", "bail",
]);

/** SQLite's shell options that change nothing but how it prints (grounding reads them as letters). */
const SQLITE_READING_OPTIONS = ["readonly", "header", "noheader", "csv", "json", "line", "list", "column", "box", "table", "markdown", "html", "tabs", "quote", "ascii", "bail", "batch", "echo", "safe", "nofollow"];

/**
 * `sqlite3 DB 'select …'`: SQLite's shell given the database and statements that only read it (a
 * `SELECT`, and dot-commands that print), so reading the database stays allowed. Anything else it
 * is given (another statement, an option that runs a file or a command, statements read from
 * standard input) leaves it a program the guard cannot follow.
 */
function sqliteReads(event: CallEvent): PathEffect[] | undefined {
  if (!["sqlite3", "sqlite"].includes(programOf(event))) return undefined;
  const letters = new Set(SQLITE_READING_OPTIONS.flatMap((option) => [...option]));
  const options = Object.entries(event.args).filter(([key]) => !GROUNDING_KEYS.has(key) && key !== "env" && !/^arg[0-9]+$/.test(key));
  if (!options.every(([key, value]) => value === true && (SQLITE_READING_OPTIONS.includes(key) || (key.length === 1 && letters.has(key))))) return undefined;
  const [database, ...statements] = positionalsOf(event.args);
  if (database === undefined || statements.length === 0 || !statements.every(readsOnly)) return undefined;
  return [{ effect: "read", words: [database], tree: false }];
}

/** Whether SQLite's shell input only reads: dot-commands that print, and `SELECT` statements. */
function readsOnly(input: string): boolean {
  const sql: string[] = [];
  for (const line of input.split("\n")) {
    const trimmed = line.trim();
    if (trimmed.startsWith(".")) {
      if (!SQLITE_READING_COMMANDS.has(trimmed.slice(1).split(/\s+/)[0]!.toLowerCase())) return false;
    } else sql.push(line);
  }
  // Quoted strings and comments are not statements; what is left must only select.
  const code = sql
    .join("\n")
    .replace(/'(?:[^']|'')*'|"(?:[^"]|"")*"|`[^`]*`|\[[^\]]*\]/g, "''")
    .replace(/--[^\n]*|\/\*[\s\S]*?(\*\/|$)/g, " ");
  if (/['"`[]/.test(code.replace(/''/g, ""))) return false;
  const statements = code.split(";").map((statement) => statement.trim()).filter((statement) => statement !== "");
  const changes = /\b(insert|update|delete|drop|create|alter|attach|detach|vacuum|pragma|reindex|analyze|begin|commit|rollback|savepoint|release|writefile|edit|load_extension|readfile|fts3_tokenizer)\b|\breplace\s+into\b/i;
  return statements.every((statement) => /^(select|with|values|explain)\b/i.test(statement) && !changes.test(statement));
}

/** The commands an event's options run (`git -c core.fsmonitor=CMD`, `tar --to-command=CMD`, `rsync -e CMD`). */
export function optionCommands(event: CallEvent): string[] {
  const table = toolEffects(event.action.split(" ")[0]!);
  const commands = (table?.executes ?? []).flatMap((key) => (event.args[key] === true ? textsOf(event.args) : strings(event.args[key])));
  // `git config core.fsmonitor CMD` sets a command Git runs later.
  if (event.action === "git config") commands.push(...positionalsOf(event.args).slice(1));
  return commands;
}

/**
 * The command line `trap` is given to run later (`trap 'rm -f "$tmp"' EXIT`), or undefined: with a
 * single operand, `-` or an empty one, it resets or ignores signals; `-p` and `-l` print.
 */
export function trapCommand(event: CallEvent): string | undefined {
  if (programOf(event) !== "trap") return undefined;
  const operands = positionalsOf(event.args);
  if (operands.length < 2 || operands[0] === "-" || operands[0]!.trim() === "") return undefined;
  return operands[0];
}
