import { compile, type CheckedStatement } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { analyzeStatements, SymbolicSearch, type Finding } from "../src/analysis.js";
import { acquireZ3, releaseZ3, type Z3Api } from "../src/z3-runtime.js";

/**
 * The analysis never fails as a whole: a rule whose questions the solver cannot answer within its
 * resource limit (Z3's `rlimit`, a deterministic count of its work), or whose query is larger than
 * the search hands to Z3, is undecided (`unknown`, A0007 in `vigilc analyze`), and every other rule
 * is still judged; so after Z3's runtime itself fails. No assertion here is about time.
 */
const policy = `policy p {
  rule quick: abs(action in {a} and status = error)
  rule heavy: limit[8](action in {call} and path matches /secret/ and path ~ "*.env")
  rule never: abs(action in {read} and status = ok and status = error)
  rule checked: prec(action in {deploy}, action in {check})
}
`;

function statements(): readonly CheckedStatement[] {
  const compiled = compile(policy);
  if (!compiled.ok) throw new Error("the policy does not compile");
  return compiled.program.policies[0]!.statements;
}

/** Each finding as `kind rule`, and the rules with an undecided question. */
function summary(findings: readonly Finding[]): { judged: string[]; undecided: string[] } {
  const judged = findings.filter((f) => f.kind !== "unknown").map((f) => `${f.kind} ${"statement" in f ? f.statement.name : f.action}`);
  const undecided = [...new Set(findings.filter((f) => f.kind === "unknown").map((f) => f.statement?.name ?? "(policy)"))];
  return { judged, undecided };
}

describe("the analysis within the solver's limits", () => {
  let unlimited: Finding[];
  beforeAll(async () => {
    const search = await SymbolicSearch.create();
    try {
      unlimited = await analyzeStatements(search, statements(), 5);
    } finally {
      await search.dispose();
    }
  });

  it("judges every rule within the default limits", () => {
    expect(summary(unlimited)).toEqual({ judged: ["unmatchable never", "vacuous never"], undecided: [] });
  });

  it("gives a rule that reaches the resource limit A0007's finding, and judges the others as before", async () => {
    // A few thousand units decide the small questions; `heavy` (runs of up to 9 events, two
    // patterns on a key) takes far more.
    const search = await SymbolicSearch.create({ rlimit: 5_000 });
    try {
      const findings = await analyzeStatements(search, statements(), 5);
      expect(summary(findings)).toEqual({ judged: ["unmatchable never", "vacuous never"], undecided: ["heavy"] });
      const reasons = findings.flatMap((f) => (f.kind === "unknown" ? [f.reason] : []));
      expect(reasons[0]).toMatch(/^the solver could not decide runs of \d+ events: it reached the solver's resource limit \(rlimit 5,000\)$/);
    } finally {
      await search.dispose();
    }
  });

  it("does not hand Z3 a query larger than its limit: that rule is undecided, the others judged", async () => {
    // A few thousand characters: `heavy`'s runs of 9 events take more (and so does every question
    // about all the rules together, which holds it).
    const search = await SymbolicSearch.create({ maxQueryLength: 2_500 });
    try {
      const findings = await analyzeStatements(search, statements(), 5);
      const { judged, undecided } = summary(findings);
      expect(judged).toEqual(["unmatchable never", "vacuous never"]);
      expect(undecided).toContain("heavy");
      const heavy = findings.find((f) => f.kind === "unknown" && f.statement?.name === "heavy");
      expect(heavy).toMatchObject({ reason: expect.stringMatching(/^the query for runs of \d+ events is [\d,]+ characters, more than the 2,500 characters the search hands to the solver$/) });
    } finally {
      await search.dispose();
    }
  });

  describe("after Z3's runtime fails", () => {
    let api: Z3Api;
    beforeAll(async () => {
      api = await acquireZ3();
    });
    afterAll(async () => {
      await releaseZ3();
    });

    it("replaces the runtime: the question that met the failure is undecided, and the rest are answered", async () => {
      const search = await SymbolicSearch.create();
      try {
        // A string longer than the WebAssembly stack, handed to Z3's parser directly, corrupts the
        // runtime's memory (what a query too large did before the search refused them).
        const context = api.Z3.mk_context_rc(api.Z3.mk_config());
        expect(() => api.Z3.parse_smtlib2_string(context, `(assert ${"(and true ".repeat(10)}${"x".repeat(24 * 2 ** 20)})`, [], [], [], [])).toThrow();
        const findings = await analyzeStatements(search, statements(), 5);
        const { judged, undecided } = summary(findings);
        expect(undecided).toEqual(["quick"]);
        expect(findings.find((f) => f.kind === "unknown")).toMatchObject({ reason: expect.stringMatching(/^the solver could not decide runs of 1 event: the solver failed \(.*\) and was restarted$/) });
        expect(judged).toEqual(["unmatchable never", "vacuous never"]);
      } finally {
        await search.dispose();
      }
    });
  });
});
