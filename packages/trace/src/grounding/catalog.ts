/**
 * The catalog of command-line tools that argument grounding knows: for each program, how many
 * subcommand words fold into the action (`git push`, `aws s3 cp`), the roles of its positional
 * arguments, the options that take a value and the flags that mean something, each under a role
 * name. It is plain data: add a tool by adding an entry (docs/grounding.md explains the format).
 *
 * - `positionals`: role names in order. A name ending in `...` takes every positional argument not
 *   claimed by the names after it (so `cp`'s `["source...", "dest"]` makes the last one `dest`).
 *   Positionals beyond the names become `arg1`, `arg2`, ….
 * - `options`: flags that take a value (`-o FILE`, `--output FILE`, `--output=FILE`) → role.
 * - `flags`: flags without a value → role (set to `true`).
 * - `subcommands`: how many leading positional words name a subcommand (default 0).
 * - `wrapper`: the tool runs the rest of its words as a command (`sudo`, `env`, `timeout 5`);
 *   `skip` positionals are its own (the duration of `timeout`). With `unless`, a flag's role under
 *   which it runs nothing (`command -v git` only names `git`); with `split`, an option's role whose
 *   value is split into words that start the command (`env -S "cat .env"`); with `stdinArguments`,
 *   the command gets more arguments from standard input (`xargs rm`).
 * - `commandOptions`: options followed by a command the tool runs, up to a `;` word (or `{} +`):
 *   `find . -exec rm {} ;`. The role holds the command's words, and the command's events follow
 *   the tool's.
 * - `numberOption`: the role of a word `-N`, a dash and digits (`nice -10`, `kill -9`).
 * - `action`: the action's name when it is not the program's (`.` is `source`).
 * - `reads`: roles whose values name a file the tool reads, by a pattern whose first group is the
 *   path (`curl -d @secret.txt` reads `secret.txt`). Each such file becomes a `read` event before
 *   the command's own, so a rule about reading a file sees reads hidden inside arguments.
 * - `script`: the role whose value is a command line the tool runs (`bash -c SCRIPT`); its
 *   commands are grounded after the tool's own event. With `words`, the script is the tool's
 *   words after its name, joined by spaces, as `eval` makes it. `fromFile` is the role of a script
 *   file it runs (whose text the trace does not hold); with `stdin`, a tool given neither runs what
 *   it reads on standard input, when that is known.
 */
export interface ToolSpec {
  readonly positionals?: readonly string[];
  readonly options?: Readonly<Record<string, string>>;
  readonly flags?: Readonly<Record<string, string>>;
  readonly subcommands?: number;
  /** Per subcommand (the folded action's last word), positional roles that replace `positionals`. */
  readonly subcommandPositionals?: Readonly<Record<string, readonly string[]>>;
  readonly wrapper?: { readonly skip?: number; readonly unless?: string; readonly split?: string; readonly stdinArguments?: boolean };
  readonly commandOptions?: Readonly<Record<string, string>>;
  readonly numberOption?: string;
  readonly action?: string;
  readonly reads?: Readonly<Record<string, RegExp>>;
  readonly script?: { readonly role?: string; readonly words?: boolean; readonly fromFile?: string; readonly stdin?: boolean };
}

const recursive = { "-r": "recursive", "-R": "recursive", "--recursive": "recursive" };
/** Any value of the role names the file. */
const wholeValue = /^(.+)$/s;
/** A POSIX shell: `-c SCRIPT`, a script file (which it reads), or commands on standard input. */
const shell: ToolSpec = {
  positionals: ["script_file", "argument..."],
  options: { "-c": "script" },
  flags: { "-l": "login", "-e": "errexit", "-x": "xtrace", "-i": "interactive" },
  script: { role: "script", fromFile: "script_file", stdin: true },
  reads: { script_file: wholeValue },
};
/** `source FILE` (or `. FILE`) runs the file's commands in the current shell: it reads the file. */
const source: ToolSpec = { positionals: ["path", "argument..."], script: { fromFile: "path" }, reads: { path: wholeValue } };
const force = { "-f": "force", "--force": "force" };

