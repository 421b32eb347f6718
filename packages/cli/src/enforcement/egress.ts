import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { attributeToCallInFlight, startEgressProxy } from "@vigil/runtime/egress";
import { egressListeners } from "./egress-listener.js";
import { dirname, join, resolve } from "node:path";
import type { CliIo } from "../io.js";
import { openStore } from "./open-enforcement.js";
import { printableLine } from "../reports/render.js";

export interface EgressOptions {
  readonly policy: string[];
  readonly db?: string;
  readonly httpPort: number;
  readonly socksPort: number;
  readonly auditKeyFile?: string;
  readonly allowLoopback?: readonly number[];
}

/**
 * `vigilc egress --policy FILE… [--db PATH] --http-port N --socks-port M`: the network proxy of the
 * sandbox (Claude Code's `sandbox.network.httpProxyPort` and `socksProxyPort`). Every connection a
 * sandboxed command opens is a `net` event, decided by the policy in the run whose call is running
 * (the database the hooks write), recorded and audited; a refused connection never opens. Runs
 * until SIGTERM or SIGINT. Exit 2 when the policy or the database cannot be read or a port is taken.
 */
export async function egressCommand(options: EgressOptions, io: CliIo): Promise<number> {
  const database = options.db !== undefined ? resolve(io.cwd, options.db) : join(io.cwd, ".vigil", "audit.db");
  const policyFiles = options.policy.map((file) => resolve(io.cwd, file));
  const store = await openStore(database, io, options.auditKeyFile !== undefined ? { keyFile: resolve(io.cwd, options.auditKeyFile) } : {});
  if (store === 2) return 2;
  const { loadPolicy, PolicyError } = await import("@vigil/runtime");
  try {
    try {
      // Read once before listening: a policy with errors stops the proxy here, not at the first connection.
      await loadPolicy(policyFiles, store);
    } catch (error) {
      if (!(error instanceof PolicyError)) throw error;
      io.stderr(`error: ${printableLine(error.message)}\n`);
      return 2;
    }
    let proxy;
    try {
      proxy = await startEgressProxy({
        attribute: attributeToCallInFlight(store, policyFiles),
        httpPort: options.httpPort,
        socksPort: options.socksPort,
        loopbackPorts: options.allowLoopback ?? [],
        identity: { database, pid: String(process.pid) },
        onDecision: (decided) =>
          io.stderr(`${decided.allowed ? "allow" : "refuse"} ${decided.request.via} ${decided.request.host}:${decided.request.port}${decided.runId !== undefined ? ` (run ${decided.runId})` : ""}\n`),
      });
    } catch (error) {
      io.stderr(`error: cannot listen on 127.0.0.1:${options.httpPort} and :${options.socksPort}: ${printableLine((error as Error).message)}\n`);
      return 2;
    }
    io.stdout(`vigil egress proxy listening on 127.0.0.1:${proxy.httpPort} (HTTP) and 127.0.0.1:${proxy.socksPort} (SOCKS5); policy ${policyFiles.map(printableLine).join(", ")}; database ${printableLine(database)}\n`);
    const signal = await new Promise<NodeJS.Signals>((resolvePromise) => {
      process.once("SIGTERM", () => resolvePromise("SIGTERM"));
      process.once("SIGINT", () => resolvePromise("SIGINT"));
    });
    await proxy.close();
    io.stderr(`vigil egress proxy stopped (${signal})\n`);
    return 0;
  } finally {
    store.close();
  }
}

/**
 * Starts `vigilc egress` in the background unless it already serves `db` on its ports, and waits
 * until it does (at most `attempts` looks, 100 ms apart: 25 s, within the 30 s Claude Code gives the
 * hook, so that a slow start on a busy machine is waited for rather than reported as a failure).
 * Used by the hook when a session starts: the proxy runs outside the sandbox, as the hook does. Its
 * output goes to `egress.log` next to the database. Another program on the proxy's port is never
 * taken for it: the sandbox would send every connection there, undecided. Resolves to why the
 * proxy is not serving, or undefined.
 */
export async function ensureEgressProxy(
  argv: { policies: readonly string[]; db: string; httpPort: number; socksPort: number; keyFile?: string; env?: Readonly<Record<string, string | undefined>> },
  attempts = 250,
): Promise<string | undefined> {
  const serving = async (): Promise<string | undefined | "not yet"> => {
    const listener = await egressListeners(argv, argv.db);
    if (listener === "other") {
      return `127.0.0.1:${argv.httpPort} or :${argv.socksPort} is taken by something that is not Vigil's egress proxy for ${argv.db}; the sandbox would send its connections there: free the ports, or install again with other ports (--egress)`;
    }
    return listener === "ours" ? undefined : "not yet";
  };
  const now = await serving();
  if (now !== "not yet") return now;
  mkdirSync(dirname(argv.db), { recursive: true });
  const log = openSync(join(dirname(argv.db), "egress.log"), "a");
  const script = process.argv[1]!;
  const child = spawn(
    process.execPath,
    [script, "egress", "--policy", ...argv.policies, "--db", argv.db, "--http-port", String(argv.httpPort), "--socks-port", String(argv.socksPort), ...(argv.keyFile !== undefined ? ["--audit-key-file", argv.keyFile] : [])],
    { detached: true, stdio: ["ignore", log, log], ...(argv.env !== undefined ? { env: argv.env as NodeJS.ProcessEnv } : {}) },
  );
  closeSync(log);
  let exited: number | null | undefined;
  child.once("exit", (code) => (exited = code));
  child.unref();
  for (let attempt = 0; attempt < attempts; attempt++) {
    const state = await serving();
    if (state !== "not yet") return state;
    if (exited !== undefined) return `\`vigilc egress\` exited with code ${String(exited)} (see ${join(dirname(argv.db), "egress.log")}); until it runs, sandboxed commands have no network`;
    await new Promise((resolvePromise) => setTimeout(resolvePromise, 100));
  }
  return `\`vigilc egress\` did not listen on 127.0.0.1:${argv.httpPort} and :${argv.socksPort} after ${attempts} looks; until it runs, sandboxed commands have no network`;
}
