import { existsSync, lstatSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, isAbsolute, join, posix, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import type { Diagnostic } from "@vigil/diagnostics";
import { evaluatedValueSafe, groundWords, isJsonObject, shellToolNames, type EvaluatedAs, type JsonValue } from "@vigil/trace";
import { readCall, type CallEvent } from "./call-events.js";
import {
  childWord,
  exactPath,
  fileIdentity,
  gitIgnores,
  gitMayBeRevision,
  gitRepository,
  gitTrackedAt,
  gitTrackedPaths,
  gitUnchanged,
  LOOKUP_UNITS,
  mayBeIn,
  mayHold,
  mayName,
  pathWord,
  realPath,
  sharedFileIdentity,
  spend,
  withinWork,
  WorkBudgetExceeded,
  type GitRepository,
  type PathToken,
  type PathWord,
  type WordContext,
} from "./guard-paths.js";

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
 * a command or script known only when it runs, text Bash evaluates as code that may hide a command
 * substitution: `$((x))` of a value not known to be a number, `set -x` with a PS4 not known to be
 * plain), a shell command line that does not parse, and one too long to be read whole: what such a
 * call runs cannot be known, so it is not let through. Where the shell's environment alone decides
 * (`$((N))` of an N the line does not set), the environment the hook is given settles it.
 *
 * Git's commands over a whole tree (`git clean`, `git checkout -- .`) are read against the
 * repository's index and ignore rules: what Git leaves alone (an ignored `.vigil/`, a tracked
 * settings file as the index has it) is not at stake.
 *
 * Where it cannot know, it takes the worst: a program it has no model of (an interpreter, a
 * database client) given or mentioning a protected path, a program the agent's user may have put
 * in place of the one its name says, a command an option runs (`git -c core.fsmonitor=CMD`) checked
 * as a command line of its own.
 *
 * What it cannot see: code an interpreter builds while it runs (a Python script that assembles a
 * path and deletes it), the content of an archive, a patch or a script file, what a package
 * manager's install scripts do, what a program it has no model of does to a directory it is given
 * (`make clean`, `npx some-tool .`), and files Git brings back from history (`git checkout BRANCH`,
 * `git reset --hard`). That is what running the enforcement as another OS user closes
 * (docs/enforcement.md, "Threat model").
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
  /**
   * How much work one check may do, in units of work (about one character compared; see
   * {@link GUARD_BUDGET}), before the call is refused as too large to check. Counted, not timed:
   * the answer does not depend on the machine's load.
   */
  readonly budget?: number;
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
  /**
   * The environment the call's shell starts with, as far as it is known (the hook's own: Claude
   * Code starts both from its environment, and its Bash tool also sources a snapshot of the user's
   * login shell, which may set a variable differently): a variable the line does not set reads as
   * its value here (`> "$TMPDIR/x"`). A variable it does not hold stays unknown as a path; where
   * Bash evaluates it as code (`$((N))`), it is unset, and so harmless.
   */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/** The directory of Vigil's own code: the folder that holds this package and its siblings. */
export function vigilCodeDirectory(): string {
  // dist/guard.js → the package → the folder of the packages (node_modules/@vigil, or packages/).
  return dirname(dirname(dirname(realPath(fileURLToPath(import.meta.url)))));
}

const codePaths = new Map<string, ProtectedPath[]>();

/**
 * Vigil's own code, which the hook runs: its packages, the `vigilc` command that starts it, the
 * packages its own depend on and the Node.js that runs it. Without any of them the hook cannot
 * start, and a hook that cannot start does not refuse anything. `code` is the folder of Vigil's
 * packages, this install's by default (another: what the paths of an install elsewhere would be).
 */
export function vigilCodePaths(code: string = vigilCodeDirectory()): ProtectedPath[] {
  const known = codePaths.get(code);
  if (known !== undefined) return known;
  const paths: ProtectedPath[] = [
    { path: code, what: "Vigil's own code", tree: true },
    { path: join(code, "..", ".bin", "vigilc"), what: "the `vigilc` command" },
    { path: join(code, "..", "node_modules", ".bin", "vigilc"), what: "the `vigilc` command" },
    ...vigilDependencies(code).map((path): ProtectedPath => ({ path, what: "a package Vigil's code needs", tree: true })),
    { path: process.execPath, what: "the Node.js that runs Vigil" },
  ];
  codePaths.set(code, paths);
  return paths;
}

/**
 * The directories of every package Vigil's own packages load, directly or through others (the
 * whole module graph), found as Node finds them: one package rewritten anywhere in it runs in the
 * hook.
 */
function vigilDependencies(code: string): string[] {
  const found = new Set<string>();
  let packages: string[] = [];
  try {
    packages = readdirSync(code);
  } catch {
    return [];
  }
  const queue = packages.map((name) => join(code, name));
  const visited = new Set<string>();
  while (queue.length > 0) {
    const directory = queue.pop()!;
    if (visited.has(directory)) continue;
    visited.add(directory);
    let manifest: { dependencies?: Record<string, string>; optionalDependencies?: Record<string, string> };
    try {
      manifest = JSON.parse(readFileSync(join(directory, "package.json"), "utf8")) as typeof manifest;
    } catch {
      continue;
    }
    for (const dependency of Object.keys({ ...manifest.dependencies, ...manifest.optionalDependencies })) {
      // The nearest `node_modules` above the package that holds it.
      for (let at = directory; ; at = dirname(at)) {
        const candidate = join(at, "node_modules", dependency);
        if (existsSync(candidate)) {
          const real = realPath(candidate);
          if (!real.startsWith(code + sep) && real !== code) found.add(real);
          queue.push(real);
          break;
        }
        if (dirname(at) === at) break;
      }
    }
  }
  return [...found];
}

/**
 * What of Vigil's state a sandbox must keep the agent from: the `.vigil` directory that holds the
 * database (and the tokens, and the key file put there), whole; or, for a database elsewhere, its
 * four files.
 */
export function stateToSeal(database: string): { readonly path: string; readonly tree: boolean }[] {
  const path = resolve(database);
  if (posix.basename(dirname(path)) === ".vigil") return [{ path: dirname(path), tree: true }];
  return ["", "-wal", "-shm", "-journal"].map((suffix) => ({ path: `${path}${suffix}`, tree: false }));
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

/** What one check knows besides the event: the protected entries and how the shell reads words. */
interface Scope {
  readonly entries: readonly ProtectedPath[];
  readonly words: WordContext;
  /** The files the command line opens for reading (`< FILE`): what `/dev/stdin` or `/dev/fd/N` may be. */
  readonly opened: readonly string[];
  /** The identities on disk of the protected files, when first needed (a hard link shares one). */
  identities?: Map<string, ProtectedPath>;
  /**
   * Whether what Git tracks and ignores may differ from what its files say now: the line changes
   * them (writes a `.gitignore` or into `.git`, `git rm`, `git config`…), or Git is pointed
   * elsewhere (`GIT_DIR`, `GIT_INDEX_FILE`, … on the line or in the environment, or not known).
   * Worked out when a Git command first asks.
   */
  readonly gitUnsettled: () => boolean;
}

/**
 * How much work the guard may do over one call, in units of work (guard-paths.ts says what a unit
 * is: about one step of its pattern matcher). Its work grows with the paths a call names; a command
 * line made of thousands of patterns would otherwise hold the hook for seconds. Past the budget the
 * call is refused as one whose effects cannot be known. The work is counted, not timed, so that a
 * decision never depends on how busy the machine is: the same call against the same files gets the
 * same answer on a loaded machine and an idle one. An ordinary command line takes a few thousand to
 * a couple of million units against Vigil's whole module graph; a here-document of a thousand lines,
 * three hundred files or a few dozen patterns to delete stay within it; each unit is a few
 * nanoseconds, so the whole budget is about half a second.
 */
export const GUARD_BUDGET = 100_000_000;

/** What parsing a command line an option or a string of code runs counts as, besides its length (a millisecond or two). */
const NESTED_LINE_UNITS = 300_000;

/** How deep a command an option runs (`git -c core.fsmonitor=CMD`) is checked as a command line. */
const MAXIMUM_OPTION_DEPTH = 2;

/** How many strings of a program's code are looked at as paths and commands. */
const MAXIMUM_CODE_STRINGS = 32;

/**
 * The quoted strings in code (`'…'`, `"…"`, `` `…` ``), without their quotes: in most languages a
 * path or a shell command is one (`os.remove('.vigil/audit.db')`, `system("rm -rf .v*")`).
 */
function stringLiterals(texts: readonly string[]): string[] {
  const found: string[] = [];
  for (const text of texts) {
    for (const match of text.matchAll(/'((?:[^'\\\n]|\\.)*)'|"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`/g)) {
      const literal = match[1] ?? match[2] ?? match[3] ?? "";
      if (literal.trim() !== "") found.push(literal);
    }
  }
  return found;
}

