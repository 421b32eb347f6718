import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { examples, root } from "./support/paths.js";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc diff --pair-by source`: a drafted policy against one written by hand from the same
 * specification. Their rules share no names, so by name every rule is removed and added; by the
 * lines their `/// source:` lines cite, each drafted rule is compared with the hand-written rules
 * that cite the same lines (chosen on its own when no name is in both and both cite), as a renamed
 * rule would be: equivalent, stricter, looser or incomparable, with the run that shows it.
 */

const hand = `policy release {
  /// Tag only after the tests passed.
  /// source: docs/SKILL.md:10
  rule tested: prec(action in {tag}, action in {run_tests} and status = ok)
  /// Never push with force.
  /// source: docs/SKILL.md:11-12
  rule no_force: abs(action in {push} and force in {true})
  /// Nor to main.
  /// source: docs/SKILL.md:12
  rule no_main: abs(action in {push} and branch in {"main"})
  /// Bump first.
  /// source: docs/checklist.md:3
  rule bumped: prec(action in {publish}, action in {bump_version})
  rule untraced: limit[3](action in {deploy})
}
`;

const drafted = `policy skill {
  /// Run the test suite before you tag a release.
  /// source: SKILL.md:10
  rule tests_before_tag: prec(action in {tag}, action in {run_tests})
  /// Never force-push to main.
  /// source: SKILL.md:12
  rule no_force_push_main: abs(action in {push} and force in {true} and branch in {"main"})
  /// Announce.
  /// source: SKILL.md:14
  rule announce: resp(action in {publish}, action in {notify})
}
`;

