import { compile, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { lowerStatement, SmtDecider } from "@vigil/smt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Z3 on a query longer than its WebAssembly stack (heavy tier, vitest.config.ts: 130,000 events,
 * minutes on a loaded two-core machine). How the query is cut into pieces, and the limit past which
 * it is refused, are tested in size.test.ts.
 */

const statement = (rule: string): CheckedStatement => compile(`policy p { rule r: ${rule} }`).program.policies[0]!.statements[0]!;

/** `count` events: every third `a`, the others `b`, every thousandth an error. */
const events = (count: number): TraceEvent[] =>
  Array.from({ length: count }, (_, index) => ({ position: index + 1, action: index % 3 === 2 ? "a" : "b", args: { n: index }, status: (index + 1) % 1000 === 0 ? "error" : "ok" }) as TraceEvent);

describe("Z3 at size", () => {
  let decider: SmtDecider;
  beforeAll(async () => {
    decider = await SmtDecider.create({ timeoutMs: 120_000 });
  });
  afterAll(async () => {
    await decider.dispose();
  });

  it("decides abs(action in {a} and status = error) on 130,000 events: a query longer than the 20 MiB Z3's WebAssembly stack holds", async () => {
    const trace = events(130_000);
    const rule = statement("abs(action in {a} and status = error)");
    expect(lowerStatement(rule, trace).body.length).toBeGreaterThan(20 * 2 ** 20);
    const outcome = await decider.decide(rule, trace);
    // Every thousandth event is an error; it is an `a` when its index is 2 modulo 3.
    const expected = trace.filter((event) => event.action === "a" && event.status === "error").map((event) => event.position);
    expect(expected.length).toBeGreaterThan(30);
    expect(outcome).toEqual({ holds: false, witnesses: expected });
  }, 300_000);
});
