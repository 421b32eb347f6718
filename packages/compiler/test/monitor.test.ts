import { readFileSync } from "node:fs";
import { join } from "node:path";
import { compile, createMonitor, readTrace } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

const examples = join(import.meta.dirname, "../../../examples");
const dashcam = compile(readFileSync(join(examples, "dashcam/dashcam.vigil"), "utf8"), { file: "dashcam.vigil" });
const violating = readTrace(readFileSync(join(examples, "dashcam/violating.jsonl"), "utf8")).trace.events;

describe("the online monitor on the dashcam pipeline", () => {
  it("blocks the warp that consumes an unvalidated transform before it runs, naming the rule", () => {
    const monitor = createMonitor(dashcam);
    for (const event of violating.slice(0, 4)) {
      const decided = monitor.decide({ id: `c${event.position}`, action: event.action, args: event.args });
      expect(decided.decision).toBe("allow");
      monitor.record({ id: `c${event.position}`, status: "ok", ...(event.output !== undefined ? { output: event.output } : {}) });
    }
    const warp = violating[4]!;
    const decided = monitor.decide({ id: "c5", action: warp.action, args: warp.args });
    expect(decided.decision).toBe("block");
    expect(decided.position).toBe(5);
    expect(decided.violations).toMatchObject([{ policy: "dashcam", name: "R3", form: "prec", witnesses: [5] }]);
    expect(decided.violations[0]!.text).toContain("validated before it is consumed");
    // The agent validates the transform instead; then the same warp is allowed.
    monitor.cancel("c5");
    expect(monitor.decide({ id: "v", action: "validate_output", args: { target: "M" } }).decision).toBe("allow");
    monitor.record({ id: "v", status: "ok" });
    expect(monitor.decide({ id: "c6", action: warp.action, args: warp.args }).decision).toBe("allow");
  });

  it("survives between processes: a snapshot, as JSON, restores the same state", () => {
    const first = createMonitor(dashcam);
    for (const event of violating.slice(0, 4)) {
      first.decide({ id: `c${event.position}`, action: event.action, args: event.args });
      first.record({ id: `c${event.position}`, status: "ok" });
    }
    const saved = JSON.stringify(first.snapshot());
    const second = createMonitor(dashcam, { restore: JSON.parse(saved) });
    expect(second.length).toBe(4);
    expect(second.decide({ id: "c5", action: "warpAffine", args: { transform: "M" } }).decision).toBe("block");
    // A snapshot of another policy is refused.
    const other = compile("policy other {\n  rule r: abs(action in {rm})\n}\n");
    expect(() => createMonitor(other, { restore: JSON.parse(saved) })).toThrow(/another policy/);
  });

  it("judges what is still open when the run ends, and reports what a result reveals", () => {
    const policy = compile(
      [
        "policy p {",
        "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
        "  rule no_failed_deploy: abs(action in {deploy} and status = error)",
        "}",
        "",
      ].join("\n"),
    );
    const monitor = createMonitor(policy);
    expect(monitor.decide({ id: "1", action: "open", args: { id: "a" } }).decision).toBe("allow");
    monitor.record({ id: "1", status: "ok" });
    expect(monitor.standing()[0]).toMatchObject({ name: "closes", verdict: "open", openObligations: 1 });
    // A deploy is judged as if it will succeed; its failure is found when the result is recorded.
    expect(monitor.decide({ id: "2", action: "deploy", args: {} }).decision).toBe("allow");
    const recorded = monitor.record({ id: "2", status: "error", output: "permission denied" });
    expect(recorded.violations).toMatchObject([{ name: "no_failed_deploy", witnesses: [2] }]);
    expect(monitor.finish()).toEqual([
      { policy: "p", name: "closes", holds: false, witnesses: [1] },
      { policy: "p", name: "no_failed_deploy", holds: false, witnesses: [2] },
    ]);
  });

  it("answers with what the broken rules say: block over ask over warn, with the remediation", () => {
    const policy = compile(
      [
        "policy p {",
        '  rule audit: abs(action in {deploy}) warn "Deploys are reviewed afterwards."',
        '  rule confirm: abs(action in {deploy} and env in {"prod"}) ask "A person approves production deploys."',
        '  rule never: abs(action in {deploy} and env in {"prod"} and force in {true}) block "Deploy without --force."',
        "}",
        "",
      ].join("\n"),
    );
    const monitor = createMonitor(policy);
    const staging = monitor.decide({ id: "1", action: "deploy", args: { env: "staging" } });
    expect(staging).toMatchObject({ decision: "allow", violations: [{ name: "audit", response: "warn", remediation: "Deploys are reviewed afterwards." }] });
    monitor.cancel("1");
    const production = monitor.decide({ id: "2", action: "deploy", args: { env: "prod" } });
    expect(production.decision).toBe("ask");
    expect(production.violations.map((v) => [v.name, v.response])).toEqual([
      ["audit", "warn"],
      ["confirm", "ask"],
    ]);
    monitor.cancel("2");
    const forced = monitor.decide({ id: "3", action: "deploy", args: { env: "prod", force: true } });
    expect(forced.decision).toBe("block");
    expect(forced.violations.find((v) => v.name === "never")?.remediation).toBe("Deploy without --force.");
  });

  it("fails closed: a call it cannot read is blocked with the reason", () => {
    const monitor = createMonitor(dashcam);
    const decided = monitor.decide({ action: "", args: {} } as never);
    expect(decided.decision).toBe("block");
    expect(decided.error).toMatch(/no action name/);
    expect(() => createMonitor(compile("policy p {\n  rule r: abs(\n}\n"))).toThrow(/error/);
  });
});
