/**
 * The catalog of command-line tools that argument grounding knows: for each program, how many
 * subcommand words fold into the action (`git push`, `aws s3 cp`), the roles of its positional
 * arguments, the options that take a value and the flags that mean something, each under a role
 * name. It is plain data: add a tool by adding an entry (docs/grounding.md explains the format).
 * Beside it, at the end, the table of what programs do with the files they are given ({@link fileUse}).
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
 *   it reads on standard input, when that is known (with `stdinFlag`, also when given that flag:
 *   `sh -s ARGS`).
 * - The rest say which words are option values and which are operands (`optionalValues`,
 *   `pairOptions`, `dashOperands`, `subcommandOptions`, `optionsEnd`, `insteadOf`), what an
 *   interpreter reads as code on standard input (`stdinCode`), which roles name files (`paths`,
 *   taken against the working directory) and where the tool works (`workingDirectory`); each is
 *   described where it is declared below, and in docs/grounding.md.
 * - `effects`: what the tool writes, deletes or runs through its options ({@link ToolEffects}).
 *   Grounding does not read it; the runtime's guard does.
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
  readonly script?: { readonly role?: string; readonly words?: boolean; readonly fromFile?: string; readonly stdin?: boolean; readonly stdinFlag?: string };
  /** Per subcommand (the folded action's last word), options and flags of its own, in place of the tool's of the same name (`docker run -t` is a flag, `docker build -t NAME` an option). */
  readonly subcommandOptions?: Readonly<Record<string, { readonly options?: Readonly<Record<string, string>>; readonly flags?: Readonly<Record<string, string>> }>>;
  /** Options whose value is optional: attached (`-j4`, `--jobs=4`), or the next word when it is a number (`make -j 4`, not `make -j test`). */
  readonly optionalValues?: Readonly<Record<string, string>>;
  /** Options that take two words, a name and a value (`jq --arg NAME VALUE`): the role holds an object of them. */
  readonly pairOptions?: Readonly<Record<string, string>>;
  /** Words starting with a dash that are operands, not options (`chmod -x FILE`: the mode). */
  readonly dashOperands?: RegExp;
  /** Where options end: at the Nth operand (it and every word after it are operands), or after an option of one of these roles. */
  readonly optionsEnd?: { readonly operands?: number; readonly roles?: readonly string[] };
  /** An option's role that stands for a positional role: given the option, the positional words skip that role (`python -m M`: `module` for `script`). */
  readonly insteadOf?: Readonly<Record<string, string>>;
  /** The program runs its standard input as code under `role` (a here-document, `python3 - <<EOF`) when it is given none of the roles of `unless`. */
  readonly stdinCode?: { readonly role: string; readonly unless: readonly string[] };
  /** Roles whose values name files or directories on this machine: taken against the working directory where it is known. */
  readonly paths?: readonly string[];
  /**
   * Where the program (and, for a wrapper, the command it runs) works: in the directory an
   * option names (`git -C DIR`, `env -C DIR`), or, under a flag of `unknownWith` (`sudo -i`,
   * `su -`) or always (`chroot`), a directory the line does not show.
   */
  readonly workingDirectory?: { readonly role?: string; readonly unknownWith?: readonly string[]; readonly unknown?: boolean };
  /** What the tool does with the values of some of its options besides reading them: see {@link ToolEffects}. */
  readonly effects?: ToolEffects;
}

/**
 * What a tool does through its options, beyond reading the files they name: the files it writes,
 * whether it deletes what it is given, the commands it runs. Grounding does not use it (it names
 * roles, it does not judge them); the runtime's guard of Vigil's own state reads it. Each list
 * names the keys of the tool's grounded event: a role of the catalog, or, for an option the catalog
 * does not name, the key grounding gives it (`--hsts FILE` → `hsts`). An option grounding does
 * not know may come as `key: true`, with its value among the other words.
 */
export interface ToolEffects {
  /** Keys whose values are files the tool writes (`curl -D FILE`). */
  readonly writes?: readonly string[];
  /** Keys whose values are directories the tool writes anywhere under (`curl --output-dir DIR`). */
  readonly writesUnder?: readonly string[];
  /** Keys that, given at all, make the tool delete the files it is given (`tar --remove-files`). */
  readonly deletes?: readonly string[];
  /** Keys whose values are commands the tool runs (`tar --to-command=CMD`, `git -c core.fsmonitor=CMD`). */
  readonly executes?: readonly string[];
}

