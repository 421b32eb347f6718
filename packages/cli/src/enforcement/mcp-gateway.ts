import { readFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { CliIo } from "../io.js";
import { guardOptions, openEnforcement } from "./open-enforcement.js";

/**
 * `vigilc mcp-gateway --policy FILE… [--db PATH] [--run ID] <server>`: an MCP server on standard
 * input and output that runs the real one as its child and decides every `tools/call` before
 * forwarding it. The real server is named in one of three ways: `-- <command…>`,
 * `--server-command "<command line>"` (for clients that keep `--` for themselves, as the MCP
 * Inspector's CLI does), or `--server-config FILE [--server-name NAME]` (a JSON file in the shape
 * of MCP clients' configurations). Standard output carries the protocol only; everything else goes
 * to standard error. Exit 2 when the server is not named exactly once, or when the policy, the
 * database or the server's configuration cannot be read.
 */

export interface McpGatewayFlags {
  policy: string[];
  db?: string;
  run?: string;
  guard?: boolean;
  protect?: string[];
  unknownCommands?: "block" | "ask";
  serverCommand?: string;
  serverConfig?: string;
  serverName?: string;
}

/** The real server to run: its command line, and where and with what environment. */
export interface ServerToRun {
  readonly command: string;
  readonly args: readonly string[];
  readonly cwd: string;
  readonly env?: Readonly<Record<string, string | undefined>>;
}

const USAGE = "vigilc mcp-gateway --policy FILE… (-- COMMAND… | --server-command LINE | --server-config FILE [--server-name NAME])";

export async function mcpGatewayCommand(command: readonly string[], options: McpGatewayFlags, io: CliIo): Promise<number> {
  const server = serverToRun(command, options, io);
  if (typeof server === "string") {
    io.stderr(`error: ${server}\nusage: ${USAGE}\n`);
    return 2;
  }
  const opened = await openEnforcement(options, io, { guard: guardOptions(options, io.cwd), cwd: io.cwd });
  if (opened === 2) return 2;
  const { store, enforcer } = opened;
  const { runMcpGateway } = await import("@vigil/runtime");
  try {
    const runId = options.run ?? `mcp-${new Date().toISOString()}-${process.pid}`;
    // SIGTERM or SIGINT ends the session as the client closing it does.
    const stop = new AbortController();
    process.once("SIGTERM", () => stop.abort());
    process.once("SIGINT", () => stop.abort());
    await runMcpGateway({
      signal: stop.signal,
      enforcer,
      runId,
      command: server.command,
      args: server.args,
      cwd: server.cwd,
      ...(server.env !== undefined ? { env: server.env } : {}),
      log: (line) => io.stderr(`${line}\n`),
    });
    return 0;
  } finally {
    store.close();
  }
}

/** The server the flags name, or why they do not name exactly one (a usage error). */
export function serverToRun(command: readonly string[], options: McpGatewayFlags, io: CliIo): ServerToRun | string {
  const given = [command.length > 0 ? "`-- COMMAND…`" : "", options.serverCommand !== undefined ? "--server-command" : "", options.serverConfig !== undefined ? "--server-config" : ""].filter((way) => way !== "");
  if (given.length === 0) return "name the MCP server to run: after `--`, with --server-command or with --server-config";
  if (given.length > 1) return `name the MCP server one way only, not with ${given.join(" and ")}`;
  if (options.serverName !== undefined && options.serverConfig === undefined) return "--server-name picks a server of --server-config";
  if (options.serverCommand !== undefined) {
    const words = commandWords(options.serverCommand);
    if (typeof words === "string") return `--server-command: ${words}`;
    if (words.length === 0) return "--server-command is empty";
    return { command: words[0]!, args: words.slice(1), cwd: io.cwd };
  }
  if (options.serverConfig !== undefined) return serverConfig(resolve(io.cwd, options.serverConfig), options.serverName, io);
  return { command: command[0]!, args: command.slice(1), cwd: io.cwd };
}

/** Characters a shell would give a meaning to, refused outside quotes: no shell runs the line. */
const SHELL_CHARACTERS = new Set(["|", "&", ";", "<", ">", "(", ")", "`", "$"]);

/**
 * A command line split into words as a POSIX shell splits a simple command, with no shell: blanks
 * separate words; '…' keeps everything as it is; "…" keeps everything but `\"` and `\\`, which stand
 * for `"` and `\`; outside quotes a backslash keeps the next character as it is. Nothing is
 * expanded, so `$`, `` ` ``, `|`, `&`, `;`, `<`, `>`, `(` and `)` must be quoted (a string says why not).
 */
export function commandWords(line: string): string[] | string {
  const words: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i]!;
    if (c === " " || c === "\t" || c === "\n") {
      if (word !== undefined) words.push(word);
      word = undefined;
    } else if (c === "'") {
      const end = line.indexOf("'", i + 1);
      if (end < 0) return "a ' is not closed";
      word = (word ?? "") + line.slice(i + 1, end);
      i = end;
    } else if (c === '"') {
      let text = "";
      for (i += 1; i < line.length && line[i] !== '"'; i++) {
        if (line[i] === "\\" && (line[i + 1] === '"' || line[i + 1] === "\\")) i += 1;
        text += line[i];
      }
      if (i >= line.length) return 'a " is not closed';
      word = (word ?? "") + text;
    } else if (c === "\\") {
      if (i + 1 >= line.length) return "the line ends with a \\";
      word = (word ?? "") + line[i + 1];
      i += 1;
    } else if (SHELL_CHARACTERS.has(c)) {
      return `${c} is not run by a shell here: quote it ('${c}') to pass it as it is`;
    } else word = (word ?? "") + c;
  }
  if (word !== undefined) words.push(word);
  return words;
}

