import { homedir } from "node:os";
import { isAbsolute, posix, resolve } from "node:path";
import { evaluatedValueSafe, isJsonObject, shellToolNames, type EvaluatedAs } from "@vigil/trace";
import { readCall, type CallEvent } from "./call-events.js";
import { programOf, strings, textsOf } from "./guard-arguments.js";
import { effectsOf, findScope, opaqueUse, optionCommands, ownEffects, trapCommand, type FindScope, type PathEffect } from "./guard-effects.js";
import { describeHit, type GuardFinding } from "./guard-findings.js";
import { gitMayChange, gitSpares } from "./guard-git.js";
import { environmentVariables, exactOrUnknown, lineShell, WorkingDirectories, type LineShell } from "./guard-line-shell.js";
import { childWord, fileIdentity, mayBeIn, mayHold, mayName, pathWord, realPath, sharedFileIdentity, spend, withinWork, WorkBudgetExceeded, type PathWord, type WordContext } from "./guard-paths.js";
import { Programs, redefinition } from "./guard-programs.js";
import { claudeSettingsEntries, directoryFiles, mentions, namedBy, type ProtectedPath } from "./guard-protected.js";
import type { GuardContext, Scope, Variables } from "./guard-scope.js";
import { vigilInvocation, vigilReinstall } from "./guard-vigil.js";

// The guard's API, from the modules that hold each part of it.
export type { Effect } from "./guard-effects.js";
export type { GuardFinding, GuardRule } from "./guard-findings.js";
export { describeFindings, findingsJson } from "./guard-findings.js";
export type { ProtectedPath } from "./guard-protected.js";
export { databaseFiles, stateToSeal } from "./guard-protected.js";
export type { GuardContext } from "./guard-scope.js";
export { vigilCodeDirectory, vigilCodePaths } from "./guard-vigil.js";

