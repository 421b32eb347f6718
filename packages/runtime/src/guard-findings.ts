import type { JsonValue } from "@vigil/trace";
import type { CallEvent } from "./call-events.js";
import { programOf } from "./guard-arguments.js";
import type { Effect, PathEffect } from "./guard-effects.js";
import type { ProtectedPath } from "./guard-protected.js";

/** Why the guard refuses a call: its findings, said in words for a refusal and kept as JSON in the audit log. */

export type GuardRule = "protected_path" | "vigil_itself" | "unknown_command";

/** Why the guard refuses a call. */
export interface GuardFinding {
  readonly guard: GuardRule;
  readonly response: "block" | "ask";
  /** The index of the call's event at fault (0: the call's own event). */
  readonly event: number;
  /** For `protected_path`: the protected path at stake, what it is, and what the event may do to it. */
  readonly path?: string;
  readonly what?: string;
  readonly effect?: Effect;
  readonly message: string;
}

export function describeHit(event: CallEvent, effect: PathEffect, entry: ProtectedPath): string {
  const verbs: Record<Effect, string> = {
    write: "may write",
    delete: "may delete",
    move: "may move",
    link: "may link to or replace",
    chmod: "may change the permissions of",
    read: "may read",
    use: "is given",
  };
  return `\`${programOf(event)}\` ${verbs[effect.effect]} \`${entry.path}\`, ${entry.what}${entry.tree === true ? " (protected with everything in it)" : ""}`;
}

/** The guard's findings in words, one per line, for a refusal's reason. */
export function describeFindings(findings: readonly GuardFinding[]): string[] {
  return findings.map((finding) => {
    const rule = finding.guard === "unknown_command" ? "guard.unknown_command" : finding.guard === "vigil_itself" ? "guard.vigil_itself" : "guard.protected_path";
    return `${rule} (${finding.response}): ${finding.message}`;
  });
}

/** The findings as the audit log keeps them. */
export function findingsJson(findings: readonly GuardFinding[]): JsonValue {
  return findings.map((f) => ({
    guard: f.guard,
    response: f.response,
    event: f.event,
    ...(f.path !== undefined ? { path: f.path } : {}),
    ...(f.effect !== undefined ? { effect: f.effect } : {}),
    message: f.message,
  }));
}
