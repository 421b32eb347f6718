import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, realpathSync, rmSync, symlinkSync, mkdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type DocCommand, documentedCommands, missingLines, placeOf } from "./support/doc-commands.js";

/**
 * Every `vigilc` command README.md and docs/*.md show is run with the built CLI (packages/cli/dist,
 * as `npm test` builds it), or is listed below as illustrative with the reason. A command that is
 * run must not crash (exit 0 or 1, or the exit code the text shows; no stack trace, no `internal
 * error`), and the output lines the text shows must appear in its output (whitespace normalised,
 * `…` elisions allowed). How commands and their shown output are found: test/support/doc-commands.ts.
 *
 * Commands run from a scratch copy of the repository root (its entries linked, and `../shared`
 * when it exists, as the docs' `../shared/data/…` paths expect), so the files they write
 * (`--html banking.html`, `-o events.parquet`) land there, not in the checkout.
 */

const root = join(import.meta.dirname, "..");
const cli = join(root, "packages/cli/dist/main.js");
const HANG_MS = 60_000;

/** Commands not run, by reason; the first rule whose pattern matches the command as shown wins. */
const ILLUSTRATIVE: { reason: string; pattern: RegExp }[] = [
  { reason: "reads a recording piped in from a running agent (Claude Code)", pattern: /--trace -(\s|$)/ },
  { reason: "starts a long-running server or proxy (serve, egress, mcp-gateway, lsp)", pattern: /^vigilc (serve|egress|mcp-gateway|lsp)\b/ },
  { reason: "runs an agent in the sandbox or is Claude Code's hook (run, hook): needs Claude Code, bubblewrap or a running sidecar", pattern: /^vigilc (run|hook)\b/ },
  { reason: "needs a model key (draft without a recorded --answer)", pattern: /^vigilc draft\b(?!.*--answer)/ },
  {
    reason: "synopsis with placeholders (FILE, POLICY, TRACE, DB, …, [options], a|b)",
    pattern: /\s(?:[A-Z][A-Z_]+(?:\.\w+)?\b|\S*…|\S*\.\.\.|\[|<)/,
  },
  {
    reason: "names files the repository does not have (a user's policy.vigil, runs/, policies/, an audit database, old.vigil/new.vigil)",
    pattern: /(?:^|\s)(?:policy\.vigil|stricter\.vigil|old\.vigil|new\.vigil|runs\/|'runs\/|policies\/|\.vigil\/audit\.db|~\/\.claude\/)/,
  },
];

/** Commands that fail because of a bug in vigilc (not in the doc): `it.fails`, with the bug named. */
const KNOWN_PRODUCT_BUGS: Record<string, string> = {};

interface Outcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  hung: boolean;
}

const commands = documentedCommands(root);
const reasonOf = (command: DocCommand): string | undefined => ILLUSTRATIVE.find((rule) => rule.pattern.test(command.shown))?.reason;
const toRun = commands.filter((command) => reasonOf(command) === undefined);
const keyOf = (command: DocCommand): string => `${command.file}:${command.line}`;
const outcomes = new Map<string, Outcome>();
let scratch = "";

function run(cwd: string, args: string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, env: { ...process.env, NO_COLOR: "1", VIGIL_DEBUG: "" }, stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let hung = false;
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, HANG_MS);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr, hung });
    });
  });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "vigil-docs-"));
  const main = join(scratch, "main");
  mkdirSync(main);
  for (const entry of readdirSync(root)) symlinkSync(join(root, entry), join(main, entry));
  const shared = join(root, "../shared");
  if (existsSync(shared)) symlinkSync(realpathSync(shared), join(scratch, "shared"));
  // Two at a time, on a machine of two cores.
  const queue = [...toRun];
  const worker = async (): Promise<void> => {
    for (let command = queue.shift(); command !== undefined; command = queue.shift()) {
      const place = placeOf(root, command);
      outcomes.set(keyOf(command), await run(join(main, place.cwd), place.args));
    }
  };
  await Promise.all([worker(), worker()]);
}, 10 * HANG_MS);

afterAll(() => {
  if (scratch !== "") rmSync(scratch, { recursive: true, force: true });
  const byReason = new Map<string, number>();
  for (const command of commands) {
    const reason = reasonOf(command);
    if (reason !== undefined) byReason.set(reason, (byReason.get(reason) ?? 0) + 1);
  }
  const lines = [
    `documented vigilc commands: ${commands.length} found in README.md and docs/*.md`,
    `  run: ${toRun.length}; output checked: ${toRun.filter((c) => c.output !== undefined || c.expectedExit !== undefined).length}`,
    `  illustrative, not run: ${commands.length - toRun.length}`,
    ...[...byReason].map(([reason, count]) => `    ${count} × ${reason}`),
  ];
  console.log(lines.join("\n"));
});

it("finds the documented commands, and every illustrative rule still matches one", () => {
  expect(commands.length).toBeGreaterThan(50);
  expect(toRun.length).toBeGreaterThan(5);
  const unused = ILLUSTRATIVE.filter((rule) => !commands.some((command) => reasonOf(command) === rule.reason)).map((rule) => rule.reason);
  expect(unused).toEqual([]);
});

describe.each(toRun.map((command) => [`${keyOf(command)} ${command.shown}`, command] as const))("%s", (_name, command) => {
  const bug = KNOWN_PRODUCT_BUGS[keyOf(command)];
  const test = bug === undefined ? it : it.fails;
  test(bug === undefined ? "runs as the text shows" : `runs as the text shows (known product bug: ${bug})`, () => {
    const outcome = outcomes.get(keyOf(command))!;
    const where = `${keyOf(command)} (run in ${placeOf(root, command).cwd}: vigilc ${placeOf(root, command).args.join(" ")})\nstderr:\n${outcome.stderr.slice(0, 2000)}`;
    expect(outcome.hung, `hung for ${HANG_MS / 1000} s: ${where}`).toBe(false);
    expect(outcome.stderr, `crashed: ${where}`).not.toMatch(/internal error|\n\s+at .+:\d+:\d+\)?\n/);
    if (command.expectedExit !== undefined) expect(outcome.code, `exit code: ${where}`).toBe(command.expectedExit);
    else expect([0, 1], `exit code ${outcome.code}: ${where}`).toContain(outcome.code);
    if (command.output !== undefined) {
      const missing = missingLines(command.output.lines, outcome.stdout, outcome.stderr);
      expect(missing, `lines shown at ${command.file}:${command.output.line} not in the output of ${where}\nstdout:\n${outcome.stdout.slice(0, 4000)}`).toEqual([]);
    }
  });
});
