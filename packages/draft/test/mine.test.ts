import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compile, readRecording, splitRunFile, TraceRun, type TraceEvent } from "@vigil/compiler";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { mineRules } from "../src/index.js";

/**
 * Mining without a model: every rule mined holds on every good run (checked again here through the
 * parser, the checker and the forward engine), the templates find what the runs show, and bad runs
 * keep only the rules they break. Thresholds bound numbers and lists by the largest the runs show,
 * on small runs and on the 200 τ-bench airline runs (read in place).
 */

const event = (action: string, args: Record<string, unknown> = {}, output?: string): TraceEvent =>
  ({ action, args, status: "ok", ...(output !== undefined ? { output } : {}) }) as unknown as TraceEvent;

function holds(policy: string, run: readonly TraceEvent[]): Map<string, boolean> {
  const compiled = compile(policy);
  expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  const trace = new TraceRun(statements);
  for (const e of run) trace.step(e);
  return new Map(trace.finish().map((outcome, index) => [statements[index]!.name, outcome.holds]));
}

/** Good release runs: validate before deploy, deploy's artifact from build's output, notify after. */
const release = (id: string, extra: TraceEvent[] = []): TraceEvent[] => [
  event("build", {}, `built artifact-${id}.tar`),
  event("validate"),
  ...extra,
  event("deploy", { artifact: `artifact-${id}.tar` }),
  event("notify"),
];

describe("vigilc mine's templates", () => {
  it("finds the order, the response and the value flow the good runs share, and each holds on every one", () => {
    const good = [release("1"), release("2", [event("lint")]), release("3")];
    const mined = mineRules(good);
    const statements = mined.rules.map((rule) => rule.statement);
    expect(statements).toContain('prec(action in {"deploy"}, action in {"validate"})');
    expect(statements).toContain('resp(action in {"deploy"}, action in {"notify"})');
    expect(statements).toContain('prec(action in {"deploy"} and "artifact" = $x, output contains $x)');
    // Exercised in one run only: `lint` gives no rule at the default of two runs.
    expect(statements.some((s) => s.includes("lint"))).toBe(false);
    for (const run of good) expect([...holds(mined.policy, run).values()].every(Boolean)).toBe(true);
    // A run that deploys what no output named, before validating, breaks those rules.
    const bad = [event("build", {}, "built artifact-9.tar"), event("deploy", { artifact: "evil.tar" }), event("validate"), event("notify")];
    const verdicts = holds(mined.policy, bad);
    const broken = mined.rules.filter((rule) => verdicts.get(rule.name) === false).map((rule) => rule.statement);
    expect(broken).toEqual(expect.arrayContaining(['prec(action in {"deploy"}, action in {"validate"})', 'prec(action in {"deploy"} and "artifact" = $x, output contains $x)']));
    expect(mined.rules[0]!.exercised).toEqual({ events: 3, runs: 3 });
  });

  it("with bad runs, keeps only the rules they break, and names what only they did", () => {
    const good = [release("1"), release("2")];
    const bad = [[...release("3"), event("delete_backups", { scope: "all" })], [event("build", {}, "x"), event("deploy", { artifact: "x" }), event("notify")]];
    const mined = mineRules(good, { bad });
    expect(mined.rules.every((rule) => (rule.breaks ?? 0) > 0)).toBe(true);
    expect(mined.rules.map((rule) => rule.statement)).toEqual(expect.arrayContaining(['abs(action in {"delete_backups"})', 'prec(action in {"deploy"}, action in {"validate"})']));
    expect(mined.rules.find((rule) => rule.statement === 'abs(action in {"delete_backups"})')).toMatchObject({ template: "absence", breaks: 1, says: "No good run called `delete_backups`; bad runs did." });
    expect(mined.policy).toContain("each broken by some of 2 bad runs");
    expect(mineRules(good, { bad, top: 1 }).rules).toHaveLength(1);
  });

  it("finds an argument that only ever took a few values, and not one that took many", () => {
    const good = [0, 1, 2].map((index) => [event("sample_frames", { fps: 6, video: `drive_${index}.mp4` }), event("sample_frames", { fps: 6, video: `drive_${index}b.mp4` })]);
    const mined = mineRules(good);
    expect(mined.rules.map((rule) => rule.statement)).toContain('abs(action in {"sample_frames"} and "fps" ~ "*" and not "fps" in {6})');
    expect(mined.rules.find((rule) => rule.template === "values")?.says).toBe("Every `sample_frames` passed `fps` as 6.");
    expect(mined.rules.some((rule) => rule.statement.includes('"video"'))).toBe(false);
    const verdicts = holds(mined.policy, [event("sample_frames", { fps: 30, video: "x.mp4" })]);
    expect(verdicts.get("sample_frames_fps_values")).toBe(false);
  });

  it("proposes no order that grounding makes true: a shell call's commands come after it by construction", () => {
    const shell = (position: number, command: string, args: Record<string, unknown>) => [
      { ...event("Bash", { command }), position },
      { ...event(command.split(" ")[0]!, args), position: position + 1, source: { groundedFrom: position } } as unknown as TraceEvent,
    ];
    const good = [[...shell(1, "pytest -q", {}), { ...event("Edit"), position: 3 }], [...shell(1, "pytest", {}), { ...event("Edit"), position: 3 }]];
    const statements = mineRules(good).rules.map((rule) => rule.statement);
    expect(statements).not.toContain('prec(action in {"pytest"}, action in {"Bash"})');
    expect(statements).toContain('prec(action in {"Edit"}, action in {"pytest"})');
  });

  it("mines only rules that hold on every good run, whatever the runs (property)", () => {
    const actions = ["a", "b", "c", "d"];
    const runArbitrary = fc.array(
      fc.record({ action: fc.constantFrom(...actions), value: fc.constantFrom("alpha", "beta", "gamma"), output: fc.option(fc.constantFrom("alpha!", "beta?", "none"), { nil: undefined }) }),
      { minLength: 1, maxLength: 8 },
    );
    fc.assert(
      fc.property(fc.array(runArbitrary, { minLength: 1, maxLength: 5 }), fc.array(runArbitrary, { maxLength: 3 }), (goodSpecs, badSpecs) => {
        const toRun = (spec: typeof goodSpecs[number]) => spec.map((e) => event(e.action, { v: e.value }, e.output));
        const good = goodSpecs.map(toRun);
        const bad = badSpecs.map(toRun);
        const mined = mineRules(good, { bad, minRuns: 1 });
        if (mined.rules.length === 0) return;
        for (const run of good) expect([...holds(mined.policy, run).values()].every(Boolean)).toBe(true);
        if (bad.length > 0) {
          for (const rule of mined.rules) expect(bad.filter((run) => holds(mined.policy, run).get(rule.name) === false)).toHaveLength(rule.breaks!);
        }
      }),
      { numRuns: cases(20, 200) },
    );
  });
});

