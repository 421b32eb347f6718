import { automaticPairing, citationsOf, compile, diffPolicies, pairBySource, type CheckedStatement } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * Pairing the rules of two policies by the specification lines their `/// source:` lines cite
 * (`vigilc diff --pair-by source`): overlapping lines of the same file make a couple, a rule may be
 * in several (each compared, and the rules so linked compared together), a rule in none is added
 * or removed; and when the diff chooses that pairing on its own.
 */

function rules(source: string): CheckedStatement[] {
  const compiled = compile(source, { file: "p.vigil" });
  expect(compiled.ok, JSON.stringify(compiled.diagnostics)).toBe(true);
  return compiled.program.policies.flatMap((policy) => policy.statements);
}

const hand = rules(
  [
    "policy release {",
    "  /// Tag only after the tests passed.",
    "  /// source: docs/SKILL.md:10",
    "  rule tested: prec(action in {tag}, action in {run_tests} and status = ok)",
    "  /// Never push with force.",
    "  /// source: docs/SKILL.md:11-12",
    "  rule no_force: abs(action in {push} and force in {true})",
    "  /// Nor to main.",
    "  /// source: docs/SKILL.md:12",
    '  rule no_main: abs(action in {push} and branch in {"main"})',
    "  /// Bump first.",
    "  /// source: docs/checklist.md:3",
    "  rule bumped: prec(action in {publish}, action in {bump_version})",
    "  rule untraced: limit[3](action in {deploy})",
    "}",
  ].join("\n"),
);

const drafted = rules(
  [
    "policy skill {",
    "  /// Run the test suite before you tag a release.",
    "  /// source: SKILL.md:10",
    "  rule tests_before_tag: prec(action in {tag}, action in {run_tests})",
    "  /// Never force-push to main.",
    "  /// source: SKILL.md:12",
    '  rule no_force_push_main: abs(action in {push} and force in {true} and branch in {"main"})',
    "  /// Announce.",
    "  /// source: SKILL.md:14",
    "  rule announce: resp(action in {publish}, action in {notify})",
    "}",
  ].join("\n"),
);

describe("citations", () => {
  it("reads each source line, several citations on one, ranges, and nothing else", () => {
    expect(citationsOf("Never push.\nsource: SKILL.md:12")).toEqual([{ file: "SKILL.md", first: 12, last: 12 }]);
    expect(citationsOf("Two places.\nsource: a/b.md:42, a/b.md:56-58\nsource: c.md:3–4")).toEqual([
      { file: "a/b.md", first: 42, last: 42 },
      { file: "a/b.md", first: 56, last: 58 },
      { file: "c.md", first: 3, last: 4 },
    ]);
    // A requirement that speaks of a source is not a citation; nor is a range that runs backwards.
    expect(citationsOf("The source: of truth is the profile.\nsource: x.md:9-3")).toEqual([]);
    expect(citationsOf(undefined)).toEqual([]);
  });
});

describe("pairBySource", () => {
  it("pairs overlapping lines of the same file, compares rules linked through couples together, and leaves the rest unpaired", () => {
    const pairs = pairBySource(hand, drafted).map((pair) => ({ rule: pair.rule, kind: pair.kind, cites: pair.cites }));
    expect(pairs).toEqual([
      { rule: "release.tested ↔ skill.tests_before_tag", kind: "couple", cites: ["SKILL.md:10"] },
      { rule: "release.no_force ↔ skill.no_force_push_main", kind: "couple", cites: ["SKILL.md:12"] },
      { rule: "release.no_main ↔ skill.no_force_push_main", kind: "couple", cites: ["SKILL.md:12"] },
      { rule: "release.no_force + release.no_main ↔ skill.no_force_push_main", kind: "together", cites: ["SKILL.md:12"] },
      { rule: "release.bumped", kind: "unpaired", cites: ["docs/checklist.md:3"] },
      { rule: "release.untraced", kind: "unpaired", cites: [] },
      { rule: "skill.announce", kind: "unpaired", cites: ["SKILL.md:14"] },
    ]);
  });

  it("tells files apart by their whole name, not by a shared folder", () => {
    const other = rules("policy o {\n  /// source: other/SKILL.md:10\n  rule r: abs(action in {tag})\n}");
    expect(pairBySource(hand, other).map((pair) => pair.kind)).toEqual(["unpaired", "unpaired", "unpaired", "unpaired", "unpaired", "unpaired"]);
  });

  it("is chosen on its own only when no name is in both versions and both cite lines", () => {
    expect(automaticPairing(hand, drafted)).toBe("source");
    expect(automaticPairing(hand, hand)).toBe("name");
    expect(automaticPairing(hand, rules("policy skill {\n  rule announce: resp(action in {publish}, action in {notify})\n}"))).toBe("name");
  });
});

describe("diffPolicies, paired by source", () => {
  it("compares each couple as one rule against another, with the run that tells them apart", async () => {
    const old = compile(["policy release {", "  /// source: SKILL.md:10", "  rule tested: prec(action in {tag}, action in {run_tests} and status = ok)", "}"].join("\n")).program;
    const next = compile(["policy skill {", "  /// source: ../SKILL.md:9-10", "  rule tests_before_tag: prec(action in {tag}, action in {run_tests})", "}"].join("\n")).program;
    const byName = await diffPolicies(old, next, { depth: 3 });
    expect(byName.rules.map((rule) => `${rule.rule} ${rule.change}`)).toEqual(["release.tested removed", "skill.tests_before_tag added"]);
    const result = await diffPolicies(old, next, { depth: 3, pairBy: "auto" });
    expect(result).toMatchObject({ pairedBy: "source", automatic: true });
    expect(result.rules).toHaveLength(1);
    const [couple] = result.rules;
    expect(couple).toMatchObject({
      rule: "release.tested ↔ skill.tests_before_tag",
      change: "changed",
      paired: { old: ["release.tested"], new: ["skill.tests_before_tag"], kind: "couple", cites: ["SKILL.md:10"] },
      difference: { relation: "looser" },
    });
    expect(couple!.difference.counterexamples[0]!.events.map((e) => `${e.action} ${e.status ?? "no result"}`)).toEqual(["run_tests no result", "tag ok"]);
  }, 60_000);
});
