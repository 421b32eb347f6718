import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { join } from "node:path";
import { expect } from "vitest";
import { type DocCommand, formsOf, missingLines, type Placeholder, placeOf } from "./doc-commands.js";
import { ModelServer } from "./model-server.js";
import { freePort } from "./ports.js";

/**
 * How the documentation's commands are run (test/docs-commands.test.ts, and
 * test/docs-commands-hosts.e2e.test.ts for those that need the sandbox): each in a scratch copy of
 * the project the documentation speaks to, as the reader would run it there.
 *
 * The project is test/fixtures/docs/project: the files the docs name as the reader's own
 * (`policy.vigil`, `stricter.vigil`, `old.vigil` and `new.vigil`, `runs/`, `policies/`,
 * `.claude/policy.vigil`, a `SKILL.md`, tool schemas, an agent and an MCP server to run), beside a
 * link to every entry of the repository root (not `.git`: the scratch is no work tree of the
 * checkout), as the docs' `examples/…` paths expect, and `../shared` when it exists. What the
 * commands read that another program writes is made the way a reader makes it, once, before any
 * command runs: `.vigil/audit.db` by the Claude Code hook answering a short session (HOOK_SESSION),
 * `events.parquet` and `values.parquet` by `vigilc export runs/`, and the deployment of
 * docs/enforcement.md (`/etc/vigil/policy.vigil`, the hook token in `/run/vigil`) under the scratch's
 * `root/`, where every absolute path a command names is taken. `HOME` is the scratch's `home/` (a
 * Claude Code session under `~/.claude/projects/`), and the draft cache is the scratch's.
 *
 * Each documentation file gets its own copy of all this, and its commands run one after another in
 * the order the text gives them (a command may read what one above it wrote: warehouse.md's export,
 * then its check of the exported tables), so that two files' commands never share a file.
 *
 * How a command runs, by what it is:
 * - a synopsis is run in its forms (`formsOf` in doc-commands.ts), each placeholder filled from
 *   PLACEHOLDERS;
 * - `hook claude-code` answering an event gets a PreToolUse event on standard input (an ordinary
 *   `ls` through the Bash tool), its project the scratch's (`CLAUDE_PROJECT_DIR`); with `--server`,
 *   a sidecar (`vigilc serve`) runs for it; `--print-settings` and `--install` run as they are;
 * - `--trace -` gets a Claude Code stream-json recording on standard input (PIPED_TRACE), as the
 *   text's `claude -p … --output-format stream-json | vigilc check policy.vigil --trace -` pipes one;
 * - `draft` without `--show-request` or `--answer` asks a model endpoint on 127.0.0.1 that answers
 *   with a recorded answer (test/fixtures/docs/answers/), through `ANTHROPIC_BASE_URL`: the command
 *   runs as it is shown, the model's HTTP included;
 * - a server (`serve`, `egress`, `mcp-gateway`, `vigil-language-server`) is started, waited for
 *   (its "listening" line, or its answer to the protocol's first request), asked one thing (GET
 *   /v1/health; a proxy request; an MCP initialize and a tools/call; an LSP initialize), and stopped:
 *   SIGTERM, or for the language server the protocol's shutdown and exit; it must then exit 0;
 * - `run` puts its command in the sandbox (bubblewrap): only the heavy tier runs it.
 *
 * Every process is bounded by HANG_MS: a command that has not ended (or a server that has not
 * answered) by then is a hang, never a slow machine's result.
 */

export const root = join(import.meta.dirname, "../..");
const fixtures = join(root, "test/fixtures/docs");
export const HANG_MS = 300_000;

const PROGRAM_FILES: Record<DocCommand["program"], string> = {
  vigilc: join(root, "packages/cli/dist/main.js"),
  "vigil-language-server": join(root, "packages/language-server/bin/vigil-language-server.js"),
};

