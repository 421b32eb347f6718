import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { signatureToJson, type Signature } from "@vigil/compiler";
import { numberedText, type SpecSource } from "./spec.js";
import type { Vocabulary } from "./vocabulary.js";
import { vocabularyText } from "./vocabulary-text.js";

/**
 * What the model is asked, in words: the instructions (with the language reference, the
 * `docs/language.md` users read, up to its diagnostics), the specification with each line's
 * citation, the runs' vocabulary per action (or the tool schemas' signature), how conversation
 * rules are written when the runs carry messages, and, after a draft that failed a check, the problems.
 * `promptVersion` changes whenever these words do, so that cached drafts of other words are not reused.
 */
export const promptVersion = "vigil-draft-3";

/** The language reference given to the model: docs/language.md up to its list of diagnostics. */
export function languageReference(): string {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 6; depth++) {
    const candidate = join(directory, "docs", "language.md");
    if (existsSync(candidate)) {
      const text = readFileSync(candidate, "utf8");
      const end = text.indexOf("\n## Diagnostics");
      return (end > 0 ? text.slice(0, end) : text).trim();
    }
    directory = dirname(directory);
  }
  throw new Error("the language reference (docs/language.md) is not beside the draft package");
}

/**
 * The instructions. `withSignature`: a vocabulary is given (the runs' or the tool schemas'), and it
 * is the closed world; `messages`: the conversation's messages are events of it, and the model is
 * told how a rule about the conversation is written.
 */
export function systemPrompt(reference: string, withSignature: boolean, messages = false): string {
  return `You turn the behavioural requirements of an AI agent's skill into a Vigil policy: rules over the trace of the agent's tool calls, which a deterministic checker then enforces. You only draft; you never decide whether a run is safe.

How to answer:
1. Find each requirement in the specification about the agent's tool calls${messages ? " and its conversation" : ""}: an order (do X before Y), a prohibition (never X; no X after Y), an obligation (after X, do Y), a limit (at most N X, or a total per time), a bound on an argument (no refund above 250: a comparison; at most 5 passengers: a count).
2. Write one rule per requirement. ${withSignature ? "Use only the actions, argument keys, output paths and values of the vocabulary given, each key on an action that has it: it is the closed world of the runs, and any other name matches no event. A prohibition or a limit may name what no run shows (good runs do not do it) only when the lines it cites name it; it is then kept and marked for review." : "No signature is given: use the tool and argument names the specification itself uses."}
3. Directly above each rule, write \`///\` lines: first the requirement in the specification's own words, then a last line \`/// source: NAME:LINE\` (or \`NAME:FIRST-LAST\`) citing where it is, as the specification's lines are numbered below.
4. A requirement that cannot be written over the ${withSignature ? "vocabulary" : "tool calls"} (it needs an action or argument the calls do not show, or a judgement no trace records) gets no rule: list it in the unsupported block as \`- NAME:LINE: the requirement — why it cannot be checked\`.
5. Answer with exactly one \`\`\`vigil block holding one policy, then one \`\`\`unsupported block (empty when every requirement has a rule). Nothing outside them is read.
${messages ? `\n${conversationRules}\n` : ""}
The Vigil language reference:

${reference}`;
}

/** How a rule about the conversation is written, for runs whose messages are events. */
const conversationRules = `The conversation's messages are events too, in their place among the calls: \`user_message\` (what the user said) and \`agent_message\` (what the agent said), each with its whole text as the argument \`text\`, no status, no output. A requirement about the conversation is a rule over them:
- the user's confirmation before an action: \`prec(action in {cancel_order}, action in {user_message} and text matches /\\byes\\b/i)\`;
- a value that must come from the user's words flows from the message into the call: \`prec(action in {refund} and order_id = $o, action in {user_message} and text contains $o)\`;
- something the agent must say first: \`prec(action in {refund}, action in {agent_message} and text matches /refund policy/i)\`;
- no call while answering the user: \`until(action in {agent_message}, action in {user_message}, not action in {user_message, agent_message})\`.`;

/** The first request: the numbered specification, then the vocabulary (per action for runs; the signature for tool schemas). */
export function draftRequest(sources: readonly SpecSource[], signature: Signature | undefined, policyName: string, vocabulary?: Vocabulary): string {
  const given =
    vocabulary !== undefined
      ? `\n\n${vocabularyText(vocabulary)}`
      : signature !== undefined
        ? `\n\nThe signature Σ of the tool schemas (actions; each argument key with up to 20 of its values):\n\`\`\`json\n${JSON.stringify(signatureToJson(signature), null, 1)}\n\`\`\``
        : "";
  return `The specification, each line prefixed with its citation \`NAME:LINE| \`:\n\n${numberedText(sources)}${given}\n\nDraft the policy \`${policyName}\`.`;
}

export function repairRequest(problems: readonly string[]): string {
  return `The draft does not pass Vigil's checks:\n${problems.map((problem) => `- ${problem}`).join("\n")}\n\nAnswer again with the whole corrected policy in one \`\`\`vigil block, then the \`\`\`unsupported block. A requirement you cannot write correctly goes into the unsupported block, with why.`;
}

/** The instructions for a guardrail after an incident (AIR's eradication), with the language reference. */
export function guardrailSystemPrompt(reference: string): string {
  return `An AI agent's run broke a rule of its Vigil policy: the harm was found after the fact. You write a guardrail: one Vigil rule that an online monitor checks before each tool call runs, which would have refused a call of this run before the harm was done, and which keeps refusing the same harm with other values. A monitor decides a call from the calls before it and the call's own action and arguments; it does not know the call's output or status yet.

How to answer:
1. Write one policy \`guardrails\` holding one rule. Above it, \`///\` lines saying what harm it prevents and why the call is refused.
2. Use only the actions, argument keys and values of the signature given. Prefer a condition on what the call does (its action and arguments, and what came before it) over this run's particular values, so that the rule generalises: a bound (\`amount > 500\`) rather than the one amount seen.
3. The rule must let ordinary runs through: it is checked against benign runs, and a rule that refuses any of their calls is rejected.
4. Answer with exactly one \`\`\`vigil block. Nothing outside it is read.

The Vigil language reference:

${reference}`;
}

export function guardrailRequest(incident: { readonly name: string; readonly events: readonly object[] }, rule: { readonly text: string; readonly witness: number }, signature: Signature | undefined, benignRuns: number): string {
  const shown = incident.events.slice(0, rule.witness);
  const first = Math.max(0, shown.length - 150);
  const lines = shown.slice(first).map((event, index) => `${first + index + 1}| ${JSON.stringify(event)}`);
  const vocabulary = signature === undefined ? "" : `\n\nThe signature Σ of the incident and of ${benignRuns} benign ${benignRuns === 1 ? "run" : "runs"}:\n\`\`\`json\n${JSON.stringify(signatureToJson(signature), null, 1)}\n\`\`\``;
  return `The rule the run broke:\n\`\`\`vigil\n${rule.text}\n\`\`\`\n\nThe run \`${incident.name}\` broke it at event ${rule.witness}. Its events up to there, numbered${first > 0 ? ` (the first ${first} left out)` : ""}:\n${lines.join("\n")}${vocabulary}\n\nWrite the guardrail: a rule that refuses one of these calls, at or before event ${rule.witness}, before it runs.`;
}
