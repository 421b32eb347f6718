import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, it } from "vitest";
import { examples, fixtures, root } from "./support/paths.js";
import { crashPattern, runCli } from "./support/run-cli.js";
import { nodeWithInput } from "./support/run-vigilc.js";

/**
 * `vigilc` as users run it, judged by its exit code, stdout and stderr: run in process
 * (support/run-cli.ts), one run at a time. What only a process shows (how it exits, a closed
 * pipe) is in process.test.ts. The lowered SMT-LIB is read by another Z3 in a process of its own.
 */

const dashcam = join(examples, "dashcam");
const z3Reader = join(fixtures, "..", "support", "z3-read.mjs");

/** Generated inputs too large to keep in the repository. */
let scratch = "";
const generated = (name: string): string => join(scratch, name);

beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-test-"));
  const big = "x".repeat(5 * 2 ** 20);
  writeFileSync(
    generated("big-output.jsonl"),
    [
      JSON.stringify({ action: "read", args: { path: "a.txt" }, status: "ok", output: `HEAD${big}SECRET` }),
      JSON.stringify({ action: "send", args: { to: "b" }, status: "ok", output: "sent" }),
    ].join("\n") + "\n",
  );
  writeFileSync(
    generated("big-output.vigil"),
    [
      "policy big {",
      "  /// No output starts with HEAD.",
      '  rule head: always not (output ~ "HEAD*")',
      "  /// SECRET lies past the observation cap, so no wildcard sees it.",
      '  rule secret: always not (output ~ "*SECRET")',
      "  /// Nothing is sent.",
      "  rule quiet: always not (action in {send})",
      "}",
    ].join("\n") + "\n",
  );
  const depth = 10_000;
  writeFileSync(generated("parens.vigil"), `policy p {\n  rule r: always ${"(".repeat(depth)}action in {read}${")".repeat(depth)}\n}\n`);
  writeFileSync(generated("unclosed-parens.vigil"), `policy p {\n  rule r: always ${"(".repeat(depth)}action in {read}\n  rule s: always not action in {send}\n}\n`);
  writeFileSync(generated("nots.vigil"), `policy p {\n  rule r: always ${"not ".repeat(depth)}action in {read}\n}\n`);
  writeFileSync(generated("ands.vigil"), `policy p {\n  rule r: always not (${Array.from({ length: depth }, () => "action in {nowhere}").join(" and ")})\n}\n`);
  writeFileSync(generated("unused-patterns.vigil"), `policy p {\n${Array.from({ length: depth }, (_, i) => `  pattern p${i} = action in {read}\n`).join("")}  rule r: abs(action in {read} and status = error)\n}\n`);
  writeFileSync(generated("deep-args.jsonl"), `{"action": "read", "args": {"path": ${"[".repeat(depth)}${"]".repeat(depth)}}}\n`);
  writeFileSync(generated("bom.jsonl"), "\uFEFF" + readFileSync(join(dashcam, "violating.jsonl"), "utf8"));
  writeFileSync(generated("crlf.jsonl"), readFileSync(join(dashcam, "violating.jsonl"), "utf8").replace(/\n/g, "\r\n"));
  // The dashcam rules four times over, for the solver-time-limit test.
  const rules = readFileSync(join(dashcam, "dashcam.vigil"), "utf8");
  writeFileSync(generated("many-rules.vigil"), [0, 1, 2, 3].map((i) => rules.replace("policy dashcam", `policy dashcam${i}`)).join("\n"));
});

afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
});

interface JsonReport {
  verdict: "safe" | "unsafe";
  statements: {
    policy: string;
    name: string;
    holds: boolean;
    witnesses: number[];
    response: string;
    remediation?: string;
    undecided?: string;
    triggers?: { count: number; first: number[] };
    answers?: { count: number; first: { trigger: number; by: number }[] };
  }[];
}

const dashcamViolating: JsonReport = {
  verdict: "unsafe",
  statements: [
    { policy: "dashcam", name: "R0", holds: true, witnesses: [], response: "block" },
    // R1's release at 8 was validated at 7, R2's mask at 6 came after the warp at 5.
    {
      policy: "dashcam",
      name: "R1",
      holds: true,
      witnesses: [],
      response: "block",
      triggers: { count: 1, first: [8] },
      answers: { count: 1, first: [{ trigger: 8, by: 7 }] },
      patterns: [
        { role: "first", count: 1, first: [8] },
        { role: "second", count: 1, first: [7] },
      ],
    },
    {
      policy: "dashcam",
      name: "R2",
      holds: true,
      witnesses: [],
      response: "block",
      triggers: { count: 1, first: [6] },
      answers: { count: 1, first: [{ trigger: 6, by: 5 }] },
      patterns: [
        { role: "first", count: 1, first: [6] },
        { role: "second", count: 1, first: [5] },
      ],
    },
    {
      policy: "dashcam",
      name: "R3",
      holds: false,
      witnesses: [5],
      response: "block",
      remediation: "Run validate_output on the transform before warping with it.",
      triggers: { count: 1, first: [5] },
      // The warp at 5 matched R3's trigger; the validation at 7 matched its prerequisite, too late.
      patterns: [
        { role: "first", count: 1, first: [5] },
        { role: "second", count: 1, first: [7] },
      ],
    },
  ],
};

