import { compile, judgeRun, type EngineName } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * List indexes on a grounded shell recording, end to end: each command's words are under `argv`, in
 * order, and `argv.0`, `argv.1` name them one by one, in every engine, with no closed-world warning.
 */
const call = (id: string, command: string) =>
  JSON.stringify({ type: "assistant", session_id: "s", message: { content: [{ type: "tool_use", id, name: "Bash", input: { command } }] } });
const result = (id: string) => JSON.stringify({ type: "user", session_id: "s", message: { content: [{ type: "tool_result", tool_use_id: id, content: "" }] } });
const recording =
  [
    call("1", "git log -n 1 main"),
    result("1"),
    call("2", "git push --force origin main"),
    result("2"),
    call("3", "rm -rf /tmp/build && git push origin main"),
    result("3"),
  ].join("\n") + "\n";

const policy = compile(
  [
    "policy shell {",
    '  pattern git = program in {"git"}',
    '  rule no_force_push: abs(git and argv.0 in {"push"} and argv.1 in {"--force", "-f"})',
    '  rule push_second_word: abs(git and argv.0 in {"push"} and argv.1 ~ "or*")',
    "  rule recursive_rm: abs(action in {rm} and argv.0 matches /^-[a-z]*r/)",
    '  rule logged_branch: prec(git and argv.0 in {"push"} and argv.2 = $b, git and argv.0 in {"log"} and argv.3 = $b)',
    '  rule any_word: abs(git and argv ~ "--force")',
    "}",
    "",
  ].join("\n"),
);

describe("list indexes on a grounded Bash recording", () => {
  it("compiles without a diagnostic", () => {
    expect(policy.diagnostics).toEqual([]);
  });

  it.each<EngineName>(["eval", "smt", "monitor"])("names each word of a command by its place (%s)", async (engine) => {
    const judged = await judgeRun(policy, { file: "run.jsonl", text: recording }, { engine, keepEvents: true });
    expect(judged.traceDiagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const events = judged.events!;
    const words = events.filter((e) => e.args["argv"] !== undefined).map((e) => [e.action, e.args["argv"]]);
    expect(words).toEqual([
      ["git log", ["log", "-n", "1", "main"]],
      ["git push", ["push", "--force", "origin", "main"]],
      ["rm", ["-rf", "/tmp/build"]],
      ["git push", ["push", "origin", "main"]],
    ]);
    const positionOf = (...argv: string[]) => events.find((e) => JSON.stringify(e.args["argv"]) === JSON.stringify(argv))!.position;
    const verdicts = Object.fromEntries(judged.report!.statements.map((s) => [s.name, [s.holds, s.witnesses]]));
    expect(verdicts).toEqual({
      no_force_push: [false, [positionOf("push", "--force", "origin", "main")]],
      // `argv.1` is the second word only: "--force" is not "or*"; the second push has "origin" there.
      push_second_word: [false, [positionOf("push", "origin", "main")]],
      recursive_rm: [false, [positionOf("-rf", "/tmp/build")]],
      // The branch pushed (third word) must have been logged (fourth word): "main" was, "origin" never.
      logged_branch: [false, [positionOf("push", "--force", "origin", "main")]],
      any_word: [false, [positionOf("push", "--force", "origin", "main")]],
    });
    // Every path is in the run's signature (`argv` holds lists of up to four words): no V1102. The
    // one note is true: no word of any command is "-f".
    expect(judged.signatureDiagnostics.map((d) => `${d.code} ${d.message}`)).toEqual(['V1103 the value "-f" never occurs under `argv.1` in the trace']);
  });

  it("warns of an index past every command's words, and of a list read as an object", async () => {
    const beyond = compile('policy p {\n  rule r: abs(argv.4 in {"x"})\n  rule s: abs(argv."0" in {"push"})\n}\n');
    const judged = await judgeRun(beyond, { file: "run.jsonl", text: recording });
    expect(judged.signatureDiagnostics.map((d) => `${d.code} ${d.message}${d.fix !== undefined ? ` (${d.help})` : ""}`)).toEqual([
      "V1102 no event of the trace has an argument `argv.4`: the longest list under `argv` has 4 elements, so a condition on it is false",
      'V1102 no event of the trace has an argument `argv."0"`, so a condition on it is false (did you mean `argv.0`?)',
    ]);
  });
});
