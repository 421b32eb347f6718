import { describe, expect, it } from "vitest";
import { liveCallEvents, parseCommandLine, type SimpleCommand } from "@vigil/trace";

/**
 * Where each command of a line may run, as the line's walk says: each way of `cd`s from the line's
 * start the shell may have taken (a `cd` that may have failed leaves both), and whether it may be
 * in a directory the line does not show. Grounding takes the directory as known only when one way
 * leads there and names each directory as written; the ways are kept for a reader that knows more
 * of the shell (the runtime's guard), beside the events rather than among their arguments.
 */

/** The parsed command of a line whose first word is `name`. */
function command(line: string, name: string): SimpleCommand {
  const parsed = parseCommandLine(line);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.commands.find((each) => each.words[0] === name)!;
}

const step = (path: string, more: { physical?: boolean; unresolved?: true } = {}) => ({ path, physical: more.physical ?? false, ...(more.unresolved !== undefined ? { unresolved: true } : {}) });

describe("the ways to a command's directory", () => {
  it("keeps both ways after a cd that may have failed, the one through the cd first", () => {
    expect(command("cd x; cat y", "cat")).toMatchObject({ directoryUnknown: true, directories: { ways: [[step("x")], []], elsewhere: false } });
    expect(command("cd x || true; cat y", "cat")).toMatchObject({ directories: { ways: [[step("x")], []], elsewhere: false } });
  });

  it("knows the directory after a cd that succeeded, joining plain cds", () => {
    const cat = command("cd /a && cd b && cd .. && cat c", "cat");
    expect(cat.cd).toEqual([step("/a")]);
    expect(cat.directoryUnknown).toBeUndefined();
    // `cd a; cd ..` and no cd at all lead to the same directory: one way.
    expect(command("cd a && cd ..; cat y", "cat")).toMatchObject({ directories: { ways: [[], [step("a")]], elsewhere: false } });
  });

  it("keeps a cd whose word the shell expands, or a pushd, as a step grounding does not resolve", () => {
    expect(command('cd "$D" && cat x', "cat")).toMatchObject({ directoryUnknown: true, directories: { ways: [[step("$D", { unresolved: true })]], elsewhere: false } });
    expect(command("cd && cat x", "cat")).toMatchObject({ directories: { ways: [[step("~", { unresolved: true })]], elsewhere: false } });
    expect(command("pushd /p && cat x", "cat")).toMatchObject({ directories: { ways: [[step("/p", { unresolved: true })]], elsewhere: false } });
    expect(command("cd -P a && cat x", "cat").cd).toEqual([step("a", { physical: true })]);
  });

  it("may be elsewhere after what changes the directory as the line does not show", () => {
    for (const line of ["eval x; cat y", "source env.sh && cat y", "cd - && cat y", "popd && cat y", "go() { cd /p; }; go; cat y", "for d in a; do cd $d; done; cat y"]) {
      expect(command(line, "cat").directories?.elsewhere, line).toBe(true);
    }
    expect(command("cd /a; eval x; cat y", "cat")).toMatchObject({ directories: { ways: [[step("/a")], []], elsewhere: true } });
  });

  it("says where a cd leads when it succeeds", () => {
    expect(command("cd /a; cd b", "cd").leadsTo).toEqual({ ways: [[step("/a")]], elsewhere: false });
    expect(command("cd x; cd b; true", "true").directories?.ways).toHaveLength(4);
  });
});

describe("the directories of a live call's events", () => {
  it("gives each event's, by its index, from where the call runs, and keeps them out of the arguments", () => {
    const live = liveCallEvents({ action: "Bash", args: { command: "cd x; bash -c 'cd y && rm z'" } });
    expect(live.events.map((event) => event.action)).toEqual(["Bash", "cd", "bash", "cd", "rm"]);
    expect(live.directories).toEqual([
      { at: { ways: [[]], elsewhere: false } },
      { at: { ways: [[]], elsewhere: false }, to: { ways: [[step("x")]], elsewhere: false } },
      { at: { ways: [[step("x")], []], elsewhere: false } },
      { at: { ways: [[step("x")], []], elsewhere: false }, to: { ways: [[step("x"), step("y")], [step("y")]], elsewhere: false } },
      { at: { ways: [[step("x"), step("y")], [step("y")]], elsewhere: false } },
    ]);
    expect(JSON.stringify(live.events)).not.toMatch(/ways|elsewhere/);
  });

  it("places nothing it could not ground", () => {
    const live = liveCallEvents({ action: "Bash", args: { command: "x=$1; echo $((x))" } });
    expect(live.events.at(-1)).toMatchObject({ action: "unknown_command" });
    expect(live.directories.at(-1)).toBeUndefined();
  });
});