describe("vigilc check: verdicts and exit codes", () => {
  for (const engine of ["eval", "smt", "monitor"] as const) {
    it(`prints exactly the documented JSON for dashcam/violating.jsonl (--engine ${engine}) and exits 1`, async ({ expect }) => {
      const result = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--engine", engine, "--format", "json"], { cwd: dashcam });
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toStrictEqual(dashcamViolating);
      // Nothing else: no diagnostics for this pair, and no noise from the solver's threads.
      expect(result.stderr).toBe("");
      // docs/cli.md shows this very output.
      expect(readFileSync(join(root, "docs", "cli.md"), "utf8")).toContain("```json\n" + result.stdout + "```");
    });

    it(`exits 0 with every statement holding on dashcam/benign.jsonl (--engine ${engine})`, async ({ expect }) => {
      const result = await runCli(["check", "dashcam.vigil", "-t", "benign.jsonl", "-e", engine, "-f", "json"], { cwd: dashcam });
      expect(result.code).toBe(0);
      const report = JSON.parse(result.stdout) as JsonReport;
      expect(report.verdict).toBe("safe");
      expect(report.statements.map((s) => [s.name, s.holds, s.witnesses])).toEqual([
        ["R0", true, []],
        ["R1", true, []],
        ["R2", true, []],
        ["R3", true, []],
      ]);
    });
  }

  it("shows each violated rule with its /// text, a code frame and the witness's trace line (human format)", async ({ expect }) => {
    const result = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl"], { cwd: dashcam });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe(
      [
        "violation[dashcam.R3]: A validation-required artifact must be validated before it is consumed.",
        "  --> dashcam.vigil:14:3",
        "  > 14 |   rule R3: prec(warp and transform = $x, validate and target = $x)",
        "       |   ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  > 15 |     block "Run validate_output on the transform before warping with it."',
        "       | ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        '  witness event 5 (violating.jsonl:5): warpAffine {"transform":"M","frame":"frames/000123.png"} [ok]',
        "  = response: block — Run validate_output on the transform before warping with it.",
        "",
        "checked 4 rules of dashcam.vigil against 8 events of violating.jsonl (engine: eval)",
        "  3 hold, 1 violated (dashcam.R3)",
        "verdict: unsafe",
        "",
      ].join("\n"),
    );
    expect(result.stdout).not.toContain("\u001b[");
    // docs/cli.md shows this very output.
    expect(readFileSync(join(root, "docs", "cli.md"), "utf8")).toContain("```\n" + result.stdout + "```");
  });

  it("reports several violations, each with its own doc text and witness lines", async ({ expect }) => {
    const result = await runCli(["check", "files.vigil", "--trace", "files-violating.jsonl"]);
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("violation[files.read_first]: Nothing may be sent before a file was read.");
    expect(result.stdout).toContain("witness event 1 (files-violating.jsonl:1): send");
    expect(result.stdout).toContain("violation[files.text_only]: Only text files are read.");
    expect(result.stdout).toContain("witness event 2 (files-violating.jsonl:2): read");
    expect(result.stdout).toContain("> 8 |   rule text_only: always not (reading and not path ~ \"*.txt\")");
    expect(result.stdout).toContain("0 hold, 2 violated (files.read_first, files.text_only)");
  });

  it("maps witnesses of a JSON-array trace to the line where the event's object starts", async ({ expect }) => {
    const human = await runCli(["check", join(dashcam, "dashcam.vigil"), "--trace", "dashcam-array.json"]);
    expect(human.code).toBe(1);
    expect(human.stdout).toContain("witness event 5 (dashcam-array.json:6): warpAffine");
    const json = await runCli(["check", join(dashcam, "dashcam.vigil"), "--trace", "dashcam-array.json", "--format", "json"]);
    expect(JSON.parse(json.stdout)).toStrictEqual(dashcamViolating);
  });

  it("reads a trace with CRLF line ends and one with a byte-order mark", async ({ expect }) => {
    for (const trace of ["crlf.jsonl", "bom.jsonl"]) {
      const result = await runCli(["check", join(dashcam, "dashcam.vigil"), "--trace", generated(trace), "--format", "json"]);
      expect({ trace, code: result.code, stderr: result.stderr }).toEqual({ trace, code: 1, stderr: "" });
      expect(JSON.parse(result.stdout)).toStrictEqual(dashcamViolating);
    }
  });

  it("--exit-zero reports a violation but exits 0; bad input still exits 2", async ({ expect }) => {
    const violated = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--exit-zero"], { cwd: dashcam });
    expect(violated.code).toBe(0);
    expect(violated.stdout).toContain("verdict: unsafe");
    const bad = await runCli(["check", "files.vigil", "--trace", "invalid-json-line3.jsonl", "--exit-zero"]);
    expect(bad.code).toBe(2);
  });

  it("--fail-on block: a violated warn or ask rule is reported and does not fail; a block rule does, in one run and in a corpus", async ({ expect }) => {
    const policy = generated("fail-on.vigil");
    writeFileSync(
      policy,
      `policy p {
  /// Warp only validated transforms (only a warning here).
  rule warned: prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)
    warn "Validate first."
  /// No sampling at all (needs approval).
  rule asked: abs(action in {sample_frames})
    ask "Ask before sampling."
}
`,
    );
    const trace = join(dashcam, "violating.jsonl");
    const byDefault = await runCli(["check", policy, "--trace", trace]);
    expect(byDefault.code).toBe(1);
    expect(byDefault.stdout).toContain("verdict: unsafe");
    const onBlock = await runCli(["check", policy, "--trace", trace, "--fail-on", "block"]);
    expect(onBlock.code).toBe(0);
    expect(onBlock.stdout).toContain("verdict: unsafe");
    expect((await runCli(["check", policy, "--trace", trace, "--fail-on", "ask"])).code).toBe(1);
    // A block rule fails under --fail-on block.
    expect((await runCli(["check", join(dashcam, "dashcam.vigil"), "--trace", trace, "--fail-on", "block"])).code).toBe(1);
    // A corpus: the same (its runs are judged in worker threads, which the built CLI has).
    const corpus = join(dashcam, "*.jsonl");
    expect((await runCli(["check", policy, "--trace", corpus, "--fail-on", "block"], { built: true })).code).toBe(0);
    expect((await runCli(["check", policy, "--trace", corpus], { built: true })).code).toBe(1);
    expect((await runCli(["check", policy, "--trace", trace, "--fail-on", "never"])).code).toBe(2);
  });

  it("--why says for every rule why it holds or not: vacuously, or how many events matched its trigger", async ({ expect }) => {
    const empty = await runCli(["check", "files.vigil", "--trace", "empty.jsonl", "--why"]);
    expect(empty.stdout).toContain("files.read_first holds vacuously: its trigger matched no event");
    expect(empty.stdout).toContain("files.text_only holds: its body held at every event");
    const violated = await runCli(["check", "dashcam.vigil", "--trace", "violating.jsonl", "--why", "--engine", "smt"], { cwd: dashcam });
    expect(violated.stdout).toContain("dashcam.R2 holds: its trigger matched 1 event (6), each after an event that meets its prerequisite");
    expect(violated.stdout).toContain("dashcam.R3 violated: its trigger matched 1 event (5); 1 broke it (5)");
    // Without --why the human report says nothing of it.
    expect((await runCli(["check", "files.vigil", "--trace", "empty.jsonl"])).stdout).not.toContain("vacuously");
  });

  it("fails closed: a statement the solver cannot decide in time is undecided, holds is false and the exit code is 1", async ({ expect }) => {
    const result = await runCli(["check", generated("many-rules.vigil"), "--trace", join(dashcam, "benign.jsonl"), "--engine", "smt", "--timeout", "1", "--format", "json"]);
    const report = JSON.parse(result.stdout) as JsonReport;
    const undecided = report.statements.filter((s) => s.undecided !== undefined);
    for (const s of undecided) {
      expect(s.holds).toBe(false);
      expect(s.undecided).toMatch(/solver/);
    }
    // With a 1 ms limit some statements are usually undecided; whichever way it goes, the exit
    // code follows the verdict, and any undecided statement makes the run unsafe.
    expect(report.verdict).toBe(undecided.length > 0 ? "unsafe" : "safe");
    expect(result.code).toBe(report.verdict === "safe" ? 0 : 1);
  });
});

