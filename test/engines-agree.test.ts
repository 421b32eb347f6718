import { breakingEvents, compile, createEngine, createMonitor, evaluateStatement, SmtDecider, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { onlyStatement, policyText, trace } from "./arbitraries.js";
import { figure5Stretches, figure5UntilBreakers, figure5Witnesses } from "./figure5.js";
import { cases } from "./support/tier.js";

/**
 * Differential testing against a reference that is obviously right: Figure 5 read literally
 * (test/figure5.ts). Random policies are generated as text and go through the parser and the
 * checker; on random traces the forward engine, Z3 over both encodings of the lowering (one
 * reading witnesses from cores, one from a model), and the online monitor on every prefix must all
 * give the reference's verdict and witnesses. 2,000 cases in the heavy tier, 200 in the fast one
 * (test/support/tier.ts; VIGIL_PROPERTY_RUNS sets the number of cases).
 */
const runs = cases(200, 2000);


const outcome = (witnesses: number[]) => ({ holds: witnesses.length === 0, witnesses });

/** Forms whose every witness is final at the event that makes it one (before the run ends). */
function finalAt(statement: CheckedStatement, witness: number, prefix: number, events: readonly TraceEvent[]): boolean {
  if (statement.scope !== undefined) {
    // A witness of a stretch that has closed is final; in one still open, as the statement says,
    // except under `between`, whose open stretch is not judged.
    const stretch = figure5Stretches(statement.scope, events.slice(0, prefix)).find((s) => s.events.some((e) => e.position === witness));
    if (stretch === undefined) return false;
    if (stretch.closed) return true;
    if (statement.scope.kind === "between") return false;
    const { scope: _scope, ...unscoped } = statement;
    return finalAt(unscoped as CheckedStatement, witness, prefix, events);
  }
  switch (statement.form) {
    case "abs":
    case "prec":
    case "until":
    case "limit":
      return true;
    case "bresp": {
      const window = statement.window;
      if (window.unit === "events") return witness + window.size <= prefix;
      // A window of time closes at the first event past it.
      const opened = events[witness - 1]!.time!;
      return events.slice(witness, prefix).some((event) => event.time! - opened > window.size);
    }
    case "always":
      return !JSON.stringify(statement.body).includes('"eventually"');
    default:
      return false;
  }
}

describe("every engine agrees with Figure 5 read literally", () => {
  let shared: SmtDecider;
  let literal: SmtDecider;
  beforeAll(async () => {
    // bresp windows: spelled out in the literal encoding, nearest-later positions in the shared one.
    shared = await SmtDecider.create({ encoding: "shared", timeoutMs: 20_000, windowSpelledOutUpTo: 0 });
    literal = await SmtDecider.create({ encoding: "literal", timeoutMs: 20_000, coreRounds: 0 });
  });
  afterAll(async () => {
    await shared.dispose();
    await literal.dispose();
  });

  it(`the forward engine and both SMT encodings, on ${runs} random policies (as text) and traces`, async () => {
    await fc.assert(
      fc.asyncProperty(policyText, trace, async (source, events) => {
        const statement = onlyStatement(source);
        const expected = outcome(figure5Witnesses(statement, events));
        expect(evaluateStatement(statement, events)).toEqual(expected);
        expect(await shared.decide(statement, events)).toEqual(expected);
        expect(await literal.decide(statement, events)).toEqual(expected);
        // The monitor engine, as \`check --engine monitor\` and the test runner run it: call by call.
        const monitorRun = createEngine("monitor").start([statement]);
        for (const event of events) monitorRun.step(event);
        expect((await monitorRun.finish())[0]).toEqual(expected);
        if (statement.form === "until") {
          // Reports name the bad event that broke each interval.
          const breakers = breakingEvents(statement, events);
          // Every witness has its breaking event (the map is in the order they were reported).
          expect([...breakers.keys()].sort((a, b) => a - b)).toEqual(expected.witnesses);
          expect(breakers).toEqual(figure5UntilBreakers(statement, events));
        }
      }),
      { numRuns: runs },
    );
  }, 900_000);

  it(`the online monitor on every prefix, on ${runs} random policies and traces`, () => {
    fc.assert(
      fc.property(policyText, trace, (source, recorded) => {
        // A call the monitor records has run, so it has a status.
        const events = recorded.map((e) => ({ ...e, status: e.status ?? ("ok" as const) }));
        const compiled = compile(source);
        const statement = onlyStatement(source);
        const monitor = createMonitor(compiled);
        const reported = new Set<number>();
        for (let k = 0; k <= events.length; k++) {
          // The run ending here: a monitor restored from a snapshot gives the prefix's verdict.
          const prefix = events.slice(0, k);
          const expected = figure5Witnesses(statement, prefix);
          const resumed = createMonitor(compiled, { restore: JSON.parse(JSON.stringify(monitor.snapshot())) });
          expect(resumed.finish()[0]).toMatchObject(outcome(expected));
          // Every violation reported so far is a witness of the prefix, and every witness that is
          // final by now has been reported.
          for (const witness of reported) expect(expected).toContain(witness);
          for (const witness of expected) if (finalAt(statement, witness, k, events)) expect(reported, `witness ${witness} at prefix ${k}`).toContain(witness);
          if (k === events.length) break;
          const event: TraceEvent = events[k]!;
          const decided = monitor.decide({ id: `call${k}`, action: event.action, args: event.args, ...(event.time !== undefined ? { time: event.time } : {}) });
          expect(decided.position).toBe(k + 1);
          // The pending call is judged as succeeding, whatever its output: what decide reports is a
          // witness of the prefix with the call succeeded, and stays one if it does succeed.
          const succeeded = figure5Witnesses(statement, [...prefix, { ...event, status: "ok" }]);
          const confirmed = figure5Witnesses(statement, events.slice(0, k + 1));
          for (const violation of decided.violations) {
            for (const witness of violation.witnesses) {
              expect(succeeded).toContain(witness);
              if (confirmed.includes(witness)) reported.add(witness);
            }
          }
          expect(decided.decision).toBe(decided.violations.length > 0 ? "block" : "allow");
          const result = monitor.record({
            id: `call${k}`,
            status: event.status,
            ...(event.output !== undefined ? { output: event.output } : {}),
          });
          // A statement that reads neither status nor output is decided in full before the call runs.
          // (A scope's stretch that this call closes is judged when it is recorded; so is a window of
          // time that closed before the call, by the passing of time.)
          if (!/status|output/.test(source) && statement.scope === undefined && !/bresp\[\d+(ms|s|m|h|d)\]/.test(source)) expect(result.violations).toEqual([]);
          for (const violation of result.violations) for (const witness of violation.witnesses) reported.add(witness);
        }
      }),
      { numRuns: runs },
    );
  }, 900_000);
});
