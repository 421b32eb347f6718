import { execFileSync } from "node:child_process";
import type { CheckedProgram, Counterexample, Difference, PolicyDiff, TraceEvent } from "@vigil/compiler";
import { Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { EXIT_INPUT_ERROR, InputError, loadCompiler, parsePositiveInteger, plural } from "./shared.js";

/**
 * `vigilc diff OLD NEW`: what a policy edit changes. Per rule and for the whole file: equivalent,
 * stricter (the new version rejects runs the old accepted), looser, or incomparable, each
 * difference shown by the shortest run found on which the versions disagree, in the canonical trace
 * format, replayed through the forward engine before it is shown. "Equivalent" is proven only for
 * identical meanings and for one-event rules over exact values; otherwise it says no run of up to
 * `--depth` events differs. `--base REF` compares a file with its version at a git revision.
 * Exit: 0 no difference found, 1 a difference, 2 bad input (or a run the engine does not confirm).
 */
export function registerDiff(program: Command, context: CommandContext): void {
  program
    .command("diff")
    .description("compare two versions of a policy: equivalent, stricter, looser or incomparable, with a run that shows each difference")
    .argument("<old-or-new>", "the old .vigil file (or, with --base, the new one)")
    .argument("[new]", "the new .vigil file")
    .option("-r, --rule <name>", "only this rule (NAME or POLICY.NAME)")
    .option("--depth <events>", "the longest run searched for a difference", parsePositiveInteger)
    .option("--base <ref>", "compare the file with its version at this git revision (a commit, a branch, HEAD)")
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json", "markdown"]).default("human"))
    .action(async (first: string, second: string | undefined, options: DiffCommandOptions) => {
      context.exitCode = await diff(context, first, second, options);
    });
}

type DiffCommandOptions = { rule?: string; depth?: number; base?: string; format: "human" | "json" | "markdown" };

async function diff(context: CommandContext, first: string, second: string | undefined, options: DiffCommandOptions): Promise<number> {
  const { io } = context;
  if ((options.base === undefined) === (second === undefined)) {
    io.stderr(options.base === undefined ? "error: give the old and the new policy file, or one file and --base REF\n" : "error: with --base, give only the new policy file\n");
    throw new InputError();
  }
  const newFile = second ?? first;
  const oldName = options.base !== undefined ? `${first}@${options.base}` : first;
  const oldText = options.base !== undefined ? atRevision(context, first, options.base) : await context.readText(first, "policy");
  const newText = await context.readText(newFile, "policy");
  const old = await checked(context, oldName, oldText);
  const next = await checked(context, newFile, newText);
  const { defaultDiffDepth, diffPolicies } = await loadCompiler();
  const depth = options.depth ?? defaultDiffDepth;
  if (options.rule !== undefined) {
    const names = (program: CheckedProgram) => program.policies.flatMap((p) => p.statements.flatMap((s) => [s.name, `${s.policy}.${s.name}`]));
    if (![...names(old), ...names(next)].includes(options.rule)) {
      io.stderr(`error: no rule named \`${options.rule}\` in either version\n`);
      throw new InputError();
    }
  }
  const result = await diffPolicies(old, next, { depth, ...(options.rule !== undefined ? { rule: options.rule } : {}) });
  const differences = [result.whole, ...result.rules.map((rule) => rule.difference)];
  if (options.format === "json") io.stdout(`${JSON.stringify(diffToJson(result, oldName, newFile), null, 2)}\n`);
  else io.stdout(options.format === "markdown" ? markdown(result, oldName, newFile) : human(result, oldName, newFile));
  const unconfirmed = differences.flatMap((d) => d.counterexamples).filter((c) => !c.confirmed);
  if (unconfirmed.length > 0) {
    io.stderr(`internal error: ${plural(unconfirmed.length, "run")} found by the search ${unconfirmed.length === 1 ? "is" : "are"} not confirmed by the forward engine; this is a bug in vigilc, report it with both files\n`);
    return EXIT_INPUT_ERROR;
  }
  const unknown = differences.find((d) => d.unknown !== undefined);
  if (unknown !== undefined) io.stderr(`warning: ${unknown.unknown}; the relation shown is what was found before\n`);
  return result.whole.relation === "equivalent" && result.rules.every((rule) => rule.change === "unchanged" || rule.difference.relation === "equivalent") ? 0 : 1;
}

/** The text of a file at a git revision (`git show REV:./FILE`, relative to the working directory). */
function atRevision(context: CommandContext, file: string, revision: string): string {
  try {
    return execFileSync("git", ["show", `${revision}:./${file.replace(/^\.\//, "")}`], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 64 * 2 ** 20 });
  } catch (error) {
    const stderr = (error as { stderr?: string }).stderr?.trim();
    context.io.stderr(`error: cannot read \`${file}\` at \`${revision}\` with git${stderr ? `: ${stderr}` : ""}\n`);
    throw new InputError();
  }
}

