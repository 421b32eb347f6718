import { dirname, isAbsolute, join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import type { Diagnostic } from "@vigil/diagnostics";
import { isJsonObject, shellToolNames, type JsonValue } from "@vigil/trace";
import type { CallEvent } from "./call-events.js";
import { childWord, mayBeIn, mayHold, mayName, pathWord, realPath, type PathWord } from "./guard-paths.js";

/**
 * The guard: what no policy can forget. The agent being policed runs commands as the same user as
 * Vigil, so it could delete the enforcement database (and with it the run's state: an earlier
 * secret read forgotten), rewrite the policy, remove the hook from Claude Code's settings, or run
 * Vigil itself to forge an event. The guard refuses such a call before it runs, whatever the
 * policy says, in every enforcement entry point. It looks at the call's events as grounded (a
 * shell call is the commands it runs, with their redirections), so it sees `rm`, `mv`, `>`, `sed
 * -i`, `ln`, `chmod`, `git clean`, `find -delete`, a database client or `vigilc` given a protected
 * path, and the Write and Edit tools, with relative paths taken against the working directory
 * (and a `cd` earlier on the same line), and a word the shell would expand (a glob, a variable, a
 * command substitution) taken as every path it may become.
 *
 * It also refuses what cannot be grounded (`unknown_command`: a command line too complex to parse,
 * a command or script known only when it runs), a shell command line that does not parse, and one
 * too long to be read whole: what such a call runs cannot be known, so it is not let through.
 *
 * What it cannot see: code an interpreter builds while it runs (a Python script that assembles a
 * path and deletes it), the content of an archive or a script file. That is what running the
 * enforcement as another OS user closes (docs/enforcement.md, "Threat model").
 */

/** A path the guard protects. */
export interface ProtectedPath {
  /** Absolute. */
  readonly path: string;
  /** What it is, for the refusal: "the enforcement database". */
  readonly what: string;
  /** Everything under it is protected too (a directory). */
  readonly tree?: boolean;
  /** Reading it is refused too (a token). */
  readonly secret?: boolean;
  /** For a directory, the names of what it holds, when they are known ("*": any). */
  readonly contents?: readonly string[];
}

export interface GuardOptions {
  /** Paths protected besides those every guard protects (the database, the policy, Vigil's code). */
  readonly protect?: readonly ProtectedPath[];
  /**
   * Protect Claude Code's settings files (`.claude/settings.json`, `.claude/settings.local.json`)
   * of the working directory, the directories above it and the home directory: they install the hook.
   */
  readonly claudeSettings?: boolean;
  /** What a call that cannot be grounded gets: refused (the default) or a person's approval. */
  readonly unknownCommands?: "block" | "ask";
  /** The home directory (`~`); by default the user's. */
  readonly home?: string;
}

export type GuardRule = "protected_path" | "vigil_itself" | "unknown_command";

/** Why the guard refuses a call. */
export interface GuardFinding {
  readonly guard: GuardRule;
  readonly response: "block" | "ask";
  /** The index of the call's event at fault (0: the call's own event). */
  readonly event: number;
  /** For `protected_path`: the protected path at stake, what it is, and what the event may do to it. */
  readonly path?: string;
  readonly what?: string;
  readonly effect?: Effect;
  readonly message: string;
}

/** What an event may do to a path. */
export type Effect = "write" | "delete" | "move" | "link" | "chmod" | "read" | "use";

export interface GuardContext {
  /** The working directory the call runs in; undefined when not known. */
  readonly cwd?: string;
  /** What reading the call noted (T0011: a command line that does not parse; T0014: an argument cut). */
  readonly notes?: readonly Diagnostic[];
}

/** The directory of Vigil's own code: the folder that holds this package and its siblings. */
export function vigilCodeDirectory(): string {
  // dist/guard.js → the package → the folder of the packages (node_modules/@vigil, or packages/).
  return dirname(dirname(dirname(realPath(fileURLToPath(import.meta.url)))));
}

/** Vigil's own code, which the hook runs: its packages, and the `vigilc` command that starts it. */
export function vigilCodePaths(): ProtectedPath[] {
  const code = vigilCodeDirectory();
  return [
    { path: code, what: "Vigil's own code", tree: true },
    { path: join(code, "..", ".bin", "vigilc"), what: "the `vigilc` command" },
    { path: join(code, "..", "node_modules", ".bin", "vigilc"), what: "the `vigilc` command" },
  ];
}

/** The database's files: the file, its write-ahead log, its shared memory and a rollback journal. */
export function databaseFiles(database: string): ProtectedPath[] {
  if (database === ":memory:") return [];
  const path = resolve(database);
  const files: ProtectedPath[] = ["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${path}${suffix}`, what: "the enforcement database" }));
  // A directory of Vigil's own (`.vigil`) is protected whole: the database's files and the token live there.
  if (posix.basename(dirname(path)) === ".vigil") {
    const name = posix.basename(path);
    files.push({ path: dirname(path), what: "Vigil's state directory", tree: true, contents: [name, `${name}-wal`, `${name}-shm`, `${name}-journal`, "*.token", "*.db", "*.db-*"] });
  }
  return files;
}

export class Guard {
  private readonly entries: readonly ProtectedPath[];
  private readonly home: string;
  private readonly claudeSettings: boolean;
  private readonly unknownResponse: "block" | "ask";

  constructor(entries: readonly ProtectedPath[], options: GuardOptions = {}) {
    const all = [...entries, ...(options.protect ?? [])];
    // A protected path is compared as written and as its real path (a symbolic link to it is it).
    const seen = new Set<string>();
    const expanded: ProtectedPath[] = [];
    for (const entry of all) {
      for (const path of [resolve(entry.path), realPath(resolve(entry.path))]) {
        const key = `${path}\u0000${entry.tree === true}\u0000${entry.secret === true}`;
        if (seen.has(key)) continue;
        seen.add(key);
        expanded.push({ ...entry, path });
      }
    }
    this.entries = expanded;
    this.home = options.home ?? process.env["HOME"] ?? "/";
    this.claudeSettings = options.claudeSettings === true;
    this.unknownResponse = options.unknownCommands ?? "block";
  }

  /** What the guard protects, for the audit log and `--help`. */
  get protectedPaths(): readonly ProtectedPath[] {
    return this.entries;
  }

  /** The findings against a call's events; empty when the guard lets it through. */
  check(events: readonly CallEvent[], context: GuardContext = {}): GuardFinding[] {
    const findings: GuardFinding[] = [];
    const notes = context.notes ?? [];
    const entries = this.claudeSettings ? [...this.entries, ...claudeSettingsEntries(context.cwd, this.home)] : this.entries;
    // The directories the commands may run in: a `cd` adds one (the shell may or may not be in it
    // afterwards: a subshell's `cd` ends with the subshell), an unknown one adds "not known".
    const cwds = new Set<string | undefined>([context.cwd !== undefined && isAbsolute(context.cwd) ? context.cwd : undefined]);
    let findRoots: readonly string[] = [];
    events.forEach((event, index) => {
      const found = (finding: Omit<GuardFinding, "event">) => findings.push({ ...finding, event: index });
      if (index === 0 && shellToolNames.includes(event.action)) {
        // The call itself: a shell command line that could not be read whole is not known.
        const unparsed = notes.find((n) => n.code === "T0011");
        if (unparsed !== undefined) found(this.unknown(`its command line does not parse (${unparsed.message.replace(/^.*not a valid shell command line \(|\); it is not grounded$/g, "")}), so what it runs cannot be known`));
        if (notes.some((n) => n.code === "T0014")) found(this.unknown("an argument is too long to be read whole, so what it runs cannot be known"));
        return;
      }
      if (event.action === "unknown_command") {
        const reason = typeof event.args["reason"] === "string" ? event.args["reason"] : "unknown";
        const text = typeof event.args["text"] === "string" ? `: \`${event.args["text"].slice(0, 120)}\`` : "";
        found(this.unknown(`it runs a command that cannot be known before it runs (${reason}${text})`));
        return;
      }
      const program = programOf(event);
      if (program === "cd" || program === "pushd" || program === "popd") {
        const target = strings(event.args["path"])[0];
        if (program === "cd" && target === undefined) cwds.add(this.home);
        else if (target === undefined || target === "-" || program !== "cd") cwds.add(undefined);
        else for (const cwd of [...cwds]) cwds.add(exactOrUnknown(pathWord(target, cwd, this.home)));
        return;
      }
      if (program === "shopt" || program === "set") {
        // Globbing options (dotglob, nullglob) change what a pattern matches: take patterns as any text.
        cwds.add(undefined);
      }
      const itself = vigilInvocation(event);
      if (itself !== undefined) found({ guard: "vigil_itself", response: "block", message: `it runs Vigil itself (${itself}), which could forge events or change Vigil's state` });
      // Per command: `git -C DIR`, `tar -C DIR`, `make -C DIR`, `env -C DIR` run in another directory.
      const own = strings(event.args["directory"] ?? event.args["env_directory"])[0];
      const here = own !== undefined ? new Set([...cwds].map((cwd) => exactOrUnknown(pathWord(own, cwd, this.home)))) : cwds;
      for (const effect of effectsOf(event, findRoots)) {
        for (const cwd of here) {
          const hit = this.hit(effect, cwd, entries);
          if (hit !== undefined) {
            found({ guard: "protected_path", response: "block", path: hit.path, what: hit.what, effect: effect.effect, message: describeHit(event, effect, hit) });
            break;
          }
        }
      }
      if (program === "find") findRoots = strings(event.args["path"]).length > 0 ? strings(event.args["path"]) : ["."];
    });
    // A program the guard has no model of (an interpreter, a client) may read its code from a
    // here-document or a here-string, which are not among its arguments: the command line itself
    // must not mention a protected path then.
    const shell = events[0];
    const command = shell !== undefined && shellToolNames.includes(shell.action) ? shell.args["command"] : undefined;
    if (typeof command === "string" && events.some((event, index) => index > 0 && unmodelled(event))) {
      for (const cwd of cwds) {
        const entry = entries.find((candidate) => mentions(command, candidate, cwd));
        if (entry !== undefined) {
          findings.push({ guard: "protected_path", response: "block", event: 0, path: entry.path, what: entry.what, effect: "use", message: `the command line mentions \`${entry.path}\`, ${entry.what}, and runs a program the guard cannot follow` });
          break;
        }
      }
    }
    // One finding per protected path and rule is enough to say why.
    const unique = new Map<string, GuardFinding>();
    for (const finding of findings) unique.set(`${finding.guard}\u0000${finding.path ?? finding.message}`, unique.get(`${finding.guard}\u0000${finding.path ?? finding.message}`) ?? finding);
    return [...unique.values()];
  }

  private unknown(why: string): Omit<GuardFinding, "event"> {
    return { guard: "unknown_command", response: this.unknownResponse, message: why };
  }

  /** The protected entry an effect may reach from `cwd`, if any. */
  private hit(effect: PathEffect, cwd: string | undefined, entries: readonly ProtectedPath[]): ProtectedPath | undefined {
    for (const word of effect.words) {
      const path = pathWord(word, cwd, this.home);
      const targets: PathWord[] = [path];
      // `cp a b DIR`, `mv a DIR`: DIR/a and DIR/b are written too.
      for (const source of effect.into ?? []) targets.push(childWord(path, pathWord(source, cwd, this.home)));
      for (const entry of entries) {
        if (effect.effect === "read" && entry.secret !== true) continue;
        for (const target of targets) {
          if (mayName(target, entry.path)) return entry;
          if (entry.tree === true && mayBeIn(target, entry.path)) return entry;
          // Deleting, moving, re-linking or changing the permissions of a directory does it to what it holds.
          if (effect.tree && mayHold(target, entry.path) && namedBy(effect.names, entry)) return entry;
        }
      }
    }
    // Code given to an interpreter, a database client's statement: a mention of a protected path.
    for (const text of effect.texts ?? []) {
      for (const entry of entries) {
        if (effect.effect === "read" && entry.secret !== true) continue;
        if (mentions(text, entry, cwd)) return entry;
      }
    }
    return undefined;
  }
}

/** What an event does to the paths its words name. */
interface PathEffect {
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
}

/** Programs and tools that read and never change a file they are given. */
const READ_ONLY = new Set([
  "cat", "head", "tail", "less", "more", "ls", "grep", "egrep", "fgrep", "rg", "ag", "wc", "diff", "cmp", "stat", "file", "du", "df",
  "sha256sum", "sha1sum", "md5sum", "cksum", "b2sum", "jq", "echo", "printf", "pwd", "which", "type", "realpath", "readlink", "dirname",
  "basename", "tree", "test", "[", "true", "false", "date", "read", "command", "nl", "od", "xxd", "hexdump", "strings", "column", "cut", "tr", "comm",
  "git status", "git diff", "git log", "git show", "git blame", "git ls-files", "git rev-parse", "git add", "git commit", "git fetch", "git remote",
  "git grep", "git describe", "git shortlog", "git config", "git push",
  // Claude Code's own tools that read, and the MCP filesystem server's.
  "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "Task", "ExitPlanMode", "BashOutput", "KillShell", "Skill", "SlashCommand",
  "read_file", "read_text_file", "read_media_file", "read_multiple_files", "list_directory", "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info", "list_allowed_directories",
]);

/** The effects of one event on paths, from its action and its arguments' roles (the grounding catalog's). */
function effectsOf(event: CallEvent, findRoots: readonly string[]): PathEffect[] {
  const a = event.args;
  const action = event.action;
  const flag = (key: string) => a[key] === true;
  const all = (...keys: string[]) => keys.flatMap((key) => strings(a[key]));
  const positionals = () => Object.keys(a).filter((key) => /^arg[0-9]+$/.test(key)).flatMap((key) => strings(a[key]));
  // `find … -exec rm {} ;`: `{}` is each path find finds, under its roots.
  const found = (words: string[]) => (strings(a["via"]).includes("find") ? words.flatMap((w) => (w.includes("{}") ? findRoots.map((root) => w.replace("{}", `${root}/$FOUND`)) : [w])) : words);
  // `… | xargs rm`: more paths come from standard input, and may be any.
  const fromInput = flag("stdin_arguments") ? ["$STDIN"] : [];
  const e = (effect: Effect, words: string[], tree = false, more: Partial<PathEffect> = {}): PathEffect => ({ effect, words, tree, ...more });
  const recursive = flag("recursive") || flag("archive");
  switch (action) {
    case "write":
      return [e("write", all("path"))];
    case "read":
      return [e("read", all("path"))];
    case "rm":
      return [e("delete", [...found(all("target")), ...fromInput], recursive)];
    case "rmdir":
    case "unlink":
    case "shred":
      return [e("delete", [...found([...all("target"), ...positionals()]), ...fromInput])];
    case "mv":
      return [e("move", [...found(all("source")), ...fromInput], true), e("write", all("dest"), false, { into: all("source") })];
    case "cp":
    case "scp":
    case "rsync": {
      const dest = all("dest").filter((d) => action === "cp" || !/^[^/]*:/.test(d));
      const effects = [e("write", [...dest, ...fromInput], recursive, { into: all("source") })];
      if (action === "rsync" && flag("delete")) effects.push(e("delete", dest, true));
      return effects;
    }
    case "install":
      return [e("write", [...positionals(), ...all("target_directory", "t")], false)];
    case "ln":
      return [e("link", [...all("target", "link"), ...fromInput], true)];
    case "chmod":
    case "chown":
      return [e("chmod", [...found(all("path")), ...fromInput], true)];
    case "chgrp":
    case "chattr":
    case "setfacl":
      return [e("chmod", [...positionals(), ...fromInput], true)];
    case "touch":
    case "mkdir":
    case "tee":
      return [e("write", [...found(all("path")), ...fromInput])];
    case "truncate":
    case "mkfifo":
      return [e("write", [...positionals(), ...fromInput])];
    case "sed":
      return flag("in_place") || a["i"] !== undefined ? [e("write", [...found(all("path")), ...fromInput])] : [];
    case "sort":
      return [e("write", all("output"))];
    case "uniq":
      return [e("write", all("output"))];
    case "curl":
      return [e("write", all("output"))];
    case "wget":
      return [e("write", all("output")), e("write", all("directory"), true)];
    case "tar": {
      // Old-style options (`tar xzf A`): the first word is the letters, without a dash.
      const words = all("path");
      const letters = words[0] !== undefined && /^[A-Za-z]+$/.test(words[0]) && /[xtcru]/.test(words[0]) ? words[0] : "";
      const create = flag("create") || /[cru]/.test(letters);
      const archive = all("archive").length > 0 ? all("archive") : letters.includes("f") && words[1] !== undefined ? [words[1]] : [];
      return [
        ...(create ? [e("write", archive)] : []),
        // Extracting writes anywhere under its directory: whatever the archive holds.
        ...(flag("extract") || flag("x") || letters.includes("x") ? [e("write", all("directory").length > 0 ? all("directory") : ["."], true)] : []),
      ];
    }
    case "unzip":
      return [e("write", all("directory").length > 0 ? all("directory") : ["."], true)];
    case "dd":
      return [e("write", all("operand").flatMap((o) => (o.startsWith("of=") ? [o.slice(3)] : [])))];
    case "find":
      // `find R -name N -delete` deletes what is named N under R: with a name, a protected path is
      // at stake only when its name (or a name its directory may hold) matches.
      return flag("delete") ? [e("delete", all("path").length > 0 ? all("path") : ["."], true, { names: all("name") })] : [];
    case "git clean":
      return [e("delete", all("target", "arg1").length > 0 ? all("target", "arg1") : ["."], true)];
    case "git rm":
      return [e("delete", all("path"), recursive)];
    case "git mv":
      return [e("move", positionals(), true)];
    case "git checkout":
    case "git restore":
    case "git reset":
      // With paths, these rewrite the files: `git checkout -- .` rewrites the whole tree.
      return [e("write", [...all("target"), ...positionals()].filter((t) => t === "." || t.includes("/") || t.startsWith(".")), true)];
    case "git stash":
      return flag("u") || flag("include_untracked") || flag("all") || flag("a") ? [e("delete", ["."], true)] : [];
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
  if (READ_ONLY.has(action)) return [e("read", pathLike(a), false, { texts: textsOf(a) })];
  if (programOf(event) === "vigilc" && vigilInvocation(event) === undefined) {
    // Checking and explaining read the files they are given; `fmt --write` rewrites them.
    const files = positionals().slice(1);
    return strings(a["arg1"])[0] === "fmt" && (flag("w") || flag("write")) ? [e("write", files)] : [e("read", files)];
  }
  // Any other program or tool (an interpreter, a database client, `vigilc`, an MCP tool): a
  // protected path among its arguments, or mentioned in its code, may be changed by it.
  const grounded = event.args["program"] !== undefined;
  return [e("use", pathLike(a), false, grounded ? { texts: textsOf(a) } : {})];
}

/** Whether the guard has no model of what the event's program does with its input (an interpreter, a client). */
function unmodelled(event: CallEvent): boolean {
  return effectsOf(event, []).some((effect) => effect.effect === "use") && event.args["program"] !== undefined;
}

/** The argument values that may be paths: the strings of the arguments, but the grounding's own keys. */
function pathLike(args: { readonly [key: string]: JsonValue }): string[] {
  const found: string[] = [];
  const visit = (value: JsonValue, depth: number) => {
    if (depth > 8) return;
    if (typeof value === "string") {
      if (value !== "" && !/[\n\r]/.test(value)) found.push(value);
    } else if (Array.isArray(value)) value.forEach((item) => visit(item, depth + 1));
    else if (isJsonObject(value)) Object.values(value).forEach((item) => visit(item, depth + 1));
  };
  for (const [key, value] of Object.entries(args)) if (!GROUNDING_KEYS.has(key)) visit(value, 0);
  return found;
}

/**
 * Whether an effect limited to names (`find -name N`) may reach a protected entry: its own name
 * matches, or, for a directory, a name it may hold does (its `contents`; any name when not known).
 */
function namedBy(names: readonly string[] | undefined, entry: ProtectedPath): boolean {
  if (names === undefined || names.length === 0) return true;
  const candidates = [posix.basename(entry.path), ...(entry.tree === true ? (entry.contents ?? ["*"]) : [])];
  return names.some((name) => candidates.some((candidate) => candidate === "*" || mayName(pathWord(name, "/", "/"), `/${candidate}`)));
}

/** Texts in which a path may be mentioned anywhere: every string of a command's arguments. */
function textsOf(args: { readonly [key: string]: JsonValue }): string[] {
  const found: string[] = [];
  for (const [key, value] of Object.entries(args)) {
    if (GROUNDING_KEYS.has(key)) continue;
    for (const text of strings(value)) found.push(text);
  }
  return found;
}

/** Keys grounding adds that name programs, not paths. */
const GROUNDING_KEYS = new Set(["program", "via", "piped_from", "by", "argument", "redirection", "reason", "description"]);

/** Whether a text mentions a protected path: as written whole, or as its last two names (`.vigil/audit.db`). */
function mentions(text: string, entry: ProtectedPath, cwd: string | undefined): boolean {
  const path = entry.path;
  if (text.includes(path)) return true;
  const name = posix.basename(path);
  const parent = posix.basename(posix.dirname(path));
  if (name.startsWith(".") && entry.tree === true && new RegExp(`(^|[\\s'"\`/=:(])${escapeRegExp(name)}(/|$|[\\s'"\`)])`).test(text)) return true;
  if (parent !== "" && text.includes(`${parent}/${name}`)) return true;
  if (cwd !== undefined && path.startsWith(`${cwd}/`) && text.includes(path.slice(cwd.length + 1)) && path.slice(cwd.length + 1).includes("/")) return true;
  return false;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Claude Code's settings files that may install the hook, from the working directory up and in the home directory. */
function claudeSettingsEntries(cwd: string | undefined, home: string): ProtectedPath[] {
  const directories = new Set<string>([home]);
  if (cwd !== undefined && isAbsolute(cwd)) {
    let current = cwd;
    for (let depth = 0; depth < 64; depth++) {
      directories.add(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  return [...directories].flatMap((directory) =>
    ["settings.json", "settings.local.json"].map((name) => ({ path: join(directory, ".claude", name), what: "Claude Code's settings, which install Vigil's hook" })),
  );
}

/** The program an event runs (for a grounded command), or its action. */
function programOf(event: CallEvent): string {
  const program = event.args["program"];
  return typeof program === "string" ? posix.basename(program) : event.action;
}

/** Vigil's commands that change nothing: checking, formatting to standard output, explaining. */
const VIGIL_READ_ONLY = new Set(["check", "fmt", "explain", "signature", "lower", "help"]);

/**
 * How the event runs Vigil itself in a way that could change its state or forge an event (`vigilc
 * hook`, `npx vigilc serve`, `vigilc audit`…), or undefined. Checking a policy is fine.
 */
function vigilInvocation(event: CallEvent): string | undefined {
  const program = programOf(event);
  let subcommand: string | undefined;
  if (program === "vigilc" || program === "vigil-language-server") subcommand = strings(event.args["arg1"])[0];
  else if (event.action === "npx" || event.action === "npm exec" || event.action === "pnpm dlx" || event.action === "bunx") {
    const words = [...strings(event.args["package"]), ...strings(event.args["command"]), ...strings(event.args["argument"])];
    const index = words.findIndex((w) => /^(vigilc|@vigil\/cli)(@.*)?$/.test(w));
    if (index < 0) return undefined;
    subcommand = words[index + 1];
  } else return undefined;
  if (subcommand !== undefined && VIGIL_READ_ONLY.has(subcommand)) return undefined;
  return `\`vigilc${subcommand !== undefined ? ` ${subcommand}` : ""}\``;
}

function strings(value: JsonValue | undefined): string[] {
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value.filter((item): item is string => typeof item === "string");
  return [];
}

function exactOrUnknown(word: PathWord): string | undefined {
  if (!word.exact) return undefined;
  return word.tokens.map((t) => (t.kind === "text" ? t.text : "")).join("");
}

function describeHit(event: CallEvent, effect: PathEffect, entry: ProtectedPath): string {
  const verbs: Record<Effect, string> = {
    write: "may write",
    delete: "may delete",
    move: "may move",
    link: "may link to or replace",
    chmod: "may change the permissions of",
    read: "may read",
    use: "is given",
  };
  return `\`${programOf(event)}\` ${verbs[effect.effect]} \`${entry.path}\`, ${entry.what}${entry.tree === true ? " (protected with everything in it)" : ""}`;
}

/** The guard's findings in words, one per line, for a refusal's reason. */
export function describeFindings(findings: readonly GuardFinding[]): string[] {
  return findings.map((finding) => {
    const rule = finding.guard === "unknown_command" ? "guard.unknown_command" : finding.guard === "vigil_itself" ? "guard.vigil_itself" : "guard.protected_path";
    return `${rule} (${finding.response}): ${finding.message}`;
  });
}

/** The findings as the audit log keeps them. */
export function findingsJson(findings: readonly GuardFinding[]): JsonValue {
  return findings.map((f) => ({
    guard: f.guard,
    response: f.response,
    event: f.event,
    ...(f.path !== undefined ? { path: f.path } : {}),
    ...(f.effect !== undefined ? { effect: f.effect } : {}),
    message: f.message,
  }));
}