/** What each placeholder of the docs' synopses and examples is, when run. */
export const PLACEHOLDERS: readonly Placeholder[] = [
  { shown: "POLICY", value: "policy.vigil", why: "the project's policy" },
  { shown: "POLICY…", value: "policy.vigil", why: "the project's policy" },
  { shown: "FILE…", value: "policy.vigil", why: "each FILE a synopsis requires is a policy (`--policy FILE…`, `fmt FILE...`)" },
  { shown: "FILE...", value: "policy.vigil", why: "each FILE a synopsis requires is a policy (`--policy FILE…`, `fmt FILE...`)" },
  { shown: "OTHER", value: "stricter.vigil", why: "another policy, which replay decides the recorded calls with" },
  { shown: "OTHER.vigil", value: "stricter.vigil", why: "another policy, which replay decides the recorded calls with" },
  { shown: "OLD NEW", value: "old.vigil new.vigil", why: "two versions of a policy (the pair docs/cli.md's example compares)" },
  {
    shown: "POLICY --base REF",
    verb: "diff",
    value: "examples/dashcam/dashcam.vigil --base HEAD",
    why: "a policy git knows, against the last commit: the scratch project is no repository",
  },
  { shown: "TRACE", value: "runs/leak.jsonl", why: "a run in canonical JSON Lines, which breaks one rule" },
  { shown: "TRACE…", value: "runs/", why: "the project's runs, a directory of them" },
  { shown: "RUN.jsonl", value: "runs/fix-tests.jsonl", why: "a run of the skill" },
  { shown: "RUN…", value: "runs/", why: "the project's runs" },
  { shown: "GOOD…", value: "runs/", why: "the project's runs" },
  { shown: "RUN", verb: "draft", value: "runs/leak.jsonl", why: "the incident: the run that broke the rule" },
  { shown: "--rule R", verb: "draft", value: "--rule no_egress_after_secret", why: "the rule runs/leak.jsonl breaks" },
  { shown: "SKILL.md", value: "SKILL.md", why: "a skill's file is named so: the project's SKILL.md" },
  { shown: "SPEC…", value: "SKILL.md", why: "the project's skill" },
  { shown: "PATH…", verb: "test", value: "policies/", why: "the project's folder of policies and their tests" },
  { shown: "TOOLS.json", value: "tools.json", why: "an MCP tools/list result" },
  { shown: "EVENTS.parquet", value: "events.parquet", why: "the events table `vigilc export runs/` wrote before the commands ran" },
  { shown: "FILE.jsonl", value: "events.jsonl", why: "the events table export writes" },
  { shown: "DB", value: ".vigil/audit.db", why: "the audit database the hook wrote before the commands ran" },
  { shown: "CODE", value: "V1006", why: "a diagnostic code" },
  { shown: "--port 8765", value: "--port {port}", why: "the machine is shared: a port nothing listens on, not a fixed one" },
  { shown: "--port N", value: "--port {port}", why: "a port nothing listens on" },
  { shown: "--http-port N", value: "--http-port {port}", why: "a port nothing listens on" },
  { shown: "--socks-port M", value: "--socks-port {port}", why: "a port nothing listens on" },
  { shown: "--server URL", verb: "hook", value: "--server {sidecar}", why: "a sidecar, started for the run" },
  { shown: "(with the options above)", verb: "hook", value: "--policy policy.vigil", why: "the hook's options of the lines above: its policy" },
  { shown: "CMD…", verb: "run", value: "sh agent.sh", why: "an agent: the project's agent.sh" },
  { shown: "COMMAND…", verb: "run", value: "sh agent.sh", why: "an agent: the project's agent.sh" },
  { shown: "my-agent …", verb: "run", value: "sh agent.sh", why: "an agent: the project's agent.sh" },
  { shown: "CMD…", verb: "mcp-gateway", value: "node mcp-server.mjs", why: "a stdio MCP server: the project's mcp-server.mjs" },
  { shown: "SERVER COMMAND…", verb: "mcp-gateway", value: "node mcp-server.mjs", why: "a stdio MCP server: the project's mcp-server.mjs" },
  { shown: "npx some-mcp-server …", verb: "mcp-gateway", value: "node mcp-server.mjs", why: "a stdio MCP server: the project's mcp-server.mjs" },
  { shown: "--server-command LINE", verb: "mcp-gateway", value: "--server-command ./mcp-server.sh", why: "the same server, as one command line (a word each value holds: the project's mcp-server.sh runs it)" },
  { shown: "--server-config FILE", verb: "mcp-gateway", value: "--server-config mcp.json", why: "an MCP client's configuration naming the same server (the project's mcp.json)" },
];

