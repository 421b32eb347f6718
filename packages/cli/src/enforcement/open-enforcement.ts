import { join, resolve } from "node:path";
import type { Enforcer, EnforcerOptions, GuardOptions, ProtectedPath, Store } from "@vigil/runtime";
import type { CliIo } from "../io.js";
import { auditKey } from "./audit-key.js";
import { printableLine } from "../reports/render.js";

// What the enforcement commands other than the hook share (`serve`, `mcp-gateway`, `run`, `egress`,
// `audit verify`, `replay`): the guard's options from their flags, and the enforcement database
// opened with its audit key, with a policy loaded into it where the command enforces one.

/** The guard's options from the command line: `--no-guard`, `--protect PATH…`, `--unknown-commands`. */
export function guardOptions(flags: { guard?: boolean; protect?: readonly string[]; unknownCommands?: "block" | "ask" }, cwd: string, extra: readonly ProtectedPath[] = []): GuardOptions | false {
  if (flags.guard === false) return false;
  return {
    protect: [...extra, ...(flags.protect ?? []).map((path) => ({ path: resolve(cwd, path), what: "a path protected with --protect", tree: true }))],
    ...(flags.unknownCommands !== undefined ? { unknownCommands: flags.unknownCommands } : {}),
  };
}

/** An enforcement database opened and a policy loaded into it, for `serve` and `mcp-gateway`. */
export interface OpenedEnforcement {
  readonly store: Store;
  readonly enforcer: Enforcer;
  readonly database: string;
  readonly rules: number;
}

/**
 * Opens an enforcement database, keyed by `VIGIL_AUDIT_KEY` when set. One that cannot be opened
 * (or does not exist, with `mustExist`) is reported on standard error and gives the exit code 2.
 */
export async function openStore(database: string, io: CliIo, options: { mustExist?: boolean; keyFile?: string } = {}): Promise<Store | 2> {
  const { Store, StoreError } = await import("@vigil/runtime");
  const key = auditKey(options.keyFile);
  if (typeof key === "object") {
    io.stderr(`error: ${printableLine(key.problem)}\n`);
    return 2;
  }
  try {
    return Store.open(database, { ...(options.mustExist === true ? { mustExist: true } : {}), ...(key !== undefined && key !== "" ? { key } : {}) });
  } catch (error) {
    if (!(error instanceof StoreError)) throw error;
    io.stderr(`error: ${printableLine(error.message)}\n`);
    return 2;
  }
}

/**
 * Opens the database (`--db`, or `.vigil/audit.db` under the working directory) and loads the
 * policy into it. A database or a policy that cannot be read is reported on standard error and
 * gives the exit code 2; any other failure is a bug and is thrown. The caller closes `store`.
 */
export async function openEnforcement(options: { policy: readonly string[]; db?: string }, io: CliIo, enforcerOptions: EnforcerOptions = {}, keyFile?: string): Promise<OpenedEnforcement | 2> {
  const { Enforcer, loadPolicy, PolicyError } = await import("@vigil/runtime");
  const database = options.db !== undefined ? resolve(io.cwd, options.db) : join(io.cwd, ".vigil", "audit.db");
  const store = await openStore(database, io, keyFile !== undefined ? { keyFile } : {});
  if (store === 2) return 2;
  try {
    const policy = await loadPolicy(options.policy.map((file) => resolve(io.cwd, file)), store);
    return { store, enforcer: new Enforcer(store, policy, enforcerOptions), database, rules: policy.statements.length };
  } catch (error) {
    store.close();
    if (!(error instanceof PolicyError)) throw error;
    io.stderr(`error: ${printableLine(error.message)}\n`);
    return 2;
  }
}
