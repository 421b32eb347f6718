import type { Violation } from "@vigil/compiler";
import { stableStringify, type JsonValue } from "@vigil/trace";
import type { CallVerdict, Containment } from "@vigil/engine";

/**
 * The words an agent (and a person) reads when a call is refused, asked about or warned about:
 * which rule, what it requires (its `///` text), the events involved, and what to do instead (its
 * remediation). Everything taken from a call is escaped, so no control character of it reaches a
 * terminal.
 */

/** An event named in a reason: its position in the run, what it did, and whether it is the call decided now. */
export interface InvolvedEvent {
  readonly position: number;
  readonly action: string;
  readonly args: { readonly [key: string]: JsonValue };
  /** True for an event of the call being decided. */
  readonly current: boolean;
  /** For an event of the call being decided other than its first: it was grounded from the call's command. */
  readonly grounded?: boolean;
}

/** How long an event's arguments may be when shown. */
const SHOWN_ARGUMENTS = 160;

export function describeEvent(event: InvolvedEvent): string {
  let args = stableStringify(event.args);
  if (args.length > SHOWN_ARGUMENTS) args = `${args.slice(0, SHOWN_ARGUMENTS - 1)}…`;
  const what = `#${event.position} ${printable(event.action)} ${printable(args)}`;
  if (!event.current) return what;
  return `${what} (this call${event.grounded === true ? ", a command it runs" : ""})`;
}

/**
 * A violation in words. `causes` are earlier events that made it (for `always not (… and once ψ)`,
 * the events that matched ψ), named beside the witnesses.
 */
export function describeViolation(violation: Violation, involved: (position: number) => InvolvedEvent | undefined, causes: readonly number[] = []): string {
  const lines = [`rule \`${printable(violation.policy)}.${printable(violation.name)}\` (${violation.form}, ${violation.response})`];
  if (violation.text !== undefined) lines.push(`  requires: ${printable(oneLine(violation.text))}`);
  const positions = [...new Set([...causes, ...violation.witnesses])].sort((a, b) => a - b);
  const events = positions.map((position) => involved(position)).filter((event) => event !== undefined);
  if (events.length > 0) {
    const shown = events.slice(0, 5).map(describeEvent);
    const more = events.length > shown.length ? `; and ${events.length - shown.length} more` : "";
    lines.push(`  events involved: ${shown.join("; ")}${more}`);
  }
  if (violation.remediation !== undefined) lines.push(`  to comply: ${printable(oneLine(violation.remediation))}`);
  return lines.join("\n");
}

/** The reason for a decision about a call, for the agent and the person watching it. */
export function decisionReason(
  decision: CallVerdict,
  action: string,
  violations: readonly Violation[],
  involved: (position: number) => InvolvedEvent | undefined,
  error?: string,
  causes: (violation: Violation) => readonly number[] = () => [],
  guard: readonly string[] = [],
): string {
  if (error !== undefined) return `Vigil refused this ${printable(action)} call: it could not be judged (${printable(error)}). Calls are refused when they cannot be judged.`;
  if (guard.length > 0) {
    // The guard's refusals come first: no rule of the policy can allow what they refuse.
    const heading =
      decision === "block"
        ? `Vigil's guard refused this ${printable(action)} call: it would change what enforces the policy, or run what cannot be known before it runs. No policy can allow it; a person can, by running it outside the agent.`
        : `Vigil's guard asks a person to confirm this ${printable(action)} call: what it runs cannot be known before it runs.`;
    const rest = violations.length > 0 ? decisionReason(verdictOfRules(violations), action, violations, involved, undefined, causes).split("\n").slice(1) : [];
    return [heading, ...guard.map((line) => `  ${printable(line)}`), ...rest].join("\n");
  }
  const heading = {
    block: `Vigil blocked this ${printable(action)} call: it breaks the policy.`,
    ask: `Vigil asks a person to confirm this ${printable(action)} call: it breaks a rule that needs approval.`,
    warn: `Vigil allowed this ${printable(action)} call with a warning: it breaks a rule that only warns.`,
    allow: `Vigil allowed this ${printable(action)} call: it breaks no rule of the policy.`,
  }[decision];
  // The rules that decide come first: those that contain the run, block, then ask, then warn.
  const order = { halt: 0, quarantine: 1, block: 2, ask: 3, warn: 4 };
  const sorted = [...violations].sort((a, b) => order[a.response] - order[b.response]);
  return [heading, ...sorted.map((v) => describeViolation(v, involved, causes(v)))].join("\n");
}

/** The verdict the rules alone give, for the lines that follow the guard's. */
function verdictOfRules(violations: readonly Violation[]): CallVerdict {
  return violations.some((v) => v.response === "block" || v.response === "halt" || v.response === "quarantine") ? "block" : violations.some((v) => v.response === "ask") ? "ask" : "warn";
}

/**
 * Why a call of a contained run is refused: the run was halted (or quarantined) by a rule, which
 * is named with its text and remediation, and what that means for every later call.
 */
export function containedReason(action: string, containment: Containment): string {
  const rule = `\`${printable(containment.policy)}.${printable(containment.name)}\``;
  const when = containment.by === "decision" ? `a call that would have broken it was refused (#${containment.position})` : `event #${containment.position} broke it`;
  const heading =
    containment.state === "halted"
      ? `Vigil refused this ${printable(action)} call: the run was halted by rule ${rule} (${when}). Every call of this run is refused; a person must look at what happened and start a new run.`
      : `Vigil refused this ${printable(action)} call: the run was quarantined by rule ${rule} (${when}). Only the calls the policy declares read-only (its \`read_only\` pattern) may run now, and this one is not one of them.`;
  return [heading, ...containmentDetails(containment)].join("\n");
}

/** What a call or an event that has just contained the run adds to its reason: what happens to every later call. */
export function containmentNote(containment: Containment): string {
  const rule = `\`${printable(containment.policy)}.${printable(containment.name)}\``;
  return containment.state === "halted"
    ? `The run is now halted by rule ${rule}: every later call of this run will be refused.`
    : `The run is now quarantined by rule ${rule}: only the calls the policy declares read-only (its \`read_only\` pattern) may run from now on.`;
}

function containmentDetails(containment: Containment): string[] {
  return [
    ...(containment.text !== undefined ? [`  requires: ${printable(oneLine(containment.text))}`] : []),
    ...(containment.remediation !== undefined ? [`  to comply: ${printable(oneLine(containment.remediation))}`] : []),
  ];
}

/** A text on one line: line breaks become spaces. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ").trim();
}

/** Control characters (C0, DEL, C1) written as escapes, so that a value cannot drive a terminal. */
export function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
