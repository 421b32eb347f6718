import { compile, TraceRun, type TraceEvent } from "@vigil/compiler";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { cases } from "../../../test/support/tier.js";
import { mineRules } from "../src/index.js";

/**
 * Mining without a model: every rule mined holds on every good run (checked again here through the
 * parser, the checker and the forward engine), the templates find what the runs show, and bad runs
 * keep only the rules they break.
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
