#!/usr/bin/env node
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

/**
 * `vigil-language-server`: the Vigil language server over stdio (or Node IPC, a socket or a pipe,
 * as LSP clients start servers). Exit codes: 0 after `--help`, `--version` or a shutdown; 2 for bad
 * usage.
 */

/** The server's version: the package's (a test keeps them equal). */
const version = "0.1.0";

const usage = `Usage: vigil-language-server --stdio

The Vigil language server (Language Server Protocol 3.18), driven by the Vigil compiler.

Transports (one is required):
  --stdio                  read and write LSP messages on standard input and output
  --node-ipc               talk over Node's IPC channel (when started by a Node client)
  --socket=<port>          connect to a socket on 127.0.0.1
  --pipe=<name>            connect to a named pipe

Options:
  --clientProcessId=<pid>  exit when this process exits (LSP clients pass it)
  --version                print the version and exit
  -h, --help               print this help and exit

Sample traces come from vigil.config.json (see docs/language-server.md).
`;

type Parsed = { readonly action: "help" | "version" } | { readonly action: "serve" } | { readonly action: "error"; readonly message: string };

function parseArguments(argv: readonly string[]): Parsed {
  let transport: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index]!;
    const [flag, inline] = argument.startsWith("--") && argument.includes("=") ? [argument.slice(0, argument.indexOf("=")), argument.slice(argument.indexOf("=") + 1)] : [argument, undefined];
    switch (flag) {
      case "-h":
      case "--help":
        return { action: "help" };
      case "-v":
      case "--version":
        return { action: "version" };
      case "--stdio":
      case "--node-ipc":
        if (inline !== undefined) return { action: "error", message: `${flag} takes no value` };
        transport ??= flag;
        break;
      case "--socket":
      case "--pipe":
      case "--clientProcessId": {
        const value = inline ?? argv[++index];
        if (value === undefined || value.length === 0) return { action: "error", message: `${flag} needs a value` };
        if (flag !== "--pipe" && !/^\d+$/.test(value)) return { action: "error", message: `${flag} needs a number, not \`${value}\`` };
        if (flag !== "--clientProcessId") transport ??= flag;
        break;
      }
      default:
        return { action: "error", message: `unknown option \`${argument}\`` };
    }
  }
  if (transport === undefined) return { action: "error", message: "no transport: pass --stdio (or --node-ipc, --socket=<port>, --pipe=<name>)" };
  return { action: "serve" };
}

/** The documentation folder beside the server, when it is installed from a checkout or a package that ships it. */
function documentationFolder(): string | undefined {
  let directory = dirname(fileURLToPath(import.meta.url));
  for (let depth = 0; depth < 5; depth++) {
    if (existsSync(join(directory, "docs", "language.md"))) return pathToFileURL(join(directory, "docs")).href;
    const parent = dirname(directory);
    if (parent === directory) break;
    directory = parent;
  }
  return undefined;
}

async function main(argv: readonly string[]): Promise<void> {
  const parsed = parseArguments(argv);
  switch (parsed.action) {
    case "help":
      process.stdout.write(usage);
      return;
    case "version":
      process.stdout.write(`${version}\n`);
      return;
    case "error":
      process.stderr.write(`vigil-language-server: ${parsed.message}\n(run \`vigil-language-server --help\` for usage)\n`);
      process.exitCode = 2;
      return;
    case "serve": {
      // Loaded only to serve: `--help`, `--version` and a usage error answer without the compiler.
      const { createConnection, ProposedFeatures } = await import("vscode-languageserver/node");
      const { startServer } = await import("./lsp/server.js");
      // The LSP library reads the transport from the command line itself.
      const connection = createConnection(ProposedFeatures.all);
      const documentation = documentationFolder();
      // A bug must not take the editor's server down: it is logged, and the server goes on.
      process.on("uncaughtException", (error) => connection.console.error(`internal error: ${error.stack ?? error.message}`));
      process.on("unhandledRejection", (reason) => connection.console.error(`internal error: ${reason instanceof Error ? (reason.stack ?? reason.message) : String(reason)}`));
      startServer(connection, { version, ...(documentation !== undefined ? { documentation } : {}) });
    }
  }
}

await main(process.argv.slice(2));
