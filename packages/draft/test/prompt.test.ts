import { compile } from "@vigil/compiler";
import { describe, expect, it } from "vitest";
import { draftMessages, guardrailSystemPrompt, languageReference, systemPrompt } from "../src/index.js";

/**
 * What a model is taught of the language (`vigilc draft --show-request`): the reference it is sent
 * includes comparisons, every/some, count and how a condition reads a list, each with an example,
 * and the instructions name bounds on arguments among the requirements to write.
 */

describe("the draft request's language reference", () => {
  const reference = languageReference();
  /** The reference with its line breaks as spaces: the phrases below do not depend on how docs/language.md is wrapped. */
  const text = reference.replace(/\s+/g, " ");

  it("teaches comparisons, with the rule for strings that spell numbers", () => {
    expect(text).toContain("`amount > 100` holds when a value under `amount` is a number greater than 100");
    expect(text).toContain("A string that spells a JSON number exactly counts as that number");
  });

  it("teaches every(KEY), some(KEY) and count(KEY), each with an example", () => {
    expect(text).toContain("`every(KEY) COND` holds when the key has a value and every value under it meets COND: `every(to) ~ \"*@acme.com\"`");
    expect(text).toContain("`some(KEY) COND` is the plain condition, written out");
    expect(text).toContain("`count(KEY) <= 5` compares the number of values under the key");
    expect(text).toContain("abs(action in {book_reservation} and count(passengers) > 5)");
  });

  it("teaches that a plain condition on a list holds when some element meets it", () => {
    expect(text).toContain("A condition on a key whose value is a list holds when some element meets it");
    expect(text).toContain('So "some recipient is external" is `not every(to) ~ "*@acme.com"`');
  });

  it("is what a draft and a guardrail are sent, with bounds on arguments among the requirements", () => {
    const { system } = draftMessages({ sources: [], policyName: "p" });
    expect(system).toContain(`The Vigil language reference:\n\n${reference}`);
    expect(system).toContain("a bound on an argument (no refund above 250: a comparison; at most 5 passengers: a count)");
    expect(guardrailSystemPrompt(reference)).toContain("a bound (`amount > 500`) rather than the one amount seen");
  });
});

describe("the instructions on rules about the conversation", () => {
  it("are given only when the runs' messages are in the vocabulary, and each example is a rule the checker accepts", () => {
    expect(systemPrompt("REF", true, false)).not.toContain("user_message");
    const system = systemPrompt("REF", true, true);
    const examples = [...system.matchAll(/`((?:prec|until)\(.*?\))`/g)].map((match) => match[1]!);
    expect(examples).toHaveLength(4);
    expect(examples).toContain("prec(action in {refund} and order_id = $o, action in {user_message} and text contains $o)");
    for (const example of examples) {
      const compiled = compile(`policy p {\n  rule r: ${example}\n}\n`);
      expect(compiled.diagnostics.filter((d) => d.severity === "error"), example).toEqual([]);
    }
  });
});