const recursive = { "-r": "recursive", "-R": "recursive", "--recursive": "recursive" };
/** Any value of the role names the file. */
const wholeValue = /^(.+)$/s;
/** A POSIX shell: `-c SCRIPT`, a script file (which it reads), or commands on standard input (`-s`, a here-document). */
const shell: ToolSpec = {
  positionals: ["script_file", "argument..."],
  options: { "-c": "script", "-o": "option", "-O": "shopt_option", "+o": "unset_option", "+O": "unset_shopt_option" },
  flags: { "-l": "login", "-e": "errexit", "-x": "xtrace", "-i": "interactive", "-s": "stdin" },
  script: { role: "script", fromFile: "script_file", stdin: true, stdinFlag: "stdin" },
  reads: { script_file: wholeValue },
  optionsEnd: { operands: 1 },
  insteadOf: { script: "script_file" },
  paths: ["script_file"],
};
/** `source FILE` (or `. FILE`) runs the file's commands in the current shell: it reads the file. */
const source: ToolSpec = { positionals: ["path", "argument..."], script: { fromFile: "path" }, reads: { path: wholeValue }, optionsEnd: { operands: 1 } };
const force = { "-f": "force", "--force": "force" };
const suffix = { "-S": "suffix", "--suffix": "suffix" };
/** A Python interpreter: `-c CODE`, `-m MODULE`, a script file, or its code on standard input; the words after any of these are the program's. */
const python: ToolSpec = {
  positionals: ["script", "argument..."],
  options: { "-c": "code", "-m": "module", "-W": "warnings", "-X": "implementation_option", "--check-hash-based-pycs": "check_hash_based_pycs" },
  optionsEnd: { operands: 1, roles: ["code", "module"] },
  insteadOf: { code: "script", module: "script" },
  stdinCode: { role: "code", unless: ["code", "module", "script"] },
  paths: ["script"],
};
const pip: ToolSpec = {
  subcommands: 1,
  subcommandPositionals: { install: ["package..."], uninstall: ["package..."] },
  options: {
    "-r": "requirements", "--requirement": "requirements", "-i": "index_url", "--index-url": "index_url", "--extra-index-url": "extra_index_url",
    "-c": "constraint", "--constraint": "constraint", "-e": "editable", "--editable": "editable", "-t": "target", "--target": "target",
    "-f": "find_links", "--find-links": "find_links", "--prefix": "prefix", "--root": "root", "--trusted-host": "trusted_host", "--cache-dir": "cache_dir",
    "--python": "python", "--platform": "platform", "--only-binary": "only_binary", "--no-binary": "no_binary", "--src": "src", "--log": "log",
    "--timeout": "timeout", "--proxy": "proxy", "-C": "config_settings", "--config-settings": "config_settings",
  },
  flags: { "-U": "upgrade", "--upgrade": "upgrade", "--user": "user" },
  paths: ["requirements", "constraint", "editable", "target", "prefix", "root", "cache_dir", "src", "log"],
};

