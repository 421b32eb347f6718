import { compile, type CheckedStatement } from "@vigil/compiler";
import { decideCall, Monitor, recordCall } from "@vigil/engine";
import { describe, expect, it } from "vitest";

/**
 * Containment (`halt`, `quarantine`): the monitor refuses every call of a halted run, and every
 * call of a quarantined run that the policy's `read_only` pattern does not match; a break refused
 * before the call ran contains the run at once, a break only the result shows from the next call.
 */
const POLICY = `policy p {
  pattern read_only = action in {Read, Grep} or (action in {Bash} and command ~ "git status*")
  /// Never read the credentials.
  rule secret: abs(action in {Read} and file_path ~ "*.env") halt "Stop: a secret was read."
  rule failing: abs(action in {Bash} and status = error) quarantine "Only look until a person checks."
  rule no_rm: abs(action in {rm})
  rule warned: abs(action in {Grep} and query ~ "password") warn
}
`;

function statements(source = POLICY): readonly CheckedStatement[] {
  const compiled = compile(source);
  expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return compiled.program.policies.flatMap((policy) => policy.statements);
}

const read = (file_path: string) => ({ action: "Read", args: { file_path } });
const bash = (command: string) => ({ action: "Bash", args: { command } });

describe("halt", () => {
  it("refuses the call that breaks the rule, and every later call, naming the rule", () => {
    const monitor = new Monitor(statements());
    expect(monitor.decide(read("notes.md")).decision).toBe("allow");
    monitor.record({ status: "ok" });
    const breaking = monitor.decide({ id: "c2", ...read(".env") });
    expect(breaking.decision).toBe("block");
    expect(breaking.violations.map((v) => [v.name, v.response])).toEqual([["secret", "halt"]]);
    expect(breaking.contained).toBeUndefined();
    expect(breaking.containment).toEqual({ state: "halted", policy: "p", name: "secret", text: "Never read the credentials.", remediation: "Stop: a secret was read.", position: 2, by: "decision" });
    // The refused call never runs; the run is halted all the same.
    monitor.cancel("c2");
    const later = monitor.decide(read("notes.md"));
    expect(later).toMatchObject({ decision: "block", violations: [], contained: true, containment: { state: "halted", name: "secret" } });
  });

  it("a break only the result shows halts the run from the next call", () => {
    const monitor = new Monitor(statements(`policy p {\n  rule leak: abs(action in {fetch} and output ~ "*SECRET*") halt\n}\n`));
    expect(monitor.decide({ action: "fetch", args: {} }).decision).toBe("allow");
    const recorded = monitor.record({ status: "ok", output: "a SECRET here" });
    expect(recorded.violations.map((v) => v.name)).toEqual(["leak"]);
    expect(recorded.containment).toMatchObject({ state: "halted", name: "leak", position: 1, by: "record" });
    expect(monitor.decide({ action: "fetch", args: {} })).toMatchObject({ decision: "block", contained: true });
  });

  it("changes no verdict: the offline verdicts are those of the same rules with `block`", () => {
    const halting = new Monitor(statements());
    const blocking = new Monitor(statements(POLICY.replace(" halt ", " block ").replace(" quarantine ", " block ")));
    for (const monitor of [halting, blocking]) {
      monitor.record({ ...read(".env"), status: "ok" });
      monitor.record({ ...bash("npm test"), status: "error" });
      monitor.record({ action: "rm", args: {}, status: "ok" });
    }
    expect(halting.finish()).toEqual(blocking.finish());
  });
});

