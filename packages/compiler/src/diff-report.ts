import type { Counterexample, Difference } from "@vigil/smt";
import type { TraceEvent } from "@vigil/trace";
import type { PolicyDiff, RuleDiff } from "./diff-policies.js";

/**
 * A policy diff (`diffPolicies`) as people and programs read it: text for a terminal, markdown for
 * a pull request or an editor, and JSON. Every runner of a diff (the CLI, the language server)
 * renders it here, so that each says the same thing, with the same honesty about what was proven.
 * `oldName` and `newName` say which versions were compared (a file, `FILE@REF`).
 */

/** An event as a line of the canonical trace format (what `vigilc check` reads). */
export function canonicalEvent(event: TraceEvent): Record<string, unknown> {
  return {
    action: event.action,
    ...(Object.keys(event.args).length > 0 ? { args: event.args } : {}),
    // An absent status is `ok` in the canonical format; `null` is a call with no result.
    ...(event.status === "ok" ? {} : { status: event.status ?? null }),
    ...(event.output !== undefined ? { output: event.output } : {}),
    ...(event.time !== undefined ? { time: event.time } : {}),
  };
}

/**
 * What a bounded search covered, in words: how long the runs were, and over which values (every
 * class of values the rules tell apart, when they read any), then what it left out. A "no
 * difference" holds of every run within it.
 */
export function searchedText(difference: Difference): string {
  const values = difference.values ? " over every class of values the rules tell apart" : "";
  return `runs of up to ${difference.depth} events${values}`;
}

/** What the search left out, as a clause to add to a bounded answer (empty when nothing). */
function leftOutText(difference: Difference): string {
  return difference.leftOut.length === 0 ? "" : `; the search left out ${difference.leftOut.join("; ")}`;
}

/** What a difference says, in words: the relation, and whether it was proven or searched for, and how far. */
export function relationText(difference: Difference): string {
  const basis = difference.basis === "proof" ? "proven" : `no other difference in ${searchedText(difference)}`;
  const leftOut = difference.basis === "proof" ? "" : leftOutText(difference);
  switch (difference.relation) {
    case "equivalent":
      return difference.basis === "proof" ? "equivalent (proven)" : `no difference found in ${searchedText(difference)} (not proven equivalent${leftOut})`;
    case "stricter":
      return `stricter: the new version rejects runs the old accepts (${basis} the other way${leftOut})`;
    case "looser":
      return `looser: the new version accepts runs the old rejects (${basis} the other way${leftOut})`;
    case "incomparable":
      return "incomparable: each version rejects runs the other accepts";
  }
}

function counterexampleText(c: Counterexample, indent: string): string {
  const who = c.rejectedBy === "new" ? "the new version rejects and the old accepts" : "the old version rejects and the new accepts";
  const lines = c.events.map((event) => `${indent}  ${JSON.stringify(canonicalEvent(event))}`);
  return `${indent}a run ${who} (${plural(c.events.length, "event")}; breaks ${c.broken.join(", ") || "nothing"}${c.confirmed ? "" : "; NOT confirmed by the forward engine"}):\n${lines.join("\n")}\n`;
}

/** How the rules were paired, as a line under the heading (none when by name, as ever). */
function pairingText(result: PolicyDiff): string | undefined {
  if (result.pairedBy === "name") return undefined;
  return `rules paired by the specification lines they cite (\`/// source:\`)${result.automatic ? ", as no rule name is in both versions" : ""}`;
}

/** What a rule paired by source is: the lines its couple cites in common, or why it is in none. */
function pairedText(rule: RuleDiff): string {
  const paired = rule.paired!;
  const cites = paired.cites.join(", ");
  if (paired.kind === "couple") return ` (${cites})`;
  if (paired.kind === "together") return ` together (${cites})`;
  if (paired.cites.length === 0) return " (it cites no specification line)";
  return ` (no rule of the ${paired.old.length > 0 ? "new" : "old"} version cites ${cites})`;
}

/** A rule's line in the text: `rule NAME: change; relation`, or for rules paired by source, what was compared. */
function ruleHeading(rule: RuleDiff): string {
  if (rule.paired === undefined) {
    if (rule.change === "unchanged") return `rule ${rule.rule}: unchanged`;
    return `rule ${rule.rule}: ${rule.change === "changed" ? "" : `${rule.change}; `}${relationText(rule.difference)}`;
  }
  const kind = rule.paired.kind === "together" ? "rules" : "rule";
  const change = rule.change === "added" || rule.change === "removed" ? `${rule.change}; ` : "";
  return `${kind} ${rule.rule}${pairedText(rule)}: ${change}${relationText(rule.difference)}`;
}

