import { check, compile, readTrace, signatureOf, SmtDecider } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Figure 5, form by form, on small traces whose witnesses are derived by hand from the paper's
 * definitions (not from either engine): both engines must return exactly these. Traces are written
 * as `action` or `action:key=value,…` per event; `!` after the action makes its status `error`.
 */
function trace(spec: string): string {
  return spec
    .split(" ")
    .filter(Boolean)
    .map((event) => {
      const [head, rest] = event.split(":");
      const failed = head!.endsWith("!");
      const args = Object.fromEntries((rest ?? "").split(",").filter(Boolean).map((pair) => pair.split("=") as [string, string]));
      return JSON.stringify({ action: failed ? head!.slice(0, -1) : head, args, status: failed ? "error" : "ok" });
    })
    .join("\n");
}

const cases: [title: string, statement: string, events: string, witnesses: number[]][] = [
  // abs: R(e) = ¬ψ(e)
  ["abs: every matching event", "abs(action in {rm})", "ls rm cat rm", [2, 4]],
  ["abs: empty trace holds", "abs(action in {rm})", "", []],
  // prec: ψ(e) ⇒ ∨_{e' ≺ e} ψ'(e')
  ["prec: the first use before any check", "prec(action in {use}, action in {check})", "use check use", [1]],
  ["prec: strictly earlier (same event does not count)", "prec(action in {a}, action in {a})", "a a", [1]],
  ["prec: variables tie the values", "prec(action in {warp} and t = $x, action in {validate} and target = $x)", "validate:target=A warp:t=A warp:t=B", [3]],
  // resp: ψ(e) ⇒ ∨_{e' ≻ e} ψ'(e')
  ["resp: the last open is unanswered", "resp(action in {open}, action in {close})", "open close open", [3]],
  ["resp: strictly later", "resp(action in {a}, action in {a})", "a a", [2]],
  ["resp: per value", "resp(action in {open} and id = $f, action in {close} and id = $f)", "open:id=1 open:id=2 close:id=1", [2]],
  // bresp[ℓ]: ψ(e) ⇒ ∨_{e ≺ℓ e'} ψ'(e')
  ["bresp: the window is the next ℓ events", "bresp[2](action in {crash}, action in {repro})", "crash x repro crash x x repro", [4]],
  ["bresp: exactly at the bound holds", "bresp[3](action in {crash}, action in {repro})", "crash x x repro", []],
  ["bresp: one past the bound fails", "bresp[2](action in {crash}, action in {repro})", "crash x x repro", [1]],
  // rslv: ψ(e) ⇒ ψ'(e) ∨ ∨_{e' ≻ e} (ψ'(e') ∨ ψ(e'))
  ["rslv: resolved at itself", "rslv(action in {alarm}, action in {alarm} and level in {\"low\"})", "alarm:level=low", []],
  ["rslv: superseded by a later trigger", "rslv(action in {alarm}, action in {ack})", "alarm alarm", [2]],
  ["rslv: unresolved last trigger", "rslv(action in {alarm}, action in {ack})", "alarm ack alarm", [3]],
  // until: ψ(e) ⇒ ∧_{eb ≻ e} (ψb(eb) ⇒ ∨_{e ≺ ec ≺ eb} ψ'(ec))
  ["until: bad before the resolution breaks the trigger", "until(action in {lock}, action in {unlock}, action in {write})", "lock write unlock", [1]],
  ["until: bad after the resolution is fine", "until(action in {lock}, action in {unlock}, action in {write})", "lock unlock write", []],
  ["until: the witness is each broken trigger", "until(action in {lock}, action in {unlock}, action in {write})", "lock lock write", [1, 2]],
  ["until: per value", "until(action in {lock} and id = $l, action in {unlock} and id = $l, action in {write} and id = $l)", "lock:id=1 write:id=2 unlock:id=1 write:id=1", []],
  // always Θ: Θ(e); once/eventually strict
  ["always once: strictly earlier", "always not (action in {send} and once action in {secret})", "send secret send", [3]],
  ["always eventually: strictly later", "always (action in {start} implies eventually action in {stop})", "start stop start", [3]],
  ["always: once of once", "always not (action in {c} and once (action in {b} and once action in {a}))", "b a c b c", [5]],
  // status and values
  ["status: error only", "abs(action in {deploy} and status = error)", "deploy deploy! deploy", [2]],
  // The trace's values here are strings: the string "6" matches `"6"`, never the number 6.
  ["values: the string \"6\" matches \"6\"", "abs(action in {s} and fps in {\"6\"})", "s:fps=6", [1]],
  ["values: the string \"6\" is not the number 6", "abs(action in {s} and fps in {6})", "s:fps=6", []],
];

let decider: SmtDecider;
beforeAll(async () => {
  decider = await SmtDecider.create({ timeoutMs: 20_000 });
});
afterAll(async () => {
  await decider.dispose();
});

describe.each(cases)("%s", (_, statement, events, witnesses) => {
  it.each(["eval", "smt"] as const)("%s gives the hand-derived witnesses", async (engine) => {
    const { trace: parsed, diagnostics } = readTrace(trace(events));
    expect(diagnostics).toEqual([]);
    const compiled = compile(`policy p {\n  rule r: ${statement}\n}\n`, { signature: signatureOf(parsed.events) });
    expect(compiled.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    const report = await check(compiled, parsed, { engine, decider });
    expect(report.statements[0]!.witnesses).toEqual(witnesses);
    expect(report.statements[0]!.holds).toBe(witnesses.length === 0);
  });
});
