import { check, compile, judgeRun, readTrace, reportToJson, SmtDecider } from "@vigil/compiler";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

/**
 * Reports say how each trigger was answered (`answers`), read off the same forward run as the
 * trigger counts, whichever engine decided the statements, and whichever way the run was judged
 * (`check` on events, `judgeRun` on a file's text).
 */
const policy = compile(
  [
    "policy p {",
    "  rule closes: resp(action in {open} and id = $f, action in {close} and id = $f)",
    "  rule checked: prec(action in {use}, action in {check})",
    "  rule no_rm: abs(action in {rm})",
    "  rule locked: until(action in {lock}, action in {unlock}, action in {write})",
    "  rule quiet: always not action in {shout}",
    "}",
    "",
  ].join("\n"),
);

const text = [
  { action: "open", args: { id: "a" } },
  { action: "open", args: { id: "b" } },
  { action: "close", args: { id: "b" } },
  { action: "use", args: {} },
  { action: "close", args: { id: "a" } },
  { action: "lock", args: {} },
]
  .map((event) => JSON.stringify(event))
  .join("\n");

/** What every report of this run says, statement by statement. */
const expected = [
  {
    name: "closes",
    holds: true,
    triggers: { count: 2, first: [1, 2] },
    answers: {
      count: 2,
      first: [
        { trigger: 1, by: 5 },
        { trigger: 2, by: 3 },
      ],
    },
  },
  // Its one trigger is a witness: no answer, so the JSON leaves `answers` out.
  { name: "checked", holds: false, triggers: { count: 1, first: [4] } },
  // Never answers, and matched nothing.
  { name: "no_rm", holds: true, triggers: { count: 0, first: [] } },
  // The lock's interval is still open at the end: neither broken nor answered.
  { name: "locked", holds: true, triggers: { count: 1, first: [6] } },
  { name: "quiet", holds: true },
];

let decider: SmtDecider;
beforeAll(async () => {
  decider = await SmtDecider.create({ timeoutMs: 20_000 });
});
afterAll(async () => {
  await decider.dispose();
});

describe("reports carry the answers of the triggers", () => {
  it.each(["eval", "smt"] as const)("check (--engine %s): the verdicts and reportToJson", async (engine) => {
    const { trace } = readTrace(text);
    const report = await check(policy, trace, { engine, decider });
    const json = reportToJson(report);
    expect(json.statements.map(({ name, holds, triggers, answers }) => ({ name, holds, ...(triggers ? { triggers } : {}), ...(answers ? { answers } : {}) }))).toEqual(expected);
    // The JSON keeps exactly its documented fields: `answers` only where a trigger was answered.
    expect(Object.keys(json.statements[0]!)).toEqual(["policy", "name", "holds", "witnesses", "response", "triggers", "answers", "patterns"]);
    expect(Object.keys(json.statements[1]!)).toEqual(["policy", "name", "holds", "witnesses", "response", "triggers", "patterns"]);
    // The verdicts themselves keep a count of 0 where the form answers, and none for abs and always.
    expect(report.statements.map((s) => s.answers?.count)).toEqual([2, 0, undefined, 0, undefined]);
  });

  it.each(["eval", "smt"] as const)("judgeRun (--engine %s) gives the same answers", async (engine) => {
    const judged = await judgeRun(policy, { file: "run.jsonl", text }, { engine, decider });
    const json = reportToJson(judged.report!);
    expect(json.statements.map((s) => s.answers)).toEqual(expected.map((s) => s.answers));
  });
});