/** The diff as text for a terminal: the whole policy, then each rule, each difference with its run. */
export function policyDiffText(result: PolicyDiff, oldName: string, newName: string): string {
  const pairing = pairingText(result);
  let out = `${oldName} → ${newName}\n${pairing !== undefined ? `${pairing}\n` : ""}whole policy: ${relationText(result.whole)}\n`;
  for (const c of result.whole.counterexamples) out += counterexampleText(c, "  ");
  for (const rule of result.rules) {
    out += `${ruleHeading(rule)}\n`;
    if (rule.change !== "unchanged") for (const c of rule.difference.counterexamples) out += counterexampleText(c, "  ");
  }
  return out;
}

/** The diff as markdown: a table of the rules, then the runs on which the whole policies differ. */
export function policyDiffMarkdown(result: PolicyDiff, oldName: string, newName: string): string {
  const relation = (rule: RuleDiff) => (rule.change === "unchanged" ? "equivalent (proven)" : relationText(rule.difference));
  const pairing = pairingText(result);
  const bySource = result.pairedBy === "source";
  const named = (rule: RuleDiff) => (rule.paired === undefined ? `\`${rule.rule}\`` : `${rule.paired.old.map((r) => `\`${r}\``).join(" + ") || "—"} ↔ ${rule.paired.new.map((r) => `\`${r}\``).join(" + ") || "—"}`);
  const rows = result.rules.map((rule) => `| ${named(rule)} |${bySource ? ` ${rule.paired?.cites.join(", ") ?? ""} |` : ""} ${rule.change} | ${relation(rule)} |`);
  const head = bySource ? "| rules | lines cited | change | relation |\n|---|---|---|---|" : "| rule | change | relation |\n|---|---|---|";
  let out = `### Policy change: \`${oldName}\` → \`${newName}\`\n\n${pairing !== undefined ? `${pairing[0]!.toUpperCase()}${pairing.slice(1)}.\n\n` : ""}**Whole policy:** ${relationText(result.whole)}\n\n${head}\n${rows.join("\n")}\n`;
  for (const c of result.whole.counterexamples) {
    const who = c.rejectedBy === "new" ? "Rejected by the new version, accepted by the old" : "Rejected by the old version, accepted by the new";
    out += `\n<details><summary>${who} (${plural(c.events.length, "event")}; breaks ${c.broken.map((b) => `\`${b}\``).join(", ")})</summary>\n\n\`\`\`jsonl\n${c.events.map((e) => JSON.stringify(canonicalEvent(e))).join("\n")}\n\`\`\`\n</details>\n`;
  }
  return out;
}

function differenceToJson(difference: Difference) {
  return {
    relation: difference.relation,
    basis: difference.basis,
    depth: difference.depth,
    values: difference.values,
    leftOut: difference.leftOut,
    ...(difference.unknown !== undefined ? { unknown: difference.unknown } : {}),
    counterexamples: difference.counterexamples.map((c) => ({ rejectedBy: c.rejectedBy, broken: c.broken, confirmed: c.confirmed, events: c.events.map(canonicalEvent) })),
  };
}

/** The diff as JSON (`vigilc diff --format json`'s shape). */
export function policyDiffToJson(result: PolicyDiff, oldName: string, newName: string) {
  return {
    old: oldName,
    new: newName,
    depth: result.depth,
    pairedBy: result.pairedBy,
    whole: differenceToJson(result.whole),
    rules: result.rules.map((rule) => ({ rule: rule.rule, change: rule.change, ...(rule.paired !== undefined ? rule.paired : {}), ...differenceToJson(rule.difference) })),
  };
}

/** Whether no difference was found (every rule unchanged or equivalent, and the whole too). */
export function noDifferenceFound(result: PolicyDiff): boolean {
  return result.whole.relation === "equivalent" && result.rules.every((rule) => rule.change === "unchanged" || rule.difference.relation === "equivalent");
}

/** The runs that the forward engine did not confirm (a bug, when there are any). */
export function unconfirmedRuns(result: PolicyDiff): Counterexample[] {
  return [result.whole, ...result.rules.map((rule) => rule.difference)].flatMap((d) => d.counterexamples).filter((c) => !c.confirmed);
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