/** A Claude Code stream-json recording, as `claude -p "fix the failing test" --output-format stream-json --verbose` prints one. */
const PIPED_TRACE = join(fixtures, "piped/fix-the-failing-test.jsonl");

/** The model's recorded answers: to a draft's request, and to a guardrail's (`--from-incident`). */
const MODEL_ANSWERS = { draft: join(fixtures, "answers/draft.md"), guardrail: join(fixtures, "answers/guardrail.md") };

/** How one form of a command runs. */
export interface Plan {
  /** The words after the program's name, placeholders filled but for `{port}` and `{sidecar}`. */
  readonly args: string[];
  /** Where it runs, relative to the project. */
  readonly cwd: string;
  /** A server: started, asked one thing, stopped. */
  readonly probe?: "health" | "egress" | "mcp" | "lsp";
  /** What goes to standard input. */
  readonly stdin?: "hook event" | "piped trace";
  /** A sidecar runs beside it (`--server {sidecar}`). */
  readonly sidecar?: boolean;
  /** The recorded answer of the model endpoint it asks. */
  readonly model?: string;
  /** It needs the sandbox (bubblewrap): the heavy tier runs it. */
  readonly sandbox?: boolean;
}

/** Whether a command puts a program in the sandbox (`vigilc run`), which only the heavy tier has. */
export function needsSandbox(command: DocCommand): boolean {
  return command.program === "vigilc" && formsOf(command, PLACEHOLDERS).forms.some((form) => form[0] === "run");
}

/** The forms of a command (its placeholders filled, its files found in `project`), each with how it runs. */
export function plansOf(project: string, command: DocCommand): Plan[] {
  return formsOf(command, PLACEHOLDERS).forms.map((form): Plan => {
    const { cwd, args } = placeOf(project, command, form);
    const verb = command.program === "vigilc" ? args[0] : undefined;
    const has = (word: string): boolean => args.includes(word);
    if (command.program === "vigil-language-server") return { args, cwd, probe: "lsp" };
    if (verb === "serve") return { args, cwd, probe: "health" };
    if (verb === "egress") return { args, cwd, probe: "egress" };
    if (verb === "mcp-gateway") return { args, cwd, probe: "mcp" };
    if (verb === "run") return { args, cwd, sandbox: true };
    if (verb === "hook" && !has("--print-settings") && !has("--install")) return { args, cwd, stdin: "hook event", ...(has("{sidecar}") ? { sidecar: true } : {}) };
    if (args.some((word, i) => word === "-" && args[i - 1] === "--trace")) return { args, cwd, stdin: "piped trace" };
    if (verb === "draft" && !has("--show-request") && !has("--answer")) return { args, cwd, model: has("--from-incident") ? MODEL_ANSWERS.guardrail : MODEL_ANSWERS.draft };
    return { args, cwd };
  });
}

/** What one form did. */
export interface FormOutcome {
  readonly plan: Plan;
  /** The words it ran with, every placeholder filled. */
  readonly ran: string[];
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly hung: boolean;
  /** For a server: what it answered the one request (or why it did not), and whether that was what it should be. */
  readonly probe?: { readonly ok: boolean; readonly answer: string };
  /** For a command that asks a model: how many requests the endpoint got. */
  readonly modelRequests?: number;
}

/** A scratch place of one documentation file: its project, home and deployment root. */
export interface Scratch {
  readonly dir: string;
  readonly project: string;
  readonly home: string;
  readonly deployment: string;
}