export const toolCatalog: Readonly<Record<string, ToolSpec>> = {
  // Files.
  cp: { positionals: ["source...", "dest"], flags: { ...recursive, ...force, "-a": "archive", "-p": "preserve" }, options: { "-t": "dest", "--target-directory": "dest" } },
  mv: { positionals: ["source...", "dest"], flags: { ...force, "-n": "no_clobber" }, options: { "-t": "dest", "--target-directory": "dest" } },
  rm: { positionals: ["target..."], flags: { ...recursive, ...force, "-d": "dir", "-i": "interactive" } },
  rmdir: { positionals: ["target..."], flags: { "-p": "parents" } },
  mkdir: { positionals: ["path..."], flags: { "-p": "parents" }, options: { "-m": "mode", "--mode": "mode" } },
  touch: { positionals: ["path..."] },
  ln: { positionals: ["target", "link"], flags: { "-s": "symbolic", ...force } },
  chmod: { positionals: ["mode", "path..."], flags: recursive },
  chown: { positionals: ["owner", "path..."], flags: recursive },
  cat: { positionals: ["path..."] },
  head: { positionals: ["path..."], options: { "-n": "lines", "-c": "bytes" } },
  tail: { positionals: ["path..."], options: { "-n": "lines", "-c": "bytes" }, flags: { "-f": "follow" } },
  less: { positionals: ["path..."] },
  ls: { positionals: ["path..."], flags: { "-a": "all", "-l": "long", "-R": "recursive" } },
  find: {
    positionals: ["path..."],
    options: { "-name": "name", "-iname": "name", "-type": "type", "-path": "match_path", "-maxdepth": "maxdepth", "-mindepth": "mindepth" },
    flags: { "-delete": "delete" },
    commandOptions: { "-exec": "exec", "-execdir": "exec", "-ok": "exec", "-okdir": "exec" },
  },
  grep: { positionals: ["pattern", "path..."], flags: { ...recursive, "-i": "ignore_case", "-l": "files_only", "-v": "invert" }, options: { "-e": "pattern", "--include": "include" } },
  sed: { positionals: ["script", "path..."], flags: { "-i": "in_place", "-n": "quiet" }, options: { "-e": "script" } },
  awk: { positionals: ["program", "path..."], options: { "-F": "separator", "-f": "program_file" } },
  sort: { positionals: ["path..."], options: { "-o": "output", "-k": "key" }, flags: { "-r": "reverse", "-n": "numeric", "-u": "unique" } },
  uniq: { positionals: ["input", "output"], flags: { "-c": "count" } },
  wc: { positionals: ["path..."], flags: { "-l": "lines" } },
  diff: { positionals: ["from", "to"], flags: { "-u": "unified", ...recursive } },
  tee: { positionals: ["path..."], flags: { "-a": "append" } },
  tar: { positionals: ["path..."], options: { "-f": "archive", "--file": "archive", "-C": "directory" }, flags: { "-c": "create", "-x": "extract", "-z": "gzip", "-v": "verbose", "-t": "list" } },
  zip: { positionals: ["archive", "path..."], flags: { "-r": "recursive" } },
  unzip: { positionals: ["archive", "member..."], options: { "-d": "directory" }, flags: { "-o": "overwrite" } },
  dd: { positionals: ["operand..."] },
  base64: { positionals: ["path"], flags: { "-d": "decode", "--decode": "decode" } },
  jq: { positionals: ["filter", "path..."], flags: { "-r": "raw" } },
  echo: { positionals: ["text..."], flags: { "-n": "no_newline", "-e": "escapes" } },
  printf: { positionals: ["format", "argument..."] },
  cd: { positionals: ["path"] },
  export: { positionals: ["assignment..."] },
  source,
  ".": { ...source, action: "source" },
  eval: { script: { role: "script", words: true } },
  // Network.
  curl: {
    positionals: ["url..."],
    options: {
      "-X": "method", "--request": "method", "-d": "data", "--data": "data", "--data-raw": "data", "--data-binary": "data",
      "-F": "form", "--form": "form", "-o": "output", "--output": "output", "-H": "header", "--header": "header",
      "-u": "user", "--user": "user", "-T": "upload", "--upload-file": "upload", "--url": "url", "-A": "user_agent",
    },
    flags: { "-L": "follow", "-s": "silent", "-k": "insecure", "--insecure": "insecure", "-O": "remote_name", "-f": "fail", "-I": "head" },
    // `-d @file` and `--data-binary @file` send a file's content; `-F name=@file` (or `=<file`) a
    // file in a form; `-T file` uploads one.
    reads: { data: /^@(.+)$/s, form: /^[^=]*=[@<]([^;]+)/s, upload: wholeValue },
  },
  wget: {
    positionals: ["url..."],
    options: { "-O": "output", "--output-document": "output", "-P": "directory", "--post-data": "data", "--post-file": "post_file", "--body-file": "post_file", "--method": "method" },
    flags: { "-q": "quiet" },
    reads: { post_file: wholeValue },
  },
  ssh: { positionals: ["host", "command..."], options: { "-i": "identity", "-p": "port", "-l": "user", "-o": "option" } },
  scp: { positionals: ["source...", "dest"], options: { "-i": "identity", "-P": "port" }, flags: recursive },
  rsync: { positionals: ["source...", "dest"], options: { "-e": "shell", "--exclude": "exclude" }, flags: { "-a": "archive", "-v": "verbose", "-z": "compress", "--delete": "delete", ...recursive } },
  nc: { positionals: ["host", "port"], flags: { "-l": "listen" }, options: { "-p": "local_port" } },
  // Development.
  git: {
    subcommands: 1,
    options: { "-m": "message", "--message": "message", "-b": "branch", "-C": "directory", "-c": "config" },
    flags: { ...force, "--force-with-lease": "force", "-a": "all", "--all": "all", "--hard": "hard", "--amend": "amend", "-d": "delete", "-D": "delete" },
    subcommandPositionals: { clone: ["repository", "directory"], push: ["remote", "refspec..."], pull: ["remote", "refspec..."], fetch: ["remote", "refspec..."], checkout: ["target..."], add: ["path..."], rm: ["path..."], commit: [], reset: ["target..."], merge: ["branch..."], rebase: ["upstream", "branch"], branch: ["name..."], tag: ["name", "commit"], diff: ["target..."], log: ["target..."], show: ["object..."] },
  },
  npm: { subcommands: 1, subcommandPositionals: { install: ["package..."], i: ["package..."], uninstall: ["package..."], run: ["script", "argument..."], publish: ["path"], exec: ["command..."], test: [] }, flags: { "-g": "global", "--global": "global", "-D": "dev", "--save-dev": "dev" } },
  npx: { positionals: ["package", "argument..."], flags: { "-y": "yes", "--yes": "yes" }, options: { "-p": "package", "--package": "package" } },
  pnpm: { subcommands: 1, subcommandPositionals: { add: ["package..."], install: ["package..."], run: ["script", "argument..."] } },
  yarn: { subcommands: 1, subcommandPositionals: { add: ["package..."], run: ["script", "argument..."] } },
  pip: { subcommands: 1, subcommandPositionals: { install: ["package..."], uninstall: ["package..."] }, options: { "-r": "requirements", "--requirement": "requirements", "-i": "index_url", "--index-url": "index_url" }, flags: { "-U": "upgrade", "--upgrade": "upgrade", "--user": "user" } },
  pip3: { subcommands: 1, subcommandPositionals: { install: ["package..."], uninstall: ["package..."] }, options: { "-r": "requirements", "-i": "index_url" }, flags: { "-U": "upgrade" } },
  python: { positionals: ["script", "argument..."], options: { "-c": "code", "-m": "module" } },
  python3: { positionals: ["script", "argument..."], options: { "-c": "code", "-m": "module" } },
  node: { positionals: ["script", "argument..."], options: { "-e": "code", "--eval": "code" } },
  make: { positionals: ["target..."], options: { "-C": "directory", "-f": "makefile", "-j": "jobs" } },
  docker: {
    subcommands: 1,
    options: { "-v": "volume", "--volume": "volume", "-e": "env", "--env": "env", "-p": "publish", "--name": "name", "-t": "tag", "-f": "file", "--network": "network", "-u": "user", "-w": "workdir" },
    flags: { "--rm": "remove", "-d": "detach", "-i": "interactive", "--privileged": "privileged", ...force },
    subcommandPositionals: { run: ["image", "command..."], exec: ["container", "command..."], build: ["context"], pull: ["image"], push: ["image"], rm: ["container..."], rmi: ["image..."], stop: ["container..."], cp: ["source", "dest"] },
  },
  kubectl: {
    subcommands: 1,
    options: { "-n": "namespace", "--namespace": "namespace", "-f": "file", "--filename": "file", "-o": "output", "-l": "selector", "--context": "context", "-c": "container" },
    flags: { "-A": "all_namespaces", "--all-namespaces": "all_namespaces", "--force": "force" },
    subcommandPositionals: { get: ["resource", "name..."], describe: ["resource", "name..."], delete: ["resource", "name..."], apply: [], exec: ["pod", "command..."], logs: ["pod"], scale: ["resource"], rollout: ["action", "resource"] },
  },
  aws: { subcommands: 2, options: { "--region": "region", "--profile": "profile", "--bucket": "bucket", "--key": "key" }, flags: { "--recursive": "recursive", "--dryrun": "dry_run" }, subcommandPositionals: { cp: ["source", "dest"], mv: ["source", "dest"], rm: ["target"], ls: ["path"], sync: ["source", "dest"] } },
  gcloud: { subcommands: 2, options: { "--project": "project", "--region": "region", "--zone": "zone" } },
  az: { subcommands: 2, options: { "--resource-group": "resource_group", "-g": "resource_group", "--name": "name", "-n": "name" } },
  databricks: { subcommands: 1, options: { "-p": "profile", "--profile": "profile", "--json": "json" }, flags: { "--version": "version" } },
  terraform: { subcommands: 1, options: { "-var": "var", "-var-file": "var_file", "-target": "target_resource" }, flags: { "-auto-approve": "auto_approve", "-destroy": "destroy" } },
  gh: { subcommands: 2, options: { "-R": "repo", "--repo": "repo", "-t": "title", "--title": "title", "-b": "body", "--body": "body" } },
  openssl: { subcommands: 1, options: { "-in": "input", "-out": "output", "-k": "password", "-pass": "password" } },
  // Shells: `bash -c SCRIPT` runs SCRIPT, whose commands are grounded after the shell's own event.
  bash: { ...shell, flags: { ...shell.flags, "--login": "login" } },
  sh: shell,
  zsh: shell,
  dash: shell,
  // Processes and wrappers.
  kill: { positionals: ["pid..."], options: { "-s": "signal" }, numberOption: "signal" },
  pkill: { positionals: ["pattern"], options: { "-f": "full" } },
  ps: { positionals: [] },
  // Wrappers: each runs the rest of its words as a command, which is grounded with `via` naming it.
  sudo: { wrapper: {}, options: { "-u": "user" } },
  env: {
    wrapper: { split: "split_string" },
    options: { "-S": "split_string", "--split-string": "split_string", "-u": "unset", "--unset": "unset", "-C": "directory", "--chdir": "directory" },
    flags: { "-i": "ignore_environment", "--ignore-environment": "ignore_environment", "-0": "null" },
  },
  nohup: { wrapper: {} },
  setsid: { wrapper: {}, flags: { "-f": "fork", "--fork": "fork", "-w": "wait", "--wait": "wait" } },
  stdbuf: { wrapper: {}, options: { "-i": "input", "--input": "input", "-o": "output", "--output": "output", "-e": "error", "--error": "error" } },
  ionice: { wrapper: {}, options: { "-c": "class", "--class": "class", "-n": "level", "--classdata": "level" }, flags: { "-t": "ignore" } },
  // `watch CMD`: runs CMD again and again; `watch` joins its words into one shell command (as `eval`).
  watch: {
    options: { "-n": "interval", "--interval": "interval" },
    flags: { "-d": "differences", "--differences": "differences", "-t": "no_title", "--no-title": "no_title", "-x": "exec", "--exec": "exec", "-e": "errexit", "-g": "chgexit", "-b": "beep" },
    script: { role: "script", words: true },
  },
  // `su [-] [USER] -c SCRIPT`, `runuser -u USER -- CMD`: another user runs the script, as a shell would.
  su: { positionals: ["user"], options: { "-c": "script", "--command": "script", "-s": "shell", "--shell": "shell" }, flags: { "-": "login", "-l": "login", "--login": "login" }, script: { role: "script" } },
  runuser: { wrapper: {}, options: { "-u": "user", "--user": "user", "-g": "group" }, flags: { "-": "login", "-l": "login" } },
  chroot: { wrapper: { skip: 1 }, options: { "--userspec": "user" } },
  nice: { wrapper: {}, options: { "-n": "adjustment", "--adjustment": "adjustment" }, numberOption: "adjustment" },
  time: { wrapper: {}, options: { "-o": "output", "-f": "format" }, flags: { "-p": "posix", "-v": "verbose" } },
  timeout: {
    wrapper: { skip: 1 },
    options: { "-s": "signal", "--signal": "signal", "-k": "kill_after", "--kill-after": "kill_after" },
    flags: { "--preserve-status": "preserve_status", "--foreground": "foreground", "-v": "verbose", "--verbose": "verbose" },
  },
  command: { wrapper: { unless: "describe" }, positionals: ["name..."], flags: { "-p": "default_path", "-v": "describe", "-V": "describe" } },
  builtin: { wrapper: {} },
  exec: { wrapper: {}, options: { "-a": "name" }, flags: { "-c": "clean_environment", "-l": "login" } },
  xargs: {
    wrapper: { stdinArguments: true },
    options: { "-I": "replace", "-n": "max_args", "-L": "max_lines", "-P": "max_procs", "-d": "delimiter", "-E": "eof", "-s": "max_chars", "-a": "arguments_file" },
    flags: { "-0": "null", "-r": "no_run_if_empty", "-t": "verbose", "-p": "interactive", "-x": "exit" },
  },
};