/**
 * The server of a JSON configuration file: either one server, `{"command", "args", "env", "cwd"}`
 * (`type` may say "stdio"), or the `{"mcpServers": {NAME: …}}` of MCP clients, whose server is the
 * one named by `name` or its only one. `env` is added to the gateway's own environment; a relative
 * `cwd` is of the file's directory (the default: the gateway's working directory).
 */
function serverConfig(file: string, name: string | undefined, io: CliIo): ServerToRun | string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, "utf8"));
  } catch (error) {
    return `--server-config ${file}: ${(error as Error).message}`;
  }
  const entry = configEntry(parsed, name);
  if (typeof entry === "string") return `--server-config ${file}: ${entry}`;
  const { command, args = [], env, cwd, type } = entry as { command?: unknown; args?: unknown; env?: unknown; cwd?: unknown; type?: unknown };
  const wrong = (what: string) => `--server-config ${file}: ${what}`;
  if (type !== undefined && type !== "stdio") return wrong(`the server's type is ${JSON.stringify(type)}: the gateway runs stdio servers only`);
  if (typeof command !== "string" || command === "") return wrong('"command" must be a string, the program to run');
  if (!Array.isArray(args) || !args.every((arg) => typeof arg === "string")) return wrong('"args" must be a list of strings');
  if (env !== undefined && !(isObject(env) && Object.values(env).every((value) => typeof value === "string"))) return wrong('"env" must be an object of strings');
  if (cwd !== undefined && typeof cwd !== "string") return wrong('"cwd" must be a string');
  return {
    command,
    args,
    cwd: cwd !== undefined ? resolve(dirname(file), cwd) : io.cwd,
    ...(env !== undefined ? { env: { ...(io.env ?? process.env), ...(env as Record<string, string>) } } : {}),
  };
}

/** The one server's entry of a configuration, or why there is none. */
function configEntry(parsed: unknown, name: string | undefined): Record<string, unknown> | string {
  if (!isObject(parsed)) return "not a JSON object";
  const servers = parsed["mcpServers"];
  if (servers === undefined) return name === undefined ? parsed : `--server-name ${name}: the file has no "mcpServers"`;
  if (!isObject(servers)) return '"mcpServers" must be an object';
  const names = Object.keys(servers);
  const chosen = name ?? (names.length === 1 ? names[0]! : undefined);
  if (chosen === undefined) return names.length === 0 ? '"mcpServers" is empty' : `it names several servers: pick one with --server-name (${names.join(", ")})`;
  const entry = Object.hasOwn(servers, chosen) ? servers[chosen] : undefined;
  if (entry === undefined) return `no server named ${JSON.stringify(chosen)} (${names.join(", ")})`;
  return isObject(entry) ? entry : `the server ${JSON.stringify(chosen)} is not an object`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
