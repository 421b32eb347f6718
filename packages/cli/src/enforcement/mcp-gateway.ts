import type { CliIo } from "../io.js";
import { guardOptions, openEnforcement } from "./open-enforcement.js";

/**
 * `vigilc mcp-gateway --policy FILE… [--db PATH] [--run ID] -- <server command…>`: an MCP server on
 * standard input and output that runs the real one as its child and decides every `tools/call`
 * before forwarding it. Standard output carries the protocol only; everything else goes to
 * standard error. Exit 2 when the policy or the database cannot be read.
 */
export async function mcpGatewayCommand(
  command: readonly string[],
  options: { policy: string[]; db?: string; run?: string; guard?: boolean; protect?: string[]; unknownCommands?: "block" | "ask" },
  io: CliIo,
): Promise<number> {
  if (command.length === 0) {
    io.stderr("error: name the MCP server to run after `--`: vigilc mcp-gateway --policy FILE -- node server.js …\n");
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
      command: command[0]!,
      args: command.slice(1),
      cwd: io.cwd,
      log: (line) => io.stderr(`${line}\n`),
    });
    return 0;
  } finally {
    store.close();
  }
}
