import { analyzePolicy, compile, signatureOf, type Diagnostic } from "@vigil/compiler";
import { describe, expect, it } from "vitest";

/**
 * `analyzePolicy(…, { signature, samples: true })`, as a draft's review reads it: the signature is
 * that of good sample runs. A prohibition no run under it breaks only because it forbids a value,
 * an action or an argument the runs never show is what a prohibition should be, and is named once
 * in a note; one no run breaks even in a world opened around it (a contradiction, a key the runs
 * give one number asked to be two numbers at once) is still a finding at its rule, and so is a
 * requirement that is not a prohibition.
 */

const source = [
  "policy p {",
  '  rule prod: abs(action in {deploy} and env in {"prod"})',
  '  rule not_prod: always not (action in {deploy} and env in {"prod"})',
  "  rule both: abs(action in {deploy} and amount > 5 and amount < 3)",
  "  rule contra: abs(action in {deploy} and status = ok and status = error)",
  "  rule never_drop: abs(action in {drop_database})",
  '  rule gated: prec(action in {deploy} and env in {"prod"}, action in {check})',
  "  rule checked: prec(action in {deploy}, action in {check})",
  "}",
  "",
].join("\n");

/** The runs' signature: `env` only ever `staging`, `amount` one number (never a list). */
const signature = signatureOf([
  { action: "check", args: {}, status: "ok" },
  { action: "deploy", args: { env: "staging", amount: 4 }, status: "ok" },
]);

const shown = (diagnostics: readonly Diagnostic[]) => diagnostics.map((d) => `${d.code} ${d.severity} ${d.span?.line ?? "-"}`);

describe("analyzePolicy with the signature of sample runs", () => {
  const compiled = compile(source, { file: "p.vigil" });

  it("names the prohibitions quiet only for their values once, and keeps those that cannot fire on any run of the samples' kind", async () => {
    expect(compiled.ok).toBe(true);
    const found = await analyzePolicy(compiled.program, { signature, samples: true, file: "p.vigil" });
    expect(shown(found)).toEqual([
      "A0001 warning 4",
      "A0002 warning 4",
      "A0001 warning 5",
      "A0002 warning 5",
      // Not a prohibition: a requirement whose trigger the runs never show is still reported.
      "A0001 warning 7",
      "A0002 warning 7",
      "A0002 info -",
    ]);
    const note = found.at(-1)!;
    expect(note.message).toBe(
      "3 rules prohibit what no sample run does (as a prohibition should): `p.prod`, `p.not_prod`, `p.never_drop`; no run under the signature breaks them, and a run with a value, an action or an argument the samples never show breaks each",
    );
    expect(note.related?.map((r) => `${r.span.line}: ${r.message}`)).toEqual([
      "2: `p.prod` fires only on what the sample runs never show",
      "3: `p.not_prod` fires only on what the sample runs never show",
      "6: `p.never_drop` fires only on what the sample runs never show",
    ]);
    // A prohibition that cannot fire whatever its values says so.
    const both = found.find((d) => d.code === "A0002" && d.span?.line === 4)!;
    expect(both.help).toMatch(/^it cannot fire even on values, actions or arguments the sample runs never show: its conditions contradict each other/);
    expect(found.find((d) => d.code === "A0002" && d.span?.line === 7)!.help).toBe("a rule that cannot be broken enforces nothing; check its patterns and scope");
  }, 120_000);

  it("reads a list longer than the runs show, or an argument they never have, as what they never do, and a list where they show one number as nothing a run can hold", async () => {
    const lists = signatureOf([{ action: "book", args: { passengers: ["a", "b"], amount: 4 }, status: "ok" }]);
    const policy = compile(
      [
        "policy p {",
        "  rule at_most_five: abs(action in {book} and count(passengers) > 5)",
        "  rule both: abs(action in {book} and amount > 5 and amount < 3)",
        '  rule no_region: abs(action in {book} and region in {"eu"})',
        "}",
        "",
      ].join("\n"),
      { file: "lists.vigil" },
    );
    const found = await analyzePolicy(policy.program, { signature: lists, samples: true });
    expect(shown(found)).toEqual(["A0001 warning 3", "A0002 warning 3", "A0002 info -"]);
    expect(found.at(-1)!.message).toMatch(/^2 rules prohibit what no sample run does \(as a prohibition should\): `p.at_most_five`, `p.no_region`;/);
  }, 60_000);

  it("says of one such rule that it is one, and changes nothing without samples or without a signature", async () => {
    const one = compile('policy p {\n  rule prod: abs(action in {deploy} and env in {"prod"})\n}\n', { file: "one.vigil" });
    const quiet = await analyzePolicy(one.program, { signature, samples: true });
    expect(quiet.map((d) => `${d.code} ${d.severity}: ${d.message}`)).toEqual([
      "A0002 info: rule `p.prod` prohibits what no sample run does (as a prohibition should): no run under the signature breaks it, and a run with a value, an action or an argument the samples never show does",
    ]);
    // `vigilc analyze --trace`: the signature is a vocabulary, not good runs; every finding is kept.
    expect(shown(await analyzePolicy(one.program, { signature }))).toEqual(["A0001 warning 2", "A0002 warning 2"]);
    // The open world: the prohibition fires on a deploy to prod.
    expect(await analyzePolicy(one.program, { samples: true })).toEqual([]);
  }, 60_000);
});
