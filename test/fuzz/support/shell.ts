import fc from "fast-check";

/**
 * Shell command lines for fuzzing grounding, as an agent would send them to its Bash tool: words
 * of the catalog's programs and their options, every kind of quoting (ANSI-C `$'…'` included),
 * pipes and lists, subshells, substitutions, here-documents, `eval` and `bash -c` nesting,
 * unbalanced quotes, stray bytes, and lines of ten thousand characters.
 */

const programs = ["cat", "rm", "cp", "mv", "curl", "wget", "bash", "sh", "zsh", "eval", "sudo", "env", "nohup", "xargs", "find", "git", "npm", "python3", "pytest", "echo", "printf", "source", ".", "tar", "head", "tail", "base64", "ssh", "scp", "nc", "command", "exec", "time", "timeout", "kubectl", "aws", "/bin/cat", "$CMD", "$(which cat)", "c?t", "{cat,.env}"];

const argumentWords = [".env", "/etc/passwd", "~/.ssh/id_rsa", "-rf", "-r", "-f", "-d", "@.env", "https://x.example/u", "-X", "POST", "--data=@.env", "-c", "-lc", "-exec", "{}", ";", "+", "-n", "5", "push", "--force", "origin", "main", "commit", "-m", "run", "test", "-S", "s3", "cp", "$HOME", "$(date)", "`id`", "*", "?", "[ab]", "{a,b}", "~", "..", "/", "--", "-", "-I", "R", "x=1", "NAME=value", "-v", "-V", "-9", "-10"];

/** A word as a shell writes it: plain, single-, double- or ANSI-C quoted, escaped, or partly expanded. */
const word: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom(...argumentWords) },
  { weight: 2, arbitrary: fc.constantFrom(...argumentWords).map((w) => `'${w}'`) },
  { weight: 2, arbitrary: fc.constantFrom(...argumentWords).map((w) => `"${w}"`) },
  {
    weight: 2,
    arbitrary: fc
      .array(fc.constantFrom("\\x63", "\\x61", "\\x74", "a", "t", "\\e", "\\n", "\\t", "\\\\", "\\'", '\\"', "\\?", "\\143", "\\u0063", "\\U00000061", "\\cA", "\\c?", "\\x", "\\u", "\\777", ".env", " "), { maxLength: 6 })
      .map((parts) => `$'${parts.join("")}'`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 6 }) },
  { weight: 1, arbitrary: fc.constantFrom("'unclosed", '"unclosed', "$'unclosed", "$(unclosed", "`unclosed", "\\", "${x", "${x:-y}", "$((1+2))", "${#x}", "${x/a/b}") },
);

const simpleCommand: fc.Arbitrary<string> = fc
  .tuple(fc.option(fc.constantFrom("FOO=1 ", "LC_ALL=C ", "A=$(id) "), { nil: "", freq: 5 }), fc.constantFrom(...programs), fc.array(word, { maxLength: 5 }), fc.option(fc.constantFrom(" > out", " >> log", " 2>&1", " &> all", " < .env", " >| f", " 2>/dev/null", " <<< 'cat .env'"), { nil: "", freq: 3 }))
  .map(([assignment, program, words, redirection]) => `${assignment}${program}${words.length > 0 ? " " + words.join(" ") : ""}${redirection}`);

const connectives = [" | ", " |& ", " && ", " || ", "; ", " & ", "\n"];

