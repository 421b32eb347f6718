import { ruleId, type CheckedProgram, type CheckedStatement } from "@vigil/compiler";
import { Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { EXIT_INPUT_ERROR, InputError, loadCompiler, parsePositiveInteger, plural } from "./shared.js";

/**
 * `vigilc diff OLD NEW`: what a policy edit changes. Per rule and for the whole file: equivalent,
 * stricter (the new version rejects runs the old accepted), looser, or incomparable, each
 * difference shown by the shortest run found on which the versions disagree, in the canonical trace
 * format, replayed through the forward engine before it is shown. "Equivalent" is proven only for
 * identical meanings and for one-event rules whose every class of values was searched; otherwise it
 * says no run of up to `--depth` events (widened for limits) differs, over every class of values the
 * rules tell apart, and names what the search left out. `--base REF` compares a file with its version at a git revision.
 * Rules are paired by `POLICY.RULE`, or (`--pair-by source`, and on its own when no name is in both
 * versions and both cite specification lines) by the lines their `/// source:` lines cite, so that
 * a drafted policy can be compared with one written by hand from the same specification.
 * Exit: 0 no difference found, 1 a difference, 2 bad input (or a run the engine does not confirm).
 */
export function registerDiff(program: Command, context: CommandContext): void {
  program
    .command("diff")
    .description("compare two versions of a policy: equivalent, stricter, looser or incomparable, with a run that shows each difference")
    .argument("<old-or-new>", "the old .vigil file (or, with --base, the new one)")
    .argument("[new]", "the new .vigil file")
    .option("-r, --rule <name>", "only this rule (NAME or POLICY.NAME)")
    .option("--depth <events>", "the longest run searched for a difference (further when a rule needs it: a limit of N needs N + 1 events)", parsePositiveInteger)
    .option("--rlimit <units>", "the solver's resource limit per search (Z3 rlimit, deterministic)", parsePositiveInteger)
    .option("--base <ref>", "compare the file with its version at this git revision (a commit, a branch, HEAD)")
    .addOption(
      new Option("--pair-by <how>", "pair the rules of the two versions by name (POLICY.RULE) or by the specification lines their `/// source:` lines cite; auto: by source when no name is in both and both cite")
        .choices(["auto", "name", "source"])
        .default("auto"),
    )
    .addOption(new Option("-f, --format <format>", "output format").choices(["human", "json", "markdown"]).default("human"))
    .action(async (first: string, second: string | undefined, options: DiffCommandOptions) => {
      context.exitCode = await diff(context, first, second, options);
    });
}

type DiffCommandOptions = { rule?: string; depth?: number; rlimit?: number; base?: string; pairBy: "auto" | "name" | "source"; format: "human" | "json" | "markdown" };

async function diff(context: CommandContext, first: string, second: string | undefined, options: DiffCommandOptions): Promise<number> {
  const { io } = context;
  if ((options.base === undefined) === (second === undefined)) {
    io.stderr(options.base === undefined ? "error: give the old and the new policy file, or one file and --base REF\n" : "error: with --base, give only the new policy file\n");
    throw new InputError();
  }
  const newFile = second ?? first;
  const oldName = options.base !== undefined ? `${first}@${options.base}` : first;
  const oldText = options.base !== undefined ? await atRevision(context, first, options.base) : await context.readText(first, "policy");
  const newText = await context.readText(newFile, "policy");
  const old = await checked(context, oldName, oldText);
  const next = await checked(context, newFile, newText);
  const { defaultDiffDepth, diffPolicies } = await loadCompiler();
  const depth = options.depth ?? defaultDiffDepth;
  if (options.rule !== undefined) {
    const names = (program: CheckedProgram) => program.policies.flatMap((p) => p.statements.flatMap((s) => [s.name, ruleId(s)]));
    if (![...names(old), ...names(next)].includes(options.rule)) {
      io.stderr(`error: no rule named \`${options.rule}\` in either version\n`);
      throw new InputError();
    }
  }
  await notePairing(context, options.pairBy, [oldName, old], [newFile, next]);
  const result = await diffPolicies(old, next, {
    depth,
    pairBy: options.pairBy,
    ...(options.rule !== undefined ? { rule: options.rule } : {}),
    ...(options.rlimit !== undefined ? { rlimit: options.rlimit } : {}),
  });
  const { noDifferenceFound, policyDiffMarkdown, policyDiffText, policyDiffToJson, unconfirmedRuns } = await loadCompiler();
  if (options.format === "json") io.stdout(`${JSON.stringify(policyDiffToJson(result, oldName, newFile), null, 2)}\n`);
  else io.stdout(options.format === "markdown" ? policyDiffMarkdown(result, oldName, newFile) : policyDiffText(result, oldName, newFile));
  const unconfirmed = unconfirmedRuns(result);
  if (unconfirmed.length > 0) {
    io.stderr(`internal error: ${plural(unconfirmed.length, "run")} found by the search ${unconfirmed.length === 1 ? "is" : "are"} not confirmed by the forward engine; this is a bug in vigilc, report it with both files\n`);
    return EXIT_INPUT_ERROR;
  }
  const unknown = [result.whole, ...result.rules.map((rule) => rule.difference)].find((d) => d.unknown !== undefined);
  if (unknown !== undefined) io.stderr(`warning: ${unknown.unknown}; the relation shown is what was found before\n`);
  return noDifferenceFound(result) ? 0 : 1;
}

/**
 * What stands in the way of pairing by source, said before the comparison: with `--pair-by
 * source`, a version none of whose rules cites a line (each of the other's rules is then `added`
 * or `removed`); on `auto`, versions with no name in common that stay paired by name because one
 * of them cites nothing.
 */
async function notePairing(context: CommandContext, pairBy: DiffCommandOptions["pairBy"], old: [string, CheckedProgram], next: [string, CheckedProgram]): Promise<void> {
  if (pairBy === "name") return;
  const { citesSources } = await loadCompiler();
  const version = ([name, program]: [string, CheckedProgram]): Version => ({ name, statements: program.policies.flatMap((p) => p.statements) });
  const [before, after] = [version(old), version(next)];
  const silent = [before, after].filter((version) => version.statements.length > 0 && !citesSources(version.statements));
  if (silent.length === 0) return;
  const named = silent.map((version) => `\`${version.name}\``).join(" and ");
  const cite = "(`/// source: NAME:LINE`, or `NAME:FIRST-LAST`)";
  if (pairBy === "source") {
    context.io.stderr(`warning: no rule of ${named} cites a specification line ${cite}: its rules cannot be paired, and are compared with no rule\n`);
  } else if (before.statements.length > 0 && after.statements.length > 0 && !sharesAName(before.statements, after.statements)) {
    context.io.stderr(`note: no rule name is in both versions, and no rule of ${named} cites a specification line ${cite}: the rules are paired by name, so each is added or removed\n`);
  }
}

type Version = { readonly name: string; readonly statements: readonly CheckedStatement[] };

/** Whether a rule of one version has the `POLICY.RULE` of a rule of the other. */
function sharesAName(old: readonly CheckedStatement[], next: readonly CheckedStatement[]): boolean {
  const names = new Set(old.map(ruleId));
  return next.some((s) => names.has(ruleId(s)));
}

/** The text of a file at a git revision. */
async function atRevision(context: CommandContext, file: string, revision: string): Promise<string> {
  const { readFileAtRevision } = await loadCompiler();
  const read = await readFileAtRevision(file, revision);
  if (read.ok) return read.text;
  context.io.stderr(`error: cannot read \`${file}\` at \`${revision}\` with git: ${read.reason}\n`);
  throw new InputError();
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
