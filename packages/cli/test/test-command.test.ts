import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { XMLParser, XMLValidator } from "fast-xml-parser";
import { afterAll, beforeAll, describe, it } from "vitest";
import { examples, root } from "./support/paths.js";
import { crashPattern, runCli } from "./support/run-cli.js";

/**
 * `vigilc test` as a user runs it: on the shipped examples' test files, on a copy of an example
 * broken on purpose, and on bad input; its reports (human, JSON, JUnit XML) and coverage.
 * `--watch`, which runs until it is stopped by a signal, is in process.test.ts.
 */

let scratch = "";
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-test-command-"));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of an example directory, to break. */
function copyOf(example: string): string {
  const directory = join(scratch, `${example}-${Math.random().toString(36).slice(2)}`);
  cpSync(join(examples, example), directory, { recursive: true });
  return directory;
}

/** Every rule declared in the example policies that ship tests. */
function exampleRules(): string[] {
  const rules: string[] = [];
  for (const example of readdirSync(examples, { withFileTypes: true })) {
    if (!example.isDirectory()) continue;
    const directory = join(examples, example.name);
    for (const file of readdirSync(directory).filter((name) => name.endsWith(".vigiltest"))) {
      const policyFile = /policy "([^"]+)"/.exec(readFileSync(join(directory, file), "utf8"))![1]!;
      // Each rule under the policy declared above it (a file may hold several policies).
      let policyName = "";
      for (const line of readFileSync(join(directory, policyFile), "utf8").split("\n")) {
        policyName = /^\s*policy\s+(\w+)/.exec(line)?.[1] ?? policyName;
        const rule = /^\s*rule\s+(\w+)/.exec(line)?.[1];
        if (rule !== undefined) rules.push(`${policyName}.${rule}`);
      }
    }
  }
  return rules;
}

describe("vigilc test on the shipped examples", () => {
  // That every engine passes them is examples/examples.test.ts's (in process); here, the command's
  // reading of a directory of test files, its report and its coverage table.
  it("passes every test of every example, every rule of the hand-written ones covered", async ({ expect }) => {
    // The whole directory, the drafted airline policy's reviewed runs (examples/tau-airline/drafted) included.
    const all = await runCli(["test", "examples/", "--engine", "eval,monitor"], { cwd: root });
    expect(all.stderr).not.toMatch(crashPattern);
    expect(all.stdout).not.toContain("✗");
    expect(all.code).toBe(0);
    expect(all.stdout).toContain("airline-drafted.vigiltest");
    // The hand-written examples' test files (one level down), with full coverage: a draft is reviewed run by run, not covered.
    const handWritten = readdirSync(examples, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => readdirSync(join(examples, entry.name)).filter((name) => name.endsWith(".vigiltest")).map((name) => `examples/${entry.name}/${name}`));
    const result = await runCli(["test", ...handWritten, "--coverage", "--threshold", "100", "--engine", "eval,monitor"], { cwd: root });
    expect(result.stderr).not.toMatch(crashPattern);
    expect(result.stdout).not.toContain("✗");
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/tests? in \d+ files?: \d+ passed \(/);
    // The coverage table names every rule of every example policy.
    const rules = exampleRules();
    expect(rules.length).toBeGreaterThan(40);
    for (const rule of rules) expect(result.stdout).toContain(`✓ ${rule} `);
    expect(result.stdout).toContain(`${rules.length} of ${rules.length} rules covered (100.0%)`);
  });

  it("fails a deliberately broken copy of an example with exit 1 and a diff naming the rule", async ({ expect }) => {
    const directory = copyOf("dashcam");
    const policy = join(directory, "dashcam.vigil");
    // R2 now accepts sampling as well as warping before a mask: the mask after sampling is let through.
    writeFileSync(policy, readFileSync(policy, "utf8").replace("prec(action in {emit_mask}, action in {warpAffine})", "prec(action in {emit_mask}, action in {warpAffine, sample_frames})"));
    const result = await runCli(["test", directory, "--engine", "eval,monitor"], { cwd: scratch });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain("✗ hand-written: wrong fps, mask before warp, release before validation");
    expect(result.stdout).toContain("expect R2 violated at 2");
    expect(result.stdout).toMatch(/expected: violated at 2\n\s+found:\s+holds\s+\(forward engine, monitor\)/);
    // The expected witness that was not found, with the event as a test writes it and its line.
    expect(result.stdout).toMatch(/- +2 {2}emit_mask \{frame: "frames\/1.png", out: "masks\/1.csr"\} ok {2}line \d+/);
    // The recorded run with a mask before any warp fails too, pointing at its trace's line.
    expect(result.stdout).toMatch(/- +2 {2}emit_mask \{frame: "frames\/000123.png", out: "masks\/out_0.csr"\} ok {2}.*violating-sampling.jsonl:2/);
    expect(result.stdout).toContain("2 failed");
  });
});

