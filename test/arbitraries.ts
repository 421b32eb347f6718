import { compile, type CheckedStatement } from "@vigil/compiler";
import type { JsonValue, TraceEvent } from "@vigil/trace";
import fc from "fast-check";
import { expect } from "vitest";

/**
 * Random policies, written as text, and random traces over a small vocabulary, so that patterns
 * match often and variables bind to shared values often: the interesting cases for the engines'
 * agreement. The policies go through the parser and the checker like any user's file.
 */
const actions = ["a", "b", "c", "d"];
// `m.0` and `n.p.1` are list indexes: one element of a list value, none on a scalar.
const keys = ["k", "m", "n.p", "m.0", "n.p.1"];
const scalars: JsonValue[] = [1, 2, "1", "x", "xy", true, null, 0.1, 0.2, -1, "0.10"];
const wildcards = ["x*", "?", "[12]", "*", "x?", "[!x]*"];
const outputs = ["ok done", "error: x", "", "crash!", '{"id": "xy", "n": {"p": 1}}', '{"id": 1}', '{"id": ["x", "1"]}', "[1]", '{"id": "x", "truncated'];

const scalar = fc.constantFrom(...scalars);
const value: fc.Arbitrary<JsonValue> = fc.oneof(
  { weight: 5, arbitrary: scalar },
  { weight: 1, arbitrary: fc.array(scalar, { maxLength: 3 }) },
);

function argsFor(present: boolean[], values: JsonValue[], nested: JsonValue): Record<string, JsonValue> {
  const args: Record<string, JsonValue> = {};
  if (present[0]) args["k"] = values[0]!;
  if (present[1]) args["m"] = values[1]!;
  if (present[2]) args["n"] = { p: nested };
  return args;
}

export const event: fc.Arbitrary<Omit<TraceEvent, "position">> = fc
  .record({
    action: fc.constantFrom(...actions, "zz"),
    present: fc.array(fc.boolean(), { minLength: 3, maxLength: 3 }),
    values: fc.array(value, { minLength: 2, maxLength: 2 }),
    nested: value,
    status: fc.constantFrom<"ok" | "error" | undefined>("ok", "ok", "error", undefined),
    output: fc.option(fc.constantFrom(...outputs), { nil: undefined }),
  })
  .map(({ action, present, values, nested, status, output }) => ({
    action,
    args: argsFor(present, values, nested),
    ...(status !== undefined ? { status } : {}),
    ...(output !== undefined ? { output } : {}),
  }));

/**
 * The gaps between events' times, in milliseconds: often none (events at the same instant), often
 * exactly a window's length (the edge of `bresp[2s]`, `limit[… per 2s]`).
 */
const gap = fc.constantFrom(0, 0, 500, 1_000, 1_000, 2_000, 3_000);

export const trace: fc.Arbitrary<TraceEvent[]> = fc
  .array(fc.tuple(event, gap), { maxLength: 12 })
  .map((events) => {
    let time = 1_700_000_000_000;
    return events.map(([e, pause], i) => ({ ...e, position: i + 1, time: (time += pause) }));
  });

// ---- policy text -----------------------------------------------------------------------------

/** Each connective in one of its spellings, so that the parser's alternatives are exercised too. */
const spell = {
  and: fc.constantFrom(" and ", " ∧ "),
  or: fc.constantFrom(" or ", " ∨ "),
  not: fc.constantFrom("not ", "¬"),
  once: fc.constantFrom("once ", "◇⁻", "once[1s] ", "once[2s] ", "◇⁻[500ms] "),
  eventually: fc.constantFrom("eventually ", "◇⁺", "eventually[1s] ", "eventually[2s] ", "◇⁺[500ms] "),
  implies: fc.constantFrom(" implies ", " ⇒ ", " -> "),
  always: fc.constantFrom("always ", "□ "),
};

const valueText = (v: JsonValue): string => JSON.stringify(v);
const keyText = fc.constantFrom(...keys, '"k"');

const regexes = ["/x/", "/^x/i", "/X$/i", "/x.y/s", "/\\d/", "/(x|1)+/", "/[a-c]/", "/^$/", "/do[^n]/", "/\\bx\\b/"];
const outputKeyText = fc.constantFrom("output.id", "output.n.p", 'output."id"', "output.id.1");

/** A comparison's operator and number: thresholds at and between the values the traces hold. */
const comparison = fc.tuple(fc.constantFrom("<", "<=", ">", ">=", "=", "!="), fc.constantFrom("1", "2", "0.1", "0.15", "-1", "0", "1.0", "1e0"));
/** A key, or `every(key)` or `some(key)` around it. */
const quantifiedKey = (key: fc.Arbitrary<string>): fc.Arbitrary<string> =>
  fc.tuple(fc.constantFrom("", "", "every", "some"), key).map(([word, k]) => (word === "" ? k : `${word}(${k})`));