describe("vigilc check: malformed traces exit 2 and name the line and the field", () => {
  const cases: [fixture: string, message: string, location: string][] = [
    ["invalid-json-line3.jsonl", "line 3 is not valid JSON", "invalid-json-line3.jsonl:3:"],
    ["missing-action.jsonl", "the event on line 2 has no `action` field", "missing-action.jsonl:2:"],
    ["action-not-string.jsonl", "the field `action` of the event on line 2 must be a string", "action-not-string.jsonl:2:"],
    ["status-weird.jsonl", 'the field `status` of the event on line 2 must be one of "ok", "error"', "status-weird.jsonl:2:"],
    ["args-not-object.jsonl", "the field `args` of the event on line 2 must be an object", "args-not-object.jsonl:2:"],
    ["array-bad-element.json", 'the field `status` of the event on line 3 must be one of "ok", "error"', "array-bad-element.json:3:"],
  ];
  for (const [fixture, message, location] of cases) {
    it(`${fixture}: ${message}`, async ({ expect }) => {
      const result = await runCli(["check", "files.vigil", "--trace", fixture]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(message);
      expect(result.stderr).toContain(`--> ${location}`);
      expect(result.stderr).toContain(`error: the trace \`${fixture}\` has 1 error; no rule was checked`);
      expect(result.stderr).not.toMatch(crashPattern);
    });
  }

  it("reports every malformed line of a trace, not only the first", async ({ expect }) => {
    const result = await runCli(["check", "files.vigil", "--trace", "several-errors.jsonl", "--format", "json"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("the field `action` of the event on line 2 must be a string");
    expect(result.stderr).toContain("the event on line 3 has no `action` field");
    expect(result.stderr).toContain("the field `status` of the event on line 4 must be one of");
    expect(result.stderr).toContain("has 3 errors");
  });

  it("rejects a file that is neither JSON Lines nor a JSON array", async ({ expect }) => {
    // Detection finds no known format: one error saying so, with the way out.
    const detected = await runCli(["check", "files.vigil", "--trace", "not-json.log"]);
    expect(detected.code).toBe(2);
    expect(detected.stderr).toContain("error[T0008]: the trace's format is not recognized");
    expect(detected.stderr).toContain("--trace-format");
    // Read as canonical JSON Lines, every line that is not JSON is named.
    const text = await runCli(["check", "files.vigil", "--trace", "not-json.log", "--trace-format", "jsonl"]);
    expect(text.code).toBe(2);
    expect(text.stderr).toContain("error[T0001]: line 1 is not valid JSON");
    expect(text.stderr).toContain("--> not-json.log:1:");
    expect(text.stderr).toContain("line 2 is not valid JSON");
    const unterminated = await runCli(["check", "files.vigil", "--trace", "array-unterminated.json"]);
    expect(unterminated.code).toBe(2);
    expect(unterminated.stderr).toContain("the trace is not valid JSON");
    expect(unterminated.stderr).toContain("--> array-unterminated.json:");
    for (const result of [detected, text, unterminated]) expect(result.stderr).not.toMatch(crashPattern);
  });

  it("accepts an empty trace (and one of blank lines): every statement holds vacuously, with both engines", async ({ expect }) => {
    for (const [trace, engine] of [
      ["empty.jsonl", "eval"],
      ["empty.jsonl", "smt"],
      ["blank-lines.jsonl", "eval"],
    ] as const) {
      const result = await runCli(["check", "files.vigil", "--trace", trace, "--engine", engine, "--format", "json"]);
      expect({ trace, engine, code: result.code }).toEqual({ trace, engine, code: 0 });
      expect(JSON.parse(result.stdout)).toStrictEqual({
        verdict: "safe",
        statements: [
          // Vacuously: their triggers matched no event.
          {
            policy: "files",
            name: "read_first",
            holds: true,
            witnesses: [],
            response: "block",
            triggers: { count: 0, first: [] },
            patterns: [
              { role: "first", count: 0, first: [] },
              { role: "second", count: 0, first: [] },
            ],
          },
          { policy: "files", name: "text_only", holds: true, witnesses: [], response: "block" },
        ],
      });
      // The closed world warns that the policy's symbols do not occur; warnings do not change the exit code.
      expect(result.stderr).toContain("warning[V1101]");
    }
  });

  it("keeps a 5 MB output up to the cap: no crash, a note about the cut, and wildcards on output still decide (both engines)", async ({ expect }) => {
    for (const engine of ["eval", "smt"]) {
      const result = await runCli(["check", generated("big-output.vigil"), "--trace", generated("big-output.jsonl"), "--engine", engine, "--format", "json"]);
      expect(result.code).toBe(1);
      expect(JSON.parse(result.stdout)).toStrictEqual({
        verdict: "unsafe",
        statements: [
          { policy: "big", name: "head", holds: false, witnesses: [1], response: "block" },
          // The suffix is past the 65,536-character observation cap, so the wildcard cannot see it.
          { policy: "big", name: "secret", holds: true, witnesses: [], response: "block" },
          { policy: "big", name: "quiet", holds: false, witnesses: [2], response: "block" },
        ],
      });
      expect(result.stderr).toContain("info[T0005]: the output of the event on line 1 is longer than 65536 characters");
      // The code frame of the 5 MB line is cut to a window, not printed whole.
      expect(result.stderr.length).toBeLessThan(2_000);
      expect(result.stderr).not.toMatch(crashPattern);
    }
    const human = await runCli(["check", "big-output.vigil", "--trace", "big-output.jsonl"], { cwd: scratch });
    expect(human.stdout).toContain("witness event 1 (big-output.jsonl:1): read");
    expect(human.stdout).toContain("(output cut to the observation cap)");
    expect(human.stdout.length).toBeLessThan(4_000);
  });

  it("a trace value nested 10,000 deep is reported with its line and field (T0002), not a crash", async ({ expect }) => {
    const result = await runCli(["check", "files.vigil", "--trace", generated("deep-args.jsonl")]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/error\[T0002\]: the field `args\.path\.0\.0[.0-9]*` of the event on line 1 nests values more than 64 levels deep/);
    expect(result.stderr).toContain("deep-args.jsonl");
    expect(result.stderr).not.toMatch(crashPattern);
  });
});

describe("vigilc check: bad policies and bad usage exit 2 with located errors", () => {
  it("10,000 nested parentheses: V0006 at the place, no stack overflow, a short frame", async ({ expect }) => {
    for (const file of ["parens.vigil", "unclosed-parens.vigil"]) {
      const result = await runCli(["check", generated(file), "--trace", "ok.jsonl"]);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain("error[V0006]: expression nested too deeply: more than 100 levels of parentheses");
      expect(result.stderr).toContain(`--> ${generated(file)}:2:`);
      expect(result.stderr).toMatch(/has \d+ errors?; no rule was checked/);
      expect(result.stderr).not.toMatch(crashPattern);
      // The 20,000-character line is shown as a window of it.
      expect(result.stderr.length).toBeLessThan(3_000);
    }
  });

  it("a 10,000-long `not not not …` chain: V0006, no stack overflow", async ({ expect }) => {
    const result = await runCli(["check", generated("nots.vigil"), "--trace", "ok.jsonl"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error[V0006]: expression nested too deeply: more than 100 levels of operators");
    expect(result.stderr).toContain("has 1 error; no rule was checked");
    expect(result.stderr).not.toMatch(crashPattern);
    expect(result.stderr.length).toBeLessThan(3_000);
  });

  it("reports all syntax errors of a file at once", async ({ expect }) => {
    const result = await runCli(["check", "syntax-errors.vigil", "--trace", "ok.jsonl"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    const headers = result.stderr.match(/^error\[V\d{4}\]/gm) ?? [];
    expect(headers.length).toBe(13);
    expect(result.stderr).toContain("error: the policy `syntax-errors.vigil` has 13 errors; no rule was checked");
    // One per broken declaration, each with its location.
    for (const line of [2, 3, 4, 5, 6, 7, 8, 9, 11, 12]) expect(result.stderr).toContain(`--> syntax-errors.vigil:${line}:`);
    expect(result.stderr).toContain("error[V0002]: this string is not closed before the end of the line");
    expect(result.stderr).toContain("error[V0003]: unexpected character `@`");
    expect(result.stderr).not.toMatch(crashPattern);
  });

  it("a rule name starting with a digit is one mistake and gets one error", async ({ expect }) => {
    const result = await runCli(["check", "bad-rule-name.vigil", "--trace", "ok.jsonl"]);
    expect(result.code).toBe(2);
    expect(result.stderr.match(/^error\[V\d{4}\]/gm)).toEqual(["error[V0001]"]);
  });

  it("prints at most 100 diagnostics and counts the rest (10,000 unused patterns)", async ({ expect }) => {
    const result = await runCli(["check", generated("unused-patterns.vigil"), "--trace", "ok.jsonl", "--format", "json"]);
    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ verdict: "safe" });
    expect((result.stderr.match(/^warning\[V1104\]/gm) ?? []).length).toBe(100);
    expect(result.stderr).toContain("… and 9900 more warnings, not shown (at most 100 diagnostics are printed)");
    expect(result.stderr.length).toBeLessThan(100_000);
  });

  it("sums up the closed world's warnings in one message, beyond three (10,000 of one generated rule)", async ({ expect }) => {
    const result = await runCli(["check", generated("ands.vigil"), "--trace", "ok.jsonl", "--format", "json"]);
    expect(result.code).toBe(0);
    expect(result.stderr).not.toContain("warning[V1101]");
    expect(result.stderr).toContain("warning: 1 name of the policy does not occur in `ok.jsonl`, so the conditions on them match nothing (closed world)\n  actions (V1101): nowhere\n");
    expect(result.stderr.length).toBeLessThan(2_000);
    // They are still warnings: --strict fails on them.
    const strict = await runCli(["check", generated("ands.vigil"), "--trace", "ok.jsonl", "--strict"]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("error: --strict: 10000 warnings");
  });

  it("shows a closed-world warning with a suggested name on its own, and sums up the others", async ({ expect }) => {
    const policy = generated("closed-world.vigil");
    writeFileSync(policy, "policy p {\n  rule r: always not (action in {raed, alpha, beta, gamma} and depth in {1} and mode in {2})\n}\n");
    const result = await runCli(["check", policy, "--trace", "ok.jsonl"]);
    expect(result.code).toBe(0);
    expect(result.stderr.match(/^warning\[V1101\].*$/gm)).toEqual(["warning[V1101]: the action `raed` does not occur in the trace, so it matches no event"]);
    expect(result.stderr).toContain("warning: 5 names of the policy do not occur in `ok.jsonl`");
    expect(result.stderr).toContain("  actions (V1101): alpha, beta, gamma\n  arguments (V1102): depth, mode\n");
  });

  it("names a missing policy file, a missing trace file and a directory", async ({ expect }) => {
    const policy = await runCli(["check", "nope.vigil", "--trace", "ok.jsonl"]);
    expect(policy.code).toBe(2);
    expect(policy.stderr).toBe("error: cannot read the policy `nope.vigil`: no such file\n");
    const trace = await runCli(["check", "files.vigil", "--trace", "nope.jsonl"]);
    expect(trace.code).toBe(2);
    expect(trace.stderr).toBe("error: cannot read the trace `nope.jsonl`: no such file\n");
    // A directory of traces is a corpus (see corpus.test.ts); a directory is never a policy.
    const directory = await runCli(["check", ".", "--trace", "ok.jsonl"]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toBe("error: cannot read the policy `.`: it is a directory\n");
  });

  const usage: [args: string[], message: string][] = [
    [["check", "files.vigil", "--trace", "ok.jsonl", "--engine", "z3"], "argument 'z3' is invalid. Allowed choices are eval, smt, monitor, sql."],
    [["check", "files.vigil", "--trace", "ok.jsonl", "--format", "xml"], "argument 'xml' is invalid. Allowed choices are human, json."],
    [["check", "files.vigil", "--trace", "ok.jsonl", "--timeout", "0"], "must be a positive integer"],
    [["check", "files.vigil", "--trace", "ok.jsonl", "--timeout", "soon"], "must be a positive integer"],
    [["check", "files.vigil"], "`check` needs a trace (--trace FILE), tool schemas (--schema FILE) or, with --engine sql, an events table (--events FILE)"],
    [["check", "--trace", "ok.jsonl"], "missing required argument 'policy'"],
    [["check", "files.vigil", "extra.vigil", "--trace", "ok.jsonl"], "too many arguments"],
    [["check", "files.vigil", "--trace", "ok.jsonl", "--bogus"], "unknown option '--bogus'"],
    [["judge", "files.vigil"], "unknown command 'judge'"],
    [[], "Usage: vigilc"],
  ];
  for (const [args, message] of usage) {
    it(`usage error: vigilc ${args.join(" ") || "(no arguments)"} exits 2`, async ({ expect }) => {
      const result = await runCli(args);
      expect(result.code).toBe(2);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(message);
    });
  }

  it("--help, help and --version exit 0", async ({ expect }) => {
    const help = await runCli(["--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("Usage: vigilc");
    for (const command of ["check", "lower", "fmt", "signature", "explain"]) expect(help.stdout).toContain(command);
    const checkHelp = await runCli(["help", "check"]);
    expect(checkHelp.code).toBe(0);
    expect(checkHelp.stdout).toContain("--strict");
    const version = await runCli(["--version"]);
    expect(version.code).toBe(0);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+\n$/);
  });
});

describe("vigilc check --strict: a warning becomes an input error", () => {
  it("without --strict a warning is printed and the verdict decides the exit code", async ({ expect }) => {
    const result = await runCli(["check", "warning.vigil", "--trace", "ok.jsonl"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("warning[V1104]: the pattern `unused` is never used");
    expect(result.stdout).toContain("verdict: safe");
  });

  it("with --strict a policy warning exits 2 and no rule is checked", async ({ expect }) => {
    const result = await runCli(["check", "warning.vigil", "--trace", "ok.jsonl", "--strict", "--format", "json"]);
    expect(result.code).toBe(2);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain("warning[V1104]");
    expect(result.stderr).toContain("error: --strict: 1 warning");
    expect(result.stderr).toContain("no rule was checked");
  });

  it("with --strict a trace warning (an unknown event field) exits 2 too", async ({ expect }) => {
    const plain = await runCli(["check", "info-only.vigil", "--trace", "unknown-field.jsonl"]);
    expect(plain.code).toBe(0);
    expect(plain.stderr).toContain("warning[T0006]: the field `tool_call_id` (first on line 1)");
    const strict = await runCli(["check", "info-only.vigil", "--trace", "unknown-field.jsonl", "--strict"]);
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain("error: --strict");
  });

  it("with --strict a note (info) is not a warning and changes nothing", async ({ expect }) => {
    const result = await runCli(["check", "info-only.vigil", "--trace", "ok.jsonl", "--strict"]);
    expect(result.code).toBe(0);
    expect(result.stderr).toContain("info[V1103]");
  });

  it("a policy without rules is vacuously safe with a warning; --strict makes it exit 2", async ({ expect }) => {
    const plain = await runCli(["check", "no-rules.vigil", "--trace", "ok.jsonl", "--format", "json"]);
    expect(plain.code).toBe(0);
    expect(JSON.parse(plain.stdout)).toStrictEqual({ verdict: "safe", statements: [] });
    expect(plain.stderr).toContain("warning: the policy `no-rules.vigil` declares no rule");
    const strict = await runCli(["check", "no-rules.vigil", "--trace", "ok.jsonl", "--strict"]);
    expect(strict.code).toBe(2);
  });
});

describe("vigilc fmt", () => {
  const exampleFiles = readdirSync(examples, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => readdirSync(join(examples, e.name)).filter((f) => f.endsWith(".vigil")).map((f) => join(examples, e.name, f)));

  it("--check passes on every shipped example, printing nothing", async ({ expect }) => {
    expect(exampleFiles.length).toBeGreaterThan(0);
    const result = await runCli(["fmt", "--check", ...exampleFiles]);
    expect(result).toMatchObject({ code: 0, stdout: "", stderr: "" });
  });

  it("is idempotent on every shipped example: fmt(fmt(x)) = fmt(x) = x", async ({ expect }) => {
    const once = await Promise.all(exampleFiles.map((file) => runCli(["fmt", file])));
    const copies = once.map((result, index) => {
      const copy = generated(`idempotent-${index}.vigil`);
      writeFileSync(copy, result.stdout);
      return copy;
    });
    const twice = await runCli(["fmt", "--check", ...copies]);
    expect(twice).toMatchObject({ code: 0, stdout: "" });
    once.forEach((result, index) => expect(result.stdout).toBe(readFileSync(exampleFiles[index]!, "utf8")));
  });

  it("--check on an unformatted file names it and exits 1; fmt prints the canonical text, which is stable", async ({ expect }) => {
    const check = await runCli(["fmt", "--check", "unformatted.vigil"]);
    expect(check).toMatchObject({ code: 1, stdout: "unformatted.vigil: not formatted\n", stderr: "" });
    const formatted = await runCli(["fmt", "unformatted.vigil"]);
    expect(formatted.code).toBe(0);
    expect(formatted.stdout).toBe(
      [
        "/// Messy but valid.",
        "policy messy {",
        "  pattern reading = action in {read, write}",
        "  /// Nothing is sent before a read.",
        "  rule read_first: prec(action in {send}, reading)",
        '  rule text_only: always not (reading and not path ~ "*.txt")',
        "}",
        "",
      ].join("\n"),
    );
    const copy = generated("formatted-once.vigil");
    writeFileSync(copy, formatted.stdout);
    expect(await runCli(["fmt", "--check", copy])).toMatchObject({ code: 0, stdout: "" });
  });

  it("--write rewrites the file in place; then --check passes", async ({ expect }) => {
    const copy = generated("to-write.vigil");
    copyFileSync(join(fixtures, "unformatted.vigil"), copy);
    const write = await runCli(["fmt", "--write", copy]);
    expect(write).toMatchObject({ code: 0, stdout: "", stderr: "" });
    expect(readFileSync(copy, "utf8")).toContain("policy messy {\n  pattern reading = action in {read, write}\n");
    expect(await runCli(["fmt", "--check", copy])).toMatchObject({ code: 0, stdout: "" });
  });

  it("keeps every comment of a file with comments everywhere, idempotently, and the meaning", async ({ expect }) => {
    const source = readFileSync(join(fixtures, "comments.vigil"), "utf8");
    const comments = source.match(/\/\/ k\d+/g) ?? [];
    expect(comments.length).toBe(31);
    const once = await runCli(["fmt", "comments.vigil"]);
    expect(once.code).toBe(0);
    for (const comment of comments) expect(once.stdout).toMatch(new RegExp(`${comment}$`, "m"));
    const copy = generated("comments-once.vigil");
    writeFileSync(copy, once.stdout);
    const twice = await runCli(["fmt", copy]);
    expect(twice.stdout).toBe(once.stdout);
    // The formatted policy means the same: same statements, same verdicts.
    const before = await runCli(["check", "comments.vigil", "--trace", "ok.jsonl", "--format", "json"]);
    const after = await runCli(["check", copy, "--trace", "ok.jsonl", "--format", "json"]);
    expect(after.code).toBe(before.code);
    expect(after.stdout).toBe(before.stdout);
  });

  it("refuses a file with syntax errors (exit 2, located errors) and does not touch it with --write", async ({ expect }) => {
    const copy = generated("broken.vigil");
    copyFileSync(join(fixtures, "syntax-errors.vigil"), copy);
    const result = await runCli(["fmt", "--write", copy]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`--> ${copy}:2:`);
    expect(readFileSync(copy, "utf8")).toBe(readFileSync(join(fixtures, "syntax-errors.vigil"), "utf8"));
  });

  it("names a missing file, still checks the others, and exits 2", async ({ expect }) => {
    const result = await runCli(["fmt", "--check", "nope.vigil", "unformatted.vigil"]);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: cannot read the policy `nope.vigil`: no such file");
    expect(result.stdout).toBe("unformatted.vigil: not formatted\n");
  });
});

describe("vigilc lower", () => {
  it("prints one SMT-LIB script per rule, each ending in (check-sat-assuming …) and (get-unsat-core), separated by (reset)", async ({ expect }) => {
    const result = await runCli(["lower", "dashcam.vigil", "--trace", "violating.jsonl"], { cwd: dashcam });
    expect(result.code).toBe(0);
    expect(result.stderr).toBe("");
    expect(result.stdout.match(/^\(check-sat-assuming \(r1 r2 r3 r4 r5 r6 r7 r8\)\)$/gm)?.length).toBe(4);
    expect(result.stdout.match(/^\(get-unsat-core\)$/gm)?.length).toBe(4);
    expect(result.stdout.match(/^\(reset\)$/gm)?.length).toBe(3);
    expect(result.stdout).toContain("; Vigil: policy dashcam, rule R3 (prec)");
    expect(result.stdout).toContain("; /// A validation-required artifact must be validated before it is consumed.");
  });

  it("--rule R3: another Z3 reads the script and names event 5 in the unsat core", async ({ expect }) => {
    const lowered = await runCli(["lower", "dashcam.vigil", "--trace", "violating.jsonl", "--rule", "R3"], { cwd: dashcam });
    expect(lowered.code).toBe(0);
    expect(lowered.stdout).toContain("(check-sat-assuming (r1 r2 r3 r4 r5 r6 r7 r8))");
    expect(lowered.stdout).toContain("(get-unsat-core)");
    const z3 = await nodeWithInput(z3Reader, lowered.stdout);
    expect(z3.code).toBe(0);
    expect(z3.stdout.trim().split("\n")).toEqual(["unsat", "(r5)"]);
  });

  it("the whole output (every rule, both encodings) is one script Z3 reads without an error of its own", async ({ expect }) => {
    for (const encoding of ["shared", "literal"]) {
      const lowered = await runCli(["lower", "dashcam.vigil", "--trace", "violating.jsonl", "--encoding", encoding], { cwd: dashcam });
      expect(lowered.code).toBe(0);
      const z3 = await nodeWithInput(z3Reader, lowered.stdout);
      const responses = z3.stdout.trim().split("\n");
      // R0–R2 hold (sat; Z3 then says there is no core, as SMT-LIB requires); R3 is broken by event 5.
      expect(responses.filter((line) => line === "sat" || line === "unsat")).toEqual(["sat", "sat", "sat", "unsat"]);
      expect(responses.at(-1)).toBe("(r5)");
      expect(responses.filter((line) => line.startsWith("(error") && !line.includes("unsat core is not available"))).toEqual([]);
    }
  });

  it("an unknown --rule exits 2 and suggests the near name; a bad --encoding is a usage error", async ({ expect }) => {
    const rule = await runCli(["lower", "dashcam.vigil", "--trace", "violating.jsonl", "--rule", "r3"], { cwd: dashcam });
    expect(rule).toMatchObject({ code: 2, stdout: "", stderr: "error: no rule named `r3` in `dashcam.vigil`; did you mean `R3`?\n" });
    const encoding = await runCli(["lower", "dashcam.vigil", "--trace", "violating.jsonl", "--encoding", "compact"], { cwd: dashcam });
    expect(encoding.code).toBe(2);
    expect(encoding.stderr).toContain("Allowed choices are shared, literal");
  });

  it("a policy with errors or a malformed trace exits 2 and lowers nothing", async ({ expect }) => {
    const policy = await runCli(["lower", "syntax-errors.vigil", "--trace", "ok.jsonl"]);
    expect(policy).toMatchObject({ code: 2, stdout: "" });
    expect(policy.stderr).toContain("has 13 errors; nothing was lowered");
    const trace = await runCli(["lower", "files.vigil", "--trace", "status-weird.jsonl"]);
    expect(trace).toMatchObject({ code: 2, stdout: "" });
    expect(trace.stderr).toContain("nothing was lowered");
  });
});

describe("vigilc signature and explain", () => {
  it("signature prints Σ = (actions, keys, values) of a trace", async ({ expect }) => {
    const human = await runCli(["signature", "violating.jsonl"], { cwd: dashcam });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("8 events\n");
    expect(human.stdout).toContain("actions (A): emit_mask, estimate_M, index_frames, release_artifact, sample_frames, save_artifact, validate_output, warpAffine\n");
    expect(human.stdout).toContain('  transform: "M"\n');
    expect(human.stdout).toContain("  fps: 6\n");
    expect(human.stdout).toContain("outputs: 5 events carry one\n");
    const json = await runCli(["signature", "violating.jsonl", "--format", "json"], { cwd: dashcam });
    const signature = JSON.parse(json.stdout) as { events: number; actions: string[]; keys: { key: string; values: string[]; distinctValues: number }[]; outputs: number };
    expect(signature.events).toBe(8);
    expect(signature.actions).toHaveLength(8);
    expect(signature.keys.find((k) => k.key === "frame")).toEqual({ key: "frame", values: ['"frames/000123.png"', '"frames/000123.warped.png"'], distinctValues: 2 });
    expect(signature.outputs).toBe(5);
  });

  it("signature says how long the lists under a key are, which list indexes (`argv.0`) read", async ({ expect }) => {
    const trace = '{"action":"git push","args":{"argv":["push","--force","origin"],"n":1}}\n{"action":"rm","args":{"argv":["-rf"]}}\n';
    const human = await runCli(["signature", "-"], { stdin: trace });
    expect(human.code).toBe(0);
    expect(human.stdout).toContain('  argv (lists of up to 3 elements): "--force", "-rf", "origin", "push"\n');
    expect(human.stdout).toContain("  n: 1\n");
    const json = await runCli(["signature", "-", "--format", "json"], { stdin: trace });
    const keys = (JSON.parse(json.stdout) as { keys: { key: string }[] }).keys;
    expect(keys.find((k) => k.key === "argv")).toEqual({ key: "argv", values: ['"--force"', '"-rf"', '"origin"', '"push"'], distinctValues: 4, longestList: 3 });
    expect(keys.find((k) => k.key === "n")).not.toHaveProperty("longestList");
  });

  it("signature of an empty trace is empty; of a malformed one, exit 2", async ({ expect }) => {
    const empty = await runCli(["signature", "empty.jsonl", "--format", "json"]);
    expect(empty.code).toBe(0);
    expect(JSON.parse(empty.stdout)).toEqual({ events: 0, actions: [], keys: [], outputs: 0 });
    const one = await runCli(["signature", "ok.jsonl"]);
    expect(one.stdout).toContain("outputs: 1 event carries one\n");
    const bad = await runCli(["signature", "missing-action.jsonl"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("the event on line 2 has no `action` field");
  });

  it("explain V1006 says what the code means", async ({ expect }) => {
    const result = await runCli(["explain", "V1006"]);
    expect(result).toMatchObject({ code: 0, stderr: "", stdout: "V1006 (error): a variable is not used exactly once in each pattern of a binary form\n" });
    expect((await runCli(["explain", "v1006"])).stdout).toBe(result.stdout);
  });

  it("explain of an unknown code exits 2 (and suggests a near one)", async ({ expect }) => {
    const unknown = await runCli(["explain", "X9999"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stdout).toBe("");
    expect(unknown.stderr).toContain("error: `X9999` is not a Vigil diagnostic code");
    const near = await runCli(["explain", "V10066"]);
    expect(near.code).toBe(2);
    expect(near.stderr).toContain("did you mean `V1006`?");
    const inherited = await runCli(["explain", "__proto__"]);
    expect(inherited.code).toBe(2);
  });
});

describe("the test setup", () => {
  it("has the script that reads a lowered query with another Z3", ({ expect }) => {
    expect(existsSync(z3Reader)).toBe(true);
  });
});
