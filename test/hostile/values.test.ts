import { afterAll, describe, expect, it } from "vitest";
import { policyOf, scratchDirectory, vigilcInProcess } from "./support.js";

/**
 * Values that JavaScript reads wrongly unless told otherwise (integers past 2^53, numbers past the
 * largest double, keys named `__proto__`), control characters that a terminal obeys rather than
 * prints, and option combinations that must not be half-honoured.
 */

const scratch = scratchDirectory("values");
afterAll(() => scratch.remove());

const ESC = "\u001b";

describe("numbers and keys that JavaScript reads wrongly", () => {
  it("an integer past 2^53 never silently matches its rounded value", async () => {
    const policy = scratch.file("acct.vigil", policyOf("abs(acct in {9007199254740992})"));
    const trace = scratch.file("acct.jsonl", '{"action":"a","args":{"acct":9007199254740993}}\n');
    const run = await vigilcInProcess(["check", policy, "--trace", trace], { cwd: scratch.path });
    // 9007199254740993 read as a double is 9007199254740992: a violation here would be a false one.
    expect(run.code).not.toBe(1);
    if (run.code === 2) {
      // Refused: the error names the integer, the field and where it is.
      expect(run.stderr).toContain("9007199254740993");
      expect(run.stderr).toContain("args.acct");
      expect(run.stderr).toContain("acct.jsonl:1:");
    } else {
      // Handled exactly: 9007199254740993 is not 9007199254740992, so the rule holds.
      expect(run.code).toBe(0);
    }
  });

  it("an argument named __proto__ is an argument like any other: abs(__proto__ in {\"evil\"}) is violated", async () => {
    const policy = scratch.file("proto.vigil", policyOf('abs(__proto__ in {"evil"})'));
    const trace = scratch.file("proto.jsonl", '{"action":"a","args":{"__proto__":"evil"}}\n');
    const run = await vigilcInProcess(["check", policy, "--trace", trace, "--format", "json"], { cwd: scratch.path });
    expect(run.code).toBe(1);
    expect(JSON.parse(run.stdout).statements[0]).toMatchObject({ holds: false, witnesses: [1] });
  });

  it("1E400 is a located error naming the field", async () => {
    const policy = scratch.file("huge.vigil", policyOf("abs(n in {1})"));
    const trace = scratch.file("huge.jsonl", '{"action":"a","args":{"m":1}}\n{"action":"a","args":{"n":1E400}}\n');
    const run = await vigilcInProcess(["check", policy, "--trace", trace], { cwd: scratch.path });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toContain("args.n");
    expect(run.stderr).toContain("line 2");
    expect(run.stderr).toContain("huge.jsonl:2:");
  });
});

describe("a raw ESC in an action name", () => {
  // A terminal obeys ESC sequences: `\u001b[2J` clears the screen, `\u001b]0;…\u0007` retitles it.
  const action = `x${ESC}[31mred${ESC}]0;title\u0007`;
  const trace = scratch.file("esc.jsonl", JSON.stringify({ action, args: { path: `p${ESC}[2J` } }) + "\n" + JSON.stringify({ action: "y" }) + "\n");
  // The rule names the action with escapes, so the witness (and its name) is printed; a near name
  // makes a closed-world warning that suggests the real one.
  const policy = scratch.file("esc.vigil", policyOf('abs(action in {"x\\u001b[31mred\\u001b]0;title\\u0007"})', 'abs(action in {"x\\u001b[31mre"})'));

  it("check prints it escaped, in the human and the JSON report", async () => {
    for (const format of ["human", "json"]) {
      const run = await vigilcInProcess(["check", policy, "--trace", trace, "--format", format], { cwd: scratch.path });
      expect(run.code).toBe(1);
      expect(run.stdout, `stdout of check --format ${format}`).not.toContain(ESC);
      expect(run.stderr, `stderr of check --format ${format}`).not.toContain(ESC);
      expect(run.stdout + run.stderr).toContain("\\u001b");
    }
  });

  it("signature prints it escaped, in the human and the JSON form", async () => {
    for (const format of ["human", "json"]) {
      const run = await vigilcInProcess(["signature", trace, "--format", format], { cwd: scratch.path });
      expect(run.code).toBe(0);
      expect(run.stdout, `stdout of signature --format ${format}`).not.toContain(ESC);
      expect(run.stderr, `stderr of signature --format ${format}`).not.toContain(ESC);
      expect(run.stdout).toContain("\\u001b");
    }
  });

  it("lower, whose script is read in terminals too, writes the name escaped in its comments", async () => {
    const run = await vigilcInProcess(["lower", policy, "--trace", trace], { cwd: scratch.path });
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("(check-sat-assuming");
    expect(run.stdout, "stdout of lower").not.toContain(ESC);
  });

  it("a code frame of a policy holding control bytes shows them escaped", async () => {
    // Raw control characters inside a string (V0004) and outside one (V0003), and a bidi override.
    const broken = scratch.file("control.vigil", `policy p {\n  rule r: abs(action in {"a${ESC}[2Jb"}) ${ESC}[31m junk\n  rule s: abs(action in {"\u202eevil"}) \u0007\n}\n`);
    const run = await vigilcInProcess(["check", broken, "--trace", trace], { cwd: scratch.path });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("V0004");
    expect(run.stderr).not.toContain(ESC);
    expect(run.stderr).not.toContain("\u0007");
    expect(run.stderr).not.toContain("\u202e");
  });

  it("a code frame of a trace line holding control bytes shows them escaped", async () => {
    // A raw ESC inside a JSON string is not JSON (T0001): the frame quotes the line.
    const malformed = scratch.file("control.jsonl", `{"action":"a${ESC}[2J","args":{}}\n`);
    const run = await vigilcInProcess(["check", policy, "--trace", malformed], { cwd: scratch.path });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain("control.jsonl:1");
    expect(run.stderr).not.toContain(ESC);
  });
});

describe("--trace and --schema together", () => {
  it("are refused with a message (exit 2), never --schema silently ignored", async () => {
    const policy = scratch.file("schema.vigil", policyOf("abs(action in {read_file})"));
    const trace = scratch.file("schema.jsonl", '{"action":"read_file","args":{"path":"x"}}\n');
    const schema = scratch.file("tools.json", JSON.stringify({ tools: [{ name: "read_file", inputSchema: { type: "object", properties: { path: { type: "string" } } } }] }));
    for (const argv of [
      ["check", policy, "--trace", trace, "--schema", schema],
      ["check", policy, "--schema", schema, "--trace", trace],
    ]) {
      const run = await vigilcInProcess(argv, { cwd: scratch.path });
      expect(run.code, argv.join(" ")).toBe(2);
      expect(run.stdout).toBe("");
      expect(run.stderr).toContain("--schema");
      expect(run.stderr).toContain("--trace");
    }
  });
});
