import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { ModelServer } from "../../../test/support/model-server.js";
import { createProvider, draftMessages, draftPolicy, namedIn, readRunsVocabulary, readSpecifications, recheckDraft, wordsOf, type ModelProvider } from "../src/index.js";
import {
  conversationDraft,
  typoDraft,
  typoRepaired,
  unseenInPatternDraft,
  unseenKeyNamedDraft,
  unseenNamedDraft,
  unseenOutsideProhibitionDraft,
  unseenUnnamedDraft,
  wrongActionDraft,
  wrongActionRepaired,
} from "./fixtures/support-answers.js";

/**
 * The draft in the vocabulary of runs that carry their conversations (fixtures/support-skill), and
 * the closed world as a question: a rule about the conversation is accepted; a key on an action
 * that never has it goes back with the actions that do; a name no run shows is kept in a
 * prohibition whose cited line names it, with a `/// review:` line, and sent back otherwise; a slip
 * of a known name goes back as a likely typo; what still fails after the last round is taken out
 * and said. Against the scripted model endpoint on 127.0.0.1.
 */

const skill = resolve(import.meta.dirname, "fixtures/support-skill");
const tauFile = resolve(import.meta.dirname, "../../../../shared/data/tau-bench/gpt-4o-airline.json");
let server: ModelServer;

beforeAll(async () => {
  server = await ModelServer.start();
});
afterAll(async () => {
  await server?.close();
});
beforeEach(() => {
  server.requests.length = 0;
});

function provider(): ModelProvider {
  const made = createProvider({ provider: "anthropic", env: { ANTHROPIC_API_KEY: "sk-test", ANTHROPIC_BASE_URL: server.url }, model: "test-model", maxRetries: 0 });
  if (!made.ok) throw new Error(made.message);
  return made.provider;
}

async function inputs(messages = true) {
  const reading = await readSpecifications(["SKILL.md"], { cwd: skill });
  expect(reading.errors).toEqual([]);
  const { signature, vocabulary } = await readRunsVocabulary([join(skill, "runs.json")], messages ? {} : { messages: false });
  return { sources: reading.sources, signature, vocabulary, policyName: "support" };
}

/** The text of the user's message of a recorded request (the last one: the problems of a repair round). */
function lastUserMessage(index: number): string {
  return server.requests[index]!.body.messages.filter((m: { role: string }) => m.role === "user").at(-1).content;
}

