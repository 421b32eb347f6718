import type { CheckedPattern, CheckedStatement, Formula } from "@vigil/checker";
import { valueKey, type JsonValue, type TraceEvent } from "@vigil/trace";
import fc from "fast-check";

/**
 * Random policies and traces over a small vocabulary, so that patterns match often and
 * variables bind to shared values often: the interesting cases for the engines' agreement.
 */
const actions = ["a", "b", "c", "d"];
const keys = [["k"], ["m"], ["n", "p"]];
const scalars: JsonValue[] = [1, 2, "1", "x", "xy", true, null];
const wildcards = ["x*", "?", "[12]", "*", "x?", "[!x]*"];
const outputs = ["ok done", "error: x", "", "crash!"];

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

export const trace: fc.Arbitrary<TraceEvent[]> = fc
  .array(event, { maxLength: 12 })
  .map((events) => events.map((e, i) => ({ ...e, position: i + 1 })));

const atom: fc.Arbitrary<Formula> = fc.oneof(
  fc.subarray([...actions, "q"], { minLength: 1, maxLength: 3 }).map((as): Formula => ({ kind: "action", actions: as })),
  fc
    .record({ key: fc.constantFrom(...keys), values: fc.subarray(scalars, { minLength: 1, maxLength: 3 }) })
    .map(({ key, values }): Formula => ({ kind: "keyIn", key, values: values.map((v) => ({ key: valueKey(v), value: v })) })),
  fc.record({ key: fc.constantFrom(...keys), pattern: fc.constantFrom(...wildcards) }).map(({ key, pattern }): Formula => ({ kind: "keyMatch", key, pattern })),
  fc.constantFrom<Formula>({ kind: "status", status: "ok" }, { kind: "status", status: "error" }),
  fc.constantFrom(...wildcards, "*done*", "crash*").map((pattern): Formula => ({ kind: "outputMatch", pattern })),
);

/** A per-event pattern: atoms under and/or/not. */
export const pattern: fc.Arbitrary<Formula> = fc.letrec<{ formula: Formula }>((tie) => ({
  formula: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 4, arbitrary: atom },
    { weight: 2, arbitrary: fc.array(tie("formula"), { minLength: 2, maxLength: 3 }).map((operands): Formula => ({ kind: "and", operands })) },
    { weight: 1, arbitrary: fc.array(tie("formula"), { minLength: 2, maxLength: 2 }).map((operands): Formula => ({ kind: "or", operands })) },
    { weight: 1, arbitrary: tie("formula").map((operand): Formula => ({ kind: "not", operand })) },
  ),
})).formula;

/** A temporal body Θ: patterns under not/and/or/once/eventually. */
export const body: fc.Arbitrary<Formula> = fc.letrec<{ formula: Formula }>((tie) => ({
  formula: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    { weight: 3, arbitrary: pattern },
    { weight: 2, arbitrary: tie("formula").map((operand): Formula => ({ kind: "not", operand })) },
    { weight: 2, arbitrary: fc.array(tie("formula"), { minLength: 2, maxLength: 2 }).map((operands): Formula => ({ kind: "and", operands })) },
    { weight: 1, arbitrary: fc.array(tie("formula"), { minLength: 2, maxLength: 2 }).map((operands): Formula => ({ kind: "or", operands })) },
    { weight: 2, arbitrary: tie("formula").map((operand): Formula => ({ kind: "once", operand })) },
    { weight: 2, arbitrary: tie("formula").map((operand): Formula => ({ kind: "eventually", operand })) },
  ),
})).formula;

const span = { start: 0, end: 0, line: 1, column: 1, endLine: 1, endColumn: 1 };

function withBindings(formula: Formula, binds: [string, string[]][]): CheckedPattern {
  const atoms: Formula[] = binds.map(([variable, key]) => ({ kind: "keyBind", key, variable }));
  return {
    formula: atoms.length === 0 ? formula : { kind: "and", operands: [formula, ...atoms] },
    bindings: new Map(binds),
    span,
  };
}

const variableSets = fc.constantFrom<string[]>([], [], ["x"], ["x"], ["x", "y"]);
const bindingFor = (variables: string[]) => fc.array(fc.constantFrom(...keys), { minLength: variables.length, maxLength: variables.length }).map((ks) => variables.map((v, i): [string, string[]] => [v, ks[i]!]));

const common = { policy: "p", span } as const;

/** A random statement of any form, obeying the variable discipline the checker enforces. */
export const statement: fc.Arbitrary<CheckedStatement> = fc.oneof(
  pattern.map((f): CheckedStatement => ({ ...common, name: "abs", form: "abs", variables: [], pattern: withBindings(f, []) })),
  body.map((f): CheckedStatement => ({ ...common, name: "always", form: "always", variables: [], body: f })),
  variableSets.chain((variables) =>
    fc
      .record({
        form: fc.constantFrom("prec" as const, "resp" as const, "rslv" as const, "bresp" as const),
        first: pattern,
        second: pattern,
        firstBinds: bindingFor(variables),
        secondBinds: bindingFor(variables),
        bound: fc.integer({ min: 1, max: 4 }),
      })
      .map(({ form, first, second, firstBinds, secondBinds, bound }): CheckedStatement => {
        const operands = { first: withBindings(first, firstBinds), second: withBindings(second, secondBinds) };
        return form === "bresp"
          ? { ...common, name: form, form, bound, variables, ...operands }
          : { ...common, name: form, form, variables, ...operands };
      }),
  ),
  variableSets.chain((variables) =>
    fc
      .record({
        trigger: pattern,
        resolve: pattern,
        bad: pattern,
        triggerBinds: bindingFor(variables),
        resolveBinds: bindingFor(variables),
        badBinds: bindingFor(variables),
        resolveUses: fc.boolean(),
        badUses: fc.boolean(),
      })
      .map(({ trigger, resolve, bad, triggerBinds, resolveBinds, badBinds, resolveUses, badUses }): CheckedStatement => ({
        ...common,
        name: "until",
        form: "until",
        variables,
        trigger: withBindings(trigger, triggerBinds),
        // The checker requires at least one of the two to use the trigger's variables.
        resolve: withBindings(resolve, resolveUses || !badUses ? resolveBinds : []),
        bad: withBindings(bad, badUses ? badBinds : []),
      })),
  ),
);