/** The session the hook answers while the scratch is made: the calls .vigil/audit.db then records. */
function hookSession(project: string): Record<string, unknown>[] {
  const base = { session_id: "docs-session-1", transcript_path: join(project, ".claude/session.jsonl"), cwd: project, permission_mode: "default" };
  const env = join(project, ".env");
  return [
    { ...base, hook_event_name: "UserPromptSubmit", prompt: "What does the project hold, and which key does it use?" },
    { ...base, hook_event_name: "PreToolUse", tool_name: "Bash", tool_input: { command: "ls", description: "List the project" }, tool_use_id: "toolu_docs_1" },
    {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls", description: "List the project" },
      tool_use_id: "toolu_docs_1",
      tool_response: { stdout: "SKILL.md\npolicy.vigil\nruns\n", stderr: "", interrupted: false, isImage: false },
    },
    { ...base, hook_event_name: "PreToolUse", tool_name: "Read", tool_input: { file_path: env }, tool_use_id: "toolu_docs_2" },
    {
      ...base,
      hook_event_name: "PostToolUse",
      tool_name: "Read",
      tool_input: { file_path: env },
      tool_use_id: "toolu_docs_2",
      tool_response: { type: "text", file: { filePath: env, content: "STRIPE_KEY=sk_test_51Hx\n", numLines: 1, startLine: 1, totalLines: 1 } },
    },
    { ...base, hook_event_name: "SessionEnd", reason: "other" },
  ];
}

/** The event a documented `hook claude-code` command answers: an ordinary `ls` through the Bash tool. */
function hookEvent(project: string): string {
  return JSON.stringify({
    session_id: "docs-session-2",
    transcript_path: join(project, ".claude/session.jsonl"),
    cwd: project,
    permission_mode: "default",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls", description: "List the project" },
    tool_use_id: "toolu_docs_3",
  });
}

/** The environment of every run: no key, cache or project of the machine's own. */
function environment(scratch: Scratch): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NO_COLOR: "1",
    VIGIL_DEBUG: "",
    HOME: scratch.home,
    VIGIL_CACHE_DIR: join(scratch.dir, "cache"),
    XDG_CACHE_HOME: join(scratch.dir, "cache"),
    VIGIL_AUDIT_KEY: undefined,
    CLAUDE_PROJECT_DIR: undefined,
    ANTHROPIC_API_KEY: undefined,
    ANTHROPIC_BASE_URL: undefined,
    OPENAI_API_KEY: undefined,
    OPENAI_BASE_URL: undefined,
  };
}