describe("a draft in the vocabulary of runs with their conversations", () => {
  it("reads the messages as events, shows them per action, and tells the model how conversation rules are written", async () => {
    const { vocabulary, ...rest } = await inputs();
    expect(vocabulary.messages).toBe(true);
    expect(vocabulary.actions.map((action) => [action.action, action.events])).toEqual([
      ["agent_message", 4],
      ["lookup_order", 2],
      ["refund", 2],
      ["user_message", 4],
    ]);
    const request = draftMessages({ ...rest, vocabulary });
    const content = request.messages[0]!.content;
    expect(content).toContain("refund: 2 events; 2 outputs, all JSON objects\n  - amount: number; 80, 120\n  - order_id: string; \"W123\", \"W777\"\n  - output.amount: number; 80, 120\n");
    expect(content).toContain('lookup_order: 2 events; 2 outputs, all JSON objects\n  - order_id: string; "W123", "W777"\n  - output.items: list of object (up to 1)\n');
    expect(content).toContain('user_message: 4 events, what the user said (a message of the conversation: no status, no output)\n  - text: string; "Hi, I want a refund for order W123, it arrived broken."');
    expect(request.system).toContain("`user_message` (what the user said) and `agent_message` (what the agent said)");
    expect(request.system).toContain("text contains $o");
    // Without the messages, neither the vocabulary nor the instructions speak of them.
    const without = await inputs(false);
    expect(without.vocabulary.messages).toBe(false);
    const plain = draftMessages(without);
    expect(plain.messages[0]!.content).not.toContain("user_message");
    expect(plain.system).not.toContain("`user_message` (what the user said)");
  });

  it("accepts a rule about the conversation: a confirmation, and a value flowing from the user's words", async () => {
    server.answer({ text: conversationDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(1);
    expect(result.rules.map((rule) => [rule.name, rule.source])).toEqual([
      ["confirmed", "SKILL.md:9"],
      ["order_from_user", "SKILL.md:10"],
    ]);
    expect(result.policy).toContain("action in {user_message} and text contains $o");
    expect(result.rejected).toEqual([]);
    expect(result.reviews).toEqual([]);
  });

  it("sends back a key written on an action that never has it, with the actions that do, and keeps the repair", async () => {
    server.answer({ text: wrongActionDraft }, { text: wrongActionRepaired });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(2);
    expect(lastUserMessage(1)).toContain("no event of `lookup_order` has an argument `amount`, so the condition is false on them: the runs show it on `refund`; `lookup_order` has order_id");
    expect(result.rules.map((rule) => rule.name)).toEqual(["confirmed", "at_most_500"]);
    expect(result.policy).toContain("abs(action in {refund} and amount > 500)");
  });
});

describe("the closed world as a question", () => {
  it("keeps an action no run shows in a prohibition whose cited line names it, with a review line, and checks it so again from the cache", async () => {
    server.answer({ text: unseenNamedDraft });
    const options = await inputs();
    const result = await draftPolicy({ ...options, provider: provider() });
    expect(result.rounds).toBe(1);
    expect(result.rules.map((rule) => rule.name)).toEqual(["at_most_500", "no_closing"]);
    const review = "review: no run shows the action `close_account`; kept because SKILL.md:12 names it (a prohibition names what good runs do not do)";
    expect(result.policy).toContain(`  /// source: SKILL.md:12\n  /// ${review}\n  rule no_closing: abs(action in {close_account})`);
    expect(result.reviews).toEqual([{ name: "support.no_closing", source: "SKILL.md:12", review: review.replace("review: ", "") }]);
    // The review line is not part of the requirement.
    expect(result.rules[1]!.requirement).toBe("Never close an account (`close_account`): only a human may close one.");
    // Kept and checked again (the cache's path): it still passes.
    expect(recheckDraft(result, options)).toEqual([]);
  });

  it("marks a pattern used only by a prohibition above the pattern", async () => {
    server.answer({ text: unseenInPatternDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(1);
    expect(result.policy).toContain("  /// Closing an account.\n  /// review: no run shows the action `close_account`; kept because SKILL.md:12 names it");
    expect(result.reviews?.map((review) => review.name)).toEqual(["support.closing"]);
  });

  it("keeps an argument no run shows in a prohibition whose line names it", async () => {
    server.answer({ text: unseenKeyNamedDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(1);
    expect(result.policy).toContain("  /// review: no run shows the argument `dollars`; kept because SKILL.md:11 names it (a prohibition names what good runs do not do)\n  rule at_most_500: abs(action in {refund} and dollars > 500)");
  });

  it("sends back a name no run shows outside a prohibition, even when its line names it; taken out after the last round, and said", async () => {
    server.answer({ text: unseenOutsideProhibitionDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider(), maxRepairs: 0 });
    expect(result.rules.map((rule) => rule.name)).toEqual(["confirmed"]);
    expect(result.rejected).toEqual([
      {
        name: "support.closing_looked_up",
        requirement: "Never close an account (`close_account`): only a human may close one.",
        source: "SKILL.md:12",
        problems: [expect.stringContaining("V1101: the action `close_account` does not occur in the trace, so it matches no event (in `rule closing_looked_up: prec(action in {close_account}, action in {lookup_order})`): no run shows it (only a prohibition or a limit may name what no run shows, where the lines it cites name it)")],
      },
    ]);
    expect(result.reviews).toEqual([]);
  });

  it("sends back an action no run shows that the cited line does not name, and keeps the repair", async () => {
    server.answer({ text: unseenUnnamedDraft }, { text: unseenNamedDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(2);
    const problems = lastUserMessage(1);
    expect(problems).toContain("V1101: the action `terminate_account`");
    expect(problems).toContain("no run shows it, and the lines the prohibition cites (SKILL.md:12) do not name it; use a name of the vocabulary, or cite the line that names it, or put the requirement in the unsupported block with why");
    expect(result.rules.map((rule) => rule.name)).toEqual(["at_most_500", "no_closing"]);
    expect(result.reviews).toHaveLength(1);
  });

  it("sends back a near-miss of a known action or output path as a likely typo", async () => {
    server.answer({ text: typoDraft }, { text: typoRepaired });
    const result = await draftPolicy({ ...(await inputs()), provider: provider() });
    expect(result.rounds).toBe(2);
    const problems = lastUserMessage(1);
    expect(problems).toContain("V1101: the action `lookup_ordr` does not occur in the trace, so it matches no event: probably a typo of `lookup_order`");
    expect(problems).toContain("no output of `refund` has `output.amout`, so the condition is false on them: probably a typo of `output.amount`");
    expect(result.rules.map((rule) => rule.name)).toEqual(["looked_up", "at_most_500"]);
    expect(result.reviews).toEqual([]);
  });

  it("takes out what still fails after the last round, and says so", async () => {
    server.answer({ text: unseenUnnamedDraft });
    const result = await draftPolicy({ ...(await inputs()), provider: provider(), maxRepairs: 0 });
    expect(result.rules.map((rule) => rule.name)).toEqual(["at_most_500"]);
    expect(result.rejected).toHaveLength(1);
    expect(result.rejected[0]).toMatchObject({ name: "support.no_closing", source: "SKILL.md:12" });
    expect(result.rejected[0]!.problems.join("\n")).toContain("the lines the prohibition cites (SKILL.md:12) do not name it");
  });
});

describe("names the specification names", () => {
  it("splits a name into words at _, -, dots and camelCase", () => {
    expect(wordsOf("book_reservation")).toEqual(["book", "reservation"]);
    expect(wordsOf("bookReservation")).toEqual(["book", "reservation"]);
    expect(wordsOf("HTTPRequest.max-size")).toEqual(["http", "request", "max", "size"]);
  });

  it("is named by its whole text, or by each of its words (a plural s aside), case-insensitively", () => {
    const line = "- Passengers: Each reservation can have at most five passengers.";
    expect(namedIn("passengers", line)).toBe(true);
    expect(namedIn("passenger", line)).toBe(true);
    expect(namedIn("reservation_passengers", line)).toBe(true);
    expect(namedIn("passenger_count", line)).toBe(false);
    expect(namedIn("close_account", "Never close an account (`close_account`).")).toBe(true);
    expect(namedIn("closeAccount", "Never close an account.")).toBe(true);
    expect(namedIn("terminate_account", "Never close an account.")).toBe(false);
    expect(namedIn("_", "anything _ at all")).toBe(false);
  });
});

describe.skipIf(!existsSync(tauFile))("the request for the τ-bench airline runs, with their messages", () => {
  it("gives each action its keys, types and values, the outputs' paths, and the message events, in a bounded size", { timeout: 60_000 }, async () => {
    const reading = await readSpecifications([join(tauFile, "../airline-policy.md")], { cwd: skill });
    expect(reading.errors).toEqual([]);
    const { signature, vocabulary } = await readRunsVocabulary([tauFile]);
    expect(vocabulary.runs).toBe(200);
    expect(vocabulary.messages).toBe(true);
    const request = draftMessages({ sources: reading.sources, signature, vocabulary, policyName: "airline" });
    const content = request.messages[0]!.content;
    expect(content).toContain("\nbook_reservation: 53 events; 53 outputs, 23 JSON objects\n");
    expect(content).toMatch(/\n {2}- passengers: list of object \(up to \d+\)\n {2}- passengers\.dob: string; /);
    expect(content).toContain("\n  - payment_methods.payment_id: string; ");
    expect(content).toContain("\n  - output.reservation_id: string; ");
    expect(content).toMatch(/\nuser_message: \d+ events, what the user said \(a message of the conversation: no status, no output\)\n {2}- text: string; /);
    expect(content).toMatch(/\nagent_message: \d+ events, what the agent said/);
    // A key is listed under the actions that have it, not globally: `payment_id` is the updates'.
    const booking = content.slice(content.indexOf("\nbook_reservation:"), content.indexOf("\ncalculate:"));
    expect(booking).not.toMatch(/\n {2}- payment_id:/);
    expect(content.slice(content.indexOf("\nupdate_reservation_baggages:"))).toMatch(/\n {2}- payment_id: string; /);
    expect(request.system).toContain("`user_message` (what the user said)");
    // Bounded: the specification and the vocabulary of 200 runs and 4,034 events in under 30,000 characters.
    expect(content.length).toBeLessThan(30_000);
  });
});