type Report = {
  pairedBy: string;
  whole: { relation: string };
  rules: { rule: string; change: string; relation: string; old?: string[]; new?: string[]; kind?: string; cites?: string[]; counterexamples: { rejectedBy: string; events: Record<string, unknown>[] }[] }[];
};

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), "vigilc-diff-sources-"));
  writeFileSync(join(scratch, "hand.vigil"), hand);
  writeFileSync(join(scratch, "drafted.vigil"), drafted);
  writeFileSync(join(scratch, "bare.vigil"), drafted.replace(/ {2}\/\/\/ source: .*\n/g, ""));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe("vigilc diff: rules paired by the lines they cite", () => {
  it("pairs by source on its own when no name is in both, each couple compared as a renamed rule, a rule in no couple added or removed", async () => {
    const result = await runCli(["diff", "hand.vigil", "drafted.vigil"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    expect(result.stderr).toBe("");
    const lines = result.stdout.split("\n").filter((line) => !line.startsWith("  "));
    expect(lines).toEqual([
      "hand.vigil → drafted.vigil",
      "rules paired by the specification lines they cite (`/// source:`), as no rule name is in both versions",
      "whole policy: incomparable: each version rejects runs the other accepts",
      "rule release.tested ↔ skill.tests_before_tag (SKILL.md:10): looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events the other way)",
      "rule release.no_force ↔ skill.no_force_push_main (SKILL.md:12): looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events over every class of values the rules tell apart the other way)",
      "rule release.no_main ↔ skill.no_force_push_main (SKILL.md:12): looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events over every class of values the rules tell apart the other way)",
      "rules release.no_force + release.no_main ↔ skill.no_force_push_main together (SKILL.md:12): looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events over every class of values the rules tell apart the other way)",
      "rule release.bumped (no rule of the new version cites docs/checklist.md:3): removed; looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events the other way)",
      "rule release.untraced (it cites no specification line): removed; looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events the other way)",
      "rule skill.announce (no rule of the old version cites SKILL.md:14): added; stricter: the new version rejects runs the old accepts (no other difference in runs of up to 5 events the other way)",
      "",
    ]);
    // The run that tells a couple apart is the shortest, as for a rule of one name.
    expect(result.stdout).toContain(
      'rule release.no_main ↔ skill.no_force_push_main (SKILL.md:12): looser: the new version accepts runs the old rejects (no other difference in runs of up to 5 events over every class of values the rules tell apart the other way)\n  a run the old version rejects and the new accepts (1 event; breaks release.no_main):\n    {"action":"push","args":{"branch":"main"}}\n',
    );
    // By name, as asked: nothing in common.
    const byName = JSON.parse((await runCli(["diff", "hand.vigil", "drafted.vigil", "--pair-by", "name", "--format", "json"], { cwd: scratch })).stdout) as Report;
    expect(byName.pairedBy).toBe("name");
    expect(byName.rules.map((rule) => rule.change)).toEqual(["removed", "removed", "removed", "removed", "removed", "added", "added", "added"]);
  });

  it("gives each comparison's rules, kind and lines in JSON and markdown, and compares only the couples of a rule with --rule", async () => {
    const report = JSON.parse((await runCli(["diff", "hand.vigil", "drafted.vigil", "--format", "json"], { cwd: scratch })).stdout) as Report;
    expect(report.pairedBy).toBe("source");
    expect(report.rules.map(({ old, new: next, kind, cites, change, relation }) => ({ old, new: next, kind, cites, change, relation }))).toEqual([
      { old: ["release.tested"], new: ["skill.tests_before_tag"], kind: "couple", cites: ["SKILL.md:10"], change: "changed", relation: "looser" },
      { old: ["release.no_force"], new: ["skill.no_force_push_main"], kind: "couple", cites: ["SKILL.md:12"], change: "changed", relation: "looser" },
      { old: ["release.no_main"], new: ["skill.no_force_push_main"], kind: "couple", cites: ["SKILL.md:12"], change: "changed", relation: "looser" },
      { old: ["release.no_force", "release.no_main"], new: ["skill.no_force_push_main"], kind: "together", cites: ["SKILL.md:12"], change: "changed", relation: "looser" },
      { old: ["release.bumped"], new: [], kind: "unpaired", cites: ["docs/checklist.md:3"], change: "removed", relation: "looser" },
      { old: ["release.untraced"], new: [], kind: "unpaired", cites: [], change: "removed", relation: "looser" },
      { old: [], new: ["skill.announce"], kind: "unpaired", cites: ["SKILL.md:14"], change: "added", relation: "stricter" },
    ]);
    const markdown = (await runCli(["diff", "hand.vigil", "drafted.vigil", "--format", "markdown"], { cwd: scratch })).stdout;
    expect(markdown).toContain("Rules paired by the specification lines they cite (`/// source:`), as no rule name is in both versions.\n");
    expect(markdown).toContain("| rules | lines cited | change | relation |\n|---|---|---|---|\n| `release.tested` ↔ `skill.tests_before_tag` | SKILL.md:10 | changed | looser:");
    expect(markdown).toContain("| — ↔ `skill.announce` | SKILL.md:14 | added | stricter:");
    const one = JSON.parse((await runCli(["diff", "hand.vigil", "drafted.vigil", "--rule", "no_force_push_main", "--format", "json"], { cwd: scratch })).stdout) as Report;
    expect(one.rules.map((rule) => rule.rule)).toEqual([
      "release.no_force ↔ skill.no_force_push_main",
      "release.no_main ↔ skill.no_force_push_main",
      "release.no_force + release.no_main ↔ skill.no_force_push_main",
    ]);
  });

  it("says when a version cites nothing: asked to pair by source, its rules stay unpaired; on its own, the diff pairs by name", async () => {
    const asked = await runCli(["diff", "hand.vigil", "bare.vigil", "--pair-by", "source", "--format", "json"], { cwd: scratch });
    expect(asked.stderr).toBe("warning: no rule of `bare.vigil` cites a specification line (`/// source: NAME:LINE`, or `NAME:FIRST-LAST`): its rules cannot be paired, and are compared with no rule\n");
    expect((JSON.parse(asked.stdout) as Report).rules.map((rule) => rule.kind)).toEqual(Array(8).fill("unpaired"));
    const auto = await runCli(["diff", "hand.vigil", "bare.vigil", "--format", "json"], { cwd: scratch });
    expect(auto.stderr).toBe(
      "note: no rule name is in both versions, and no rule of `bare.vigil` cites a specification line (`/// source: NAME:LINE`, or `NAME:FIRST-LAST`): the rules are paired by name, so each is added or removed\n",
    );
    expect((JSON.parse(auto.stdout) as Report).pairedBy).toBe("name");
    // An edit of one file keeps its names: by name, with nothing to say.
    const same = await runCli(["diff", "hand.vigil", "hand.vigil"], { cwd: scratch });
    expect([same.code, same.stderr]).toEqual([0, ""]);
    expect(same.stdout).not.toContain("paired");
    const bad = await runCli(["diff", "hand.vigil", "drafted.vigil", "--pair-by", "text"], { cwd: scratch });
    expect(bad.code).toBe(2);
  });
});

/** A policy drafted from the τ-bench airline policy: its own names, each rule citing its line. */
const draftedAirline = `policy airline_policy {
  /// Before taking any actions that update the booking database (…), you must list the action
  /// details and obtain explicit user confirmation (yes) to proceed.
  /// source: airline-policy.md:7
  rule confirm_updates: prec(
    action in {
      book_reservation,
      cancel_reservation,
      update_reservation_flights,
      update_reservation_baggages,
      update_reservation_passengers,
    },
    action in {user_message} and text matches /\\byes\\b/i,
  )
  /// You should only make one tool call at a time, and if you make a tool call, you should not
  /// respond to the user simultaneously.
  /// source: airline-policy.md:11
  rule one_thing_at_a_time: until(action in {agent_message}, action in {user_message}, not action in {user_message, agent_message})
  /// Passengers: Each reservation can have at most five passengers.
  /// source: airline-policy.md:32
  rule at_most_five_passengers: abs(action in {book_reservation} and count(passengers) > 5)
  /// Travel insurance: the agent should ask if the user wants to buy the travel insurance.
  /// source: airline-policy.md:38
  rule insurance_asked: prec(action in {book_reservation}, action in {agent_message} and text matches /insurance/i)
}
`;

describe("vigilc diff: the hand-written τ-bench airline policy against a drafted one", () => {
  const airline = join(examples, "tau-airline", "airline.vigil");
  const specification = join(root, "..", "shared", "data", "tau-bench", "airline-policy.md");

  it("pairs each drafted rule with the hand-written rules citing the same sentence of the policy", async () => {
    writeFileSync(join(scratch, "drafted-airline.vigil"), draftedAirline);
    const result = await runCli(["diff", airline, "drafted-airline.vigil", "--format", "json"], { cwd: scratch });
    expect(result.code, result.stderr).toBe(1);
    const report = JSON.parse(result.stdout) as Report;
    expect(report.pairedBy).toBe("source");
    expect(report.rules.map((rule) => `${rule.rule} [${rule.cites!.join(", ")}]: ${rule.change === "unchanged" ? "unchanged" : `${rule.change}, ${rule.relation}`}`)).toEqual([
      "airline.confirmed_before_update ↔ airline_policy.confirm_updates [airline-policy.md:7]: changed, looser",
      "airline.confirmed_again ↔ airline_policy.confirm_updates [airline-policy.md:7]: changed, incomparable",
      "airline.confirmed_before_update + airline.confirmed_again ↔ airline_policy.confirm_updates [airline-policy.md:7]: changed, looser",
      "airline.no_reply_with_call ↔ airline_policy.one_thing_at_a_time [airline-policy.md:11]: unchanged",
      "airline.payment_in_profile [../shared/data/tau-bench/airline-policy.md:34]: removed, looser",
      "airline.user_id_from_user [../shared/data/tau-bench/airline-policy.md:30]: removed, looser",
      "airline.reservation_looked_up [../shared/data/tau-bench/airline-policy.md:42, ../shared/data/tau-bench/airline-policy.md:56]: removed, looser",
      "airline.flight_was_listed [../shared/data/tau-bench/airline-policy.md:24]: removed, looser",
      "airline.insurance_offered ↔ airline_policy.insurance_asked [airline-policy.md:38]: unchanged",
      "airline.compensation_requested [../shared/data/tau-bench/airline-policy.md:70]: removed, looser",
      "airline.certificate_after_facts [../shared/data/tau-bench/airline-policy.md:66-68]: removed, looser",
      "airline_policy.at_most_five_passengers [airline-policy.md:32]: added, stricter",
    ]);
    // The drafted confirmation leaves out `send_certificate`, which updates the database too.
    expect(report.rules[0]!.counterexamples).toEqual([expect.objectContaining({ rejectedBy: "old", events: [{ action: "send_certificate" }] })]);
  });

  it.skipIf(!existsSync(specification))("cites, for each hand-written rule, lines of the policy that hold its sentence", () => {
    const lines = readFileSync(specification, "utf8").split("\n");
    const cited = [...readFileSync(airline, "utf8").matchAll(/\/\/\/ source: \.\.\/shared\/data\/tau-bench\/airline-policy\.md:(\d+)(?:-(\d+))?/g)];
    expect(cited).toHaveLength(11);
    // Each range starts and ends on a line of text (a blank line may part a range's paragraphs).
    for (const line of cited.flatMap(([, first, last]) => [Number(first), Number(last ?? first)])) expect(lines[line - 1]?.trim() ?? "", `line ${line}`).not.toBe("");
    expect(lines[33]).toContain("All payment methods must already be in user profile");
    expect(lines[6]).toContain("obtain explicit user confirmation (yes)");
  });
});
