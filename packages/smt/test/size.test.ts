import { compile, type CheckedStatement, type TraceEvent } from "@vigil/compiler";
import { lowerStatement, maximumQueryLength, QueryTooLarge, SmtDecider } from "@vigil/smt";
import { describe, expect, it } from "vitest";
import { commandPieces } from "../src/z3-session.js";

const statement = (rule: string): CheckedStatement => compile(`policy p { rule r: ${rule} }`).program.policies[0]!.statements[0]!;

/** `count` events: every third `a`, the others `b`, every thousandth an error. */
const events = (count: number): TraceEvent[] =>
  Array.from({ length: count }, (_, index) => ({ position: index + 1, action: index % 3 === 2 ? "a" : "b", args: { n: index }, status: (index + 1) % 1000 === 0 ? "error" : "ok" }) as TraceEvent);

describe("the SMT query is handed to Z3 in pieces of whole commands", () => {
  it("cuts only where a top-level command ends, never inside a symbol, a string or a comment", () => {
    const text = `(declare-const |a (strange) name| Bool)\n; a comment ) with ( parentheses\n(assert (= |a (strange) name| (= "x)"" (" "x)"" (")))\n(assert true)\n`;
    const pieces = commandPieces(text, 1);
    expect(pieces.join("")).toBe(text);
    expect(pieces.map((piece) => piece.trim())).toEqual([
      "(declare-const |a (strange) name| Bool)",
      `; a comment ) with ( parentheses\n(assert (= |a (strange) name| (= "x)"" (" "x)"" (")))`,
      "(assert true)",
      // What follows the last command (a newline) is a piece of its own.
      "",
    ]);
    // Pieces of about the length asked for: here the whole text fits in one.
    expect(commandPieces(text, 10_000)).toEqual([text]);
    // None longer than the length but a single command that is: a piece ends before a command
    // that would take it past (what Z3's parser is handed goes on its stack).
    expect(commandPieces("(a)(bb)(ccc)(dddddd)", 5)).toEqual(["(a)", "(bb)", "(ccc)", "(dddddd)"]);
  });

  it("refuses a query over the decider's limit before writing it whole, naming the direct evaluator", async () => {
    const decider = await SmtDecider.create({ maxQueryLength: 100_000 });
    try {
      const outcome = await decider.decide(statement("prec(action in {a}, action in {b})"), events(2_000));
      expect(outcome).toEqual({
        holds: false,
        witnesses: [],
        undecided: "the SMT query for this statement over 2,000 events is over the decider's limit of 100,000 characters of text; the direct evaluator (--engine eval) decides it",
      });
    } finally {
      await decider.dispose();
    }
    expect(() => lowerStatement(statement("prec(action in {a}, action in {b})"), events(2_000), { maxLength: 100_000 })).toThrow(QueryTooLarge);
    // The default limit is the documented one.
    expect(maximumQueryLength).toBe(32 * 2 ** 20);
  });
});
