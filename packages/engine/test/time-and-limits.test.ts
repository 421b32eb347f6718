import { check, compile, createMonitor, SmtDecider, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { TraceRun } from "@vigil/engine";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Windows of time and limits, on small traces whose witnesses are derived by hand from the
 * definitions in docs/semantics.md: both engines must return exactly these. Events are written
 * `action@S:key=value,…`, S the event's time in seconds (numbers in values stay numbers).
 */
function events(spec: string): TraceEvent[] {
  return spec
    .split(" ")
    .filter(Boolean)
    .map((text, index) => {
      const [head, rest] = text.split(":");
      const [action, seconds] = head!.split("@");
      const args = Object.fromEntries(
        (rest ?? "")
          .split(",")
          .filter(Boolean)
          .map((pair) => {
            const [key, value] = pair.split("=") as [string, string];
            return [key, /^-?[0-9.]+$/.test(value) ? Number(value) : value];
          }),
      );
      return { position: index + 1, action: action!, args, status: "ok" as const, ...(seconds !== undefined ? { time: Number(seconds) * 1000 } : {}) };
    });
}

function statementOf(rule: string): { compiled: ReturnType<typeof compile>; statement: CheckedStatement } {
  const compiled = compile(`policy p {\n  rule r: ${rule}\n}\n`);
  expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return { compiled, statement: compiled.program.policies[0]!.statements[0]! };
}

const cases: [title: string, statement: string, events: string, witnesses: number[]][] = [
  // bresp[d]: ψ(e) ⇒ ∨_{e' ≻ e, t(e') − t(e) ≤ d} ψ'(e')
  ["bresp in time: answered in time", "bresp[5m](action in {crash}, action in {repro})", "crash@0 x@100 repro@200", []],
  ["bresp in time: exactly at the end of the window holds", "bresp[5m](action in {crash}, action in {repro})", "crash@0 repro@300", []],
  ["bresp in time: a second late fails", "bresp[5m](action in {crash}, action in {repro})", "crash@0 repro@301", [1]],
  ["bresp in time: at the same instant, after it, counts", "bresp[1s](action in {crash}, action in {repro})", "crash@5 repro@5", []],
  ["bresp in time: unanswered at the end", "bresp[5m](action in {crash}, action in {repro})", "crash@0 x@10", [1]],
  ["bresp in time: per value", "bresp[1m](action in {open} and id = $f, action in {close} and id = $f)", "open@0:id=1 open@0:id=2 close@30:id=1 close@90:id=2", [2]],
  // once[d] / eventually[d]
  ["once in time: within the hour", "always not (action in {post} and once[1h] action in {secret})", "secret@0 post@3600 post@3601", [2]],
  ["once in time: strictly earlier", "always not (action in {a} and once[1h] action in {a})", "a@0 a@0", [2]],
  ["eventually in time: the stop comes in time or not", "always (action in {start} implies eventually[30s] action in {stop})", "start@0 stop@30 start@40 stop@71", [3]],
  // limit[N]: every event past the N-th is a witness
  ["limit: past the N-th", "limit[2](action in {retry})", "retry retry x retry retry", [4, 5]],
  ["limit: zero is absence", "limit[0](action in {rm})", "ls rm", [2]],
  ["limit: per value", "limit[1](action in {send} and to = $r)", "send:to=a send:to=b send:to=a", [3]],
  // limit[N per d]: W(e) = {e' ≼ e : t(e) − t(e') < d}
  ["limit per window: three in a minute", "limit[2 per 1m](action in {call})", "call@0 call@10 call@20 call@70 call@85", [3]],
  ["limit per window: a minute apart is a new window", "limit[1 per 1m](action in {call})", "call@0 call@60 call@119", [3]],
  ["limit per window, per value", "limit[1 per 1d](action in {send_money} and recipient = $r)", "send_money@0:recipient=a send_money@10:recipient=b send_money@20:recipient=a send_money@86420:recipient=a", [3]],
  // limit[X of k per d]: a sum of exact decimals
  ["sum: 0.1 and 0.2 make exactly 0.3", "limit[0.3 of amount](action in {refund})", "refund:amount=0.1 refund:amount=0.2", []],
  ["sum: over the maximum", "limit[500 of amount per 1d](action in {refund})", "refund@0:amount=100.10 refund@10:amount=399.90 refund@20:amount=0.01 refund@86420:amount=400", [3]],
  ["sum: an amount that cannot be counted is a witness", "limit[500 of amount](action in {refund})", "refund:amount=x refund refund:amount=-5 refund:amount=5", [1, 2, 3]],
];

let decider: SmtDecider;
beforeAll(async () => {
  decider = await SmtDecider.create({ timeoutMs: 20_000 });
});
afterAll(async () => {
  await decider.dispose();
});

describe.each(cases)("%s", (_, rule, spec, witnesses) => {
  it.each(["eval", "smt", "monitor"] as const)("%s gives the hand-derived witnesses", async (engine) => {
    // Events written without a time are given one each second apart (a limit without a window reads none).
    const trace = events(spec).map((event) => ({ ...event, time: event.time ?? event.position * 1000 }));
    const { compiled } = statementOf(rule);
    const report = await check(compiled, { events: trace }, { engine, decider });
    expect(report.statements[0]!.witnesses).toEqual(witnesses);
    expect(report.statements[0]!.holds).toBe(witnesses.length === 0);
  });
});

describe("a rule that measures time, on events without times", () => {
  it("is undecided with the event named, whatever the engine; the other rules are judged", async () => {
    const compiled = compile("policy p {\n  rule timed: limit[1 per 1m](action in {a})\n  rule counted: limit[1](action in {a})\n}\n");
    const trace = events("a a");
    for (const engine of ["eval", "smt", "monitor"] as const) {
      const report = await check(compiled, { events: trace }, { engine, decider });
      expect(report.statements[0]!.undecided, engine).toBe("event 1 has no time, and the rule measures time");
      expect(report.statements[0]!.holds).toBe(false);
      expect(report.statements[1]).toMatchObject({ holds: false, witnesses: [2] });
      expect(report.statements[1]!.undecided).toBeUndefined();
    }
  });

  it("is undecided when times go back", () => {
    const { statement } = statementOf("bresp[1m](action in {a}, action in {b})");
    const run = new TraceRun([statement]);
    for (const event of events("a@10 b@5")) run.step(event);
    expect(run.finish()[0]!.undecided).toMatch(/^event 2 has a time \(1970-01-01T00:00:05\.000Z\) earlier than the event before it/);
    expect(run.timeError).toMatchObject({ position: 2 });
  });
});

describe("the monitor", () => {
  it("blocks the call that would exceed a limit, per recipient, and lets the window pass", () => {
    const { compiled } = statementOf("limit[2 per 1m](action in {send} and to = $r)");
    let now = 0;
    const monitor = createMonitor(compiled, { now: () => now });
    const send = (to: string, at: number) => {
      now = at * 1000;
      const decided = monitor.decide({ id: `${to}@${at}`, action: "send", args: { to } });
      if (decided.decision === "allow") monitor.record({ id: `${to}@${at}`, status: "ok" });
      else monitor.cancel(`${to}@${at}`);
      return decided.decision;
    };
    expect([send("a", 0), send("a", 10), send("b", 20), send("a", 30), send("a", 60), send("a", 70)]).toEqual(["allow", "allow", "allow", "block", "allow", "allow"]);
    // At 70 s the calls of 0 s and 10 s are out of the window; 60 s and 70 s fill it.
    expect(send("a", 75)).toBe("block");
    expect(monitor.finish()[0]).toMatchObject({ holds: true });
  });

  it("reports a response missed by the passing of time when the next event is recorded, without blocking that call", () => {
    const { compiled } = statementOf("bresp[5m](action in {crash}, action in {repro})");
    let now = 0;
    const monitor = createMonitor(compiled, { now: () => now });
    expect(monitor.decide({ id: "1", action: "crash", args: {} }).decision).toBe("allow");
    monitor.record({ id: "1", status: "ok" });
    now = 301_000;
    const late = monitor.decide({ id: "2", action: "ls", args: {} });
    expect(late).toMatchObject({ decision: "allow", violations: [] });
    expect(monitor.record({ id: "2", status: "ok" }).violations).toMatchObject([{ name: "r", witnesses: [1] }]);
  });

  it("uses the event's own time over its clock, keeps times in its snapshot, and never lets time go back", () => {
    const { compiled } = statementOf("limit[1 per 1h](action in {a})");
    const monitor = createMonitor(compiled, { now: () => 0 });
    monitor.record({ action: "a", args: {}, status: "ok", time: 7_200_000 });
    const snapshot = JSON.parse(JSON.stringify(monitor.snapshot()));
    expect(snapshot.time).toBe(7_200_000);
    // The clock says 0, before the latest event: the call is timed at the latest event's time, in its window.
    const resumed = createMonitor(compiled, { restore: snapshot, now: () => 0 });
    expect(resumed.decide({ action: "a", args: {} }).decision).toBe("block");
    expect(resumed.nextTime()).toBe(7_200_000);
  });

  it("resumes a limit's window from a snapshot as if it had never stopped", () => {
    const { compiled } = statementOf("limit[500 of amount per 1d](action in {refund} and user = $u)");
    const trace = events("refund@0:user=a,amount=300 refund@100:user=b,amount=300 refund@200:user=a,amount=150.5 refund@86401:user=a,amount=349.5 refund@86402:user=a,amount=0.01");
    const straight = createMonitor(compiled);
    const witnesses: number[] = [];
    let resumed = createMonitor(compiled);
    for (const event of trace) {
      straight.record({ action: event.action, args: event.args, status: "ok", time: event.time! });
      resumed = createMonitor(compiled, { restore: JSON.parse(JSON.stringify(resumed.snapshot())) });
      for (const violation of resumed.record({ action: event.action, args: event.args, status: "ok", time: event.time! }).violations) witnesses.push(...violation.witnesses);
    }
    // At 86401 s the refund of 0 s has left the window: 150.5 + 349.5 = 500; the cent after is over.
    expect(witnesses).toEqual([5]);
    expect(straight.finish()[0]!.witnesses).toEqual([5]);
  });
});