/** Runs a program to its end (or HANG_MS), its input given. */
function runToEnd(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, input?: string): Promise<Omit<FormOutcome, "plan" | "ran">> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file, ...args], { cwd, env, stdio: [input === undefined ? "ignore" : "pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    let hung = false;
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    if (input !== undefined) child.stdin!.end(input);
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

/**
 * Makes the scratch place every documentation file's copy is taken from: the project with the
 * audit database and the exported tables made, the deployment root, the home.
 */
export async function prepareTemplate(dir: string): Promise<Scratch> {
  const scratch: Scratch = { dir, project: join(dir, "project"), home: join(dir, "home"), deployment: join(dir, "root") };
  cpSync(join(fixtures, "project"), scratch.project, { recursive: true });
  cpSync(join(fixtures, "home"), scratch.home, { recursive: true });
  const env = environment(scratch);
  const vigilc = PROGRAM_FILES.vigilc;
  for (const event of hookSession(scratch.project)) {
    const answered = await runToEnd(vigilc, ["hook", "claude-code", "--policy", "policy.vigil"], scratch.project, { ...env, CLAUDE_PROJECT_DIR: scratch.project }, JSON.stringify(event));
    if (answered.code !== 0 || answered.stdout !== "") throw new Error(`the hook did not let ${JSON.stringify(event)} through: exit ${answered.code}\n${answered.stdout}${answered.stderr}`);
  }
  const exported = await runToEnd(vigilc, ["export", "runs/", "-o", "events.parquet", "--values", "values.parquet"], scratch.project, env);
  if (exported.code !== 0) throw new Error(`vigilc export runs/ failed: exit ${exported.code}\n${exported.stderr}`);
  // docs/enforcement.md's deployment, as its `install` and `openssl rand` lines make it.
  mkdirSync(join(scratch.deployment, "etc/vigil"), { recursive: true });
  copyFileSync(join(scratch.project, "policy.vigil"), join(scratch.deployment, "etc/vigil/policy.vigil"));
  mkdirSync(join(scratch.deployment, "var/lib/vigil"), { recursive: true, mode: 0o700 });
  mkdirSync(join(scratch.deployment, "run/vigil"), { recursive: true, mode: 0o750 });
  writeFileSync(join(scratch.deployment, "run/vigil/hook.token"), `${randomBytes(32).toString("hex")}\n`);
  chmodSync(join(scratch.deployment, "run/vigil/hook.token"), 0o640);
  return scratch;
}

/** A documentation file's own copy of the template, with the repository's entries linked into its project. */
export function copyTemplate(template: Scratch, dir: string): Scratch {
  cpSync(template.dir, dir, { recursive: true });
  const scratch: Scratch = { dir, project: join(dir, "project"), home: join(dir, "home"), deployment: join(dir, "root") };
  for (const entry of readdirSync(root)) {
    if (entry === ".git" || existsSync(join(scratch.project, entry))) continue;
    symlinkSync(join(root, entry), join(scratch.project, entry));
  }
  const shared = join(root, "../shared");
  if (existsSync(shared)) symlinkSync(realpathSync(shared), join(dir, "shared"));
  return scratch;
}

/** Runs one form of a documented command in its scratch place. */
export async function runForm(scratch: Scratch, command: DocCommand, plan: Plan): Promise<FormOutcome> {
  const env = environment(scratch);
  const ports: number[] = [];
  let sidecar: { url: string; stop: () => Promise<void> } | undefined;
  let model: ModelServer | undefined;
  try {
    if (plan.sidecar === true) sidecar = await startSidecar(scratch, env);
    const ran: string[] = [];
    for (const word of plan.args) {
      if (word === "{port}") {
        // The two ports of one command (egress's HTTP and SOCKS ports) are two different ones.
        let port = await freePort();
        while (ports.includes(port)) port = await freePort();
        ports.push(port);
        ran.push(String(port));
      } else if (word === "{sidecar}") ran.push(sidecar!.url);
      // The shell's `~`, and the absolute paths of a deployment (`/etc/vigil/…`, `unix:/run/vigil/…`), in the scratch.
      else ran.push(word.replace(/^~\//, `${scratch.home}/`).replace(/^(unix:)?\/(?=etc\/|var\/|run\/)/, `$1${scratch.deployment}/`));
    }
    const cwd = join(scratch.project, plan.cwd);
    const file = PROGRAM_FILES[command.program];
    if (plan.model !== undefined) {
      model = await ModelServer.start();
      model.answer({ text: readFileSync(plan.model, "utf8") });
      env["ANTHROPIC_API_KEY"] = "sk-docs-test";
      env["ANTHROPIC_BASE_URL"] = model.url;
    }
    if (plan.stdin === "hook event") env["CLAUDE_PROJECT_DIR"] = scratch.project;
    if (plan.probe !== undefined) return { plan, ran, ...(await runServer(file, ran, cwd, env, plan.probe)) };
    const input = plan.stdin === "hook event" ? hookEvent(scratch.project) : plan.stdin === "piped trace" ? readFileSync(PIPED_TRACE, "utf8") : undefined;
    const outcome = await runToEnd(file, ran, cwd, env, input);
    // The shell's `> FILE`.
    if (command.redirect !== undefined && !outcome.hung) writeFileSync(join(cwd, command.redirect), outcome.stdout);
    return { plan, ran, ...outcome, ...(model !== undefined ? { modelRequests: model.requests.length } : {}) };
  } finally {
    await sidecar?.stop();
    await model?.close();
  }
}

/** A sidecar on a free port of 127.0.0.1, with the project's policy and database (its token where the hook looks first). */
async function startSidecar(scratch: Scratch, env: NodeJS.ProcessEnv): Promise<{ url: string; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, [PROGRAM_FILES.vigilc, "serve", "--policy", "policy.vigil", "--port", String(port)], { cwd: scratch.project, env, stdio: ["ignore", "pipe", "pipe"] });
  child.stderr.resume();
  const ready = await waitFor(child, /listening on (\S+)/);
  if (ready === undefined) {
    child.kill("SIGKILL");
    throw new Error("the sidecar for `hook claude-code --server` did not start");
  }
  return {
    url: ready[1]!,
    stop: async () => {
      child.kill("SIGTERM");
      await exited(child);
    },
  };
}

/** The first match of `pattern` in the child's standard output, or undefined when it exits or HANG_MS passes first. */
function waitFor(child: ChildProcess, pattern: RegExp): Promise<RegExpExecArray | undefined> {
  return new Promise((resolve) => {
    let seen = "";
    const timer = setTimeout(() => resolve(undefined), HANG_MS);
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      seen += chunk;
      const match = pattern.exec(seen);
      if (match !== null) {
        clearTimeout(timer);
        resolve(match);
      }
    });
    child.once("exit", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
  });
}

/** Waits for the child's exit (SIGKILL after HANG_MS): its code and signal, and whether it had to be killed. */
function exited(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; hung: boolean }> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve({ code: child.exitCode, signal: child.signalCode, hung: false });
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill("SIGKILL");
    }, HANG_MS);
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, hung });
    });
  });
}