export const toolCatalog: Readonly<Record<string, ToolSpec>> = {
  // Files.
  cp: {
    positionals: ["source...", "dest"],
    flags: { ...recursive, ...force, "-a": "archive", "-p": "preserve" },
    options: { "-t": "dest", "--target-directory": "dest", ...suffix },
    paths: ["source", "dest"],
  },
  mv: { positionals: ["source...", "dest"], flags: { ...force, "-n": "no_clobber" }, options: { "-t": "dest", "--target-directory": "dest", ...suffix }, paths: ["source", "dest"] },
  rm: { positionals: ["target..."], flags: { ...recursive, ...force, "-d": "dir", "-i": "interactive" }, paths: ["target"] },
  rmdir: { positionals: ["target..."], flags: { "-p": "parents" }, paths: ["target"] },
  mkdir: { positionals: ["path..."], flags: { "-p": "parents" }, options: { "-m": "mode", "--mode": "mode" }, paths: ["path"] },
  touch: { positionals: ["path..."], options: { "-d": "date", "--date": "date", "-r": "reference", "--reference": "reference", "-t": "timestamp" }, paths: ["path", "reference"] },
  ln: { positionals: ["target", "link"], flags: { "-s": "symbolic", ...force }, options: { "-t": "directory", "--target-directory": "directory", ...suffix }, paths: ["link", "directory"] },
  chmod: { positionals: ["mode", "path..."], flags: { "-R": "recursive", "--recursive": "recursive" }, dashOperands: /^-[rwxXst]+$/, paths: ["path"] },
  chown: { positionals: ["owner", "path..."], flags: recursive, paths: ["path"] },
  cat: { positionals: ["path..."], paths: ["path"] },
  head: { positionals: ["path..."], options: { "-n": "lines", "--lines": "lines", "-c": "bytes", "--bytes": "bytes" }, numberOption: "lines", paths: ["path"] },
  tail: {
    positionals: ["path..."],
    options: { "-n": "lines", "--lines": "lines", "-c": "bytes", "--bytes": "bytes", "-s": "sleep_interval", "--sleep-interval": "sleep_interval", "--pid": "pid" },
    flags: { "-f": "follow", "-F": "follow" },
    numberOption: "lines",
    paths: ["path"],
  },
  less: {
    positionals: ["path..."],
    options: { "-p": "pattern", "--pattern": "pattern", "-o": "log_file", "-O": "log_file", "-x": "tabs", "-P": "prompt", "-t": "tag", "-T": "tags_file", "-b": "buffers", "-h": "max_back_scroll", "-j": "jump_target", "-k": "lesskey_file", "-y": "max_forw_scroll", "-z": "window" },
    paths: ["path", "log_file", "tags_file", "lesskey_file"],
  },
  ls: {
    positionals: ["path..."],
    flags: { "-a": "all", "-l": "long", "-R": "recursive" },
    options: { "-I": "ignore", "--ignore": "ignore", "--hide": "hide", "-w": "width", "--width": "width", "-T": "tabsize", "--tabsize": "tabsize", "--sort": "sort", "--format": "format", "--time": "time" },
    paths: ["path"],
  },
  find: {
    positionals: ["path..."],
    options: {
      "-name": "name", "-iname": "name", "-type": "type", "-path": "match_path", "-maxdepth": "maxdepth", "-mindepth": "mindepth",
      "-ipath": "match_path", "-wholename": "match_path", "-iwholename": "match_path", "-regex": "regex", "-iregex": "regex", "-regextype": "regextype",
      "-lname": "lname", "-ilname": "lname", "-size": "size", "-perm": "perm", "-user": "user", "-group": "group", "-uid": "uid", "-gid": "gid",
      "-mtime": "mtime", "-atime": "atime", "-ctime": "ctime", "-mmin": "mmin", "-amin": "amin", "-cmin": "cmin", "-newer": "newer",
      "-anewer": "newer", "-cnewer": "newer", "-samefile": "samefile", "-links": "links", "-inum": "inum", "-fstype": "fstype", "-xtype": "xtype",
      "-printf": "printf", "-used": "used", "-context": "context",
    },
    flags: { "-delete": "delete" },
    commandOptions: { "-exec": "exec", "-execdir": "exec", "-ok": "exec", "-okdir": "exec" },
    paths: ["path", "newer", "samefile"],
  },
  grep: {
    positionals: ["pattern", "path..."],
    flags: { ...recursive, "-i": "ignore_case", "-l": "files_only", "-v": "invert" },
    options: {
      "-e": "pattern", "--regexp": "pattern", "--include": "include", "--exclude": "exclude", "--exclude-dir": "exclude_dir", "--exclude-from": "exclude_from",
      "-f": "pattern_file", "--file": "pattern_file", "-m": "max_count", "--max-count": "max_count", "-A": "after_context", "--after-context": "after_context",
      "-B": "before_context", "--before-context": "before_context", "-C": "context", "--context": "context", "--label": "label",
    },
    numberOption: "context",
    insteadOf: { pattern_file: "pattern" },
    paths: ["path", "pattern_file", "exclude_from"],
  },
  sed: {
    positionals: ["script", "path..."],
    flags: { "-i": "in_place", "-n": "quiet" },
    options: { "-e": "script", "--expression": "script", "-f": "script_file", "--file": "script_file", "-l": "line_length", "--line-length": "line_length" },
    insteadOf: { script_file: "script" },
    paths: ["path", "script_file"],
  },
  awk: {
    positionals: ["program", "path..."],
    options: { "-F": "separator", "-f": "program_file", "-v": "assign", "--assign": "assign", "--field-separator": "separator", "--file": "program_file" },
    insteadOf: { program_file: "program" },
    paths: ["path", "program_file"],
  },
  sort: {
    effects: { executes: ["compress_program"] },
    positionals: ["path..."],
    options: {
      "-o": "output", "--output": "output", "-k": "key", "--key": "key", "-t": "field_separator", "--field-separator": "field_separator",
      "-S": "buffer_size", "--buffer-size": "buffer_size", "-T": "temporary_directory", "--temporary-directory": "temporary_directory", "--parallel": "parallel",
      "--compress-program": "compress_program", "--files0-from": "files0_from",
    },
    flags: { "-r": "reverse", "-n": "numeric", "-u": "unique" },
    paths: ["path", "output", "temporary_directory", "files0_from"],
  },
  uniq: {
    positionals: ["input", "output"],
    flags: { "-c": "count" },
    options: { "-f": "skip_fields", "--skip-fields": "skip_fields", "-s": "skip_chars", "--skip-chars": "skip_chars", "-w": "check_chars", "--check-chars": "check_chars" },
    paths: ["input", "output"],
  },
  wc: { positionals: ["path..."], flags: { "-l": "lines" }, options: { "--files0-from": "files0_from" }, paths: ["path", "files0_from"] },
  diff: {
    positionals: ["from", "to"],
    flags: { "-u": "unified", ...recursive },
    options: {
      "-U": "context", "--unified": "context", "-C": "context", "-x": "exclude", "--exclude": "exclude", "-X": "exclude_from", "--exclude-from": "exclude_from",
      "-I": "ignore_matching_lines", "--ignore-matching-lines": "ignore_matching_lines", "-W": "width", "--width": "width", "-S": "starting_file",
      "--starting-file": "starting_file", "-L": "label", "--label": "label", "-F": "show_function_line", "--from-file": "from_file", "--to-file": "to_file",
    },
    paths: ["from", "to", "exclude_from", "from_file", "to_file"],
  },
  tee: { positionals: ["path..."], flags: { "-a": "append" }, paths: ["path"] },
  tar: {
    effects: {
      writes: ["index_file"],
      // `--remove-files` deletes what it puts in the archive.
      deletes: ["remove_files"],
      executes: ["to_command", "checkpoint_action", "use_compress_program", "I", "rsh_command", "info_script", "F", "new_volume_script"],
    },
    positionals: ["path..."],
    options: {
      "-f": "archive", "--file": "archive", "-C": "directory", "--directory": "directory", "-T": "files_from", "--files-from": "files_from",
      "-X": "exclude_from", "--exclude-from": "exclude_from", "--exclude": "exclude", "-I": "use_compress_program", "--use-compress-program": "use_compress_program",
      "-F": "info_script", "--info-script": "info_script", "-b": "blocking_factor", "--blocking-factor": "blocking_factor", "-H": "format", "--format": "format",
      "-N": "newer", "--newer": "newer", "-V": "label", "--label": "label", "-g": "listed_incremental", "--listed-incremental": "listed_incremental",
      "-K": "starting_file", "--starting-file": "starting_file", "-L": "tape_length", "--tape-length": "tape_length", "--owner": "owner", "--group": "group",
      "--mode": "mode", "--transform": "transform", "--strip-components": "strip_components",
    },
    flags: { "-c": "create", "-x": "extract", "-z": "gzip", "-v": "verbose", "-t": "list" },
    paths: ["archive", "directory", "files_from", "exclude_from"],
  },
  zip: {
    positionals: ["archive", "path..."],
    flags: { "-r": "recursive" },
    options: { "-x": "exclude", "--exclude": "exclude", "-i": "include", "--include": "include", "-P": "password", "--password": "password", "-b": "temp_path", "-n": "suffixes", "-Z": "compression_method" },
    paths: ["archive", "path", "temp_path"],
  },
  unzip: { positionals: ["archive", "member..."], options: { "-d": "directory", "-x": "exclude", "-P": "password" }, flags: { "-o": "overwrite" }, paths: ["archive", "directory"] },
  dd: { positionals: ["operand..."] },
  base64: { positionals: ["path"], flags: { "-d": "decode", "--decode": "decode" }, options: { "-w": "wrap", "--wrap": "wrap" }, paths: ["path"] },
  jq: {
    positionals: ["filter", "path..."],
    flags: { "-r": "raw" },
    options: { "-f": "filter_file", "--from-file": "filter_file", "--indent": "indent", "-L": "library_path" },
    pairOptions: { "--arg": "arg", "--argjson": "argjson", "--slurpfile": "slurpfile", "--rawfile": "rawfile" },
    insteadOf: { filter_file: "filter" },
    paths: ["path", "filter_file", "library_path"],
  },
  echo: { positionals: ["text..."], flags: { "-n": "no_newline", "-e": "escapes" } },
  printf: { positionals: ["format", "argument..."], options: { "-v": "variable" } },
  cd: { positionals: ["path"], paths: ["path"] },
  export: { positionals: ["assignment..."] },
  source: { ...source, paths: ["path"] },
  ".": { ...source, action: "source", paths: ["path"] },
  eval: { script: { role: "script", words: true } },
  // Network.
  curl: {
    effects: { writes: ["D", "dump_header", "c", "cookie_jar", "trace", "trace_ascii", "libcurl", "stderr", "etag_save", "hsts", "alt_svc"], writesUnder: ["output_dir"] },
    positionals: ["url..."],
    options: {
      "-X": "method", "--request": "method", "-d": "data", "--data": "data", "--data-raw": "data", "--data-binary": "data", "--data-ascii": "data", "--json": "data",
      "-F": "form", "--form": "form", "-o": "output", "--output": "output", "-H": "header", "--header": "header",
      "-u": "user", "--user": "user", "-T": "upload", "--upload-file": "upload", "--url": "url", "-A": "user_agent", "--user-agent": "user_agent",
      "-e": "referer", "--referer": "referer", "-b": "cookie", "--cookie": "cookie", "-c": "cookie_jar", "--cookie-jar": "cookie_jar", "-K": "config", "--config": "config",
      "-x": "proxy", "--proxy": "proxy", "-U": "proxy_user", "--proxy-user": "proxy_user", "-m": "max_time", "--max-time": "max_time", "--connect-timeout": "connect_timeout",
      "-r": "range", "--range": "range", "-w": "write_out", "--write-out": "write_out", "-D": "dump_header", "--dump-header": "dump_header",
      "-E": "cert", "--cert": "cert", "--key": "key", "--cacert": "cacert", "--capath": "capath", "--resolve": "resolve", "--retry": "retry", "--retry-delay": "retry_delay",
      "--retry-max-time": "retry_max_time", "--data-urlencode": "data_urlencode", "--limit-rate": "limit_rate", "--max-filesize": "max_filesize", "--interface": "interface",
      "-Q": "quote", "--quote": "quote", "-t": "telnet_option", "-P": "ftp_port", "-C": "continue_at", "--continue-at": "continue_at", "-Y": "speed_limit", "-y": "speed_time",
      "-z": "time_cond", "--trace": "trace", "--trace-ascii": "trace_ascii", "--stderr": "stderr", "--output-dir": "output_dir", "--oauth2-bearer": "oauth2_bearer",
      "--unix-socket": "unix_socket", "--variable": "variable", "--aws-sigv4": "aws_sigv4", "--libcurl": "libcurl", "--etag-save": "etag_save", "--etag-compare": "etag_compare",
    },
    flags: { "-L": "follow", "-s": "silent", "-k": "insecure", "--insecure": "insecure", "-O": "remote_name", "-f": "fail", "-I": "head" },
    // `-d @file` and `--data-binary @file` send a file's content; `-F name=@file` (or `=<file`) a
    // file in a form; `-T file` uploads one.
    reads: { data: /^@(.+)$/s, form: /^[^=]*=[@<]([^;]+)/s, upload: wholeValue },
    paths: ["output", "upload", "cookie_jar", "config", "dump_header", "cert", "key", "cacert", "capath", "trace", "trace_ascii", "stderr", "output_dir", "libcurl", "etag_save", "etag_compare"],
  },
  wget: {
    effects: { writes: ["o", "output_file", "a", "append_output", "save_cookies"] },
    positionals: ["url..."],
    options: {
      "-O": "output", "--output-document": "output", "-P": "directory", "--directory-prefix": "directory", "--post-data": "data", "--post-file": "post_file",
      "--body-file": "post_file", "--method": "method", "-o": "output_file", "--output-file": "output_file", "-a": "append_output", "--append-output": "append_output",
      "-i": "input_file", "--input-file": "input_file", "-t": "tries", "--tries": "tries", "-T": "timeout", "--timeout": "timeout", "-w": "wait", "--wait": "wait",
      "-U": "user_agent", "--user-agent": "user_agent", "--header": "header", "--user": "user", "--password": "password", "-e": "execute", "--execute": "execute",
      "-l": "level", "--level": "level", "-A": "accept", "--accept": "accept", "-R": "reject", "--reject": "reject", "-D": "domains", "--domains": "domains",
      "-X": "exclude_directories", "--exclude-directories": "exclude_directories", "-I": "include_directories", "--include-directories": "include_directories",
      "-B": "base", "--base": "base", "--load-cookies": "load_cookies", "--save-cookies": "save_cookies", "-Q": "quota", "--quota": "quota", "--limit-rate": "limit_rate",
      "--body-data": "data",
    },
    flags: { "-q": "quiet" },
    reads: { post_file: wholeValue },
    paths: ["output", "directory", "post_file", "output_file", "append_output", "input_file", "load_cookies", "save_cookies"],
  },
  ssh: {
    positionals: ["host", "command..."],
    options: {
      "-i": "identity", "-p": "port", "-l": "user", "-o": "option", "-F": "config", "-L": "local_forward", "-R": "remote_forward", "-D": "dynamic_forward",
      "-J": "jump", "-E": "log_file", "-b": "bind_address", "-B": "bind_interface", "-c": "cipher", "-m": "mac", "-e": "escape", "-W": "forward_stdio",
      "-w": "tunnel", "-O": "control_command", "-S": "control_path", "-Q": "query", "-I": "pkcs11",
    },
    optionsEnd: { operands: 2 },
    paths: ["identity", "config", "log_file", "control_path"],
  },
  scp: {
    positionals: ["source...", "dest"],
    options: { "-i": "identity", "-P": "port", "-F": "config", "-o": "option", "-c": "cipher", "-l": "limit", "-S": "program", "-J": "jump" },
    flags: recursive,
    paths: ["source", "dest", "identity", "config"],
  },
  rsync: {
    effects: { writes: ["log_file", "write_batch", "only_write_batch"], writesUnder: ["backup_dir", "temp_dir", "partial_dir"], executes: ["shell", "rsh", "rsync_path"] },
    positionals: ["source...", "dest"],
    options: {
      "-e": "shell", "--rsh": "rsh", "--exclude": "exclude", "--include": "include", "--exclude-from": "exclude_from", "--include-from": "include_from",
      "--files-from": "files_from", "-f": "filter", "--filter": "filter", "--rsync-path": "rsync_path", "--log-file": "log_file", "--password-file": "password_file",
      "--chmod": "chmod", "--chown": "chown", "-B": "block_size", "--block-size": "block_size", "-T": "temp_dir", "--temp-dir": "temp_dir",
      "--partial-dir": "partial_dir", "--backup-dir": "backup_dir", "--suffix": "suffix", "--max-size": "max_size", "--min-size": "min_size", "--bwlimit": "bwlimit",
      "--timeout": "timeout", "--port": "port", "--compare-dest": "compare_dest", "--copy-dest": "copy_dest", "--link-dest": "link_dest", "-M": "remote_option",
      "--remote-option": "remote_option", "--out-format": "out_format", "--info": "info", "--debug": "debug", "--write-batch": "write_batch",
      "--only-write-batch": "only_write_batch", "--read-batch": "read_batch",
    },
    flags: { "-a": "archive", "-v": "verbose", "-z": "compress", "--delete": "delete", ...recursive },
    paths: ["source", "dest", "exclude_from", "include_from", "files_from", "log_file", "password_file", "temp_dir", "partial_dir", "backup_dir", "write_batch", "only_write_batch", "read_batch"],
  },
  nc: {
    positionals: ["host", "port"],
    flags: { "-l": "listen" },
    options: { "-p": "local_port", "-w": "timeout", "-s": "source", "-e": "exec", "-c": "command", "-x": "proxy", "-X": "proxy_protocol", "-i": "interval", "-q": "quit_after", "-I": "receive_buffer", "-O": "send_buffer", "-T": "tos", "-V": "rtable" },
  },
  // Development.
  git: {
    // `git log --output=FILE` and its kin; `git -c core.fsmonitor=CMD status` runs CMD.
    effects: { writes: ["output"], executes: ["config"] },
    subcommands: 1,
    options: {
      "-m": "message", "--message": "message", "-b": "branch", "-C": "directory", "-c": "config", "--git-dir": "git_dir", "--work-tree": "work_tree",
      "--namespace": "namespace", "-F": "message_file", "--author": "author", "--date": "date", "--depth": "depth", "--reference": "reference",
      "--template": "template", "--branch": "branch", "--origin": "origin", "--upload-pack": "upload_pack", "--receive-pack": "receive_pack",
      "--set-upstream-to": "set_upstream_to", "--push-option": "push_option", "--strategy": "strategy", "--strategy-option": "strategy_option",
      "-X": "strategy_option", "--onto": "onto", "--since": "since", "--until": "until", "--after": "since", "--before": "until",
      "--max-count": "max_count", "--committer": "committer", "--grep": "grep", "-U": "unified", "--unified": "unified",
    },
    flags: { ...force, "--force-with-lease": "force", "-a": "all", "--all": "all", "--hard": "hard", "--amend": "amend", "-d": "delete", "-D": "delete" },
    numberOption: "max_count",
    // `git log -n 5`, but `git commit -n` (no verify); `git branch -m OLD NEW` renames.
    subcommandOptions: { log: { options: { "-n": "max_count" } }, branch: { flags: { "-m": "move", "-M": "move", "-c": "copy", "-C": "copy" } } },
    subcommandPositionals: { clone: ["repository", "directory"], push: ["remote", "refspec..."], pull: ["remote", "refspec..."], fetch: ["remote", "refspec..."], checkout: ["target..."], add: ["path..."], rm: ["path..."], commit: [], reset: ["target..."], merge: ["branch..."], rebase: ["upstream", "branch"], branch: ["name..."], tag: ["name", "commit"], diff: ["target..."], log: ["target..."], show: ["object..."] },
    paths: ["directory", "path", "git_dir", "work_tree", "message_file", "template", "reference"],
    workingDirectory: { role: "directory" },
  },
  npm: {
    subcommands: 1,
    subcommandPositionals: { install: ["package..."], i: ["package..."], uninstall: ["package..."], run: ["script", "argument..."], publish: ["path"], exec: ["command..."], test: [] },
    flags: { "-g": "global", "--global": "global", "-D": "dev", "--save-dev": "dev" },
    options: { "--prefix": "prefix", "-w": "workspace", "--workspace": "workspace", "--registry": "registry", "--tag": "tag", "--otp": "otp", "--access": "access" },
    paths: ["prefix"],
  },
  npx: { positionals: ["package", "argument..."], flags: { "-y": "yes", "--yes": "yes" }, options: { "-p": "package", "--package": "package", "-c": "call", "--call": "call" } },
  pnpm: { subcommands: 1, subcommandPositionals: { add: ["package..."], install: ["package..."], run: ["script", "argument..."] }, options: { "-C": "directory", "--dir": "directory", "--filter": "filter", "-F": "filter" }, paths: ["directory"], workingDirectory: { role: "directory" } },
  yarn: { subcommands: 1, subcommandPositionals: { add: ["package..."], run: ["script", "argument..."] }, options: { "--cwd": "directory" }, paths: ["directory"], workingDirectory: { role: "directory" } },
  pip,
  pip3: pip,
  python,
  python3: python,
  node: {
    positionals: ["script", "argument..."],
    options: { "-e": "code", "--eval": "code", "-p": "code", "--print": "code", "-r": "require", "--require": "require", "--import": "import", "--loader": "loader", "-C": "conditions", "--conditions": "conditions", "--input-type": "input_type", "--env-file": "env_file", "--title": "title" },
    optionsEnd: { operands: 1, roles: ["code"] },
    insteadOf: { code: "script" },
    stdinCode: { role: "code", unless: ["code", "script"] },
    paths: ["script", "env_file"],
  },
  make: {
    positionals: ["target..."],
    options: { "-C": "directory", "--directory": "directory", "-f": "makefile", "--file": "makefile", "--makefile": "makefile", "-I": "include_dir", "--include-dir": "include_dir", "-o": "old_file", "--old-file": "old_file", "-W": "what_if", "--what-if": "what_if" },
    optionalValues: { "-j": "jobs", "--jobs": "jobs", "-l": "load_average", "--load-average": "load_average" },
    paths: ["directory", "makefile", "include_dir"],
    workingDirectory: { role: "directory" },
  },
  docker: {
    subcommands: 1,
    options: {
      "-v": "volume", "--volume": "volume", "-e": "env", "--env": "env", "-p": "publish", "--publish": "publish", "--name": "name", "-t": "tag", "--tag": "tag", "-f": "file", "--file": "file",
      "--network": "network", "-u": "user", "--user": "user", "-w": "workdir", "--workdir": "workdir", "--entrypoint": "entrypoint", "--env-file": "env_file", "--mount": "mount",
      "--platform": "platform", "-m": "memory", "--memory": "memory", "--restart": "restart", "--hostname": "hostname", "--add-host": "add_host", "--cap-add": "cap_add",
      "--cap-drop": "cap_drop", "--security-opt": "security_opt", "--device": "device", "--gpus": "gpus", "--build-arg": "build_arg", "--target": "target",
      "-l": "label", "--label": "label", "--expose": "expose", "--link": "link", "--volumes-from": "volumes_from", "--log-opt": "log_opt", "--log-driver": "log_driver",
      "--format": "format", "--filter": "filter", "--cidfile": "cidfile", "--pid": "pid", "--ipc": "ipc", "--ulimit": "ulimit", "--shm-size": "shm_size", "--cpus": "cpus",
      "--tmpfs": "tmpfs", "--dns": "dns", "-H": "host", "--host": "host", "--context": "context", "--config": "config",
    },
    flags: { "--rm": "remove", "-d": "detach", "-i": "interactive", "--privileged": "privileged", ...force },
    subcommandPositionals: { run: ["image", "command..."], exec: ["container", "command..."], build: ["context"], pull: ["image"], push: ["image"], rm: ["container..."], rmi: ["image..."], stop: ["container..."], cp: ["source", "dest"] },
    // `docker run -it IMAGE`: `-t` is a terminal there, a tag for `docker build`.
    subcommandOptions: { run: { flags: { "-t": "tty", "--tty": "tty" } }, exec: { flags: { "-t": "tty", "--tty": "tty" } }, create: { flags: { "-t": "tty", "--tty": "tty" } } },
    optionsEnd: { operands: 3 },
    paths: ["file", "env_file", "cidfile"],
  },
  kubectl: {
    subcommands: 1,
    options: {
      "-n": "namespace", "--namespace": "namespace", "-f": "file", "--filename": "file", "-o": "output", "--output": "output", "-l": "selector", "--selector": "selector",
      "--context": "context", "-c": "container", "--container": "container", "--kubeconfig": "kubeconfig", "--cluster": "cluster", "--user": "user", "--token": "token",
      "-s": "server", "--server": "server", "--field-selector": "field_selector", "--sort-by": "sort_by", "--timeout": "timeout", "--replicas": "replicas", "--image": "image",
      "--type": "type", "--port": "port", "--grace-period": "grace_period", "--since": "since", "--tail": "tail", "-k": "kustomize", "--kustomize": "kustomize", "--template": "template",
    },
    flags: { "-A": "all_namespaces", "--all-namespaces": "all_namespaces", "--force": "force" },
    subcommandPositionals: { get: ["resource", "name..."], describe: ["resource", "name..."], delete: ["resource", "name..."], apply: [], exec: ["pod", "command..."], logs: ["pod"], scale: ["resource"], rollout: ["action", "resource"] },
    paths: ["kubeconfig", "kustomize"],
  },
  aws: {
    subcommands: 2,
    options: {
      "--region": "region", "--profile": "profile", "--bucket": "bucket", "--key": "key", "--endpoint-url": "endpoint_url", "--output": "output", "--query": "query",
      "--exclude": "exclude", "--include": "include", "--acl": "acl", "--sse": "sse", "--storage-class": "storage_class", "--cli-input-json": "cli_input_json", "--body": "body",
    },
    flags: { "--recursive": "recursive", "--dryrun": "dry_run" },
    subcommandPositionals: { cp: ["source", "dest"], mv: ["source", "dest"], rm: ["target"], ls: ["path"], sync: ["source", "dest"] },
    paths: ["source", "dest", "body"],
  },
  gcloud: {
    subcommands: 2,
    options: { "--project": "project", "--region": "region", "--zone": "zone", "--format": "format", "--filter": "filter", "--account": "account", "--configuration": "configuration", "--limit": "limit", "--impersonate-service-account": "impersonate_service_account" },
  },
  az: {
    subcommands: 2,
    options: { "--resource-group": "resource_group", "-g": "resource_group", "--name": "name", "-n": "name", "--subscription": "subscription", "--output": "output", "-o": "output", "--query": "query", "--location": "location", "-l": "location", "--ids": "ids" },
  },
  databricks: { subcommands: 1, options: { "-p": "profile", "--profile": "profile", "--json": "json", "-o": "output", "--output": "output", "-t": "target", "--target": "target" }, flags: { "--version": "version" } },
  terraform: {
    subcommands: 1,
    options: {
      "-var": "var", "-var-file": "var_file", "-target": "target_resource", "-chdir": "directory", "-out": "out", "-state": "state", "-state-out": "state_out",
      "-backend-config": "backend_config", "-lock-timeout": "lock_timeout", "-parallelism": "parallelism", "-replace": "replace",
    },
    flags: { "-auto-approve": "auto_approve", "-destroy": "destroy" },
    paths: ["var_file", "directory", "out", "state", "state_out"],
    workingDirectory: { role: "directory" },
  },
  gh: {
    subcommands: 2,
    options: {
      "-R": "repo", "--repo": "repo", "-t": "title", "--title": "title", "-b": "body", "--body": "body", "-F": "field", "--field": "field", "-f": "raw_field",
      "--raw-field": "raw_field", "-X": "method", "--method": "method", "-H": "header", "--header": "header", "-q": "jq", "--jq": "jq", "--json": "json",
      "-L": "limit", "--limit": "limit", "-s": "state", "--state": "state", "-l": "label", "--label": "label", "-a": "assignee", "--assignee": "assignee",
      "-B": "base", "--base": "base", "--head": "head", "--search": "search", "--input": "input", "-T": "template", "--template": "template", "-p": "project",
      "--project": "project", "-m": "milestone", "--milestone": "milestone", "-r": "reviewer", "--reviewer": "reviewer", "--body-file": "body_file", "-A": "author", "--author": "author",
    },
    paths: ["input", "body_file"],
  },
  openssl: {
    subcommands: 1,
    options: {
      "-in": "input", "-out": "output", "-k": "password", "-pass": "password", "-passin": "password", "-passout": "password_out", "-key": "key", "-inkey": "key",
      "-keyout": "key_out", "-CAfile": "ca_file", "-CApath": "ca_path", "-cert": "cert", "-certfile": "cert_file", "-md": "digest", "-subj": "subject", "-days": "days",
      "-newkey": "new_key", "-config": "config", "-extensions": "extensions", "-connect": "connect", "-servername": "server_name", "-cipher": "cipher", "-iter": "iterations",
      "-K": "raw_key", "-iv": "iv", "-S": "salt_value",
    },
    paths: ["input", "output", "key", "key_out", "ca_file", "ca_path", "cert", "cert_file", "config"],
  },
  // Shells: `bash -c SCRIPT` runs SCRIPT, whose commands are grounded after the shell's own event.
  bash: { ...shell, options: { ...shell.options, "--rcfile": "rcfile", "--init-file": "rcfile" }, flags: { ...shell.flags, "--login": "login", "--norc": "norc", "--noprofile": "noprofile" } },
  sh: shell,
  zsh: shell,
  dash: shell,
  // Processes and wrappers.
  kill: { positionals: ["pid..."], options: { "-s": "signal", "-n": "signal" }, numberOption: "signal" },
  pkill: {
    positionals: ["pattern"],
    flags: { "-f": "full", "-x": "exact", "-n": "newest", "-o": "oldest", "-i": "ignore_case", "-c": "count", "-e": "echo" },
    options: { "-u": "euid", "-U": "uid", "-g": "pgroup", "-G": "group", "-P": "parent", "-s": "session", "-t": "terminal", "--signal": "signal" },
    numberOption: "signal",
  },
  ps: { positionals: [], options: { "-o": "format", "-p": "pid", "-u": "user", "-U": "real_user", "-C": "command", "-G": "group", "-g": "session", "-t": "tty", "--sort": "sort" } },
  // Wrappers: each runs the rest of its words as a command, which is grounded with `via` naming it.
  sudo: {
    wrapper: {},
    options: { "-u": "user", "-g": "group", "-D": "directory", "--chdir": "directory", "-p": "prompt", "-C": "close_from", "-r": "role", "-t": "type", "-T": "command_timeout", "-R": "chroot", "--chroot": "chroot", "-U": "other_user" },
    flags: { "-i": "login", "--login": "login", "-s": "shell", "--shell": "shell", "-E": "preserve_env", "-H": "set_home", "-n": "non_interactive", "-b": "background", "-k": "reset_timestamp", "-S": "stdin", "-A": "askpass" },
    paths: ["directory", "chroot"],
    workingDirectory: { role: "directory", unknownWith: ["login", "chroot"] },
  },
  env: {
    wrapper: { split: "split_string" },
    options: { "-S": "split_string", "--split-string": "split_string", "-u": "unset", "--unset": "unset", "-C": "directory", "--chdir": "directory" },
    flags: { "-i": "ignore_environment", "--ignore-environment": "ignore_environment", "-0": "null" },
    paths: ["directory"],
    workingDirectory: { role: "directory" },
  },
  nohup: { wrapper: {} },
  setsid: { wrapper: {}, flags: { "-f": "fork", "--fork": "fork", "-w": "wait", "--wait": "wait" } },
  stdbuf: { wrapper: {}, options: { "-i": "input", "--input": "input", "-o": "output", "--output": "output", "-e": "error", "--error": "error" } },
  ionice: { wrapper: {}, options: { "-c": "class", "--class": "class", "-n": "level", "--classdata": "level", "-p": "pid", "--pid": "pid", "-P": "pgid", "--pgid": "pgid", "-u": "uid", "--uid": "uid" }, flags: { "-t": "ignore" } },
  // `watch CMD`: runs CMD again and again; `watch` joins its words into one shell command (as `eval`).
  watch: {
    options: { "-n": "interval", "--interval": "interval" },
    flags: { "-d": "differences", "--differences": "differences", "-t": "no_title", "--no-title": "no_title", "-x": "exec", "--exec": "exec", "-e": "errexit", "-g": "chgexit", "-b": "beep" },
    script: { role: "script", words: true },
  },
  // `su [-] [USER] -c SCRIPT`, `runuser -u USER -- CMD`: another user runs the script, as a shell would.
  su: {
    positionals: ["user"],
    options: { "-c": "script", "--command": "script", "-s": "shell", "--shell": "shell", "-g": "group", "--group": "group", "-G": "supplementary_group", "--supp-group": "supplementary_group", "--session-command": "script", "-w": "whitelist_environment", "--whitelist-environment": "whitelist_environment" },
    flags: { "-": "login", "-l": "login", "--login": "login" },
    script: { role: "script" },
    workingDirectory: { unknownWith: ["login"] },
  },
  runuser: { wrapper: {}, options: { "-u": "user", "--user": "user", "-g": "group", "--group": "group", "-G": "supplementary_group" }, flags: { "-": "login", "-l": "login", "--login": "login" }, workingDirectory: { unknownWith: ["login"] } },
  chroot: { wrapper: { skip: 1 }, options: { "--userspec": "user", "--groups": "groups" }, workingDirectory: { unknown: true } },
  nice: { wrapper: {}, options: { "-n": "adjustment", "--adjustment": "adjustment" }, numberOption: "adjustment" },
  time: { wrapper: {}, options: { "-o": "output", "--output": "output", "-f": "format", "--format": "format" }, flags: { "-p": "posix", "-v": "verbose", "-a": "append" }, paths: ["output"] },
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
    options: {
      "-I": "replace", "-n": "max_args", "--max-args": "max_args", "-L": "max_lines", "--max-lines": "max_lines", "-P": "max_procs", "--max-procs": "max_procs",
      "-d": "delimiter", "--delimiter": "delimiter", "-E": "eof", "-s": "max_chars", "--max-chars": "max_chars", "-a": "arguments_file", "--arg-file": "arguments_file",
    },
    flags: { "-0": "null", "--null": "null", "-r": "no_run_if_empty", "--no-run-if-empty": "no_run_if_empty", "-t": "verbose", "--verbose": "verbose", "-p": "interactive", "--interactive": "interactive", "-x": "exit", "--exit": "exit" },
    paths: ["arguments_file"],
  },
};

