import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CommandOutcome, expectRanAsShown, HANG_MS, keyOf, needsSandbox, prepareTemplate, root, runDocumentation } from "./support/doc-command-runs.js";
import { documentedCommands } from "./support/doc-commands.js";

/**
 * The documented commands that put a program in the sandbox (`vigilc run --policy … -- …`, which
 * needs bubblewrap and socat: scripts/test-hosts.sh installs them for the heavy tier), run as
 * test/docs-commands.test.ts runs the others (test/support/doc-command-runs.ts): in a scratch copy
 * of the project, the agent `sh agent.sh` for the reader's `my-agent …` or `CMD…`. Each must exit
 * as the text shows and say that it ran its command in the sandbox.
 */

const commands = documentedCommands(root).filter(needsSandbox);
let scratch = "";
let outcomes = new Map<string, Promise<CommandOutcome>>();
/** Each process is stopped at HANG_MS at the latest: every test ends within the sum (a bound, not a budget). */
const BOUND_MS = (commands.length + 8) * 2 * HANG_MS;

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-docs-hosts-"));
  outcomes = runDocumentation(commands, await prepareTemplate(join(scratch, "template")), scratch);
}, 8 * HANG_MS);

afterAll(async () => {
  await Promise.allSettled(outcomes.values());
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
}, BOUND_MS);

it("finds the documented commands that need the sandbox", () => {
  expect(commands.map((command) => command.args[0])).toEqual(expect.arrayContaining(["run"]));
});

describe.each(commands.map((command) => [`${keyOf(command)} ${command.shown}`, command] as const))("%s", (_name, command) => {
  it("runs as the text shows, in the sandbox", async () => {
    const outcome = await outcomes.get(keyOf(command))!;
    expectRanAsShown(command, outcome);
    // The agent ran, in the project: it listed it and wrote its notes there.
    for (const form of outcome.forms) expect(form.stdout).toContain("The project has");
  }, BOUND_MS);
});
