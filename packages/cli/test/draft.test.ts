import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ModelServer } from "../../../test/support/model-server.js";
import { brokenDraft, repairedDraft } from "../../draft/test/fixtures/answers.js";
import { conversationDraft, unseenNamedDraft } from "../../draft/test/fixtures/support-answers.js";
import { runCli } from "./support/run-cli.js";

/**
 * `vigilc draft` as a user runs it, against a model endpoint on 127.0.0.1: without a key it says
 * what to set; with one it writes a policy that `vigilc check` accepts and a report, and the same
 * draft asked for again comes from the cache with no request.
 */

const skill = resolve(import.meta.dirname, "../../draft/test/fixtures/release-skill");
let server: ModelServer;
let scratch: string;
/** No key from the machine's own environment reaches these runs. */
const noKeys = { ANTHROPIC_API_KEY: "", OPENAI_API_KEY: "", ANTHROPIC_BASE_URL: "", OPENAI_BASE_URL: "" };

beforeAll(async () => {
  server = await ModelServer.start();
  scratch = mkdtempSync(join(tmpdir(), "vigilc-draft-"));
});
afterAll(async () => {
  await server?.close();
  rmSync(scratch, { recursive: true, force: true });
});

describe("vigilc draft", () => {
  it("without a key, exits 2 naming the variables to set", async () => {
    const result = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl"], { cwd: skill, env: { ...noKeys, VIGIL_CACHE_DIR: scratch } });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("ANTHROPIC_API_KEY");
    expect(result.stderr).toContain("OPENAI_API_KEY");
    expect(result.stdout).toBe("");
  });

  it("drafts a policy that passes the checks, reports where each rule came from, and drafts it again from the cache", async () => {
    const env = { ...noKeys, ANTHROPIC_API_KEY: "sk-test-cli", ANTHROPIC_BASE_URL: server.url, VIGIL_CACHE_DIR: join(scratch, "cache") };
    const output = join(scratch, "release.vigil");
    const report = join(scratch, "report.json");
    server.answer({ text: repairedDraft });
    const first = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "-o", output, "--report", report, "--model", "test-model"], { cwd: skill, env });
    expect(first.code, first.stderr).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(first.stderr).toContain("4 rules drafted in 1 answer; 1 requirement the model could not write");
    expect(first.stderr).toContain("✓ release.bump_before_publish ← checklist.md:3: The version must be bumped");
    expect(first.stderr).toContain("✗ SKILL.md:13: Make sure the changelog reads well before you publish. — not written: whether prose reads well");
    expect(first.stderr).not.toContain("sk-test-cli");
    const policy = readFileSync(output, "utf8");
    // And a test file of the draft's verdict on the run given, which vigilc test runs.
    expect(first.stderr).toContain("wrote ");
    const tests = readFileSync(join(scratch, "release.vigiltest"), "utf8");
    expect(tests).toContain(`policy "release.vigil"`);
    expect(tests).toContain(`test "run.jsonl" {\n  trace "${relative(scratch, join(skill, "run.jsonl"))}"\n  expect all hold\n}`);
    const tested = await runCli(["test", join(scratch, "release.vigiltest")], { cwd: skill });
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    expect(policy).toMatch(/^\/\/ Drafted by `vigilc draft` \(anthropic test-model, prompt vigil-draft-3\) from SKILL.md, in the vocabulary of run.jsonl\./);
    expect(policy).toContain("/// source: SKILL.md:10");
    // The policy is a policy: vigilc checks the run with it (every rule holds on it).
    const checked = await runCli(["check", output, "--trace", "run.jsonl"], { cwd: skill });
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const json = JSON.parse(readFileSync(report, "utf8"));
    expect(json).toMatchObject({ cached: false, provider: "anthropic", model: "test-model", rounds: 1 });
    expect(json.rules).toHaveLength(4);
    expect(json.unsupported[0].source).toBe("SKILL.md:13");

    // The same draft again: from the cache, no request.
    const second = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--model", "test-model"], { cwd: skill, env });
    expect(second.code, second.stderr).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(second.stderr).toContain("taken from the cache");
    expect(second.stdout).toBe(policy);
    // A glob naming the same run is the same vocabulary: the same draft.
    const globbed = await runCli(["draft", "SKILL.md", "--trace", "*.jsonl", "--model", "test-model"], { cwd: skill, env });
    expect(globbed.code, globbed.stderr).toBe(0);
    expect(globbed.stderr).toContain("taken from the cache");
    expect(server.requests).toHaveLength(1);
    // --explain: each rule beside its text and its meaning, and the analysis of the draft (from the cache).
    const explained = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--model", "test-model", "--explain"], { cwd: skill, env });
    expect(explained.code, explained.stderr).toBe(0);
    expect(server.requests).toHaveLength(1);
    expect(explained.stderr).toContain("  release.bump_before_publish (checklist.md:3)\n    the specification says:\n      - The version must be bumped (`bump_version`) before `publish`.\n    the rule:\n      rule bump_before_publish: prec(action in {publish}, action in {bump_version})\n    what it means:\n      `prec` holds when every event matching ψ has an earlier event matching ψ' (precedence).");
    expect(explained.stderr).toContain("response `block` (the default)");
    // The sample runs never push with force: the prohibition is expected not to fire on them, which is a note, not a finding.
    expect(explained.stderr).toMatch(/analysis \(runs of up to 5 events, under the signature\): 1 note\n/);
    expect(explained.stderr).toContain("rule `release.no_force_push_main` prohibits what no sample run does (as a prohibition should)");
    expect(explained.stderr).not.toContain("never fires");
    // --no-cache asks again; another vocabulary is another draft.
    server.answer({ text: repairedDraft }, { text: repairedDraft });
    expect((await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--model", "test-model", "--no-cache"], { cwd: skill, env })).code).toBe(0);
    expect(server.requests).toHaveLength(2);
    expect((await runCli(["draft", "SKILL.md", "--model", "test-model"], { cwd: skill, env })).code).toBe(0);
    expect(server.requests).toHaveLength(3);
    // A kept draft edited on disk so that a rule cites no line of the specification is not used: the model is asked again.
    const kept = join(scratch, "cache", "drafts");
    for (const file of readdirSync(kept).filter((name) => name.endsWith(".json"))) {
      writeFileSync(join(kept, file), readFileSync(join(kept, file), "utf8").replaceAll("source: checklist.md:3", "source: checklist.md:999"));
    }
    server.answer({ text: repairedDraft });
    const poisoned = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--model", "test-model"], { cwd: skill, env });
    expect(poisoned.code, poisoned.stderr).toBe(0);
    expect(poisoned.stderr).toContain("note: the cached draft no longer passes the checks (rule `bump_before_publish` cites `checklist.md:999`, which is not a line of the specification); asking again");
    expect(server.requests).toHaveLength(4);
    expect(poisoned.stdout).toBe(policy);
  });

  it("with no key: prints the request a model would be sent, and checks a model's answer saved in a file", async () => {
    const env = { ...noKeys, VIGIL_CACHE_DIR: join(scratch, "offline") };
    const before = server.requests.length;
    const shown = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--show-request"], { cwd: skill, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^<!-- the request vigilc draft sends: 2 messages; answers of up to 16000 tokens -->\n\n=== system ===\n\nYou turn the behavioural requirements/);
    expect(shown.stdout).toContain("The Vigil language reference:");
    expect(shown.stdout).toContain("\n=== user ===\n\nThe specification, each line prefixed with its citation");
    expect(shown.stdout).toContain("checklist.md:3| ");
    // The vocabulary, per action: each action's events, and its keys with their types and values.
    expect(shown.stdout).toContain('bump_version: 1 event; no output\n  - part: string; "minor"\ngit_push: 1 event; no output\n  - branch: string; "main"\n  - force: boolean; false\n');
    expect(shown.stdout).toContain("Draft the policy `release_skill`.");
    // The answer a chat gave to that request, saved: checked like any answer, with no repair round.
    writeFileSync(join(scratch, "answer.md"), repairedDraft);
    const answered = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--answer", join(scratch, "answer.md")], { cwd: skill, env });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stderr).toContain("answer 1: passes every check");
    expect(answered.stdout).toMatch(/^\/\/ Drafted by `vigilc draft` \(the answer in \/.*answer\.md, prompt vigil-draft-3\) from SKILL.md/);
    expect(answered.stdout).toContain("rule bump_before_publish");
    // A broken answer: its problems are not sent anywhere; the rules that fail are taken out, and said.
    writeFileSync(join(scratch, "broken.md"), brokenDraft);
    const broken = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--answer", join(scratch, "broken.md")], { cwd: skill, env });
    expect(broken.code, broken.stderr).toBe(0);
    expect(broken.stderr).toMatch(/answer 1: \d+ problems\n/);
    expect(broken.stderr).not.toContain("sent back");
    expect(broken.stdout).not.toContain("tests_before_tag");
    expect(broken.stdout).toContain("rule bump_before_publish");
    expect(broken.stderr).toContain("tests_before_tag");
    expect(server.requests.length).toBe(before);
    // Without a key or an answer: the variables to set, and the way without a key.
    const none = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl"], { cwd: skill, env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain("or, with no key, print the request with --show-request and check a model's saved answer with --answer FILE");
    const conflicting = await runCli(["draft", "SKILL.md", "--answer", join(scratch, "answer.md"), "--model", "m"], { cwd: skill, env });
    expect(conflicting.code).toBe(2);
    expect(conflicting.stderr).toContain("--answer checks an answer saved in a file: --model does not apply");
    const missing = await runCli(["draft", "SKILL.md", "--answer", "no-such-answer.md"], { cwd: skill, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("no-such-answer.md");
  });

  it("drafts in the vocabulary of the runs' conversations (--messages, the default when they carry them), and marks names kept for review", async () => {
    const support = resolve(import.meta.dirname, "../../draft/test/fixtures/support-skill");
    const env = { ...noKeys, VIGIL_CACHE_DIR: join(scratch, "conversations") };
    // The runs carry their conversations: the messages are in the vocabulary, and the command says so.
    const shown = await runCli(["draft", "SKILL.md", "--trace", "runs.json", "--show-request"], { cwd: support, env });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stderr).toContain("note: the runs carry their conversations: `agent_message` and `user_message` are in the vocabulary, and a policy naming them is checked with --messages (--no-messages leaves them out)");
    expect(shown.stdout).toContain("\nuser_message: 4 events, what the user said (a message of the conversation: no status, no output)\n");
    expect(shown.stdout).toContain("`user_message` (what the user said) and `agent_message` (what the agent said)");
    const asked = await runCli(["draft", "SKILL.md", "--trace", "runs.json", "--messages", "--show-request"], { cwd: support, env });
    expect(asked.code, asked.stderr).toBe(0);
    expect(asked.stdout).toBe(shown.stdout);
    expect(asked.stderr).not.toContain("note:");
    const without = await runCli(["draft", "SKILL.md", "--trace", "runs.json", "--no-messages", "--show-request"], { cwd: support, env });
    expect(without.code, without.stderr).toBe(0);
    expect(without.stdout).not.toContain("user_message");
    expect(without.stdout).toContain("\nrefund: 2 events; 2 outputs, all JSON objects\n");
    // Runs without messages, and --messages without runs.
    const canonical = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--messages", "--show-request"], { cwd: skill, env });
    expect(canonical.code, canonical.stderr).toBe(0);
    expect(canonical.stderr).toContain("note: --messages: the runs carry no message of a conversation");
    const alone = await runCli(["draft", "SKILL.md", "--messages", "--show-request"], { cwd: skill, env });
    expect(alone.code).toBe(2);
    expect(alone.stderr).toContain("error: --messages goes with --trace");

    // A policy about the conversation: said in its header, and judged with the messages in its test file.
    writeFileSync(join(scratch, "conversation.md"), conversationDraft);
    const output = join(scratch, "support.vigil");
    const drafted = await runCli(["draft", "SKILL.md", "--trace", "runs.json", "--answer", join(scratch, "conversation.md"), "-o", output], { cwd: support, env });
    expect(drafted.code, drafted.stderr).toBe(0);
    const policy = readFileSync(output, "utf8");
    expect(policy).toContain("// It names the conversation's messages (`user_message`): check runs with it using --messages.\n");
    expect(policy).toContain("action in {user_message} and text contains $o");
    const tests = readFileSync(join(scratch, "support.vigiltest"), "utf8");
    expect(tests).toContain(`test "runs.json#task 1 trial 0" {\n  trace "${relative(scratch, join(support, "runs.json"))}" run "task 1 trial 0" messages\n  expect all hold\n}`);
    const tested = await runCli(["test", join(scratch, "support.vigiltest")], { cwd: support });
    expect(tested.code, tested.stdout + tested.stderr).toBe(0);
    for (const run of ["task 1 trial 0", "task 2 trial 0"]) {
      const checked = await runCli(["check", output, "--trace", "runs.json", "--run", run, "--messages"], { cwd: support });
      expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    }

    // A prohibition of an action no run shows, which its line names: kept, with a review line and a line of the report.
    writeFileSync(join(scratch, "unseen.md"), unseenNamedDraft);
    const report = join(scratch, "unseen.json");
    const reviewed = await runCli(["draft", "SKILL.md", "--trace", "runs.json", "--answer", join(scratch, "unseen.md"), "--report", report], { cwd: support, env });
    expect(reviewed.code, reviewed.stderr).toBe(0);
    expect(reviewed.stderr).toContain("2 rules drafted in 1 answer; 1 requirement the model could not write; 1 name no run shows kept for review\n");
    expect(reviewed.stderr).toContain("  ? support.no_closing (SKILL.md:12) kept for review: no run shows the action `close_account`; kept because SKILL.md:12 names it");
    expect(reviewed.stdout).toContain("// 1 name no run shows is kept where the specification names it: see the `/// review:` lines.\n");
    expect(reviewed.stdout).toContain("  /// source: SKILL.md:12\n  /// review: no run shows the action `close_account`;");
    expect(reviewed.stdout).not.toContain("--messages");
    expect(JSON.parse(readFileSync(report, "utf8"))).toMatchObject({ messages: true, reviews: [{ name: "support.no_closing", source: "SKILL.md:12" }] });
  });

  it("says what is wrong with its input", async () => {
    const env = { ...noKeys, OPENAI_API_KEY: "sk-x", OPENAI_BASE_URL: `${server.url}/v1`, VIGIL_CACHE_DIR: scratch };
    const missing = await runCli(["draft", "NOPE.md"], { cwd: skill, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("error: NOPE.md: cannot be read (ENOENT)");
    const section = await runCli(["draft", "SKILL.md#No such heading"], { cwd: skill, env });
    expect(section.code).toBe(2);
    expect(section.stderr).toContain("error: SKILL.md: no heading `No such heading`");
    const both = await runCli(["draft", "SKILL.md", "--trace", "run.jsonl", "--schema", "run.jsonl"], { cwd: skill, env });
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("give --trace or --schema, not both");
    const repairs = await runCli(["draft", "SKILL.md", "--max-repairs", "99"], { cwd: skill, env });
    expect(repairs.code).toBe(2);
    expect(repairs.stderr).toContain("argument '99' is invalid. must be a count from 0 to 10");
    expect(repairs.stderr).not.toContain("internal error");
    server.answer({ status: 500 }, { status: 500 }, { status: 500 });
    const failing = await runCli(["draft", "SKILL.md", "--timeout", "20"], { cwd: skill, env });
    expect(failing.code).toBe(2);
    expect(failing.stderr).toMatch(/error: the model gave no draft: the endpoint answered 500/);
  });

  it("--from-incident drafts a guardrail the monitor would have used to refuse the run's call, letting the benign runs through", async () => {
    const dashcam = resolve(import.meta.dirname, "../../../examples/dashcam");
    const env = { ...noKeys, OPENAI_API_KEY: "sk-i", OPENAI_BASE_URL: `${server.url}/v1`, VIGIL_CACHE_DIR: scratch };
    const answer = (rule: string) => `\`\`\`vigil\npolicy guardrails {\n  /// Never warp with a transform not validated first.\n  rule guard_R3: ${rule}\n}\n\`\`\``;
    server.answer({ text: answer("abs(action in {warpAffine})") }, { text: answer("prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)") });
    const before = server.requests.length;
    const result = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--model", "test-model"], { cwd: dashcam, env });
    expect(result.code, result.stderr).toBe(0);
    expect(server.requests.length - before).toBe(2);
    expect(result.stderr).toContain("answer 1: 1 problem, sent back");
    expect(result.stderr).toContain("guardrails.guard_R3 refuses event 5 (`warpAffine`) of violating.jsonl before it runs (dashcam.R3 was broken at event 5), and lets 1 benign run through (8 events)");
    expect(result.stdout).toMatch(/^\/\/ A guardrail drafted by `vigilc draft --from-incident` \(openai test-model\) after violating.jsonl broke dashcam.R3\./);
    // The same guardrail again: from the cache, replayed again, no request.
    const again = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--model", "test-model"], { cwd: dashcam, env });
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests.length - before).toBe(2);
    expect(again.stderr).toContain("taken from the cache");
    expect(again.stdout).toBe(result.stdout);
    // A kept guardrail that no longer passes (here, edited on disk) is not used: the model is asked again.
    const keptFiles = readdirSync(join(scratch, "drafts")).filter((file) => file.endsWith(".json"));
    for (const file of keptFiles) {
      const path = join(scratch, "drafts", file);
      const kept = JSON.parse(readFileSync(path, "utf8"));
      if (kept.guardrail === undefined) continue;
      kept.guardrail.policy = "policy guardrails {\n  rule guard_R3: abs(action in {warpAffine})\n}\n";
      writeFileSync(path, JSON.stringify(kept));
    }
    server.answer({ text: answer("prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)") });
    const poisoned = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--model", "test-model"], { cwd: dashcam, env });
    expect(poisoned.code, poisoned.stderr).toBe(0);
    expect(poisoned.stderr).toMatch(/note: the cached guardrail no longer passes the checks \(the rule refuses event \d+ \(`warpAffine`\) of the benign run benign.jsonl/);
    expect(server.requests.length - before).toBe(3);
    expect(poisoned.stdout).toBe(result.stdout);
    // With no key: the request for the guardrail, and an answer saved in a file, checked by replaying the runs.
    const offline = { ...noKeys, VIGIL_CACHE_DIR: scratch };
    const shown = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--show-request"], { cwd: dashcam, env: offline });
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("=== system ===\n\nAn AI agent's run broke a rule of its Vigil policy");
    expect(shown.stdout).toContain("The run `violating.jsonl` broke it at event 5.");
    writeFileSync(join(scratch, "guardrail-answer.md"), answer("prec(action in {warpAffine} and transform = $x, action in {validate_output} and target = $x)"));
    const answered = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--answer", join(scratch, "guardrail-answer.md")], { cwd: dashcam, env: offline });
    expect(answered.code, answered.stderr).toBe(0);
    expect(answered.stderr).toContain("guardrails.guard_R3 refuses event 5 (`warpAffine`) of violating.jsonl before it runs");
    expect(answered.stdout).toMatch(/^\/\/ A guardrail drafted by `vigilc draft --from-incident` \(the answer in \/.*guardrail-answer\.md\) after violating.jsonl broke dashcam.R3\./);
    writeFileSync(join(scratch, "guardrail-answer.md"), answer("abs(action in {warpAffine})"));
    const refusing = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl", "--rule", "R3", "--trace", "benign.jsonl", "--answer", join(scratch, "guardrail-answer.md")], { cwd: dashcam, env: offline });
    expect(refusing.code).toBe(2);
    expect(refusing.stderr).toContain("no guardrail passed the checks in 1 answer: the rule refuses event");
    expect(server.requests.length - before).toBe(3);
    const missing = await runCli(["draft", "dashcam.vigil", "--from-incident", "violating.jsonl"], { cwd: dashcam, env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain("a guardrail needs --from-incident RUN, --rule R");
    const holds = await runCli(["draft", "dashcam.vigil", "--from-incident", "benign.jsonl", "--rule", "R3"], { cwd: dashcam, env });
    expect(holds.code).toBe(2);
    expect(holds.stderr).toContain("rule `dashcam.R3` holds on benign.jsonl: there is no incident to guard against");
  });
});
