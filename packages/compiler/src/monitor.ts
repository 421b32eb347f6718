import { Monitor, type MonitorOptions } from "@vigil/engine";
import type { CompiledPolicy } from "./compile.js";

/**
 * An online monitor of a compiled policy (see `Monitor` in @vigil/engine): `decide` before each
 * call, `record` after it ran, `finish` when the run ends, `snapshot`/`restore` between processes.
 * A policy with errors cannot judge anything: this throws, and a caller in the call path must then
 * refuse the call (fail closed).
 */
export function createMonitor(policy: CompiledPolicy, options: MonitorOptions = {}): Monitor {
  if (!policy.ok) {
    const errors = policy.diagnostics.filter((d) => d.severity === "error");
    throw new Error(`the policy has ${errors.length} error${errors.length === 1 ? "" : "s"} (first: ${errors[0]?.code} ${errors[0]?.message}); it cannot judge calls`);
  }
  return new Monitor(
    policy.program.policies.flatMap((p) => p.statements),
    options,
  );
}