/** Every rule of a mined policy, judged by the forward engine on each run: the rules that do not hold, with the run's index. */
function brokenOn(policy: string, runs: readonly (readonly TraceEvent[])[]): string[] {
  const compiled = compile(policy);
  expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  return runs.flatMap((run, index) => {
    const trace = new TraceRun(statements);
    for (const e of run) trace.step(e);
    return trace.finish().flatMap((outcome, rule) => (outcome.holds ? [] : [`${statements[rule]!.name} on run ${index + 1}`]));
  });
}

describe("vigilc mine's thresholds", () => {
  /** Good refund runs: amounts as numbers and as strings spelling numbers, recipients as lists. */
  const refunds = [
    [event("refund", { amount: 120, order: "A-1" }), event("email", { to: ["a@acme.com"] })],
    [event("refund", { amount: "250.00", order: "B-2" }), event("email", { to: ["a@acme.com", "b@acme.com"] })],
    [event("refund", { amount: 35.5, order: "C-3" }), event("email", { to: ["c@acme.com"] })],
  ];

  it("proposes no number above the largest seen and no list longer than the longest, each holding on every good run", () => {
    const mined = mineRules(refunds);
    expect(mined.rules.find((rule) => rule.template === "threshold")).toEqual({
      name: "refund_amount_max",
      says: "`refund` was never called with `amount` above 250.00 in the 3 good runs.",
      template: "threshold",
      statement: 'abs(action in {"refund"} and "amount" > 250.00)',
      exercised: { events: 3, runs: 3 },
    });
    expect(mined.rules.find((rule) => rule.template === "count")).toMatchObject({
      says: "`email` was never called with more than 2 `to` in the 3 good runs.",
      statement: 'abs(action in {"email"} and count("to") > 2)',
      exercised: { events: 3, runs: 3 },
    });
    // Text that is not a number, and lists of text, give no threshold.
    expect(mined.rules.filter((rule) => rule.template === "threshold" || rule.template === "count")).toHaveLength(2);
    expect(brokenOn(mined.policy, refunds)).toEqual([]);
    expect(mined.policy).toContain("  /// `refund` was never called with `amount` above 250.00 in the 3 good runs.\n  /// Exercised 3 times in 3 of the good runs.\n  rule refund_amount_max:");
    // The largest seen is allowed (as a number or as text); anything above it is not.
    const bounds = (runs: TraceEvent[][]) => brokenOn(mined.policy, runs).filter((broken) => /^(refund_amount_max|email_to_count) /.test(broken));
    expect(bounds([[event("refund", { amount: 250 })], [event("refund", { amount: "250" })], [event("email", { to: ["a", "b"] })]])).toEqual([]);
    expect(bounds([[event("refund", { amount: "250.01" })], [event("email", { to: ["a", "b", "c"] })]])).toEqual(["refund_amount_max on run 1", "email_to_count on run 2"]);
  });

  it("needs three events, every value a number, and keeps with bad runs only the thresholds they cross", () => {
    const twice = mineRules(refunds.slice(0, 2));
    expect(twice.rules.some((rule) => rule.template === "threshold" || rule.template === "count")).toBe(false);
    const mixed = mineRules([...refunds, [event("refund", { amount: "n/a", order: "D-4" })]]);
    expect(mixed.rules.some((rule) => rule.template === "threshold")).toBe(false);
    const against = mineRules(refunds, { bad: [[event("refund", { amount: 900, order: "Z-9" }), event("email", { to: ["a@acme.com"] })]] });
    expect(against.rules.filter((rule) => rule.template === "threshold" || rule.template === "count")).toEqual([
      expect.objectContaining({ statement: 'abs(action in {"refund"} and "amount" > 250.00)', breaks: 1 }),
    ]);
  });

  it("on the τ-bench airline runs, bounds payments, certificates and passenger lists by the largest seen, every mined rule holding on every run", () => {
    const file = join(import.meta.dirname, "../../../../shared/data/tau-bench/gpt-4o-airline.json");
    const text = readFileSync(file, "utf8");
    const runs = splitRunFile(text)!.runs.map((run) => readRecording(run.text, { file, format: "tau-bench", origin: run.origin }).trace.events);
    expect(runs).toHaveLength(200);
    const mined = mineRules(runs);
    // The largest values, read from the file directly.
    const calls = (JSON.parse(text) as { traj: { tool_calls?: { function: { name: string; arguments: string } }[] }[] }[])
      .flatMap((run) => run.traj.flatMap((message) => message.tool_calls ?? []))
      .map((call) => ({ name: call.function.name, args: JSON.parse(call.function.arguments) as Record<string, any> }));
    const bookings = calls.filter((call) => call.name === "book_reservation").map((call) => call.args);
    const largest = (numbers: number[]) => Math.max(...numbers);
    const payment = largest(bookings.flatMap((args) => (args["payment_methods"] as { amount: number }[]).map((method) => method.amount)));
    const certificate = largest(calls.filter((call) => call.name === "send_certificate").map((call) => call.args["amount"] as number));
    const passengers = largest(bookings.map((args) => (args["passengers"] as unknown[]).length));
    const statements = mined.rules.map((rule) => rule.statement);
    expect(statements).toEqual(
      expect.arrayContaining([
        `abs(action in {"book_reservation"} and "payment_methods"."amount" > ${payment})`,
        `abs(action in {"send_certificate"} and "amount" > ${certificate})`,
        `abs(action in {"book_reservation"} and count("passengers") > ${passengers})`,
      ]),
    );
    expect(mined.rules.find((rule) => rule.statement.includes('"payment_methods"."amount"'))?.says).toBe(`\`book_reservation\` was never called with \`payment_methods.amount\` above ${payment} in the 200 good runs.`);
    expect(brokenOn(mined.policy, runs)).toEqual([]);
  });

  it("mines only thresholds that hold on every good run, whatever the numbers (property)", () => {
    const amount = fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }), fc.constantFrom("250.00", "1e2", "-0.5", "12", "0250", "n/a", true, null));
    const runArbitrary = fc.array(
      fc.record({ action: fc.constantFrom("refund", "pay"), amount, to: fc.array(fc.constantFrom("a", "b", 7, "8.5"), { maxLength: 4 }) }),
      { minLength: 1, maxLength: 6 },
    );
    fc.assert(
      fc.property(fc.array(runArbitrary, { minLength: 1, maxLength: 5 }), (specs) => {
        const good = specs.map((spec) => spec.map((e) => event(e.action, { amount: e.amount, to: e.to })));
        const mined = mineRules(good, { minRuns: 1 });
        if (mined.rules.length > 0) expect(brokenOn(mined.policy, good)).toEqual([]);
      }),
      { numRuns: cases(20, 200) },
    );
  });
});