describe("quarantine", () => {
  it("lets only read-only calls through after the rule is broken, each decided as usual", () => {
    const monitor = new Monitor(statements());
    expect(monitor.decide(bash("npm test")).decision).toBe("allow");
    const recorded = monitor.record({ status: "error" });
    expect(recorded.containment).toMatchObject({ state: "quarantined", name: "failing", position: 1, by: "record" });
    // Read-only: decided as usual (a `warn` rule still reports, `allow` still allows).
    expect(monitor.decide(read("notes.md"))).toMatchObject({ decision: "allow", violations: [] });
    const warned = monitor.decide({ action: "Grep", args: { query: "password" } });
    expect(warned.decision).toBe("allow");
    expect(warned.violations.map((v) => v.name)).toEqual(["warned"]);
    expect(warned.contained).toBeUndefined();
    expect(monitor.decide(bash("git status --short")).decision).toBe("allow");
    // Not read-only: refused, naming the rule that quarantined the run.
    expect(monitor.decide(bash("git push"))).toMatchObject({ decision: "block", contained: true, containment: { state: "quarantined", name: "failing" } });
    expect(monitor.decide({ action: "Write", args: { file_path: "x" } })).toMatchObject({ decision: "block", contained: true });
  });

  it("a quarantined run that breaks a halt rule is halted", () => {
    const monitor = new Monitor(statements());
    monitor.record({ ...bash("npm test"), status: "error" });
    const breaking = monitor.decide(read(".env"));
    expect(breaking).toMatchObject({ decision: "block", containment: { state: "halted", name: "secret" } });
    expect(monitor.decide(read("notes.md"))).toMatchObject({ decision: "block", contained: true, containment: { state: "halted" } });
  });

  it("a halted run stays halted when a quarantine rule is broken", () => {
    const monitor = new Monitor(statements());
    monitor.decide(read(".env"));
    monitor.record({ ...bash("npm test"), status: "error" });
    expect(monitor.containment).toMatchObject({ state: "halted", name: "secret" });
  });

  it("a call that would break a quarantine rule before it runs is refused and quarantines the run", () => {
    const monitor = new Monitor(statements(`policy p {\n  pattern read_only = action in {Read}\n  rule deploy: abs(action in {deploy}) quarantine\n}\n`));
    expect(monitor.decide({ action: "deploy", args: {} })).toMatchObject({ decision: "block", containment: { state: "quarantined", name: "deploy", by: "decision" } });
    expect(monitor.decide({ action: "Read", args: {} }).decision).toBe("allow");
    expect(monitor.decide({ action: "Write", args: {} })).toMatchObject({ decision: "block", contained: true });
  });
});

describe("the state is the monitor's, and survives it", () => {
  it("a restored monitor refuses what the saved one would", () => {
    const monitor = new Monitor(statements());
    monitor.decide(read(".env"));
    const restored = new Monitor(statements(), { restore: JSON.parse(JSON.stringify(monitor.snapshot())) });
    expect(restored.containment).toEqual(monitor.containment);
    expect(restored.decide(read("notes.md"))).toMatchObject({ decision: "block", contained: true });
  });

  it("a snapshot without containment (of before it was kept) restores a run that is not contained", () => {
    const monitor = new Monitor(statements());
    const snapshot = monitor.snapshot();
    expect("containment" in snapshot).toBe(false);
    expect(new Monitor(statements(), { restore: snapshot }).decide(read("notes.md")).decision).toBe("allow");
  });

  it("decideCall: a call of several events that breaks a halt rule halts the run it decides on", () => {
    const checked = statements();
    const monitor = new Monitor(checked);
    const decided = decideCall(monitor, checked, [bash("cat .env"), read(".env")]);
    expect(decided).toMatchObject({ decision: "block", containment: { state: "halted", name: "secret" } });
    expect(decided.contained).toBeUndefined();
    expect(monitor.containment).toMatchObject({ state: "halted", name: "secret" });
    expect(decideCall(monitor, checked, [read("notes.md")])).toMatchObject({ decision: "block", contained: true });
  });

  it("decideCall on a quarantined run: every event of the call must be read-only", () => {
    const checked = statements();
    const monitor = new Monitor(checked);
    recordCall(monitor, [{ ...bash("npm test"), status: "error" }]);
    expect(decideCall(monitor, checked, [bash("git status"), { action: "Grep", args: {} }]).decision).toBe("allow");
    expect(decideCall(monitor, checked, [bash("git status"), { action: "rm", args: {} }])).toMatchObject({ decision: "block", contained: true });
  });

  it("a call in flight that would quarantine the run if it succeeded does not contain the run", () => {
    const checked = statements(`policy p {\n  pattern read_only = action in {Read}\n  rule deploy: abs(action in {deploy} and status = ok) quarantine\n}\n`);
    const monitor = new Monitor(checked);
    decideCall(monitor, checked, [{ action: "Read", args: {} }], undefined, [{ action: "deploy", args: {} }]);
    expect(monitor.containment).toBeUndefined();
  });
});