async function checked(context: CommandContext, name: string, text: string): Promise<CheckedProgram> {
  const { compile } = await loadCompiler();
  const compiled = compile(text, { file: name });
  const errors = compiled.diagnostics.filter((d) => d.severity === "error");
  context.printDiagnostics(errors);
  context.reportUnrendered();
  if (!compiled.ok) {
    context.io.stderr(`error: the policy \`${name}\` has ${plural(errors.length, "error")}; nothing was compared\n`);
    throw new InputError();
  }
  return compiled.program;
}

/** An event as a line of the canonical trace format. */
function canonical(event: TraceEvent): Record<string, unknown> {
  return {
    action: event.action,
    ...(Object.keys(event.args).length > 0 ? { args: event.args } : {}),
    // An absent status is `ok` in the canonical format; `null` is a call with no result.
    ...(event.status === "ok" ? {} : { status: event.status ?? null }),
    ...(event.output !== undefined ? { output: event.output } : {}),
    ...(event.time !== undefined ? { time: event.time } : {}),
  };
}

function relationText(difference: Difference): string {
  const basis = difference.basis === "proof" ? "proven" : `no other difference in runs of up to ${difference.depth} events`;
  switch (difference.relation) {
    case "equivalent":
      return difference.basis === "proof" ? "equivalent (proven)" : `no difference found in runs of up to ${difference.depth} events (not proven equivalent)`;
    case "stricter":
      return `stricter: the new version rejects runs the old accepts (${basis} the other way)`;
    case "looser":
      return `looser: the new version accepts runs the old rejects (${basis} the other way)`;
    case "incomparable":
      return "incomparable: each version rejects runs the other accepts";
  }
}

function counterexampleText(c: Counterexample, indent: string): string {
  const who = c.rejectedBy === "new" ? "the new version rejects and the old accepts" : "the old version rejects and the new accepts";
  const lines = c.events.map((event) => `${indent}  ${JSON.stringify(canonical(event))}`);
  return `${indent}a run ${who} (${plural(c.events.length, "event")}; breaks ${c.broken.join(", ") || "nothing"}${c.confirmed ? "" : "; NOT confirmed by the forward engine"}):\n${lines.join("\n")}\n`;
}

function human(result: PolicyDiff, oldName: string, newName: string): string {
  let out = `${oldName} → ${newName}\nwhole policy: ${relationText(result.whole)}\n`;
  for (const c of result.whole.counterexamples) out += counterexampleText(c, "  ");
  for (const rule of result.rules) {
    if (rule.change === "unchanged") {
      out += `rule ${rule.rule}: unchanged\n`;
      continue;
    }
    out += `rule ${rule.rule}: ${rule.change === "changed" ? "" : `${rule.change}; `}${relationText(rule.difference)}\n`;
    for (const c of rule.difference.counterexamples) out += counterexampleText(c, "  ");
  }
  return out;
}

function markdown(result: PolicyDiff, oldName: string, newName: string): string {
  const rows = result.rules.map((rule) => `| \`${rule.rule}\` | ${rule.change} | ${rule.change === "unchanged" ? "equivalent (proven)" : relationText(rule.difference)} |`);
  let out = `### Policy change: \`${oldName}\` → \`${newName}\`\n\n**Whole policy:** ${relationText(result.whole)}\n\n| rule | change | relation |\n|---|---|---|\n${rows.join("\n")}\n`;
  for (const c of result.whole.counterexamples) {
    const who = c.rejectedBy === "new" ? "Rejected by the new version, accepted by the old" : "Rejected by the old version, accepted by the new";
    out += `\n<details><summary>${who} (${plural(c.events.length, "event")}; breaks ${c.broken.map((b) => `\`${b}\``).join(", ")})</summary>\n\n\`\`\`jsonl\n${c.events.map((e) => JSON.stringify(canonical(e))).join("\n")}\n\`\`\`\n</details>\n`;
  }
  return out;
}

function differenceToJson(difference: Difference) {
  return {
    relation: difference.relation,
    basis: difference.basis,
    depth: difference.depth,
    ...(difference.unknown !== undefined ? { unknown: difference.unknown } : {}),
    counterexamples: difference.counterexamples.map((c) => ({ rejectedBy: c.rejectedBy, broken: c.broken, confirmed: c.confirmed, events: c.events.map(canonical) })),
  };
}

function diffToJson(result: PolicyDiff, oldName: string, newName: string) {
  return {
    old: oldName,
    new: newName,
    depth: result.depth,
    whole: differenceToJson(result.whole),
    rules: result.rules.map((rule) => ({ rule: rule.rule, change: rule.change, ...differenceToJson(rule.difference) })),
  };
}