/**
 * A server, bounded: started, waited for, asked one thing by its protocol, then stopped (SIGTERM;
 * the language server by the protocol's shutdown and exit) and waited for.
 */
async function runServer(file: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv, probe: NonNullable<Plan["probe"]>): Promise<Omit<FormOutcome, "plan" | "ran">> {
  const child = spawn(process.execPath, [file, ...args], { cwd, env, stdio: ["pipe", "pipe", "pipe"] });
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
  let answer: { ok: boolean; answer: string };
  try {
    answer = await withHangBound(ask(child, args, probe), `no answer within ${HANG_MS / 1000} s`);
  } catch (error) {
    answer = { ok: false, answer: (error as Error).message };
  }
  // The language server was asked to shut down and exit; any other server (or one that did not answer) is stopped.
  if (probe !== "lsp" || !answer.ok) child.kill("SIGTERM");
  const end = await exited(child);
  return { ...end, stdout, stderr, probe: answer };
}

/** The promise's value, or a rejection naming `why` after HANG_MS. */
function withHangBound<T>(promise: Promise<T>, why: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(why)), HANG_MS);
    promise.then(
      (value) => (clearTimeout(timer), resolve(value)),
      (error: unknown) => (clearTimeout(timer), reject(error)),
    );
  });
}

/** Asks the server one thing by its protocol: whether it answered as it should, and what it answered. */
async function ask(child: ChildProcess, args: readonly string[], probe: NonNullable<Plan["probe"]>): Promise<{ ok: boolean; answer: string }> {
  const exit = new Promise<never>((_, reject) => child.once("exit", (code, signal) => reject(new Error(`it exited (${code ?? signal}) before it answered`))));
  exit.catch(() => undefined);
  if (probe === "health" || probe === "egress") {
    const ready = await Promise.race([waitFor(child, /listening on (\S+)/), exit]);
    if (ready === undefined) return { ok: false, answer: "it printed no `listening on` line" };
    if (probe === "health") {
      const socket = args[args.indexOf("--socket") + 1];
      const status = await httpGet(args.includes("--socket") ? { socketPath: socket!, path: "/v1/health" } : new URL("/v1/health", ready[1]!));
      return { ok: status.startsWith("200 "), answer: `GET /v1/health: ${status}` };
    }
    // A proxy request to a port of this machine no run asked for: the proxy answers it (a refusal).
    const port = Number(args[args.indexOf("--http-port") + 1]);
    const status = await proxyRequest(port);
    return { ok: /^HTTP\/1\.[01] \d{3}/.test(status), answer: `CONNECT 127.0.0.1:9 through the proxy: ${status}` };
  }
  if (probe === "mcp") {
    const lines = jsonLines(child);
    const send = (message: object): boolean => child.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`);
    send({ id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "docs-test", version: "1.0.0" } } });
    const initialized = await Promise.race([lines.next(1), exit]);
    send({ method: "notifications/initialized" });
    send({ id: 2, method: "tools/call", params: { name: "read_note", arguments: { name: "release" } } });
    const called = await Promise.race([lines.next(2), exit]);
    const text = JSON.stringify(called);
    return { ok: JSON.stringify(initialized).includes("team-notes") && text.includes("Tag the release"), answer: `initialize: ${JSON.stringify(initialized)}; tools/call: ${text}` };
  }
  // The language server: LSP over standard input and output, each message after its Content-Length.
  const frame = (message: object): boolean => {
    const body = JSON.stringify({ jsonrpc: "2.0", ...message });
    return child.stdin!.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  };
  const messages = lspMessages(child);
  frame({ id: 1, method: "initialize", params: { processId: process.pid, rootUri: null, capabilities: {} } });
  const initialized = (await Promise.race([messages.next(1), exit])) as { result?: { capabilities?: object } };
  frame({ method: "initialized", params: {} });
  frame({ id: 2, method: "shutdown" });
  await Promise.race([messages.next(2), exit]);
  frame({ method: "exit" });
  child.stdin!.end();
  return { ok: initialized.result?.capabilities !== undefined, answer: `initialize: ${JSON.stringify(initialized).slice(0, 300)}` };
}

/** The JSON-RPC responses a child writes one a line, by id. */
function jsonLines(child: ChildProcess): { next: (id: number) => Promise<unknown> } {
  return responses(child, (buffer) => {
    const end = buffer.indexOf("\n");
    return end < 0 ? undefined : { message: buffer.slice(0, end), rest: buffer.slice(end + 1) };
  });
}

/** The LSP responses a child writes, each after its Content-Length header, by id. */
function lspMessages(child: ChildProcess): { next: (id: number) => Promise<unknown> } {
  return responses(child, (buffer) => {
    const header = /^Content-Length: (\d+)\r\n(?:[^\r\n]+\r\n)*\r\n/.exec(buffer);
    if (header === null) return undefined;
    const start = header[0].length;
    const length = Number(header[1]);
    const bytes = Buffer.from(buffer.slice(start));
    if (bytes.length < length) return undefined;
    const message = bytes.subarray(0, length).toString("utf8");
    return { message, rest: bytes.subarray(length).toString("utf8") };
  });
}

function responses(child: ChildProcess, cut: (buffer: string) => { message: string; rest: string } | undefined): { next: (id: number) => Promise<unknown> } {
  const got = new Map<number, unknown>();
  const waiting = new Map<number, (message: unknown) => void>();
  let buffer = "";
  child.stdout!.on("data", (chunk: string) => {
    buffer += chunk;
    for (let piece = cut(buffer); piece !== undefined; piece = cut(buffer)) {
      buffer = piece.rest;
      let message: { id?: number; method?: string };
      try {
        message = JSON.parse(piece.message) as typeof message;
      } catch {
        continue; // not a message: the test's check of what was answered says so
      }
      if (typeof message.id !== "number" || message.method !== undefined) continue;
      const resolve = waiting.get(message.id);
      if (resolve !== undefined) resolve(message);
      else got.set(message.id, message);
    }
  });
  return {
    next: (id) => (got.has(id) ? Promise.resolve(got.get(id)) : new Promise((resolve) => waiting.set(id, resolve))),
  };
}

/** `GET` of a URL (or a path on a Unix socket): the status and the body's start. */
function httpGet(target: URL | { socketPath: string; path: string }): Promise<string> {
  return new Promise((resolve) => {
    const answered = (response: import("node:http").IncomingMessage): void => {
      let body = "";
      response.setEncoding("utf8").on("data", (chunk: string) => (body += chunk));
      response.on("end", () => resolve(`${response.statusCode} ${body.slice(0, 200)}`));
    };
    const outgoing = target instanceof URL ? request(target, answered) : request({ ...target, method: "GET" }, answered);
    outgoing.on("error", (error) => resolve(`error: ${error.message}`));
    outgoing.end();
  });
}

/** A CONNECT through the HTTP proxy on `port`: its status line. */
function proxyRequest(port: number): Promise<string> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1", () => socket.write("CONNECT 127.0.0.1:9 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n\r\n"));
    let seen = "";
    socket.setEncoding("utf8").on("data", (chunk: string) => {
      seen += chunk;
      if (seen.includes("\r\n")) {
        socket.destroy();
        resolve(seen.slice(0, seen.indexOf("\r\n")));
      }
    });
    socket.on("error", (error) => resolve(`error: ${error.message}`));
    socket.on("close", () => resolve(seen === "" ? "closed without an answer" : seen));
  });
}

/** What a documented command did: each of its forms. */
export interface CommandOutcome {
  readonly forms: FormOutcome[];
}

/** `${file}:${line}`: a command's place in the documentation. */
export const keyOf = (command: DocCommand): string => `${command.file}:${command.line}`;

/**
 * Runs the commands: each documentation file's in its own copy of the template, in the order the
 * text gives them; two at a time over all files, on a machine of two cores. The outcome of each
 * command is known by its key as soon as it ran.
 */
export function runDocumentation(commands: readonly DocCommand[], template: Scratch, dir: string): Map<string, Promise<CommandOutcome>> {
  const outcomes = new Map<string, Promise<CommandOutcome>>();
  const slots = semaphore(2);
  const files = [...new Set(commands.map((command) => command.file))];
  for (const file of files) {
    const scratch = copyTemplate(template, join(dir, file.replace(/\W+/g, "-")));
    let previous: Promise<unknown> = Promise.resolve();
    for (const command of commands.filter((c) => c.file === file)) {
      const outcome = previous.then(async (): Promise<CommandOutcome> => {
        const forms: FormOutcome[] = [];
        for (const plan of plansOf(scratch.project, command)) forms.push(await slots(() => runForm(scratch, command, plan)));
        return { forms };
      });
      outcomes.set(keyOf(command), outcome);
      previous = outcome.catch(() => undefined);
    }
  }
  return outcomes;
}

/** At most `size` of the tasks given run at once. */
function semaphore(size: number): <T>(task: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (task) => {
    if (running >= size) await new Promise<void>((resolve) => waiting.push(resolve));
    running++;
    try {
      return await task();
    } finally {
      running--;
      waiting.shift()?.();
    }
  };
}

/**
 * The checks of a command that ran: each form ended by itself (a server: answered its request and
 * exited 0 when stopped), crashed with no stack and no `internal error`, exited 0 or 1 or the code
 * the text shows, and did what it is there for (the hook let the `ls` through, the model endpoint
 * was asked, the piped recording was read); the output lines the text shows appear in its output.
 */
export function expectRanAsShown(command: DocCommand, outcome: CommandOutcome): void {
  expect(outcome.forms.length).toBeGreaterThan(0);
  for (const form of outcome.forms) {
    const { plan } = form;
    const where = `${keyOf(command)} (run in ${plan.cwd}: ${command.program} ${form.ran.join(" ")})\nstderr:\n${form.stderr.slice(0, 2000)}`;
    expect(form.hung, `hung for ${HANG_MS / 1000} s: ${where}`).toBe(false);
    expect(form.stderr, `crashed: ${where}`).not.toMatch(/internal error|\n\s+at .+:\d+:\d+\)?\n/);
    if (plan.probe !== undefined) {
      expect(form.probe?.ok, `the server did not answer as it should: ${form.probe?.answer}\n${where}`).toBe(true);
      expect(form.code, `exit code once stopped: ${where}`).toBe(0);
    } else if (command.expectedExit !== undefined) expect(form.code, `exit code: ${where}`).toBe(command.expectedExit);
    else expect([0, 1], `exit code ${form.code}: ${where}`).toContain(form.code);
    if (plan.stdin === "hook event") {
      expect(form.code, `the hook's exit code: ${where}`).toBe(0);
      expect(form.stdout, `the hook did not let an ordinary \`ls\` run (it answers nothing when no rule objects): ${where}`).toBe("");
    }
    if (plan.stdin === "piped trace") expect(form.stderr, `the recording on standard input was not read: ${where}`).toContain("read `<stdin>` as claude-code");
    if (plan.model !== undefined) expect(form.modelRequests, `requests to the model endpoint: ${where}`).toBe(1);
    if (plan.sandbox === true) expect(form.stderr, `not run in the sandbox: ${where}`).toMatch(/vigil: running .* in the sandbox/);
  }
  if (command.output !== undefined) {
    const [form] = outcome.forms;
    const missing = missingLines(command.output.lines, form!.stdout, form!.stderr);
    expect(missing, `lines shown at ${command.file}:${command.output.line} not in the output of ${keyOf(command)}\nstdout:\n${form!.stdout.slice(0, 4000)}`).toEqual([]);
  }
}
