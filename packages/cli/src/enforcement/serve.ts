import { dirname, join, resolve } from "node:path";
import type { CliIo } from "../io.js";
import { guardOptions, openEnforcement } from "./open-enforcement.js";
import { printableLine } from "../reports/render.js";
import { loadOrCreateTokenFile, TOKEN_FILE_NAME } from "./token-file.js";

export interface ServeOptions {
  readonly policy: string[];
  readonly port?: number;
  readonly socket?: string;
  readonly db?: string;
  readonly tokenFile?: string;
  readonly hookTokenFile?: string;
  readonly socketMode?: "600" | "660";
  readonly guard?: boolean;
  readonly protect?: string[];
  readonly unknownCommands?: "block" | "ask";
  /** Requests of one token in flight at once (default 16). */
  readonly maxConcurrent?: number;
  /** Requests of one token per second (default 200). */
  readonly maxRate?: number;
}

/** The port when neither --port nor --socket is given. */
export const DEFAULT_PORT = 8787;

/**
 * `vigilc serve --policy FILE… [--port N | --socket PATH] [--db PATH] [--token-file FILE]
 * [--hook-token-file FILE]`: the sidecar. It listens on 127.0.0.1 (or a Unix socket) until SIGTERM
 * or SIGINT, then stops accepting connections, lets the requests in flight finish, closes the
 * database and exits 0. Exit 2 when a token file, the policy or the database cannot be read, or
 * the port or socket cannot be listened on.
 *
 * Every request but the health check must carry a token. The admin token is read from its file,
 * or the file is created with a new random token (by default `sidecar.token` next to the
 * database); only its path is printed, so that the token never lands in a terminal's scrollback or
 * a log. Local clients read it from the file.
 */
export async function serveCommand(options: ServeOptions, io: CliIo): Promise<number> {
  if (options.socket !== undefined && options.port !== undefined) {
    io.stderr("error: give --port or --socket, not both\n");
    return 2;
  }
  const database = options.db !== undefined ? resolve(io.cwd, options.db) : join(io.cwd, ".vigil", "audit.db");
  const tokenFile = options.tokenFile !== undefined ? resolve(io.cwd, options.tokenFile) : join(dirname(database), TOKEN_FILE_NAME);
  const hookTokenFile = options.hookTokenFile !== undefined ? resolve(io.cwd, options.hookTokenFile) : undefined;
  if (hookTokenFile === tokenFile) {
    io.stderr(`error: the hook token file and the admin token file are the same file (${printableLine(tokenFile)}); the hook token must be a different one\n`);
    return 2;
  }
  // The tokens are settled before anything is opened: a sidecar that would run without its
  // protection does not start at all.
  const admin = loadOrCreateTokenFile(tokenFile, { private: true });
  if ("problem" in admin) {
    io.stderr(`error: ${printableLine(admin.problem)}; the sidecar did not start\n`);
    return 2;
  }
  let hookToken: string | undefined;
  if (hookTokenFile !== undefined) {
    // Not private: in a deployment where the sidecar runs as its own user, the agent's user must
    // be able to read this one (its group, say), and it only allows relaying hook events.
    const hook = loadOrCreateTokenFile(hookTokenFile, { private: false });
    if ("problem" in hook) {
      io.stderr(`error: ${printableLine(hook.problem)}; the sidecar did not start\n`);
      return 2;
    }
    if (hook.token === admin.token) {
      io.stderr(`error: the hook token in ${printableLine(hookTokenFile)} is the admin token of ${printableLine(tokenFile)}; the hook token must be a different one\n`);
      return 2;
    }
    hookToken = hook.token;
  }
  const socket = options.socket !== undefined ? resolve(io.cwd, options.socket) : undefined;
  const port = options.port ?? DEFAULT_PORT;

  // The agent runs commands on this machine: its calls may neither read nor change the token files
  // (the guard refuses them whatever the policy says), wherever they are.
  const secrets = [
    { path: tokenFile, what: "the sidecar's admin token", secret: true },
    ...(hookTokenFile !== undefined ? [{ path: hookTokenFile, what: "the sidecar's hook token", secret: true }] : []),
  ];
  const guard = guardOptions(options, io.cwd, secrets);
  // Claude Code's settings files install the hook the sidecar answers for.
  const opened = await openEnforcement({ ...options, db: database }, io, { guard: guard === false ? false : { ...guard, claudeSettings: true } });
  if (opened === 2) return 2;
  const { store, enforcer, rules } = opened;
  const { startSidecar, SidecarSocketError } = await import("@vigil/runtime");
  try {
    let sidecar;
    try {
      sidecar = await startSidecar({
        enforcer,
        token: admin.token,
        ...(hookToken !== undefined ? { hookToken } : {}),
        ...(options.maxConcurrent !== undefined ? { maxConcurrentPerToken: options.maxConcurrent } : {}),
        ...(options.maxRate !== undefined ? { maxRequestsPerSecond: options.maxRate } : {}),
        ...(socket !== undefined ? { socket, socketMode: options.socketMode === "660" ? 0o660 : 0o600 } : { port }),
      });
    } catch (error) {
      if (error instanceof SidecarSocketError) io.stderr(`error: ${printableLine(error.message)}\n`);
      else io.stderr(`error: cannot listen on ${socket !== undefined ? `the socket ${printableLine(socket)}` : `127.0.0.1:${port}`}: ${printableLine((error as Error).message)}\n`);
      return 2;
    }
    const tokens = `token file ${printableLine(tokenFile)}${admin.created ? " (created)" : ""}${hookTokenFile !== undefined ? `; hook token file ${printableLine(hookTokenFile)}` : ""}`;
    io.stdout(`vigil sidecar listening on ${sidecar.url} (${rules} rules of ${options.policy.map(printableLine).join(", ")}; database ${printableLine(database)}; ${tokens})\n`);
    const signal = await new Promise<NodeJS.Signals>((resolvePromise) => {
      process.once("SIGTERM", () => resolvePromise("SIGTERM"));
      process.once("SIGINT", () => resolvePromise("SIGINT"));
    });
    await sidecar.close();
    io.stderr(`vigil sidecar stopped (${signal}): every request answered, the database closed\n`);
    return 0;
  } finally {
    store.close();
  }
}
