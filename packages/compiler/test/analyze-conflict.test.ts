import { analyzePolicy, compile } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * A conflict (A0006) names both rules, the one whose trigger leads into it and the one it then
 * breaks, and shows a run that keeps the first and breaks the second, confirmed by the forward engine.
 */
describe("analyzePolicy: a conflict", () => {
  it("names both rules and shows a run", async () => {
    const source = [
      "policy release {",
      "  /// A push to main must be announced.",
      '  rule announce: resp(action in {push} and branch in {"main"}, action in {notify})',
      "  /// Announcing is forbidden.",
      "  rule quiet: abs(action in {notify})",
      "}",
      "",
    ].join("\n");
    const compiled = compile(source, { file: "release.vigil" });
    expect(compiled.ok).toBe(true);
    const diagnostics = await analyzePolicy(compiled.program, { depth: 3, file: "release.vigil" });
    const conflict = diagnostics.find((d) => d.code === "A0006");
    expect(conflict?.message).toBe("once this trigger of rule `release.announce` holds, no run of up to 3 events keeps every rule");
    expect(conflict?.help).toBe(
      'what `release.announce` asks for breaks `release.quiet`: the run push {"branch":"main"} → notify keeps `release.announce` and breaks `release.quiet`',
    );
    expect(conflict?.related?.map((r) => `${r.span.line}: ${r.message}`)).toEqual(["5: the conflicting rule `release.quiet`"]);
  }, 60_000);
});
