import type { CliIo } from "./cli.js";
import { openEnforcement } from "./enforcement.js";
import { printableLine } from "./render.js";

/**
 * `vigilc serve --policy FILE… [--port N] [--db PATH]`: the sidecar. It listens on 127.0.0.1 until
 * SIGTERM or SIGINT, then stops accepting connections, lets the requests in flight finish, closes
 * the database and exits 0. Exit 2 when the policy or the database cannot be read, or the port
 * cannot be listened on.
 */
export async function serveCommand(options: { policy: string[]; port: number; db?: string }, io: CliIo): Promise<number> {
  const opened = await openEnforcement(options, io);
  if (opened === 2) return 2;
  const { store, enforcer, database, rules } = opened;
  const { startSidecar } = await import("@vigil/runtime");
  try {
    let sidecar;
    try {
      sidecar = await startSidecar({ enforcer, port: options.port });
    } catch (error) {
      io.stderr(`error: cannot listen on 127.0.0.1:${options.port}: ${(error as Error).message}\n`);
      return 2;
    }
    io.stdout(`vigil sidecar listening on ${sidecar.url} (${rules} rules of ${options.policy.map(printableLine).join(", ")}; database ${printableLine(database)})\n`);
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