/**
 * The guard: what no policy can forget. The agent being policed runs commands as the same user as
 * Vigil, so it could delete the enforcement database (and with it the run's state: an earlier
 * secret read forgotten), rewrite the policy, remove the hook from Claude Code's settings, or run
 * Vigil itself to forge an event. The guard refuses such a call before it runs, whatever the
 * policy says, in every enforcement entry point. It looks at the call's events as grounded (a
 * shell call is the commands it runs, with their redirections), so it sees `rm`, `mv`, `>`, `sed
 * -i`, `ln`, `chmod`, `git clean`, `find -delete`, a database client or `vigilc` given a protected
 * path, and the Write and Edit tools, with relative paths taken against the directory each command
 * runs in (the working directory, moved by the `cd`s grounding says ran before the command, in
 * each way they may have: a `cd` that may have failed leaves the shell where it was too), and a
 * word the shell would expand (a glob, a variable, a command substitution) taken as every path it
 * may become.
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
    // The directories each command may run in, as grounding says the shell gets there, worked out
    // before any is checked: a trap's command runs wherever the shell is when it fires.
    const directories = new WorkingDirectories(context.cwd !== undefined && isAbsolute(context.cwd) ? context.cwd : undefined, scope.words);
    const placed = events.map((event, index) => ((index === 0 && shellToolNames.includes(event.action)) || event.action === "unknown_command" ? [] : directories.of(event, index)));
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
      const cwds = placed[index]!;
      // A `cd` changes no file; where it leads, grounding says of the commands after it.
      if (program === "cd" || program === "pushd" || program === "popd") return;
      // Per command: `git -C DIR`, `tar -C DIR`, `make -C DIR`, `env -C DIR` run in another directory.
      const own = strings(event.args["directory"] ?? event.args["env_directory"])[0];
      const here = own !== undefined ? [...new Set(cwds.map((cwd) => exactOrUnknown(pathWord(own, cwd, scope.words))))] : cwds;
      const effects = effectsOf(event, find);
      // A program the agent's user may have put in place of the one its name says (`./cat`, a `cat`
      // of its own early on PATH) keeps the model of that one, and is also one the guard cannot follow.
      if (!effects.some((effect) => effect.opaque === true) && !programs.trusted(event, here)) effects.push(opaqueUse(event));
      if (effects.some((effect) => effect.opaque === true) && event.args["program"] !== undefined) opaque = true;
      for (const finding of this.checkEvent(event, effects, here, directories.from(index), scope, depth, context.env)) found(finding);
      if (program === "find") find = findScope(event);
    });
    findings.push(...this.checkLine(command, events, directories.all, scope, opaque));
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

  /**
   * The findings against one command of the call, given its effects, the directories it may run in
   * (`here`), and those the shell may be in from it on (`later`).
   */
  private checkEvent(
    event: CallEvent,
    effects: readonly PathEffect[],
    here: readonly (string | undefined)[],
    later: readonly (string | undefined)[],
    scope: Scope,
    depth: number,
    env: GuardContext["env"],
  ): Omit<GuardFinding, "event">[] {
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
    // A command an option runs (`git -c core.fsmonitor=CMD`, `tar --to-command=CMD`) is checked as
    // a command line, in each directory the command may run in.
    for (const script of optionCommands(event)) {
      const refused = this.checkCommandText(script, here, depth);
      if (refused !== undefined) findings.push({ ...refused, message: `\`${program}\` runs \`${script.slice(0, 120)}\`: ${refused.message}` });
    }
    // `trap 'CMD' EXIT`: the shell runs CMD later, itself, with the line's variables, wherever it
    // is then: where a command from the trap on may run, or a `cd` from it on may lead.
    const trapped = trapCommand(event);
    if (trapped !== undefined) {
      const refused = this.checkCommandText(trapped, [...new Set([...here, ...later])], depth, false, { variables: scope.words.variable ?? (() => undefined), ...(env !== undefined ? { env } : {}) });
      if (refused !== undefined) findings.push({ ...refused, message: `\`trap\` runs \`${trapped.slice(0, 120)}\`: ${refused.message}` });
    }
    // A sed script may run a command (`1e CMD`), and the strings in the code of a program the
    // guard cannot follow may be paths (`glob('.v*')`) or commands (`system("rm -rf .v*")`). A
    // sed script is checked in each directory sed may run in; the strings of a program's code, up
    // to a few dozen, in the first known one (the line's text, which holds them, is checked for a
    // protected path in every directory: see `checkLine`).
    const runsIn = [here.find((cwd) => cwd !== undefined)];
    const code = [...(event.action === "sed" ? strings(event.args["script"]) : []), ...(opaque ? stringLiterals(effects.flatMap((effect) => effect.texts ?? [])) : [])];
    for (const text of code.slice(0, MAXIMUM_CODE_STRINGS)) {
      // In code, `$x` and `${x}` are the language's own (`"$1\n"` in Perl): such a string is no path pattern.
      const path = event.action !== "sed" && !/[$`{]/.test(text);
      const named = path ? here.map((cwd) => this.hit({ effect: "use", words: [text], tree: false }, cwd, scope)).find((entry) => entry !== undefined) : undefined;
      if (named !== undefined) {
        findings.push({ guard: "protected_path", response: "block", path: named.path, what: named.what, effect: "use", message: `\`${program}\` is given code naming \`${named.path}\`, ${named.what} (\`${text.slice(0, 80)}\`)` });
        continue;
      }
      const refused = this.checkCommandText(text, event.action === "sed" ? here : runsIn, depth, true);
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
   * The first finding against a command line an option runs, if any, run in any of `cwds`.
   * `lenient`: the text may not be a command at all (a string in a program's code, a sed script),
   * so what cannot be known of it is not held against it; only what it would do to a protected
   * path or to Vigil is.
   */
  private checkCommandText(
    script: string,
    cwds: readonly (string | undefined)[],
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
      for (const cwd of new Set(cwds)) {
        const context: GuardContext = { ...(cwd !== undefined ? { cwd } : {}), notes: read.notes, ...(shell?.env !== undefined ? { env: shell.env } : {}) };
        const refused = this.checkAt(read.events, context, depth + 1, shell?.variables).filter((finding) => !lenient || finding.guard !== "unknown_command");
        if (refused[0] !== undefined) return refused[0];
      }
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