const atomText: fc.Arbitrary<string> = fc.oneof(
  fc.tuple(quantifiedKey(fc.oneof(keyText, outputKeyText)), comparison).map(([key, [op, n]]) => `${key} ${op} ${n}`),
  fc.tuple(fc.oneof(keyText, outputKeyText, fc.constant("output")), fc.constantFrom("<", "<=", ">", ">=", "=", "!="), fc.constantFrom("0", "1", "2", "3", "1.5")).map(([key, op, n]) => `count(${key}) ${op} ${n}`),
  fc.record({ key: quantifiedKey(keyText), values: fc.subarray(scalars, { minLength: 1, maxLength: 3 }) }).map(({ key, values }) => `${key} in {${values.map(valueText).join(", ")}}`),
  fc.record({ key: quantifiedKey(fc.oneof(keyText, outputKeyText)), pattern: fc.constantFrom(...wildcards) }).map(({ key, pattern }) => `${key} ~ ${JSON.stringify(pattern)}`),
  fc.record({ key: quantifiedKey(keyText), regex: fc.constantFrom(...regexes) }).map(({ key, regex }) => `${key} matches ${regex}`),
  fc.record({ key: fc.oneof(keyText, fc.constant("output"), outputKeyText), regex: fc.constantFrom(...regexes) }).map(({ key, regex }) => `${key} matches ${regex}`),
  fc.record({ key: outputKeyText, values: fc.subarray(scalars, { minLength: 1, maxLength: 3 }) }).map(({ key, values }) => `${key} in {${values.map(valueText).join(", ")}}`),
  fc.record({ key: outputKeyText, pattern: fc.constantFrom(...wildcards) }).map(({ key, pattern }) => `${key} ~ ${JSON.stringify(pattern)}`),
  fc.subarray([...actions, "q"], { minLength: 1, maxLength: 3 }).map((as) => `action in {${as.join(", ")}}`),
  fc.record({ key: keyText, values: fc.subarray(scalars, { minLength: 1, maxLength: 3 }) }).map(({ key, values }) => `${key} in {${values.map(valueText).join(", ")}}`),
  fc.record({ key: keyText, pattern: fc.constantFrom(...wildcards) }).map(({ key, pattern }) => `${key} ~ ${JSON.stringify(pattern)}`),
  fc.constantFrom("status = ok", "status = error"),
  fc.constantFrom(...wildcards, "*done*", "crash*").map((pattern) => `output ~ ${JSON.stringify(pattern)}`),
);

/** A per-event pattern ψ: atoms under and/or/not, and references to the policy's named patterns. */
const patternText = (names: readonly string[]): fc.Arbitrary<string> =>
  fc.letrec<{ p: string }>((tie) => ({
    p: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 4, arbitrary: atomText },
      ...(names.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...names) }] : []),
      { weight: 2, arbitrary: fc.tuple(tie("p"), spell.and, tie("p")).map(([l, op, r]) => `(${l}${op}${r})`) },
      { weight: 1, arbitrary: fc.tuple(tie("p"), spell.or, tie("p")).map(([l, op, r]) => `(${l}${op}${r})`) },
      { weight: 1, arbitrary: fc.tuple(spell.not, tie("p")).map(([op, p]) => `${op}(${p})`) },
    ),
  })).p;

/** A temporal body Θ: patterns under not/and/or/implies/once/eventually. */
const bodyText = (names: readonly string[]): fc.Arbitrary<string> =>
  fc.letrec<{ b: string }>((tie) => ({
    b: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      { weight: 3, arbitrary: patternText(names) },
      { weight: 2, arbitrary: fc.tuple(spell.not, tie("b")).map(([op, b]) => `${op}(${b})`) },
      { weight: 2, arbitrary: fc.tuple(tie("b"), spell.and, tie("b")).map(([l, op, r]) => `(${l}${op}${r})`) },
      { weight: 1, arbitrary: fc.tuple(tie("b"), spell.or, tie("b")).map(([l, op, r]) => `(${l}${op}${r})`) },
      { weight: 1, arbitrary: fc.tuple(tie("b"), spell.implies, tie("b")).map(([l, op, r]) => `(${l}${op}${r})`) },
      { weight: 2, arbitrary: fc.tuple(spell.once, tie("b")).map(([op, b]) => `${op}(${b})`) },
      { weight: 2, arbitrary: fc.tuple(spell.eventually, tie("b")).map(([op, b]) => `${op}(${b})`) },
    ),
  })).b;

const variableSets = fc.constantFrom<string[]>([], [], ["x"], ["x"], ["x", "y"]);

