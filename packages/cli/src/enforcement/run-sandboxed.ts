import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { constants, homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { shellQuote } from "./shell-words.js";
import type { CliIo } from "../io.js";
import { openEnforcement } from "./open-enforcement.js";
import { printableLine } from "../reports/render.js";

export interface RunOptions {
  readonly policy: string[];
  readonly db?: string;
  readonly run?: string;
  readonly allowLoopback?: readonly number[];
  readonly auditKeyFile?: string;
}

/**
 * `vigilc run --policy FILE… [--db PATH] [--run ID] -- COMMAND…`: runs an agent (or any program)
 * inside the same boundary Claude Code gets from `vigilc hook claude-code --install`, for agents
 * that are not Claude Code. The command runs in Anthropic's sandbox runtime (bubblewrap on Linux):
 * it may write the working directory and the temporary directory but not the policy, Vigil's state
 * or code, nor read Vigil's state; its only network is Vigil's egress proxy, started here, where
 * every connection is a `net` event of one run (`--run`, or a new id), decided by the policy,
 * recorded and audited. A sandbox that cannot be set up refuses to run the command (exit 2). The
 * exit code is the command's; the run's verdicts are logged when it ends.
 */
export async function runSandboxedCommand(command: readonly string[], options: RunOptions, io: CliIo): Promise<number> {
  if (command.length === 0) {
    io.stderr("error: name the command to run after --: `vigilc run --policy FILE -- COMMAND…`\n");
    return 2;
  }
  const opened = await openEnforcement(options, io, {}, options.auditKeyFile !== undefined ? resolve(io.cwd, options.auditKeyFile) : undefined);
  if (opened === 2) return 2;
  const { store, enforcer, database } = opened;
  const runId = options.run ?? `run-${randomUUID()}`;
  const { startEgressProxy } = await import("@vigil/runtime/egress");
  const { stateToSeal, vigilCodePaths } = await import("@vigil/runtime");
  const { SandboxManager } = await import("@anthropic-ai/sandbox-runtime");
  let proxy;
  try {
    proxy = await startEgressProxy({ attribute: () => ({ runId, enforcer }), loopbackPorts: options.allowLoopback ?? [] });
  } catch (error) {
    store.close();
    io.stderr(`error: the egress proxy could not start: ${printableLine((error as Error).message)}\n`);
    return 2;
  }
  const state = stateToSeal(database).map((p) => p.path);
  const keyFile = options.auditKeyFile !== undefined ? [resolve(io.cwd, options.auditKeyFile)] : [];
  try {
    try {
      await SandboxManager.initialize({
        network: { allowedDomains: [], deniedDomains: [], httpProxyPort: proxy.httpPort, socksProxyPort: proxy.socksPort },
        filesystem: {
          denyRead: [...state, ...keyFile],
          allowWrite: [io.cwd, tmpdir()],
          denyWrite: [...state, ...keyFile, ...opened.enforcer.policy.files, ...vigilCodePaths().map((p) => p.path), join(homedir(), ".claude")],
        },
      });
    } catch (error) {
      io.stderr(`error: the sandbox cannot be set up here (${printableLine((error as Error).message)}); the command was not run\n`);
      return 2;
    }
    const line = command.map(shellQuote).join(" ");
    let wrapped: string;
    try {
      wrapped = await SandboxManager.wrapWithSandbox(line);
    } catch (error) {
      io.stderr(`error: the command could not be put in the sandbox (${printableLine((error as Error).message)}); it was not run\n`);
      return 2;
    }
    io.stderr(`vigil: running ${printableLine(line)} in the sandbox, run ${runId}; its network goes through the egress proxy\n`);
    const code = await new Promise<number>((resolvePromise) => {
      const child = spawn("bash", ["-c", wrapped], { cwd: io.cwd, stdio: "inherit" });
      child.once("error", (error) => {
        io.stderr(`error: ${printableLine(error.message)}\n`);
        resolvePromise(2);
      });
      // Killed by a signal: the shell's convention, 128 and the signal's number.
      child.once("exit", (exitCode, signal) => resolvePromise(exitCode ?? 128 + (signal !== null ? (constants.signals[signal] ?? 0) : 0)));
    });
    const finished = enforcer.finish(runId);
    io.stderr(`vigil: run ${runId} ${finished.verdict} (${finished.verdicts.filter((v) => !v.holds).length} rules broken); database ${printableLine(database)}\n`);
    return code;
  } finally {
    await proxy.close();
    await SandboxManager.reset().catch(() => undefined);
    store.close();
  }
}