/**
 * Effects of tools the catalog does not ground (their words stay `arg1`, `arg2`, …, and their
 * options keys of their own names), known all the same.
 */
const uncatalogedEffects: Readonly<Record<string, ToolEffects>> = {
  rg: { executes: ["pre"] },
};

/** What the program `name` does through its options (see {@link ToolEffects}), when that is known. */
export function toolEffects(name: string): ToolEffects | undefined {
  if (Object.hasOwn(toolCatalog, name)) return toolCatalog[name]!.effects;
  return Object.hasOwn(uncatalogedEffects, name) ? uncatalogedEffects[name] : undefined;
}

/**
 * What a program or tool does with the files it is given, for those that treat every operand alike
 * whatever their options. Grounding does not read it (it names roles, it does not judge them); the
 * runtime's guard of Vigil's own state does, and models every other program it knows one by one.
 *
 * - `reads-only`: reads the files it is given and never changes one (`cat`, `git diff`, Claude
 *   Code's `Read`, the MCP filesystem server's `read_file`).
 * - `no-files`: changes no file and reads no file's content: its words are text, names, or paths
 *   whose content it does not show (`echo "$f"` is not a read of whatever `$f` names; `ls`, `stat`).
 * - `deletes-operands`: deletes the files and directories it is given, whole (`rimraf`, `trash`).
 */
