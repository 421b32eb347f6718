import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type CommandOutcome,
  expectRanAsShown,
  HANG_MS,
  keyOf,
  needsSandbox,
  PLACEHOLDERS,
  prepareTemplate,
  root,
  runDocumentation,
} from "./support/doc-command-runs.js";
import { documentedCommands, formsOf } from "./support/doc-commands.js";

/**
 * Every command of `vigilc` and `vigil-language-server` that README.md and docs/*.md show is run,
 * with the built programs (packages/*\/dist, as `npm test` builds them): none is left out. How
 * commands and their shown output are found: test/support/doc-commands.ts; where and how each runs
 * (a scratch copy of the project the docs speak to, made of test/fixtures/docs/; standard input for
 * the hook and for `--trace -`; a model endpoint for `draft`; servers started, asked and stopped):
 * test/support/doc-command-runs.ts.
 *
 * A synopsis (`vigilc check POLICY --trace TRACE [options]`) is run too, in its forms: each
 * placeholder filled from the table PLACEHOLDERS (doc-command-runs.ts), its optional parts left
 * out, each choice between words (`--print-settings | --install`) run; a placeholder the table
 * lacks, or an entry no command uses, fails the first test.
 *
 * A command runs here unless it needs the sandbox (`vigilc run`: bubblewrap, which the heavy tier
 * installs): those run in test/docs-commands-hosts.e2e.test.ts, collected with VIGIL_TIER=all.
 * Each run must not crash (no stack trace, no `internal error`), must exit 0 or 1 or the code the
 * text shows (a server: answer its one request and exit 0 when stopped), and the output lines the
 * text shows must appear in its output (whitespace normalised, `…` elisions allowed).
 *
 * No command is left unrun, and none is run in part: the counts (found, run here, run in the heavy
 * tier, output checked) are printed when the file ends.
 */

/** Commands that fail because of a bug in vigilc (not in the doc): `it.fails`, with the bug named. */
const KNOWN_PRODUCT_BUGS: Record<string, string> = {};

const commands = documentedCommands(root);
const here = commands.filter((command) => !needsSandbox(command));
const inTheHeavyTier = commands.filter(needsSandbox);
/**
 * Every process a command starts is stopped at HANG_MS at the latest (a hang), so every test ends
 * within the sum over the command lines that run, however loaded the machine: a bound, not a budget.
 */
const BOUND_MS = (here.reduce((sum, command) => sum + formsOf(command, PLACEHOLDERS).forms.length, 0) + 8) * 2 * HANG_MS;
let scratch = "";
let outcomes = new Map<string, Promise<CommandOutcome>>();

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-docs-"));
  const template = await prepareTemplate(join(scratch, "template"));
  outcomes = runDocumentation(here, template, scratch);
}, 8 * HANG_MS);

afterAll(async () => {
  // Every command has ended (each is bounded) before its scratch goes.
  await Promise.allSettled(outcomes.values());
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
  const forms = commands.reduce((sum, command) => sum + formsOf(command, PLACEHOLDERS).forms.length, 0);
  console.log(
    [
      `documented commands: ${commands.length} found in README.md and docs/*.md (${forms} command lines, synopses in their forms)`,
      `  run here: ${here.length}; in the heavy tier (docs-commands-hosts.e2e.test.ts, the sandbox): ${inTheHeavyTier.length}; not run: 0`,
      `  output checked: ${commands.filter((c) => c.output !== undefined).length}; exit code shown: ${commands.filter((c) => c.expectedExit !== undefined).length}`,
    ].join("\n"),
  );
}, BOUND_MS);

it("finds the documented commands, and has a value for every placeholder they hold (and no stale one)", () => {
  expect(commands.length).toBeGreaterThan(50);
  const unmapped = commands.flatMap((command) => formsOf(command, PLACEHOLDERS).unmapped.map((word) => `${keyOf(command)}: ${word}`));
  expect(unmapped).toEqual([]);
  const used = new Set(commands.flatMap((command) => formsOf(command, PLACEHOLDERS).used));
  expect(PLACEHOLDERS.filter((placeholder) => !used.has(placeholder)).map((placeholder) => placeholder.shown)).toEqual([]);
});

describe.each(here.map((command) => [`${keyOf(command)} ${command.shown}`, command] as const))("%s", (_name, command) => {
  const bug = KNOWN_PRODUCT_BUGS[keyOf(command)];
  const test = bug === undefined ? it : it.fails;
  test(bug === undefined ? "runs as the text shows" : `runs as the text shows (known product bug: ${bug})`, async () => {
    expectRanAsShown(command, await outcomes.get(keyOf(command))!);
  }, BOUND_MS);
});