describe("vigilc test --engine: each expectation judged by the engine named", () => {
  /** A policy and four test files: one whose expectation is false, one whose expectations are true, a decision, an amount SQL cannot hold. */
  let directory = "";
  beforeAll(() => {
    directory = mkdtempSync(join(scratch, "engines-"));
    writeFileSync(
      join(directory, "p.vigil"),
      "policy p {\n  /// A mask only after a warp.\n  rule masked: prec(action in {emit_mask}, action in {warpAffine})\n  /// At most 100 paid in all.\n  rule cap: limit[100 of amount](action in {pay})\n}\n",
    );
    writeFileSync(join(directory, "false.vigiltest"), 'policy "p.vigil"\ntest "a false expectation" {\n  events {\n    emit_mask\n  }\n  expect masked holds\n}\n');
    writeFileSync(
      join(directory, "true.vigiltest"),
      'policy "p.vigil"\ntest "true expectations" {\n  events {\n    warpAffine\n    emit_mask\n    pay {amount: 60}\n    pay {amount: 50}\n  }\n  expect masked holds\n  expect cap violated at 4\n}\n',
    );
    writeFileSync(join(directory, "decide.vigiltest"), 'policy "p.vigil"\ntest "a decision" {\n  events {\n    emit_mask\n  }\n  decide 1 block by masked\n}\n');
    // 1e-30 is exact for the forward engine, Z3 and the monitor; it has more digits after the point than SQL's DECIMAL(38, 18) holds.
    writeFileSync(join(directory, "amount.vigiltest"), 'policy "p.vigil"\ntest "an amount SQL cannot hold" {\n  events {\n    pay {amount: 1e-30}\n  }\n  expect cap holds\n}\n');
  });

  interface Report {
    files: { file: string; tests: { name: string; outcome: string; failures: { engines: string[]; expected: string; actual: string }[] }[] }[];
  }
  const outcomes = (report: Report): Record<string, { outcome: string; failures: { engines: string[]; expected: string; actual: string }[] }> =>
    Object.fromEntries(report.files.flatMap((f) => f.tests.map((t) => [t.name, { outcome: t.outcome, failures: t.failures }])));

  for (const engine of ["eval", "monitor", "smt", "sql"] as const) {
    it(`--engine ${engine}: fails a false expectation, passes true ones, and fails what it cannot decide with the reason`, async ({ expect }) => {
      const result = await runCli(["test", directory, "--engine", engine, "--format", "json"], { cwd: directory });
      expect(result.stderr).not.toMatch(crashPattern);
      expect(result.code).toBe(1);
      const tests = outcomes(JSON.parse(result.stdout) as Report);
      // A false expectation fails, found by the engine named and no other.
      expect(tests["a false expectation"]!.outcome).toBe("failed");
      expect(tests["a false expectation"]!.failures).toEqual([expect.objectContaining({ engines: [engine], expected: "holds", actual: "violated at 1" })]);
      expect(tests["true expectations"]).toEqual({ outcome: "passed", failures: [] });
      // A decision before a call is the online monitor's: any other engine fails it as undecided, saying so.
      if (engine === "monitor") expect(tests["a decision"]).toEqual({ outcome: "passed", failures: [] });
      else {
        expect(tests["a decision"]!.outcome).toBe("failed");
        expect(tests["a decision"]!.failures).toEqual([expect.objectContaining({ engines: [engine], expected: "decide 1 block by p.masked", actual: expect.stringMatching(new RegExp(`^undecided on engine ${engine}: .*monitor`)) })]);
      }
      // The SQL engine cannot hold the amount exactly: undecided, with its reason; the others decide it.
      if (engine === "sql") {
        expect(tests["an amount SQL cannot hold"]!.outcome).toBe("failed");
        expect(tests["an amount SQL cannot hold"]!.failures).toEqual([
          expect.objectContaining({ engines: ["sql"], expected: "holds", actual: expect.stringMatching(/^undecided on engine sql: event 1 .*has an amount at `amount` with more digits than the SQL engine's exact decimals hold/) }),
        ]);
      } else expect(tests["an amount SQL cannot hold"]).toEqual({ outcome: "passed", failures: [] });
    });
  }

  it("passes true expectations on every engine at once, and says in the human report which engine could not decide", async ({ expect }) => {
    const passing = await runCli(["test", join(directory, "true.vigiltest"), join(directory, "decide.vigiltest")], { cwd: directory });
    expect(passing.stdout).toContain("2 passed");
    expect(passing.code).toBe(0);
    const failing = await runCli(["test", join(directory, "decide.vigiltest"), join(directory, "amount.vigiltest"), "--engine", "sql"], { cwd: directory });
    expect(failing.code).toBe(1);
    expect(failing.stdout).toContain("✗ a decision");
    expect(failing.stdout).toMatch(/found: +undecided on engine sql: /);
    expect(failing.stdout).toContain("0 passed, 2 failed");
  });
});

describe("vigilc test reports", () => {
  it("writes valid JUnit XML: a testsuite per file, a testcase per test, a failure with the differences", async ({ expect }) => {
    const directory = copyOf("dashcam");
    writeFileSync(join(directory, "extra.vigiltest"), 'policy "dashcam.vigil"\n/// Control characters \u0001 and <markup> & "quotes" are escaped.\ntest "a <tricky> & \\"name\\" \\u0007" { events { warpAffine {transform: "M"} } expect R3 holds }\n');
    const result = await runCli(["test", directory, "--format", "junit", "--engine", "eval,monitor"], { cwd: scratch });
    expect(result.code).toBe(1);
    expect(XMLValidator.validate(result.stdout)).toBe(true);
    const parsed = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: "", isArray: (name) => name === "testsuite" || name === "testcase" }).parse(result.stdout) as {
      testsuites: { tests: string; failures: string; errors: string; testsuite: { name: string; tests: string; failures: string; testcase: { name: string; failure?: { message: string; "#text": string } }[] }[] };
    };
    expect(parsed.testsuites).toMatchObject({ tests: "5", failures: "1", errors: "0" });
    const suites = parsed.testsuites.testsuite;
    expect(suites.map((s) => s.name.replace(/.*\//, ""))).toEqual(["dashcam.vigiltest", "extra.vigiltest"]);
    const failing = suites[1]!.testcase[0]!;
    expect(failing.name).toBe('a <tricky> & "name" \\u0007');
    expect(failing.failure!.message).toContain("dashcam.R3: expected holds, found violated at 1");
    expect(failing.failure!["#text"]).toContain('1  warpAffine {transform: "M"} ok');
  });

  it("writes JSON with the summary, each failure's events, each rule's why, and coverage", async ({ expect }) => {
    const result = await runCli(["test", "examples/dashcam", "--format", "json", "--coverage", "--engine", "eval,monitor"], { cwd: root });
    expect(result.code).toBe(0);
    const report = JSON.parse(result.stdout) as {
      summary: { tests: number; passed: number; failed: number; errors: number };
      files: { file: string; tests: { name: string; outcome: string; rules: { rule: string; triggers?: { count: number }; patterns: { role: string; count: number }[] }[] }[] }[];
      coverage: { percent: number; rules: { name: string; covered: boolean; missing: string[] }[] };
    };
    expect(report.summary).toMatchObject({ failed: 0, errors: 0 });
    expect(report.summary.passed).toBe(report.summary.tests);
    expect(report.files[0]!.file).toBe("examples/dashcam/dashcam.vigiltest");
    const benign = report.files[0]!.tests.find((t) => t.name === "benign run")!;
    expect(benign.rules.find((r) => r.rule === "dashcam.R3")).toMatchObject({ triggers: { count: 1 }, patterns: [{ role: "first", count: 1 }, { role: "second", count: 2 }] });
    expect(report.coverage.percent).toBe(100);
    expect(report.coverage.rules.map((r) => r.name)).toEqual(["R0", "R1", "R2", "R3"]);
  });

  it("prints why each rule holds or not with --why", async ({ expect }) => {
    const result = await runCli(["test", "examples/dashcam", "--why", "--engine", "eval,monitor", "--filter", "^benign"], { cwd: root });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain("✓ benign run");
    expect(result.stdout).not.toContain("warp before validation");
    expect(result.stdout).toMatch(/why dashcam\.R3: holds; its trigger matched 1 \(5\); patterns matched: first 1 \(5\), second 2 \(4, 7\)/);
  });

  it("fails coverage below --threshold with exit 1, naming the rules that lack a case", async ({ expect }) => {
    const directory = copyOf("dashcam");
    const tests = join(directory, "dashcam.vigiltest");
    // Without its hand-written test, R0, R1 and R2 are never violated.
    writeFileSync(tests, readFileSync(tests, "utf8").replace(/test "hand-written[\s\S]*$/, ""));
    // And a rule whose trigger no run of the tests reaches: its pattern is named in a warning.
    const policy = join(directory, "dashcam.vigil");
    writeFileSync(policy, readFileSync(policy, "utf8").replace(/\}\s*$/, '  rule R9: prec(action in {deploy_model}, validate)\n}\n'));
    const result = await runCli(["test", directory, "--coverage", "--threshold", "50", "--engine", "eval,monitor"], { cwd: scratch });
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/✗ dashcam\.R0 +never violated/);
    expect(result.stdout).toMatch(/✗ dashcam\.R9 +never violated, never held non-vacuously/);
    expect(result.stdout).toMatch(/warning: its first pattern `action in \{deploy_model\}` matched no event in any test \(line \d+\)/);
    expect(result.stdout).toContain("1 of 5 rules covered (20.0%)");
    expect(result.stderr).toContain("20.0% of the rules are covered, below the threshold of 50%");
  });
});

describe("vigilc test on bad input", () => {
  it("exits 2 with located diagnostics for a test file that does not read, a missing trace and an unknown rule", async ({ expect }) => {
    const directory = copyOf("dashcam");
    writeFileSync(join(directory, "bad.vigiltest"), 'policy "dashcam.vigil"\ntest "t" {\n  trace "nowhere.jsonl"\n  expect R3 holds\n}\ntest "u" { events { a } expect R33 holds }\ntest "v" { expect R3 frobs }\n');
    const result = await runCli(["test", join(directory, "bad.vigiltest"), "--engine", "eval,monitor"], { cwd: directory });
    expect(result.code).toBe(2);
    expect(result.stderr).not.toMatch(crashPattern);
    expect(result.stderr).toContain("error[V2001]: unexpected `frobs`");
    expect(result.stderr).toContain("--> bad.vigiltest:7:");
    const again = join(directory, "bad2.vigiltest");
    writeFileSync(again, 'policy "dashcam.vigil"\ntest "t" {\n  trace "nowhere.jsonl"\n  expect R3 holds\n}\ntest "u" { events { a } expect r3 holds }\n');
    const second = await runCli(["test", again, "--engine", "eval,monitor"], { cwd: directory });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain("error[V2104]: the trace `nowhere.jsonl` cannot be read");
    expect(second.stderr).toContain("--> bad2.vigiltest:3:9");
    expect(second.stderr).toContain("error[V2102]: the policy has no rule `r3`");
    expect(second.stderr).toContain("did you mean `R3`?");
  });

  it("exits 2 when a path does not exist or holds no test file", async ({ expect }) => {
    const missing = await runCli(["test", "no/such/dir"], { cwd: scratch });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("`no/such/dir` does not exist");
    const empty = mkdtempSync(join(scratch, "empty-"));
    const none = await runCli(["test", empty], { cwd: scratch });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("no test files (*.vigiltest)");
  });
});