/** A use of a variable that binds it: at a key, in the output, or in every branch of an `or`. */
const bindingUse = (names: readonly string[], variable: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...keys).map((key) => `${key} = $${variable}`) },
    { weight: 1, arbitrary: fc.constantFrom("output.id", "output.n.p", "output").map((key) => `${key} = $${variable}`) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(patternText(names), fc.constantFrom(...keys), fc.constantFrom(...keys, "output.id"))
        .map(([guard, left, right]) => `((${guard} and ${left} = $${variable}) or ${right} = $${variable})`),
    },
  );

/** A use of a variable in a pattern that need not bind it: also `contains`. */
const anyUse = (names: readonly string[], variable: string): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 3, arbitrary: bindingUse(names, variable) },
    { weight: 2, arbitrary: fc.constantFrom(...keys, "output", "output.id").map((key) => `${key} contains $${variable}`) },
    { weight: 1, arbitrary: fc.constantFrom(...keys, "output.id").map((key) => `every(${key}) contains $${variable}`) },
    { weight: 1, arbitrary: fc.constantFrom(...keys).map((key) => `(${key} contains $${variable} or output = $${variable})`) },
  );

/**
 * `(ψ) and USE($x) and USE($y)`: a pattern with every variable used once. The first pattern of a
 * form (`binds`) only binds; the others may also test with `contains`.
 */
const bound = (names: readonly string[], variables: readonly string[], role: "binds" | "uses" = "binds"): fc.Arbitrary<string> =>
  fc
    .tuple(patternText(names), fc.tuple(...variables.map((variable) => (role === "binds" ? bindingUse(names, variable) : anyUse(names, variable)))))
    .map(([pattern, uses]) => [`(${pattern})`, ...uses].join(" and "));

const statementText = (names: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    patternText(names).map((p) => `abs(${p})`),
    fc.tuple(spell.always, bodyText(names)).map(([always, body]) => `${always}${body}`),
    variableSets.chain((variables) =>
      fc
        .tuple(fc.constantFrom("prec", "resp", "rslv", "bresp"), bound(names, variables), bound(names, variables, "uses"), fc.constantFrom("1", "2", "4", "1s", "2s"))
        .map(([form, first, second, bound]) => `${form}${form === "bresp" ? `[${bound}]` : ""}(${first}, ${second})`),
    ),
    variableSets.chain((variables) =>
      fc
        .tuple(bound(names, variables), fc.constantFrom("0", "1", "2", "3", "0.3 of k", "1 of m", "2 of n.p", "0.1 of k"), fc.constantFrom("", " per 1s", " per 2s", " per 5s"))
        .map(([pattern, maximum, per]) => `limit[${maximum}${per}](${pattern})`),
    ),
    variableSets.chain((variables) =>
      fc
        .tuple(bound(names, variables), bound(names, variables, "uses"), bound(names, variables, "uses"), patternText(names), fc.constantFrom("resolve", "bad", "both"))
        .map(([trigger, resolve, bad, plain, uses]) =>
          // The checker requires the other two patterns to use all the trigger's variables or none,
          // and at least one of them to use them.
          `until(${trigger}, ${uses === "bad" ? `(${plain})` : resolve}, ${uses === "resolve" ? `(${plain})` : bad})`,
        ),
    ),
  );

/** A scope after the statement, or none (most rules have none): its patterns have no variable. */
const scopeText = (names: readonly string[]): fc.Arbitrary<string> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant("") },
    { weight: 1, arbitrary: patternText(names).map((q) => ` after ${q}`) },
    { weight: 1, arbitrary: patternText(names).map((r) => ` before ${r}`) },
    { weight: 1, arbitrary: fc.tuple(patternText(names), patternText(names)).map(([q, r]) => ` between (${q}) and ${r}`) },
    { weight: 1, arbitrary: fc.tuple(patternText(names), patternText(names)).map(([q, r]) => ` after ${q} until ${r}`) },
  );

/** A whole policy: some named patterns (each may use the earlier ones) and one rule, maybe scoped. */
export const policyText: fc.Arbitrary<string> = fc.integer({ min: 0, max: 2 }).chain((count) => {
  const names = Array.from({ length: count }, (_, i) => `P${i}`);
  const declarations = names.map((name, i) => patternText(names.slice(0, i)).map((body) => `  pattern ${name} = ${body}\n`));
  return fc
    .tuple(fc.tuple(...declarations), statementText(names), scopeText(names))
    .map(([patterns, statement, scope]) => `policy p {\n${patterns.join("")}  rule r: ${statement}${scope}\n}\n`);
});

/** The one statement of a generated policy text, which must check without errors. */
export function onlyStatement(source: string): CheckedStatement {
  const compiled = compile(source);
  expect(compiled.diagnostics.filter((d) => d.severity === "error"), source).toEqual([]);
  const statements = compiled.program.policies.flatMap((p) => p.statements);
  expect(statements).toHaveLength(1);
  return statements[0]!;
}