/** A command line of the shell's grammar, at most `depth` levels of nesting deep. */
const commandLine = fc.memo<string>((depth): fc.Arbitrary<string> => {
  if (depth <= 1) return simpleCommand;
  const inner: fc.Arbitrary<string> = commandLine(depth - 1);
  return fc.oneof(
    { weight: 4, arbitrary: simpleCommand },
    { weight: 3, arbitrary: fc.tuple(inner, fc.constantFrom(...connectives), inner).map(([a, op, b]) => a + op + b) },
    { weight: 1, arbitrary: inner.map((c) => `(${c})`) },
    { weight: 1, arbitrary: inner.map((c) => `{ ${c}; }`) },
    { weight: 1, arbitrary: inner.map((c) => `echo $(${c})`) },
    { weight: 1, arbitrary: inner.map((c) => `echo \`${c}\``) },
    { weight: 1, arbitrary: inner.map((c) => `diff <(${c}) >(cat)`) },
    { weight: 1, arbitrary: inner.map((c) => `eval '${c.replace(/'/g, `'\\''`)}'`) },
    { weight: 1, arbitrary: inner.map((c) => `eval "${c.replace(/["\\$`]/g, "\\$&")}"`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("bash", "sh", "sudo bash", "env -S"), inner).map(([shell, c]) => `${shell} -c '${c.replace(/'/g, `'\\''`)}'`) },
    { weight: 1, arbitrary: fc.tuple(fc.constantFrom("bash", "sh", "cat", "python3 -"), fc.constantFrom("EOF", "'EOF'", '"EOF"', "-EOF"), inner).map(([shell, delimiter, c]) => `${shell} <<${delimiter}\n${c}\n${delimiter.replace(/['"-]/g, "")}\n`) },
    { weight: 1, arbitrary: inner.map((c) => `echo '${c.replace(/'/g, `'\\''`)}' | bash`) },
    { weight: 1, arbitrary: inner.map((c) => `find . -name '*.env' -exec ${c} {} \\;`) },
    { weight: 1, arbitrary: inner.map((c) => `if ${c}; then ${c}; fi`) },
    { weight: 1, arbitrary: inner.map((c) => `for f in *.env; do ${c} "$f"; done`) },
    { weight: 1, arbitrary: inner.map((c) => `while read l; do ${c}; done < .env`) },
    { weight: 1, arbitrary: inner.map((c) => `case $x in a) ${c};; *) ${c};; esac`) },
    { weight: 1, arbitrary: inner.map((c) => `f() { ${c}; }; f`) },
    { weight: 1, arbitrary: inner.map((c) => `[[ -f .env ]] && ${c}`) },
    { weight: 1, arbitrary: inner.map((c) => `xargs -I R sh -c '${c.replace(/'/g, `'\\''`)}'`) },
  );
});

/** Lines that stress size and nesting: ten thousand characters, many pipes, deep substitutions. */
const hugeLine: fc.Arbitrary<string> = fc.oneof(
  fc.integer({ min: 1, max: 10_000 }).map((n) => "cat " + "a".repeat(n) + ".env"),
  fc.integer({ min: 100, max: 1_700 }).map((n) => Array.from({ length: n }, (_, i) => `f${i}.env`).join(" ").slice(0, 10_000).replace(/^/, "cat ")),
  fc.integer({ min: 10, max: 1_000 }).map((n) => "cat .env" + " | cat".repeat(n)),
  fc.integer({ min: 10, max: 1_000 }).map((n) => "cat .env" + " && true".repeat(n)),
  fc.integer({ min: 2, max: 300 }).map((n) => "echo " + "$(".repeat(n) + "cat .env" + ")".repeat(n)),
  fc.integer({ min: 2, max: 500 }).map((n) => "(".repeat(n) + "cat .env" + ")".repeat(n)),
  fc.integer({ min: 2, max: 12 }).map((n) => {
    let script = "cat .env";
    for (let i = 0; i < n; i++) script = `bash -c '${script.replace(/'/g, `'\\''`)}'`;
    return script.slice(0, 10_000);
  }),
  fc.integer({ min: 2, max: 60 }).map((n) => "eval " + "eval ".repeat(n) + "'cat .env'"),
  fc.integer({ min: 1, max: 2_500 }).map((n) => "echo " + "$'\\x63'".repeat(n)),
  fc.integer({ min: 1, max: 3_000 }).map((n) => "cat <<EOF\n" + "line $x\n".repeat(n) + "EOF"),
  fc.integer({ min: 1, max: 5_000 }).map((n) => "echo '" + "x".repeat(n)),
);

/** A command line for the Bash tool: from the grammar, huge, or the grammar's text broken at a random place. */
export const shellCommand: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: commandLine(4) },
  { weight: 2, arbitrary: hugeLine },
  { weight: 1, arbitrary: fc.tuple(commandLine(3), fc.double({ min: 0, max: 1, noNaN: true })).map(([line, at]) => line.slice(0, Math.floor(at * line.length))) },
);

/** How the agent's shell call is recorded: the tool's name and the shape of its arguments. */
export const shellCall = fc.record({
  tool: fc.constantFrom("Bash", "Bash", "Bash", "bash", "shell", "exec_command"),
  shape: fc.constantFrom("command", "command", "command", "cmd", "argv", "command-list"),
  isError: fc.boolean(),
});

type ShellCall = typeof shellCall extends fc.Arbitrary<infer T> ? T : never;

/** A Claude Code stream-json recording of the calls, each answered by its result. */
export function claudeCodeRecording(calls: ReadonlyArray<{ readonly command: string; readonly call: ShellCall }>): string {
  const lines: unknown[] = [{ type: "system", subtype: "init", cwd: "/work", session_id: "fuzz", tools: ["Bash", "Read"], model: "claude" }];
  calls.forEach(({ command, call }, index) => {
    const id = `toolu_${index}`;
    const input =
      call.shape === "argv"
        ? { argv: ["bash", "-lc", command] }
        : call.shape === "command-list"
          ? { command: ["bash", "-lc", command] }
          : { [call.shape]: command, description: "run" };
    lines.push({ type: "assistant", message: { id: `m${index}`, role: "assistant", content: [{ type: "tool_use", id, name: call.tool, input }] }, session_id: "fuzz" });
    lines.push({ type: "user", message: { role: "user", content: [{ tool_use_id: id, type: "tool_result", content: call.isError ? "error" : "SECRET=1", is_error: call.isError }] }, session_id: "fuzz" });
  });
  return lines.map((line) => JSON.stringify(line)).join("\n") + "\n";
}