export class Guard {
  private readonly entries: readonly ProtectedPath[];
  private readonly home: string;
  private readonly claudeSettings: boolean;
  private readonly unknownResponse: "block" | "ask";
  private readonly budget: number;

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
    this.budget = options.budget ?? GUARD_BUDGET;
  }

  /** What the guard protects, for the audit log and `--help`. */
  get protectedPaths(): readonly ProtectedPath[] {
    return this.entries;
  }

  /** The findings against a call's events; empty when the guard lets it through. */
  check(events: readonly CallEvent[], context: GuardContext = {}): GuardFinding[] {
    // One count of work for the whole check and the command lines nested in it.
    try {
      return withinWork(this.budget, () => this.checkAt(events, context, 0)).result;
    } catch (error) {
      if (!(error instanceof WorkBudgetExceeded)) throw error;
      // A command line crafted to be slow to check is not let through unchecked: fail closed.
      return [{ ...this.unknown(`it names more paths than can be checked within the guard's budget of ${this.budget} units of work`), event: 0 }];
    }
  }

  /**
   * The findings against a call's events. `inherited`: for a command line that runs in the shell of
   * the one it is nested in (a `trap`'s), how that shell reads a variable this line does not set.
   */
  private checkAt(events: readonly CallEvent[], context: GuardContext, depth: number, inherited?: Variables): GuardFinding[] {
    const findings: GuardFinding[] = [];
    const notes = context.notes ?? [];
    const shell = events[0];
    const command = shell !== undefined && shellToolNames.includes(shell.action) && typeof shell.args["command"] === "string" ? shell.args["command"] : undefined;
    const line = lineShell(command);
    const scope = this.scopeOf(events, context, line, inherited);
    const programs = new Programs(line, [this.home, homedir()], events, context.cwd, scope);
    // The directories the commands may run in: a `cd` adds one (the shell may or may not be in it
    // afterwards: a subshell's `cd` ends with the subshell), an unknown one adds "not known".
    const cwds = new Set<string | undefined>([context.cwd !== undefined && isAbsolute(context.cwd) ? context.cwd : undefined]);
    let find: FindScope | undefined;
    let opaque = false;
    events.forEach((event, index) => {
      const found = (finding: Omit<GuardFinding, "event">) => findings.push({ ...finding, event: index });
      if (index === 0 && shellToolNames.includes(event.action)) {
        // The call itself: a shell command line that could not be read whole is not known.
        const unparsed = notes.find((n) => n.code === "T0011");
        if (unparsed !== undefined) found(this.unknown(`its command line does not parse (${unparsed.message.replace(/^.*not a valid shell command line \(|\); it is not grounded$/g, "")}), so what it runs cannot be known`));
        if (notes.some((n) => n.code === "T0014")) found(this.unknown("an argument is too long to be read whole, so what it runs cannot be known"));
        return;
      }
      if (event.action === "unknown_command" && event.args["reason"] === "evaluated_text") {
        const finding = this.evaluatedText(event.args, context.env);
        if (finding !== undefined) found(finding);
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
        const after = directoriesAfter(event, [...cwds], scope.words, line);
        // Without a subshell, the shell is where the `cd` took it; with one, it may be either.
        if (!line.subshells) cwds.clear();
        for (const cwd of after) cwds.add(cwd);
        return;
      }
      // Per command: `git -C DIR`, `tar -C DIR`, `make -C DIR`, `env -C DIR` run in another directory.
      const own = strings(event.args["directory"] ?? event.args["env_directory"])[0];
      const here = own !== undefined ? [...new Set([...cwds].map((cwd) => exactOrUnknown(pathWord(own, cwd, scope.words))))] : [...cwds];
      const effects = effectsOf(event, find);
      // A program the agent's user may have put in place of the one its name says (`./cat`, a `cat`
      // of its own early on PATH) keeps the model of that one, and is also one the guard cannot follow.
      if (!effects.some((effect) => effect.opaque === true) && !programs.trusted(event, here)) effects.push(opaqueUse(event));
      if (effects.some((effect) => effect.opaque === true) && event.args["program"] !== undefined) opaque = true;
      for (const finding of this.checkEvent(event, effects, here, scope, depth, context.env)) found(finding);
      if (program === "find") find = findScope(event);
    });
    findings.push(...this.checkLine(command, events, [...cwds], scope, opaque));
    // One finding per protected path and rule is enough to say why.
    const unique = new Map<string, GuardFinding>();
    for (const finding of findings) unique.set(`${finding.guard}\u0000${finding.path ?? finding.message}`, unique.get(`${finding.guard}\u0000${finding.path ?? finding.message}`) ?? finding);
    return [...unique.values()];
  }

  /** The protected entries of a call, and how its command line's shell reads words. */
  private scopeOf(events: readonly CallEvent[], context: GuardContext, line: LineShell, inherited?: Variables): Scope {
    const entries = this.claudeSettings ? [...this.entries, ...claudeSettingsEntries(context.cwd, this.home)] : this.entries;
    const outside = inherited ?? environmentVariables(context.env, line);
    // Where mktemp makes a file: TMPDIR, or /tmp when the environment is known and does not set it.
    const tmpdir = line.changes("TMPDIR") || context.env === undefined ? undefined : (context.env["TMPDIR"] ?? "/tmp");
    const words: WordContext = {
      ...(line.changes("HOME") ? {} : { home: this.home }),
      knownPwd: !line.redefinesPwd,
      dotglob: line.dotglob,
      nocaseglob: line.nocaseglob,
      variable: (name: string) => {
        const temporary = line.temporaries.get(name);
        if (temporary !== undefined) return temporary(tmpdir);
        return line.changes(name) ? undefined : outside(name);
      },
    };
    const opened = events.flatMap((event) => (event.action === "read" && event.args["redirection"] !== undefined ? strings(event.args["path"]) : []));
    // Where the line may make or move a link (`ln`, `mv`, `cp -a`, extracting an archive), `x/..`
    // may lead elsewhere than the disk says now.
    const links = events.slice(1).flatMap((event) => ownEffects(event).filter((effect) => effect.effect === "link" || effect.effect === "move" || (effect.effect === "write" && (effect.tree || effect.into !== undefined))));
    let unsettled: boolean | undefined;
    const gitUnsettled = () => (unsettled ??= gitMayChange(events, context, line, words));
    if (links.length === 0) return { entries, words, opened, gitUnsettled };
    const places = links.flatMap((effect) => effect.words.map((word) => ({ word: pathWord(word, context.cwd, { ...words, logical: true }), tree: effect.tree })));
    return { entries, words: { ...words, linked: (path) => places.some((place) => mayName(place.word, path) || (place.tree && mayHold(place.word, path))) }, opened, gitUnsettled };
  }

  /** The findings against one command of the call, given its effects and the directories it may run in. */
  private checkEvent(event: CallEvent, effects: readonly PathEffect[], here: readonly (string | undefined)[], scope: Scope, depth: number, env: GuardContext["env"]): Omit<GuardFinding, "event">[] {
    const findings: Omit<GuardFinding, "event">[] = [];
    const program = programOf(event);
    const itself = vigilInvocation(event) ?? vigilReinstall(event);
    if (itself !== undefined) findings.push({ guard: "vigil_itself", response: "block", message: itself });
    const redefined = redefinition(event);
    if (redefined !== undefined) findings.push(this.unknown(`it changes what a command's name runs (${redefined}), so what the line runs cannot be known`));
    for (const effect of effects) {
      // What Git leaves alone (`git clean` and untracked or ignored files, …) is spared.
      const hit = here.map((cwd) => this.hit(effect, cwd, scope, gitSpares(event, cwd, scope))).find((entry) => entry !== undefined);
      if (hit !== undefined) findings.push({ guard: "protected_path", response: "block", path: hit.path, what: hit.what, effect: effect.effect, message: describeHit(event, effect, hit) });
    }
    const opaque = effects.some((effect) => effect.opaque === true);
    // A program the guard cannot follow, run inside a protected directory, may change anything there.
    const inside = opaque ? here.flatMap((cwd) => (cwd === undefined ? [] : scope.entries.filter((entry) => entry.tree === true && (cwd === entry.path || cwd.startsWith(`${entry.path}/`)))))[0] : undefined;
    if (inside !== undefined) findings.push({ guard: "protected_path", response: "block", path: inside.path, what: inside.what, effect: "use", message: `\`${program}\` runs inside \`${inside.path}\`, ${inside.what}, and the guard cannot follow what it does there` });
    // A command an option runs (`git -c core.fsmonitor=CMD`, `tar --to-command=CMD`) is checked as a command line.
    const runsIn = here.find((cwd) => cwd !== undefined);
    for (const script of optionCommands(event)) {
      const refused = this.checkCommandText(script, runsIn, depth);
      if (refused !== undefined) findings.push({ ...refused, message: `\`${program}\` runs \`${script.slice(0, 120)}\`: ${refused.message}` });
    }
    // `trap 'CMD' EXIT`: the shell runs CMD later, itself, with the line's variables.
    const trapped = trapCommand(event);
    if (trapped !== undefined) {
      const refused = this.checkCommandText(trapped, runsIn, depth, false, { variables: scope.words.variable ?? (() => undefined), ...(env !== undefined ? { env } : {}) });
      if (refused !== undefined) findings.push({ ...refused, message: `\`trap\` runs \`${trapped.slice(0, 120)}\`: ${refused.message}` });
    }
    // A sed script may run a command (`1e CMD`), and the strings in the code of a program the
    // guard cannot follow may be paths (`glob('.v*')`) or commands (`system("rm -rf .v*")`).
    const code = [...(event.action === "sed" ? strings(event.args["script"]) : []), ...(opaque ? stringLiterals(effects.flatMap((effect) => effect.texts ?? [])) : [])];
    for (const text of code.slice(0, MAXIMUM_CODE_STRINGS)) {
      // In code, `$x` and `${x}` are the language's own (`"$1\n"` in Perl): such a string is no path pattern.
      const path = event.action !== "sed" && !/[$`{]/.test(text);
      const named = path ? here.map((cwd) => this.hit({ effect: "use", words: [text], tree: false }, cwd, scope)).find((entry) => entry !== undefined) : undefined;
      if (named !== undefined) {
        findings.push({ guard: "protected_path", response: "block", path: named.path, what: named.what, effect: "use", message: `\`${program}\` is given code naming \`${named.path}\`, ${named.what} (\`${text.slice(0, 80)}\`)` });
        continue;
      }
      const refused = this.checkCommandText(text, runsIn, depth, true);
      if (refused !== undefined) findings.push({ ...refused, message: `\`${program}\` may run \`${text.slice(0, 120)}\`: ${refused.message}` });
    }
    return findings;
  }

  /** The findings against the command line as a whole (event 0). */
  private checkLine(command: string | undefined, events: readonly CallEvent[], cwds: readonly (string | undefined)[], scope: Scope, opaque: boolean): GuardFinding[] {
    if (command === undefined) return [];
    const findings: GuardFinding[] = [];
    // A program the guard has no model of (an interpreter, a client) may read its code from a
    // here-document, a here-string or an `echo` into its pipe, which are not among its arguments:
    // the command line, and the words of its commands (quotes removed), must not mention a
    // protected path then.
    if (opaque) {
      const texts = [command, ...events.slice(1).flatMap((event) => textsOf(event.args))];
      for (const cwd of cwds) {
        const entry = scope.entries.find((candidate) => texts.some((text) => mentions(text, candidate, cwd)));
        if (entry !== undefined) {
          findings.push({ guard: "protected_path", response: "block", event: 0, path: entry.path, what: entry.what, effect: "use", message: `the command line mentions \`${entry.path}\`, ${entry.what}, and runs a program the guard cannot follow` });
          break;
        }
      }
    }
    return findings;
  }

  private unknown(why: string): Omit<GuardFinding, "event"> {
    return { guard: "unknown_command", response: this.unknownResponse, message: why };
  }

  /**
   * The finding against text the shell evaluates as code (grounding's `evaluated_text`: `$((x))`,
   * `${x@P}`, `set -x` with PS4, …), if any. When only the environment's values of some variables
   * decide it, the environment the call's shell starts with settles it: a variable it does not hold
   * is unset there (evaluated, it is empty: 0, no prompt), one it holds must be harmless where it is
   * evaluated (a whole number in arithmetic, a name as a reference, no substitution in a prompt).
   */
  private evaluatedText(args: CallEvent["args"], env: GuardContext["env"]): Omit<GuardFinding, "event"> | undefined {
    const text = typeof args["text"] === "string" ? args["text"].slice(0, 120) : "";
    const by = typeof args["by"] === "string" ? args["by"] : "the shell";
    const environment = args["environment"];
    const intro = `Bash evaluates text as code in \`${text}\` (${by}), which may run a command the line does not show`;
    if (typeof args["why"] === "string" || !isJsonObject(environment)) {
      return this.unknown(`${intro}: ${typeof args["why"] === "string" ? args["why"] : "what it evaluates is not known"}`);
    }
    const names = Object.entries(environment).filter((entry): entry is [string, EvaluatedAs] => entry[1] === "arithmetic" || entry[1] === "reference" || entry[1] === "prompt");
    if (env === undefined) return this.unknown(`${intro}: the value of ${names.map(([name]) => `\`${name}\``).join(", ")} comes from the shell's environment, which is not known here`);
    const harmful = names.filter(([name, as]) => {
      const value = env[name];
      return value !== undefined && !evaluatedValueSafe(as, value);
    });
    if (harmful.length === 0 && names.length === Object.keys(environment).length) return undefined;
    const described = harmful.map(([name, as]) => `\`${name}\` is \`${(env[name] ?? "").slice(0, 60)}\` in the shell's environment, not ${as === "arithmetic" ? "a whole number" : as === "reference" ? "a variable's name" : "a prompt without substitutions"}`);
    return this.unknown(`${intro}: ${described.length > 0 ? described.join("; ") : "what it evaluates is not known"}`);
  }

  /**
   * The first finding against a command line an option runs, if any. `lenient`: the text may not be
   * a command at all (a string in a program's code, a sed script), so what cannot be known of it
   * is not held against it; only what it would do to a protected path or to Vigil is.
   */
  private checkCommandText(
    script: string,
    cwd: string | undefined,
    depth: number,
    lenient = false,
    shell?: { readonly variables: Variables; readonly env?: GuardContext["env"] },
  ): Omit<GuardFinding, "event"> | undefined {
    if (depth >= MAXIMUM_OPTION_DEPTH) return lenient ? undefined : this.unknown("a command given to an option of a command given to an option is not followed");
    // `git -c alias.x='!rm …'`, `--checkpoint-action=exec=CMD`: the command follows a key and `=`, or a `!`.
    const candidates = [script, script.replace(/^[^=\s]*=/, "").replace(/^exec=/, "").replace(/^!/, "")];
    for (const candidate of new Set(candidates)) {
      spend(NESTED_LINE_UNITS + candidate.length);
      let read;
      try {
        read = readCall("Bash", { command: candidate }, "option");
      } catch {
        continue;
      }
      // A value that is not a command line (a name with a quote in it) runs nothing the shell would run.
      if (read.notes.some((note) => note.code === "T0011")) continue;
      const context: GuardContext = { ...(cwd !== undefined ? { cwd } : {}), notes: read.notes, ...(shell?.env !== undefined ? { env: shell.env } : {}) };
      const refused = this.checkAt(read.events, context, depth + 1, shell?.variables).filter((finding) => !lenient || finding.guard !== "unknown_command");
      if (refused[0] !== undefined) return refused[0];
    }
    return undefined;
  }

  /** The protected entry an effect may reach from `cwd`, if any. */
  private hit(effect: PathEffect, cwd: string | undefined, scope: Scope, spare?: (entry: ProtectedPath) => boolean): ProtectedPath | undefined {
    const entries = spare === undefined ? scope.entries : scope.entries.filter((entry) => !spare(entry));
    for (const word of effect.words) {
      const path = pathWord(word, cwd, scope.words);
      // A program the guard has no model of, given nothing but a variable the line does not set
      // (`pytest "$TEST"`, a loop's `"$f"`): its value comes from outside the command line, where
      // the guard cannot follow it, as it cannot follow a path built at run time. Refusing it would
      // refuse most scripted work; a writer given one (`rm "$X"`, `> "$X"`) is still refused.
      if (effect.effect === "use" && path.tokens.every((token) => token.kind === "any")) continue;
      // `/dev/stdin`, `/dev/fd/3`: whatever the command line opened there.
      const paths = path.descriptor === true ? scope.opened.map((opened) => pathWord(opened, cwd, scope.words)) : [path];
      const targets: PathWord[] = [...paths];
      // `cp a b DIR`, `mv a DIR`: DIR/a and DIR/b are written too.
      for (const base of paths) for (const source of effect.into ?? []) targets.push(childWord(base, pathWord(source, cwd, scope.words)));
      for (const entry of entries) {
        if (effect.effect === "read" && entry.secret !== true) continue;
        for (const target of targets) {
          if (mayName(target, entry.path)) return entry;
          if (entry.tree === true && mayBeIn(target, entry.path)) return entry;
          // Deleting, moving, re-linking or changing the permissions of a directory does it to what it holds.
          if (effect.tree && mayHold(target, entry.path) && namedBy(effect.names, entry, effect.namesReach === "tree")) {
            // Reading a directory whole reads a secret in it; from further up (`grep -r x .` in the
            // project) it is taken as ordinary work, which the separate-user deployment covers.
            if (effect.effect !== "read" || mayBeIn(target, posix.dirname(entry.path))) return entry;
          }
        }
      }
      // Another name of a protected file, made earlier (`cp -l DB /tmp/x`): writing it writes the file.
      if (effect.effect !== "delete" && effect.effect !== "move") {
        for (const target of targets) {
          const identity = target.exact ? sharedFileIdentity(target.real ?? "") : undefined;
          const entry = identity !== undefined ? this.identities(scope).get(identity) : undefined;
          if (entry !== undefined && (effect.effect !== "read" || entry.secret === true)) return entry;
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

  /** The protected files by their identity on disk: the files named, and those in a state directory. */
  private identities(scope: Scope): Map<string, ProtectedPath> {
    if (scope.identities !== undefined) return scope.identities;
    const identities = new Map<string, ProtectedPath>();
    for (const entry of scope.entries) {
      const files = entry.contents !== undefined ? directoryFiles(entry.path) : [entry.path];
      for (const file of files) {
        const identity = fileIdentity(file);
        if (identity !== undefined && !identities.has(identity)) identities.set(identity, entry);
      }
    }
    scope.identities = identities;
    return identities;
  }
}

function directoryFiles(directory: string): string[] {
  spend(LOOKUP_UNITS);
  try {
    return readdirSync(directory).map((name) => join(directory, name));
  } catch {
    return [];
  }
}

/** How a shell reads a variable a command line does not set: its value, the paths it may be (as tokens), or undefined when not known. */
type Variables = (name: string) => string | readonly PathToken[] | undefined;

/**
 * The variables of the shell's environment, as far as it is known: a value is its text, unless
 * the shell would split it into several words (it holds a character of IFS: the environment's, or
 * space, tab and line break; or the line changes IFS), which the guard does not follow.
 */
function environmentVariables(env: GuardContext["env"], line: LineShell): Variables {
  if (env === undefined) return () => undefined;
  const separators = env["IFS"] ?? " \t\n";
  return (name) => {
    const value = env[name];
    if (value === undefined) return undefined;
    // Only inside double quotes (`"$DIR"`) is a value one word whatever it holds.
    // Split where IFS says: the environment's (or space, tab and line break), or, when the line sets it, anywhere.
    const split = line.unquoted === undefined || line.unquoted.has(name);
    if (split && (line.changes("IFS") || [...separators].some((separator) => value.includes(separator)))) return undefined;
    return value;
  };
}

/**
 * The variables a command line expands outside double quotes (`$X`, `${X}`; inside `$(…)`,
 * backquotes and arithmetic too), where the shell splits their values into words; undefined when
 * the line is not read so simply (a `case`, parentheses that do not pair).
 */
function unquotedVariables(command: string): Set<string> | undefined {
  if (/\bcase\b/.test(command)) return undefined;
  const found = new Set<string>();
  // Each frame: whether it is inside double quotes, and, for `$(`, the parentheses open in it.
  const frames: { quoted: boolean; parentheses: number; closer: ")" | "`" | undefined }[] = [{ quoted: false, parentheses: 0, closer: undefined }];
  for (let index = 0; index < command.length; index++) {
    const frame = frames[frames.length - 1]!;
    const char = command[index]!;
    if (char === "\\") {
      index++;
      continue;
    }
    if (!frame.quoted && char === "'") {
      const ansi = command[index - 1] === "$";
      for (index++; index < command.length && command[index] !== "'"; index++) if (ansi && command[index] === "\\") index++;
      continue;
    }
    if (char === '"') {
      if (frame.quoted) frames.pop();
      else frames.push({ quoted: true, parentheses: 0, closer: undefined });
      continue;
    }
    if (char === "`") {
      if (frame.closer === "`") frames.pop();
      else frames.push({ quoted: false, parentheses: 0, closer: "`" });
      continue;
    }
    if (char === "$" && command[index + 1] === "(") {
      frames.push({ quoted: false, parentheses: 0, closer: ")" });
      index++;
      continue;
    }
    if (char === "$") {
      const name = /^\{?([A-Za-z_][A-Za-z0-9_]*)/.exec(command.slice(index + 1));
      if (name !== null && !frame.quoted) found.add(name[1]!);
      continue;
    }
    if (!frame.quoted && char === "(") frame.parentheses++;
    if (!frame.quoted && char === ")") {
      if (frame.parentheses > 0) frame.parentheses--;
      else if (frame.closer === ")") frames.pop();
      else return undefined;
    }
    if (frames.length === 0) return undefined;
  }
  return frames.length === 1 ? found : undefined;
}

/**
 * The command line `trap` is given to run later (`trap 'rm -f "$tmp"' EXIT`), or undefined: with a
 * single operand, `-` or an empty one, it resets or ignores signals; `-p` and `-l` print.
 */
function trapCommand(event: CallEvent): string | undefined {
  if (programOf(event) !== "trap") return undefined;
  const operands = positionalsOf(event.args);
  if (operands.length < 2 || operands[0] === "-" || operands[0]!.trim() === "") return undefined;
  return operands[0];
}

/** Variables that point Git at another repository, index or configuration than its files in the working tree say. */
const GIT_ENVIRONMENT = ["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR", "GIT_CONFIG", "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT", "GIT_CONFIG_PARAMETERS", "GIT_NAMESPACE"];

/** Git commands that change which files the index tracks, or Git's configuration, other than from history. */
const GIT_INDEX_CHANGES = new Set(["git rm", "git update-index", "git read-tree", "git config", "git sparse-checkout", "git submodule", "git worktree", "git init", "git clone"]);

/** See {@link Scope.gitUnsettled}. */
function gitMayChange(events: readonly CallEvent[], context: GuardContext, line: LineShell, words: WordContext): boolean {
  const env = context.env;
  if (env === undefined || GIT_ENVIRONMENT.some((name) => line.changes(name) || env[name] !== undefined)) return true;
  return events.slice(1).some((event) => {
    if (GIT_INDEX_CHANGES.has(event.action)) return true;
    return ownEffects(event).some(
      (effect) =>
        effect.effect !== "read" &&
        effect.effect !== "use" &&
        effect.words.some((word) => {
          const path = pathWord(word, context.cwd, words);
          const exact = exactPath(path);
          // A pattern or an expansion may be a `.gitignore`, unless it cannot hold `.git`.
          if (exact === undefined) return path.tokens.some((token) => token.kind === "any" || (token.kind === "text" && token.text.includes(".git")));
          return /(^|\/)\.git(ignore)?(\/|$)/.test(exact) || /(^|\/)\.git\//.test(path.real ?? "");
        }),
    );
  });
}

/**
 * What of the protected paths a Git command that deletes or rewrites a tree leaves alone, read
 * from the repository the command runs in, or undefined when nothing is known to be spared:
 *
 * - `git clean` deletes untracked files that are not ignored; `-x` ignored ones too, `-X` only
 *   those: a file the index tracks is spared, and, without `-x` or `-X`, a file or directory the
 *   repository's ignore rules ignore (`.vigil/` in `.gitignore`). `git stash -u` (`--all`) takes
 *   away untracked files as `git clean -d` (`-x`) deletes them.
 * - `git checkout -- PATH` and `git restore PATH` rewrite tracked files that changed from the
 *   index: a path with no tracked file at or under it, or none that changed since the index saw
 *   it, is spared. From a commit (`git checkout main -- .`, `--source`), nothing is.
 *
 * Everything outside the repository's working tree is spared. Nothing is when there is no
 * repository to read (Git may be pointed at one: see {@link Scope.gitUnsettled}), or the line may
 * change what Git tracks or ignores.
 */
function gitSpares(event: CallEvent, cwd: string | undefined, scope: Scope): ((entry: ProtectedPath) => boolean) | undefined {
  const action = event.action;
  if (!["git clean", "git checkout", "git restore", "git stash"].includes(action) || cwd === undefined || scope.gitUnsettled()) return undefined;
  const a = event.args;
  if (["config", "git_dir", "work_tree", "namespace", "exec_path"].some((key) => a[key] !== undefined)) return undefined;
  const repository = gitRepository(cwd);
  if (repository === undefined) return undefined;
  const config = readRepositoryConfig(repository);
  if (/^\s*worktree\s*=/im.test(config)) return undefined;
  const index = gitTrackedPaths(repository);
  const outside = (entry: ProtectedPath) => !entry.path.startsWith(`${repository.root}/`);
  const isTracked = (entry: ProtectedPath) => index !== undefined && entry.tree !== true && gitTrackedAt(index, entry.path, false).length > 0;
  if (action === "git clean" || action === "git stash") {
    const all = action === "git clean" ? a["x"] === true : a["all"] === true || a["a"] === true;
    const onlyIgnored = action === "git clean" && (a["X"] !== undefined || a["strategy_option"] !== undefined);
    // What does not exist is not deleted (Claude Code's settings of a directory that has none).
    return (entry) => outside(entry) || !exists(entry.path) || isTracked(entry) || (!all && !onlyIgnored && gitIgnores(repository, entry.path, entry.tree === true || isDirectory(entry.path)));
  }
  // `git checkout` and `git restore`: from the index, unless a commit is named.
  if (action === "git restore" && ["source", "s", "staged", "S"].some((key) => a[key] !== undefined)) return undefined;
  const words = [...strings(a["target"]), ...positionalsOf(a)];
  if (words.some((word) => gitMayBeRevision(repository, word))) return undefined;
  if (index === undefined) return (entry) => outside(entry);
  // A tracked file as the index has it is rewritten with what it holds: left as it is.
  return (entry) => outside(entry) || gitTrackedAt(index, entry.path, entry.tree === true).every((path) => gitUnchanged(index, path));
}

function readRepositoryConfig(repository: GitRepository): string {
  spend(LOOKUP_UNITS);
  try {
    return readFileSync(join(repository.commonDir, "config"), "utf8");
  } catch {
    return "";
  }
}

function exists(path: string): boolean {
  spend(LOOKUP_UNITS);
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

function isDirectory(path: string): boolean {
  spend(LOOKUP_UNITS);
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/**
 * What a command line may change of how its shell reads words, as far as the line shows it (quotes
 * and backslashes do not hide a name from this, and ANSI-C quoting `$'…'` may hide any: then
 * everything may change).
 */
interface LineShell {
  /** Whether the line may set the variable `name`: it names it other than to expand it. */
  changes(name: string): boolean;
  /** `$PWD` or `pwd` may not be the working directory: the line sets `PWD`, or defines a `pwd`. */
  readonly redefinesPwd: boolean;
  /** Patterns match leading dots (`shopt -s dotglob`, or `GLOBIGNORE` set), or any case (`nocaseglob`). */
  readonly dotglob: boolean;
  readonly nocaseglob: boolean;
  /** `cd NAME` may go elsewhere than `./NAME`: `CDPATH` is set (in the line, or in the environment). */
  readonly cdpath: boolean;
  /** `cd` resolves symbolic links before `..` (`set -P`, `set -o physical`). */
  readonly physical: boolean;
  /**
   * Whether a `cd` may run in a subshell, after which the shell is back where it was: the line has
   * parentheses, a pipe, backquotes or a `&`. Without, a `cd` moves the shell for what follows.
   */
  readonly subshells: boolean;
  /**
   * Variables the line sets only to a new temporary file's name (`tmp=$(mktemp)`, `d=$(mktemp -d)`):
   * the paths the name may be, given how the shell reads the variables the line does not set.
   */
  readonly temporaries: ReadonlyMap<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined>;
  /** The variables the line expands outside double quotes, whose values the shell splits; undefined when not known. */
  readonly unquoted: ReadonlySet<string> | undefined;
}

function lineShell(command: string | undefined): LineShell {
  const environmentCdpath = (process.env["CDPATH"] ?? "") !== "";
  if (command === undefined) return { changes: () => false, redefinesPwd: false, dotglob: false, nocaseglob: false, cdpath: environmentCdpath, physical: false, subshells: false, temporaries: new Map(), unquoted: new Set() };
  const hidden = command.includes("$'");
  const plain = command.replace(/['"\\]/g, "");
  const mentions = (text: string, name: string) => new RegExp(`\\b${name}\\b`).test(text.replace(new RegExp(`\\$\\{?${name}\\b`, "g"), ""));
  const changes = (name: string) => hidden || mentions(plain, name);
  return {
    changes,
    temporaries: hidden ? new Map() : temporaryVariables(command, changes, mentions),
    unquoted: hidden ? undefined : unquotedVariables(command),
    redefinesPwd: changes("PWD") || /\bpwd\s*\(\s*\)|\bfunction\s+pwd\b|\balias\b[^;&|]*\bpwd=/.test(plain),
    dotglob: hidden || /\b(dotglob|GLOBIGNORE)\b/.test(plain),
    nocaseglob: hidden || /\bnocaseglob\b/.test(plain),
    cdpath: environmentCdpath || hidden || /\bCDPATH\b/.test(plain),
    physical: hidden || /\bset\s+-[A-Za-z]*P|\bphysical\b/.test(plain),
    // `||` and `&&` do not make subshells; a lone `|` or `&` does.
    subshells: hidden || /[()`]/.test(command) || /(^|[^|])\|([^|]|$)/.test(command) || /(^|[^&])&([^&>]|$)/.test(command),
  };
}

/**
 * `NAME=$(mktemp …)` (also after `local`, `export`, `declare`, `readonly`, and with backquotes or
 * double quotes): the variable holds the name of a file or directory mktemp has just made, with
 * random letters in it, so it is no protected path (deleting or writing it is ordinary work), unless
 * `..` climbs out of it. Only a variable the line sets in no other way, and a mktemp given only
 * options whose meaning is known and a template without a slash, are taken so.
 */
const MKTEMP = /(?:^|[\s;&|({])(?:(?:local|export|readonly|declare|typeset)(?:\s+-[A-Za-z]+)*\s+)?([A-Za-z_][A-Za-z0-9_]*)=("?)(?:\$\(\s*mktemp((?:[ \t]+[^\s)$`;|&<>'"\\]+)*)\s*\)|`\s*mktemp((?:[ \t]+[^\s$`;|&<>'"\\]+)*)\s*`)\2(?=$|[\s;&|)])/g;

function temporaryVariables(command: string, changes: (name: string) => boolean, mentions: (text: string, name: string) => boolean): Map<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined> {
  const found = new Map<string, (tmpdir: string | undefined) => readonly PathToken[] | undefined>();
  const matches = [...command.matchAll(MKTEMP)];
  for (const match of matches) {
    const name = match[1]!;
    if (found.has(name)) continue;
    const words = (match[3] ?? match[4] ?? "").trim().split(/[ \t]+/).filter((word) => word !== "");
    const made = mktempPath(words);
    if (made === undefined) continue;
    // Set in no other way: without the mktemp assignments, the line only expands it (an option
    // `-f` is not the variable `f`).
    const rest = matches.filter((other) => other[1] === name).reduceRight((text, other) => text.slice(0, other.index) + " " + text.slice(other.index + other[0].length), command);
    if (mentions(rest.replace(/['"\\]/g, "").replace(new RegExp(`(^|\\s)-+[A-Za-z0-9_]*\\b`, "g"), " "), name)) continue;
    found.set(name, made);
  }
  return found;
}

/**
 * The paths `mktemp WORDS` makes, given the temporary directory (TMPDIR; undefined when not known):
 * in `-p DIR` (`--tmpdir=DIR`), in the temporary directory without a template or with `-t`, and
 * otherwise in the working directory; named by the template with its Xs random, or `tmp.` and
 * random letters. Undefined for an option or template it does not know.
 */
function mktempPath(words: readonly string[]): ((tmpdir: string | undefined) => readonly PathToken[] | undefined) | undefined {
  let directory: string | undefined;
  let inTemporary = false;
  let template: string | undefined;
  for (let index = 0; index < words.length; index++) {
    const word = words[index]!;
    if (/^-[dqu]+$/.test(word) || ["--directory", "--quiet", "--dry-run"].includes(word)) continue;
    if (word === "-t" || word === "--tmpdir") inTemporary = true;
    else if (word === "-p" && words[index + 1] !== undefined) directory = words[++index];
    else if (word.startsWith("--tmpdir=")) directory = word.slice("--tmpdir=".length);
    else if (!word.startsWith("-") && template === undefined && !word.includes("/")) template = word;
    else return undefined;
  }
  if (directory !== undefined && (directory === "" || /[~*?[{]/.test(directory))) return undefined;
  const random: PathToken[] = [{ kind: "one" }, { kind: "one" }, { kind: "one" }];
  // A template's trailing Xs are random letters; without one, `tmp.` and at least six (GNU: ten, BSD: eight).
  const xs = template !== undefined ? (/X{3,}$/.exec(template)?.[0].length ?? 0) : 0;
  const name: PathToken[] =
    template === undefined
      ? [{ kind: "text", text: "tmp." }, ...random, ...random, { kind: "star" }]
      : xs > 0
        ? [...(xs < template.length ? [{ kind: "text" as const, text: template.slice(0, -xs) }] : []), ...Array.from({ length: xs }, (): PathToken => ({ kind: "one" }))]
        : // BSD's `-t PREFIX`: PREFIX, a dot and random letters.
          inTemporary
          ? [{ kind: "text", text: `${template}.` }, ...random, ...random, { kind: "star" }]
          : [];
  if (name.length === 0) return undefined;
  const inWorkingDirectory = directory === undefined && template !== undefined && !inTemporary;
  return (tmpdir) => {
    const base = directory !== undefined ? directory.replace(/\/+$/, "") : inWorkingDirectory ? "." : tmpdir?.replace(/\/+$/, "");
    if (base === undefined || /[*?[\]{}$`]/.test(base)) return undefined;
    return [{ kind: "text", text: `${base}/` }, ...name];
  };
}

/**
 * Where a `cd`, `pushd` or `popd` may take the shell, from each directory it may be in (undefined:
 * not known). `cd DIR` climbs `..` as written; `cd -P` (or after `set -P`) through symbolic links.
 */
function directoriesAfter(event: CallEvent, cwds: readonly (string | undefined)[], words: WordContext, line: LineShell): (string | undefined)[] {
  const program = programOf(event);
  const target = program === "cd" ? strings(event.args["path"])[0] : program === "pushd" ? positionalsOf(event.args)[0] : undefined;
  if (program === "cd" && target === undefined) return [words.home];
  // `cd -` (the previous directory), `popd`, `pushd +1` (the directory stack): not known.
  if (target === undefined || /^[-+]/.test(target)) return [undefined];
  // With CDPATH, `cd NAME` looks for NAME in its directories first (not `./NAME`, `../NAME` or `/…`).
  const searched = line.cdpath && !/^(\/|\.\.?(\/|$))/.test(target);
  const physical = event.args["P"] === true || line.physical;
  return cwds.flatMap((cwd) => [exactOrUnknown(pathWord(target, cwd, { ...words, logical: !physical })), ...(searched ? [undefined] : [])]);
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
  /** Whether what bears such a name is affected alone (`-delete`) or with all it holds (`-exec rm -rf {}`). */
  readonly namesReach?: "self" | "tree";
  /** The program is one the guard has no model of: what it does with its words is not known. */
  readonly opaque?: boolean;
}

/** What `find` looks through, for the commands it runs on what it finds (`-exec rm {} ;`). */
interface FindScope {
  readonly roots: readonly string[];
  /** The name patterns every entry it acts on bears; undefined when not limited (`!`, `-o`). */
  readonly names?: readonly string[];
}

/** Programs and tools that read and never change a file they are given (see also {@link NO_FILES}). */
const READ_ONLY = new Set([
  "cat", "head", "tail", "less", "more", "wc", "diff", "cmp", "file",
  "sha256sum", "sha1sum", "md5sum", "cksum", "b2sum", "jq", "nl", "od", "xxd", "hexdump", "strings", "column", "cut", "tr", "comm",
  "git status", "git diff", "git log", "git show", "git blame", "git ls-files", "git rev-parse", "git add", "git commit", "git fetch", "git remote",
  "git grep", "git describe", "git shortlog", "git push",
  // Claude Code's own tools that read, and the MCP filesystem server's.
  "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "Task", "ExitPlanMode", "BashOutput", "KillShell", "Skill", "SlashCommand",
  "read_file", "read_text_file", "read_media_file", "read_multiple_files", "list_directory", "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info", "list_allowed_directories",
]);

/**
 * Programs that change no file and read no file's content: their words are text, names or paths
 * whose content they do not show (`echo "$f"` is not a read of whatever `$f` is). `cd` is followed apart.
 */
const NO_FILES = new Set([
  "cd", "pushd", "popd", "dirs", "exit", "return", "set", "shopt", "export", "unset", "local", "declare", "typeset", "readonly",
  "shift", "wait", "break", "continue", ":", "sleep", "umask", "ulimit", "hash", "times", "trap",
  "echo", "printf", "pwd", "which", "type", "command", "test", "[", "true", "false", "date", "basename", "dirname", "realpath", "readlink",
  "stat", "ls", "du", "df", "tree", "read",
]);

/**
 * Options of programs the guard models that write a file, delete one, or run a command, under the
 * keys grounding gives them. An option grounding does not know is `key: true`, with its value among
 * the other words: then each of those is taken as its value.
 */
const OPTION_EFFECTS: Readonly<Record<string, { readonly writes?: readonly string[]; readonly trees?: readonly string[]; readonly deletes?: readonly string[]; readonly commands?: readonly string[] }>> = {
  curl: { writes: ["D", "dump_header", "c", "cookie_jar", "trace", "trace_ascii", "libcurl", "stderr", "etag_save", "hsts", "alt_svc"], trees: ["output_dir"] },
  wget: { writes: ["o", "output_file", "a", "append_output", "save_cookies"] },
  tar: {
    writes: ["index_file"],
    // `--remove-files` deletes what it puts in the archive.
    deletes: ["remove_files"],
    commands: ["to_command", "checkpoint_action", "use_compress_program", "I", "rsh_command", "info_script", "F", "new_volume_script"],
  },
  rsync: { writes: ["log_file", "write_batch", "only_write_batch"], trees: ["backup_dir", "temp_dir", "partial_dir"], commands: ["shell", "rsh", "rsync_path"] },
  rg: { commands: ["pre"] },
  sort: { commands: ["compress_program"] },
  // `git log --output=FILE` and its kin; `git -c core.fsmonitor=CMD status` runs CMD.
  git: { writes: ["output"], commands: ["config"] },
};

/** The effects of one event on paths, from its action and its arguments' roles (the grounding catalog's). */
function effectsOf(event: CallEvent, find: FindScope | undefined): PathEffect[] {
  const effects = ownEffects(event);
  const a = event.args;
  // `time -o FILE CMD` (the program, not Bash's keyword) writes its report to FILE.
  if (a["time_output"] !== undefined) effects.push({ effect: "write", words: strings(a["time_output"]), tree: false });
  // Options that write files or delete them, of the programs the guard models.
  const table = OPTION_EFFECTS[event.action.split(" ")[0]!];
  if (table !== undefined && !effects.some((effect) => effect.opaque === true)) {
    const valuesOf = (keys: readonly string[] = []) => keys.flatMap((key) => (a[key] === true ? textsOf(a) : strings(a[key])));
    effects.push({ effect: "write", words: valuesOf(table.writes), tree: false }, { effect: "write", words: valuesOf(table.trees), tree: true });
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
function findScope(event: CallEvent): FindScope {
  const a = event.args;
  const paths = strings(a["path"]);
  const roots = paths.filter((path) => !["!", ",", "(", ")"].includes(path));
  // `!`, `-not`, `-o`, `-or` and `,` (grounding reads `-not` and `-or` as letters, `o` among them):
  // the entries acted on need not bear the names given.
  const limited = roots.length === paths.length && a["o"] === undefined && strings(a["name"]).length > 0;
  return { roots: roots.length > 0 ? roots : ["."], ...(limited ? { names: strings(a["name"]) } : {}) };
}

function ownEffects(event: CallEvent): PathEffect[] {
  const a = event.args;
  const action = event.action;
  const flag = (...keys: string[]) => keys.some((key) => a[key] === true);
  const all = (...keys: string[]) => keys.flatMap((key) => strings(a[key]));
  const positionals = () => positionalsOf(a);
  // `… | xargs rm`: more paths come from standard input, and may be any.
  const fromInput = flag("stdin_arguments") ? ["$STDIN"] : [];
  const e = (effect: Effect, words: string[], tree = false, more: Partial<PathEffect> = {}): PathEffect => ({ effect, words, tree, ...more });
  const recursive = flag("recursive", "archive");
  if (NO_FILES.has(programOf(event))) return [];
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
  if (READ_ONLY.has(action)) return [e("read", pathLike(a), false, { texts: textsOf(a) })];
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
function opaqueUse(event: CallEvent): PathEffect {
  const a = event.args;
  const grounded = a["program"] !== undefined;
  // awk's code is grounded under the key `program` (its catalog role), where other events name their program.
  const code = programOf(event) === "awk" ? strings(a["program"]) : [];
  return { effect: "use", words: pathLike(a), tree: false, ...(grounded ? { texts: [...textsOf(a), ...code] } : {}), opaque: true };
}

/** Programs that delete the files and directories they are given, whole (`rimraf`, `trash`), run directly or by a package runner. */
const DELETERS = new Set(["rimraf", "del", "del-cli", "trash", "trash-put", "trash-cli", "rmtrash", "srm", "wipe"]);

/** The operands of a program that deletes them (`npx rimraf dist`), or undefined. */
function deleterOperands(event: CallEvent): string[] | undefined {
  const program = programOf(event);
  if (DELETERS.has(program)) return [...textsOf(event.args), ...(event.args["stdin_arguments"] === true ? ["$STDIN"] : [])];
  if (!PACKAGE_RUNNERS.has(program)) return undefined;
  const words = runnerWords(event);
  const at = words.findIndex((word) => DELETERS.has(word.replace(/@[^/]*$/, "")));
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

/** The positional words of an event (`arg1`, `arg2`, …), in order. */
function positionalsOf(args: CallEvent["args"]): string[] {
  return Object.keys(args)
    .filter((key) => /^arg[0-9]+$/.test(key))
    .flatMap((key) => strings(args[key]));
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
 * matches, or, for a directory, a name it may hold does (its `contents`; the names found in it
 * when not given), or, when what bears the name is affected with all it holds (`-exec rm -rf {}`),
 * the name of a directory above it does. Names are compared whatever the case (`-iname`).
 */
function namedBy(names: readonly string[] | undefined, entry: ProtectedPath, reachTree: boolean): boolean {
  if (names === undefined || names.length === 0) return true;
  const above = reachTree ? entry.path.split("/").filter((part) => part !== "") : [];
  const held = entry.tree === true ? (entry.contents ?? (reachTree ? ["*"] : namesIn(entry.path))) : [];
  const candidates = [posix.basename(entry.path), ...held, ...above].map((candidate) => candidate.toLowerCase());
  // Either side may be a pattern: `-name '*.db'` against `audit.db`, `-name x.db` against a directory's `*.db`.
  const match = (pattern: string, name: string) => mayName(pathWord(pattern, "/", { dotglob: true }), `/${name}`);
  return names.some((name) => candidates.some((candidate) => candidate === "*" || match(name.toLowerCase(), candidate) || match(candidate, name.toLowerCase())));
}

const namesFound = new Map<string, string[]>();

/**
 * The names a directory holds, as patterns: `*.EXT` for a name with an extension, the name itself
 * otherwise; `*` when there are too many to look through.
 */
function namesIn(directory: string): string[] {
  const known = namesFound.get(directory);
  if (known !== undefined) return known;
  const names = new Set<string>();
  const pending = [directory];
  let seen = 0;
  while (pending.length > 0) {
    const current = pending.pop()!;
    let entries;
    try {
      entries = readdirSync(current, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const entry of entries) {
      if (++seen > 20_000) {
        namesFound.set(directory, ["*"]);
        return ["*"];
      }
      const extension = /\.[^.]+$/.exec(entry.name);
      names.add(entry.name.startsWith(".") || extension === null ? entry.name : `*${extension[0]}`);
      if (entry.isDirectory()) pending.push(join(current, entry.name));
    }
  }
  const result = [...names];
  namesFound.set(directory, result);
  return result;
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
const GROUNDING_KEYS = new Set(["program", "via", "piped_from", "by", "reason", "description"]);

/**
 * Whether a text mentions a protected path: as written whole; as its last two names
 * (`.vigil/audit.db`); a directory of Vigil's own by its name (`.vigil`); a file's name and its
 * hidden directory's, apart (`os.chdir('.claude'); open('policy.vigil')`); relative to the working
 * directory (`audit.db` inside `.vigil`); or, where that is not known, by a file's name alone.
 */
function mentions(text: string, entry: ProtectedPath, cwd: string | undefined): boolean {
  const path = entry.path;
  // A handful of scans of the text for plain strings, each cheaper than the matcher's steps: a unit per two characters.
  spend(Math.ceil(text.length / 2));
  if (text.includes(path)) return true;
  const name = posix.basename(path);
  const parent = posix.basename(posix.dirname(path));
  if (name.startsWith(".") && entry.tree === true && named(text, name)) return true;
  if (parent !== "" && text.includes(`${parent}/${name}`)) return true;
  if (parent.startsWith(".") && named(text, parent) && named(text, name)) return true;
  if (cwd !== undefined && path.startsWith(`${cwd}/`)) {
    const relative = path.slice(cwd.length + 1);
    if (relative.includes("/") ? text.includes(relative) : named(text, relative)) return true;
  }
  if (cwd === undefined && entry.tree !== true && name.includes(".") && named(text, name)) return true;
  return false;
}

/** Whether `name` stands in `text` as a name of its own (not part of a longer one). */
function named(text: string, name: string): boolean {
  return new RegExp(`(^|[^A-Za-z0-9_.-])${escapeRegExp(name)}($|[^A-Za-z0-9_.-])`).test(text);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/**
 * Claude Code's settings files that may install the hook, from the working directory up and in the
 * home directory, and its shell snapshots.
 */
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
  return [
    ...[...directories].flatMap((directory) =>
      ["settings.json", "settings.local.json"].map((name) => ({ path: join(directory, ".claude", name), what: "Claude Code's settings, which install Vigil's hook" })),
    ),
    // The shell setup Claude Code takes from the user's shell at the start of a session and runs
    // before each Bash call: a function or a command written there would run unseen.
    { path: join(home, ".claude", "shell-snapshots"), what: "Claude Code's shell snapshots, which run before each Bash call", tree: true },
  ];
}

/** The program an event runs (for a grounded command), or its action. */
function programOf(event: CallEvent): string {
  const program = event.args["program"];
  // awk's code takes the place of its name under `program` (the catalog's role for it).
  if (event.action === "awk") return "awk";
  return typeof program === "string" ? posix.basename(program) : event.action;
}

/** Vigil's commands that change nothing: checking, formatting to standard output, explaining. */
const VIGIL_READ_ONLY = new Set(["check", "fmt", "explain", "signature", "lower", "help"]);

/** Programs that run a package's command: `npx vigilc …`, `npm exec`, `pnpm dlx`, `yarn vigilc …`, `bunx`. */
const PACKAGE_RUNNERS = new Set(["npx", "npm", "pnpm", "pnpx", "yarn", "bun", "bunx"]);

/** The words a package runner is given after its name (`pnpm dlx vigilc hook`: `dlx`, `vigilc`, `hook`). */
function runnerWords(event: CallEvent): string[] {
  return [...event.action.split(" ").slice(1), ...textsOf(event.args)];
}

/** Vigil's command or package, as a package runner is given it (`vigilc@latest`, `@vigil/cli`). */
const VIGIL_PACKAGE = /^(vigilc|@vigil\/cli)(@.*)?$/;

/**
 * Vigil's command in an event, run directly or by a package runner: its subcommand (undefined:
 * none, as `vigilc --help`) and the words after it.
 */
function vigilCommand(event: CallEvent): { subcommand: string | undefined; rest: string[] } | undefined {
  const program = programOf(event);
  if (program === "vigilc" || program === "vigil-language-server") {
    const words = positionalsOf(event.args);
    return { subcommand: words[0], rest: words.slice(1) };
  }
  if (!PACKAGE_RUNNERS.has(program)) return undefined;
  const words = runnerWords(event);
  // `npx -p @vigil/cli vigilc hook`: the package, then its command.
  const at = words.findIndex((word, index) => VIGIL_PACKAGE.test(word) && !VIGIL_PACKAGE.test(words[index + 1] ?? ""));
  return at < 0 ? undefined : { subcommand: words[at + 1], rest: words.slice(at + 2) };
}

/**
 * How the event runs Vigil itself in a way that could change its state or forge an event (`vigilc
 * hook`, `npx vigilc serve`, `vigilc audit`…), or undefined. Checking a policy is fine.
 */
function vigilInvocation(event: CallEvent): string | undefined {
  const vigil = vigilCommand(event);
  if (vigil === undefined || vigil.subcommand === undefined || VIGIL_READ_ONLY.has(vigil.subcommand)) return undefined;
  return `it runs Vigil itself (\`vigilc ${vigil.subcommand}\`), which could forge events or change Vigil's state`;
}

/** What package managers do to the packages they are given, that changes Vigil's code when one is Vigil's. */
const PACKAGE_CHANGES = new Set(["uninstall", "remove", "rm", "r", "un", "unlink", "install", "i", "add", "update", "up", "upgrade", "link"]);

/** How the event uninstalls, reinstalls or relinks Vigil (`npm uninstall @vigil/cli`), or undefined. */
function vigilReinstall(event: CallEvent): string | undefined {
  const program = programOf(event);
  if (!["npm", "pnpm", "yarn", "bun"].includes(program)) return undefined;
  const words = [...event.action.split(" ").slice(1), ...textsOf(event.args)];
  if (!PACKAGE_CHANGES.has(words[0] ?? "") || !words.slice(1).some((word) => /^(@vigil\/[^@]+|vigilc)(@.*)?$/.test(word))) return undefined;
  return `it changes Vigil's own code (\`${program} ${words[0]}\` of a package of Vigil's)`;
}

/**
 * How the event changes what a command's name runs for the rest of the line (`hash -p /bin/rm ls`,
 * `alias ls=rm`, `enable -f lib.so rm`), or undefined.
 */
function redefinition(event: CallEvent): string | undefined {
  const program = programOf(event);
  const words = positionalsOf(event.args);
  if (program === "hash" && event.args["p"] !== undefined) return "`hash -p`";
  if (program === "alias" && words.some((word) => word.includes("="))) return "`alias`";
  if (program === "enable" && words.length > 0) return "`enable`";
  return undefined;
}

/** Shell builtins: the shell runs them before it looks for a program of that name. */
const BUILTINS = new Set([
  "cd", "pushd", "popd", "dirs", "echo", "printf", "pwd", "test", "[", "read", "type", "command", "builtin", "hash", "true", "false", ":",
  "export", "unset", "local", "declare", "typeset", "readonly", "set", "shopt", "source", ".", "eval", "exec", "exit", "return", "shift",
  "break", "continue", "wait", "kill", "let", "trap", "alias", "unalias", "enable", "getopts", "mapfile", "readarray", "umask", "ulimit",
  "times", "jobs", "fg", "bg", "disown", "history", "help",
]);

/**
 * Whether programs are what their names say. A program the agent's user may have put there (in
 * the home directory, the project or a temporary directory: `./cat`, `~/.local/bin/cat` early on
 * PATH), or found while the line changes PATH or writes into one of its directories, may be any
 * program. Shell builtins, the system's programs and Vigil's own are what they say.
 */
class Programs {
  private readonly places: readonly string[];
  private readonly path: readonly string[];
  private readonly anyName: boolean;
  private readonly found = new Map<string, string | undefined>();

  constructor(line: LineShell, homes: readonly string[], events: readonly CallEvent[], cwd: string | undefined, private readonly scope: Scope) {
    this.places = [...homes, ...(cwd !== undefined ? [cwd] : []), tmpdir(), "/tmp", "/var/tmp", "/dev/shm"].filter((place) => place !== "/" && place !== "");
    this.path = (process.env["PATH"] ?? "").split(":").filter((directory) => isAbsolute(directory));
    // The line changes PATH, or writes into a directory of it (`cp /bin/rm ~/.local/bin/cat`).
    const writes = events.slice(1).flatMap((event) => ownEffects(event).filter((effect) => ["write", "link", "move", "chmod"].includes(effect.effect)));
    this.anyName =
      line.changes("PATH") ||
      writes.some((effect) => effect.words.some((word) => this.path.some((directory) => mayBeIn(pathWord(word, cwd, scope.words), directory))));
  }

  trusted(event: CallEvent, cwds: readonly (string | undefined)[]): boolean {
    const written = event.action === "awk" ? "awk" : event.args["program"];
    if (typeof written !== "string" || !/^[A-Za-z0-9_./+-]+$/.test(written)) return true;
    if (!written.includes("/")) {
      if (BUILTINS.has(written)) return true;
      if (this.anyName) return false;
      const directory = this.directoryOf(written);
      // Vigil's own command is what it says wherever Vigil is installed: `vigilc` in the
      // `node_modules/.bin` of an install in the project, the home directory or a temporary one is
      // a protected path, which the agent cannot have put there. Where Vigil is installed is not
      // the call's, and must not change the answer.
      return directory === undefined || this.protectedProgram(join(directory, written)) || !this.userPlace(directory);
    }
    // A program named by its path: what is at that path now, unless the agent's user keeps it.
    return cwds.every((cwd) => {
      const path = pathWord(written, cwd, this.scope.words);
      if (!path.exact || path.real === undefined) return false;
      if (this.scope.entries.some((entry) => mayName(path, entry.path) || (entry.tree === true && mayBeIn(path, entry.path)))) return true;
      return !this.anyName && !this.userPlace(posix.dirname(path.real));
    });
  }

  /** Whether the program at `path` (found on PATH) is a protected one, by its path or where its links lead. */
  private protectedProgram(path: string): boolean {
    const real = realPath(path);
    return this.scope.entries.some((entry) => [path, real].some((candidate) => candidate === entry.path || (entry.tree === true && candidate.startsWith(`${entry.path}/`))));
  }

  private userPlace(directory: string): boolean {
    const real = realPath(directory);
    return this.places.some((place) => [directory, real].some((candidate) => candidate === place || candidate.startsWith(`${place}/`)));
  }

  /** The directory on PATH the shell would run `name` from, if any. */
  private directoryOf(name: string): string | undefined {
    if (this.found.has(name)) return this.found.get(name);
    const directory = this.path.find((candidate) => {
      spend(LOOKUP_UNITS);
      try {
        return statSync(join(candidate, name)).isFile();
      } catch {
        return false;
      }
    });
    this.found.set(name, directory);
    return directory;
  }
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
function optionCommands(event: CallEvent): string[] {
  const table = OPTION_EFFECTS[event.action.split(" ")[0]!];
  const commands = (table?.commands ?? []).flatMap((key) => (event.args[key] === true ? textsOf(event.args) : strings(event.args[key])));
  // `git config core.fsmonitor CMD` sets a command Git runs later.
  if (event.action === "git config") commands.push(...positionalsOf(event.args).slice(1));
  return commands;
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
