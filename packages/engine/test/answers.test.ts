import type { CheckedPattern } from "@vigil/checker";
import { compile, readTrace, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { createMachine, PatternBinder, TraceRun, type MachineObserver } from "@vigil/engine";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { policyText, trace as randomTrace } from "../../../test/arbitraries.js";
import { figure5Witnesses } from "../../../test/figure5.js";
import * as tier from "../../../test/support/tier.js";
import { Truth } from "../src/truth.js";

/**
 * Which event answered each trigger (`MachineObserver.answered`), form by form, on small traces
 * whose answers are derived by hand; then, on random policies and traces, every answer against a
 * literal reading of what answers a trigger. Traces are written as in semantics.test.ts: `action` or
 * `action:key=value,…` per event.
 */
function events(spec: string): TraceEvent[] {
  const text = spec
    .split(" ")
    .filter(Boolean)
    .map((event) => {
      const [action, rest] = event.split(":");
      const args = Object.fromEntries((rest ?? "").split(",").filter(Boolean).map((pair) => pair.split("=") as [string, string]));
      return JSON.stringify({ action, args });
    })
    .join("\n");
  return jsonEvents(text);
}

function jsonEvents(text: string): TraceEvent[] {
  const { trace, diagnostics } = readTrace(text);
  expect(diagnostics).toEqual([]);
  return [...trace.events];
}

function statementOf(rule: string): CheckedStatement {
  const compiled = compile(`policy p {\n  rule r: ${rule}\n}\n`);
  expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
  return compiled.program.policies[0]!.statements[0]!;
}

/** What a machine told its observer over a whole run (in order), and the witnesses. */
interface Told {
  readonly triggers: number[];
  readonly answers: [trigger: number, by: number][];
  /** For each answer, the position of the event being read when it was told. */
  readonly toldAt: number[];
  readonly witnesses: number[];
}

function observe(statement: CheckedStatement, trace: readonly TraceEvent[]): Told {
  const told: Told = { triggers: [], answers: [], toldAt: [], witnesses: [] };
  let reading = 0;
  const observer: MachineObserver = {
    trigger: (position) => told.triggers.push(position),
    answered: (trigger, by) => {
      told.answers.push([trigger, by]);
      told.toldAt.push(reading);
    },
  };
  const machine = createMachine(statement, undefined, observer);
  for (const event of trace) {
    reading = event.position;
    told.witnesses.push(...machine.step(event));
  }
  told.witnesses.push(...machine.finish());
  told.witnesses.sort((a, b) => a - b);
  return told;
}

const byTrigger = (answers: readonly (readonly [number, number])[]) => [...answers].sort((a, b) => a[0] - b[0]);

const cases: [title: string, rule: string, trace: string, answers: [number, number][], witnesses: number[]][] = [
  // resp: the first later response of the binding.
  ["resp: each trigger by the first later response", "resp(action in {open}, action in {close})", "open close open x close close", [[1, 2], [3, 5]], []],
  ["resp: one response answers every waiting trigger", "resp(action in {open}, action in {close})", "open open close", [[1, 3], [2, 3]], []],
  ["resp: strictly later; the last trigger is a witness", "resp(action in {a}, action in {a})", "a a", [[1, 2]], [2]],
  [
    "resp: only a response of the same value answers",
    "resp(action in {open} and id = $f, action in {close} and id = $f)",
    "open:id=1 open:id=2 close:id=3 close:id=2 open:id=3 close:id=1",
    [[1, 6], [2, 4]],
    [5],
  ],
  // bresp: the first response within the next ℓ events.
  ["bresp: within the window; a response past it answers nothing", "bresp[2](action in {crash}, action in {repro})", "crash x repro crash x x repro", [[1, 3]], [4]],
  ["bresp: the first response, exactly at the bound", "bresp[3](action in {crash}, action in {repro})", "crash x x repro repro", [[1, 4]], []],
  [
    "bresp: per value",
    "bresp[3](action in {crash} and id = $c, action in {repro} and id = $c)",
    "crash:id=1 crash:id=2 repro:id=2 repro:id=1 repro:id=1",
    [[1, 4], [2, 3]],
    [],
  ],
  // prec: the first earlier ψ' of the binding.
  ["prec: the first earlier check", "prec(action in {use}, action in {check})", "use check use check use", [[3, 2], [5, 2]], [1]],
  ["prec: strictly earlier", "prec(action in {a}, action in {a})", "a a a", [[2, 1], [3, 1]], [1]],
  [
    "prec: only a validation of the same value answers",
    "prec(action in {warp} and t = $x, action in {validate} and target = $x)",
    "validate:target=A validate:target=B warp:t=B validate:target=A warp:t=A warp:t=C",
    [[3, 2], [5, 1]],
    [6],
  ],
  // rslv: itself when ψ' holds on it, else the first later ψ' or ψ of the binding.
  ["rslv: resolved at itself", "rslv(action in {alarm}, action in {alarm} and level in {\"low\"})", "alarm:level=low", [[1, 1]], []],
  ["rslv: by an ack, or superseded by a later alarm", "rslv(action in {alarm}, action in {ack})", "alarm ack alarm alarm", [[1, 2], [3, 4]], [4]],
  [
    "rslv: per value",
    "rslv(action in {alarm} and id = $a, action in {ack} and id = $a)",
    "alarm:id=1 alarm:id=2 ack:id=1 ack:id=3 alarm:id=2",
    [[1, 3], [2, 5]],
    [5],
  ],
  // until: the resolution that closed the interval before any bad event.
  ["until: closed by the unlock", "until(action in {lock}, action in {unlock}, action in {write})", "lock unlock write", [[1, 2]], []],
  ["until: broken first, so never answered", "until(action in {lock}, action in {unlock}, action in {write})", "lock write unlock", [], [1]],
  ["until: one unlock closes every open interval", "until(action in {lock}, action in {unlock}, action in {write})", "lock lock unlock", [[1, 3], [2, 3]], []],
  ["until: an interval still open at the end is neither answered nor a witness", "until(action in {lock}, action in {unlock}, action in {write})", "lock x", [], []],
  [
    "until: per value; a broken trigger is not answered by a later resolution",
    "until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)",
    "lock:id=1 lock:id=2 write:id=2 unlock:id=1 unlock:id=2",
    [[1, 4]],
    [2],
  ],
  // abs: its triggers are its witnesses.
  ["abs: never answers", "abs(action in {rm})", "rm ls rm", [], [1, 3]],
];

describe("which event answers each trigger", () => {
  it.each(cases)("%s", (_, rule, trace, answers, witnesses) => {
    const statement = statementOf(rule);
    const told = observe(statement, events(trace));
    expect(byTrigger(told.answers)).toEqual(answers);
    expect(told.witnesses).toEqual(witnesses);
    // A trigger that is a witness is never answered.
    for (const [trigger] of told.answers) expect(witnesses).not.toContain(trigger);
  });

  it("a trigger whose key holds a list is answered when the last of its values is, and not at all if one is never", () => {
    const statement = statementOf("resp(action in {open} and id = $f, action in {close} and id = $f)");
    const both = observe(statement, jsonEvents(['{"action": "open", "args": {"id": ["1", "2"]}}', '{"action": "close", "args": {"id": "1"}}', '{"action": "close", "args": {"id": "2"}}'].join("\n")));
    expect(both.answers).toEqual([[1, 3]]);
    const one = observe(statement, jsonEvents(['{"action": "open", "args": {"id": ["1", "2"]}}', '{"action": "close", "args": {"id": "1"}}'].join("\n")));
    expect(one.answers).toEqual([]);
    expect(one.witnesses).toEqual([1]);
    // bresp: a window closing on a trigger one of whose values was met leaves the later triggers of that value waiting.
    const bresp = statementOf("bresp[3](action in {crash} and id = $c, action in {repro} and id = $c)");
    const windows = observe(
      bresp,
      jsonEvents(
        [
          '{"action": "crash", "args": {"id": ["1", "2"]}}',
          '{"action": "repro", "args": {"id": "1"}}',
          '{"action": "crash", "args": {"id": "1"}}',
          '{"action": "x", "args": {}}',
          '{"action": "repro", "args": {"id": "1"}}',
        ].join("\n"),
      ),
    );
    expect(windows.answers).toEqual([[3, 5]]);
    expect(windows.witnesses).toEqual([1]);
    // until: one value broken, the other resolved: a witness, never answered.
    const until = statementOf("until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)");
    const broken = observe(until, jsonEvents(['{"action": "lock", "args": {"id": ["1", "2"]}}', '{"action": "write", "args": {"id": "1"}}', '{"action": "unlock", "args": {"id": "2"}}'].join("\n")));
    expect(broken.answers).toEqual([]);
    expect(broken.witnesses).toEqual([1]);
    // rslv: one value resolved at the trigger itself, the other by a later ack.
    const rslv = statementOf("rslv(action in {alarm} and id = $a, done = $a)");
    const alarm = '{"action": "alarm", "args": {"id": ["1", "2"], "done": "1"}}';
    const resolved = observe(rslv, jsonEvents([alarm, '{"action": "ack", "args": {"done": "2"}}'].join("\n")));
    expect(resolved.answers).toEqual([[1, 2]]);
    // Both values resolved at the alarm itself: answered by itself.
    const itself = observe(rslv, jsonEvents('{"action": "alarm", "args": {"id": ["1", "2"], "done": ["2", "1"]}}'));
    expect(itself.answers).toEqual([[1, 1]]);
    const unresolved = observe(rslv, jsonEvents(alarm));
    expect(unresolved.answers).toEqual([]);
    expect(unresolved.witnesses).toEqual([1]);
  });

  it("prec: a value found by `contains` in an earlier output answers, the first such event", () => {
    const statement = statementOf("prec(action in {book} and payment = $p, action in {lookup} and output contains $p)");
    const trace = jsonEvents(
      [
        '{"action": "lookup", "args": {}, "output": "cards: c1"}',
        '{"action": "lookup", "args": {}, "output": "cards: c1, c2"}',
        '{"action": "book", "args": {"payment": "c2"}}',
        '{"action": "book", "args": {"payment": "c1"}}',
        '{"action": "book", "args": {"payment": "c3"}}',
      ].join("\n"),
    );
    const told = observe(statement, trace);
    expect(byTrigger(told.answers)).toEqual([
      [3, 2],
      [4, 1],
    ]);
    expect(told.witnesses).toEqual([5]);
  });

  it("TraceRun keeps the count and the answers of the ten lowest answered triggers; none for abs and always", () => {
    const statements = [
      statementOf("resp(action in {open}, action in {close})"),
      statementOf("abs(action in {open})"),
      statementOf("always not action in {rm}"),
    ];
    // 12 opens, answered in one go by the close at 13 (in order), then one open never answered.
    const trace = events(`${"open ".repeat(12)}close open`);
    const run = new TraceRun(statements);
    for (const event of trace) run.step(event);
    const outcomes = run.finish();
    expect(outcomes[0]).toEqual({ holds: false, witnesses: [14] });
    expect(run.answers(0)).toEqual({ count: 12, first: Array.from({ length: 10 }, (_, i) => ({ trigger: i + 1, by: 13 })) });
    expect(run.triggers(0)).toEqual({ count: 13, first: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(run.answers(1)).toBeUndefined();
    expect(run.triggers(1)).toEqual({ count: 13, first: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10] });
    expect(run.answers(2)).toBeUndefined();
    // Answered out of order (a later trigger first): the first kept are still the lowest triggers.
    const values = statementOf("resp(action in {open} and id = $f, action in {close} and id = $f)");
    const spread = new TraceRun([values]);
    const opens = Array.from({ length: 12 }, (_, i) => `open:id=${i}`).join(" ");
    const closes = Array.from({ length: 12 }, (_, i) => `close:id=${11 - i}`).join(" ");
    for (const event of events(`${opens} ${closes}`)) spread.step(event);
    expect(spread.answers(0)).toEqual({ count: 12, first: Array.from({ length: 10 }, (_, i) => ({ trigger: i + 1, by: 24 - i })) });
  });
});

describe("answers across a snapshot", () => {
  /** Steps the first `cut` events without an observer, resumes from the snapshot with one, and steps the rest. */
  function resumed(rule: string, all: readonly TraceEvent[], cut: number): Told & { plain: number[] } {
    const statement = statementOf(rule);
    const first = createMachine(statement);
    const witnesses: number[] = [];
    for (const event of all.slice(0, cut)) witnesses.push(...first.step(event));
    const told: Told & { plain: number[] } = { triggers: [], answers: [], toldAt: [], witnesses, plain: [] };
    const state = JSON.parse(JSON.stringify(first.snapshot()));
    const machine = createMachine(statement, state, {
      trigger: (position) => told.triggers.push(position),
      answered: (trigger, by) => told.answers.push([trigger, by]),
    });
    for (const event of all.slice(cut)) witnesses.push(...machine.step(event));
    witnesses.push(...machine.finish());
    witnesses.sort((a, b) => a - b);
    // The observer changes no verdict: the same run without one.
    const unobserved = createMachine(statement);
    for (const event of all) told.plain.push(...unobserved.step(event));
    told.plain.push(...unobserved.finish());
    told.plain.sort((a, b) => a - b);
    return told;
  }

  it.each([
    ["resp", "resp(action in {open} and id = $f, action in {close} and id = $f)", "open:id=1 open:id=2 close:id=2", "open:id=3 close:id=1", [[1, 5]], [4]],
    ["bresp", "bresp[3](action in {crash}, action in {repro})", "crash repro crash", "x repro x crash", [[3, 5]], [7]],
    ["rslv", "rslv(action in {alarm} and id = $a, action in {ack} and id = $a)", "alarm:id=1 alarm:id=2", "ack:id=2 alarm:id=1", [[1, 4], [2, 3]], [4]],
    ["until", "until(action in {lock}, action in {unlock}, action in {write})", "lock unlock lock", "lock unlock write", [[3, 5], [4, 5]], []],
    // A binding met only before the snapshot has no known event: its triggers are not told.
    ["prec", "prec(action in {use} and id = $x, action in {check} and id = $x)", "check:id=1 use:id=1", "check:id=2 use:id=1 use:id=2 use:id=3", [[5, 3]], [6]],
  ] as [string, string, string, string, [number, number][], number[]][])("%s tells only what follows the snapshot, and its verdict is unchanged", (_, rule, before, after, answers, witnesses) => {
    const told = resumed(rule, events(`${before} ${after}`), events(before).length);
    expect(byTrigger(told.answers)).toEqual(answers);
    expect(told.witnesses).toEqual(witnesses);
    expect(told.plain).toEqual(witnesses);
  });

  it.each([
    ["resp", "resp(action in {a} and id = $x, action in {b} and id = $x)", "b", []],
    ["bresp", "bresp[4](action in {a} and id = $x, action in {b} and id = $x)", "b", []],
    ["rslv", "rslv(action in {a} and id = $x, action in {b} and id = $x)", "b", []],
    ["until", "until(action in {a} and id = $x, action in {b} and id = $x, action in {c} and id = $x)", "b", []],
    // The value still open is broken: a witness, never answered.
    ["until, broken", "until(action in {a} and id = $x, action in {b} and id = $x, action in {c} and id = $x)", "c", [1]],
  ] as [string, string, string, number[]][])(
    "%s: a trigger of two values, one met before the snapshot, is answered when the other is met after it",
    (_, rule, last, witnesses) => {
      const all = jsonEvents(['{"action": "a", "args": {"id": ["1", "2"]}}', '{"action": "b", "args": {"id": "1"}}', `{"action": "${last}", "args": {"id": "2"}}`].join("\n"));
      const told = resumed(rule, all, 2);
      expect(told.answers).toEqual(witnesses.length === 0 ? [[1, 3]] : []);
      expect(told.witnesses).toEqual(witnesses);
      expect(told.plain).toEqual(witnesses);
    },
  );
});

/**
 * A literal reading of what answers a trigger at position t, per binding b of the trigger (the
 * trigger is answered when every binding is, by the latest of the events that answer them):
 * resp the first ψ' after t; bresp the same among the next ℓ; prec the first ψ' before t; rslv t
 * itself if ψ'(t), else the first later ψ' or ψ; until the first ψ' after t, if no ψb came first
 * (at the same event, the bad one wins). Quantifiers are loops over the events; the atoms are the
 * engine's (`PatternBinder`), the one meaning of an atom.
 */
function literalAnswers(statement: CheckedStatement, trace: readonly TraceEvent[]): Map<number, number> {
  const answers = new Map<number, number>();
  if (statement.form === "abs" || statement.form === "always" || statement.form === "limit") return answers;
  const binder = (pattern: CheckedPattern) => new PatternBinder(pattern, statement.variables);
  const triggerPattern = binder(statement.form === "until" ? statement.trigger : statement.first);
  const holds = (pattern: PatternBinder, index: number, binding: string) => pattern.holds(trace[index]!, binding) === Truth.True;
  const firstIndex = (from: number, to: number, test: (index: number) => boolean): number | undefined => {
    for (let index = from; index < to; index++) if (test(index)) return index;
    return undefined;
  };
  for (let t = 0; t < trace.length; t++) {
    const bindings = triggerPattern.bindings(trace[t]!);
    if (bindings.length === 0) continue;
    let by = -1;
    for (const b of bindings) {
      let at: number | undefined;
      switch (statement.form) {
        case "resp": {
          const second = binder(statement.second);
          at = firstIndex(t + 1, trace.length, (j) => holds(second, j, b));
          break;
        }
        case "bresp": {
          const second = binder(statement.second);
          const window = statement.window;
          const inWindow = (j: number) => (window.unit === "events" ? j - t <= window.size : trace[j]!.time! - trace[t]!.time! <= window.size);
          at = firstIndex(t + 1, trace.length, (j) => inWindow(j) && holds(second, j, b));
          break;
        }
        case "prec": {
          const second = binder(statement.second);
          at = firstIndex(0, t, (j) => holds(second, j, b));
          break;
        }
        case "rslv": {
          const second = binder(statement.second);
          at = holds(second, t, b) ? t : firstIndex(t + 1, trace.length, (j) => holds(second, j, b) || holds(triggerPattern, j, b));
          break;
        }
        case "until": {
          const resolve = binder(statement.resolve);
          const bad = binder(statement.bad);
          const resolution = firstIndex(t + 1, trace.length, (j) => holds(resolve, j, b));
          const broken = firstIndex(t + 1, trace.length, (j) => holds(bad, j, b));
          at = resolution !== undefined && (broken === undefined || broken > resolution) ? resolution : undefined;
          break;
        }
      }
      if (at === undefined) {
        by = -1;
        break;
      }
      by = Math.max(by, at);
    }
    if (by >= 0) answers.set(trace[t]!.position, trace[by]!.position);
  }
  return answers;
}

describe("answers under a scope", () => {
  it("are told at their places in the run, and only from within the stretch", () => {
    // The stretch starts at the `start` (2): the `check` at 1 is outside it, the one at 3 answers the `use` at 4.
    const told = observe(statementOf("prec(action in {use}, action in {check}) after action in {start}"), events("check start check use use"));
    expect(told).toMatchObject({ triggers: [4, 5], answers: [[4, 3], [5, 3]], witnesses: [] });
    // Each stretch of `between` is its own run: the `check` of the first stretch answers nothing in the second.
    const between = observe(statementOf("prec(action in {use}, action in {check}) between action in {login} and action in {logout}"), events("login check use logout login use logout"));
    expect(between).toMatchObject({ triggers: [3, 6], answers: [[3, 2]], witnesses: [6] });
  });
});

describe("answers on random policies and traces", () => {
  // Enough cases in the fast tier too for the check below that more than 50 answers were checked
  // (30 cases gave 13).
  const runs = tier.cases(200, 300);
  /** The generator's policies of forms that answer (abs and always never do: the cases above), each on a few traces. */
  // (Scoped rules are judged stretch by stretch, which this whole-run reading does not model: their
  // answers are checked by hand below.)
  const answering = policyText.filter((source) => !/rule r: (abs\(|always |□ |limit\[)/.test(source) && !/\) (after|before|between) /.test(source));
  it(`every answer is of a trigger that is no witness, by an event on which the form's pattern holds (${runs} random policies, 4 traces each)`, () => {
    let checked = 0;
    fc.assert(
      fc.property(answering, fc.array(randomTrace, { minLength: 4, maxLength: 4 }), (source, traces) => {
        const compiled = compile(source);
        expect(compiled.diagnostics.filter((d) => d.severity === "error"), source).toEqual([]);
        const statement = compiled.program.policies[0]!.statements[0]!;
        if (statement.form === "abs" || statement.form === "always" || statement.form === "limit") throw new Error(`the filter let ${statement.form} through`);
        const trigger = new PatternBinder(statement.form === "until" ? statement.trigger : statement.first, statement.variables);
        const answeringPatterns = (statement.form === "until" ? [statement.resolve] : statement.form === "rslv" ? [statement.second, statement.first] : [statement.second]).map(
          (pattern) => new PatternBinder(pattern, statement.variables),
        );
        const window = statement.form === "bresp" ? statement.window : undefined;
        for (const trace of traces) {
          const told = observe(statement, trace);
          const witnesses = figure5Witnesses(statement, trace);
          // The observer changes no verdict.
          expect(told.witnesses).toEqual(witnesses);
          const triggers = new Set(told.triggers);
          const answered = new Set<number>();
          told.answers.forEach(([t, by], index) => {
            checked++;
            expect(triggers.has(t), `${t} is a trigger`).toBe(true);
            expect(witnesses).not.toContain(t);
            expect(answered.has(t), `${t} is answered once`).toBe(false);
            answered.add(t);
            // Told as soon as known: when reading `by` (for prec, the trigger, `by` being earlier).
            expect(told.toldAt[index]).toBe(statement.form === "prec" ? t : by);
            const inWindow =
              window === undefined || (window.unit === "events" ? by <= t + window.size : trace[by - 1]!.time! - trace[t - 1]!.time! <= window.size);
            const placed = statement.form === "prec" ? by < t : statement.form === "rslv" ? by >= t : by > t && inWindow;
            expect(placed, `${statement.form}: ${t} by ${by}`).toBe(true);
            // The relevant pattern (ψ', or for rslv ψ' or ψ) holds on `by` for some binding of the trigger.
            const bindings = trigger.bindings(trace[t - 1]!);
            const holds = answeringPatterns.some((pattern) => bindings.some((b) => pattern.holds(trace[by - 1]!, b) === Truth.True));
            expect(holds, `${statement.form}: the pattern holds on ${by} for a binding of ${t}`).toBe(true);
          });
          // And exactly the answers of the literal reading.
          expect(new Map(told.answers)).toEqual(literalAnswers(statement, trace));
          // TraceRun counts them and keeps the lowest ten.
          const run = new TraceRun([statement]);
          for (const event of trace) run.step(event);
          expect(run.finish()[0]!.witnesses).toEqual(witnesses);
          const first = byTrigger(told.answers)
            .slice(0, 10)
            .map(([trigger, by]) => ({ trigger, by }));
          expect(run.answers(0)).toEqual({ count: told.answers.length, first });
        }
      }),
      { numRuns: runs },
    );
    // The property is not vacuous: random patterns match often enough that answers were checked.
    expect(checked).toBeGreaterThan(50);
  });
});