export type FileUse = "reads-only" | "no-files" | "deletes-operands";

/**
 * The programs and tools of each {@link FileUse}: a program's name, or an action as grounding
 * folds it (`git status`) or as an agent's tool is called (`Read`, `read_file`). A name is in one
 * list at most.
 */
const programFileUses: Readonly<Record<FileUse, readonly string[]>> = {
  "reads-only": [
    "cat", "head", "tail", "less", "more", "wc", "diff", "cmp", "file",
    "sha256sum", "sha1sum", "md5sum", "cksum", "b2sum", "jq", "nl", "od", "xxd", "hexdump", "strings", "column", "cut", "tr", "comm",
    "git status", "git diff", "git log", "git show", "git blame", "git ls-files", "git rev-parse", "git add", "git commit", "git fetch", "git remote",
    "git grep", "git describe", "git shortlog", "git push",
    // Claude Code's own tools that read, and the MCP filesystem server's.
    "Read", "Grep", "Glob", "LS", "NotebookRead", "WebFetch", "WebSearch", "TodoWrite", "TodoRead", "Task", "ExitPlanMode", "BashOutput", "KillShell", "Skill", "SlashCommand",
    "read_file", "read_text_file", "read_media_file", "read_multiple_files", "list_directory", "list_directory_with_sizes", "directory_tree", "search_files", "get_file_info", "list_allowed_directories",
  ],
  "no-files": [
    "cd", "pushd", "popd", "dirs", "exit", "return", "set", "shopt", "export", "unset", "local", "declare", "typeset", "readonly",
    "shift", "wait", "break", "continue", ":", "sleep", "umask", "ulimit", "hash", "times", "trap",
    "echo", "printf", "pwd", "which", "type", "command", "test", "[", "true", "false", "date", "basename", "dirname", "realpath", "readlink",
    "stat", "ls", "du", "df", "tree", "read",
  ],
  "deletes-operands": ["rimraf", "del", "del-cli", "trash", "trash-put", "trash-cli", "rmtrash", "srm", "wipe"],
};

const fileUseByName: ReadonlyMap<string, FileUse> = new Map(
  (Object.entries(programFileUses) as [FileUse, readonly string[]][]).flatMap(([use, names]) => names.map((name) => [name, use] as const)),
);

/** What the program or tool `name` does with the files it is given (see {@link FileUse}), when that is known. */
export function fileUse(name: string): FileUse | undefined {
  return fileUseByName.get(name);
}
