import { basename, dirname, relative, resolve } from "node:path";
import { ruleId, type RecordingRun, type Signature } from "@vigil/compiler";
import type { DraftCache, DraftResult, ModelProvider, ModelRequest } from "@vigil/draft";
import { InvalidArgumentError, Option, type Command } from "commander";
import type { CommandContext } from "./context.js";
import { groundingOption, messageActionsOf } from "./draft-runs.js";
import { readRuns, runArgumentFiles } from "./runs.js";
import { EXIT_INPUT_ERROR, InputError, loadCompiler, parsePositiveInteger, plural, writeOutput } from "./shared.js";

/**
 * `vigilc draft SPEC…`: a policy drafted from a skill's specification by a language model, in the
 * vocabulary of the given runs or tool schemas. Every rule carries its requirement and the line of
 * the specification it came from as `///`, and passed the parser, the checker and the closed-world
 * check (the model's drafts go back to it with the problems, at most `--max-repairs` times; what
 * still fails is taken out and reported). Requirements the model could not write are reported with
 * why. The runs' conversations are part of the vocabulary (`user_message`, `agent_message`) unless
 * `--no-messages`. A name no run shows, kept in a prohibition because the specification names it,
 * is marked `/// review:`. The same draft asked for again comes from the cache, with no request.
 * With `-o` and `--trace`, a test file pins the draft's verdict on each run (one test per run, a
 * file of several runs included); a run it cannot be judged on writes no test file.
 * Exit: 0 a policy was drafted; 2 bad input, no key, the model failing, or no rule surviving; 2 too,
 * after the policy is written, when a run cannot be judged or the analysis `--explain` asked for fails.
 */
export function registerDraft(program: Command, context: CommandContext): void {
  program
    .command("draft")
    .description("draft a policy from a skill's specification with a language model; only rules that pass the parser and the checker are kept")
    .argument("<spec...>", "SKILL.md (with the files it references), README.md#Section, or any text file; with --from-incident, the policy the run broke")
    .option("-t, --trace <run...>", "runs (files, directories, globs) whose signature (actions, keys, values) is the vocabulary and the closed world")
    .option("--schema <file>", "tool schemas whose signature is the vocabulary (an MCP tools/list result or OpenAI function definitions)")
    .option("--messages", "the runs' conversations are events too (user_message and agent_message, with their text), for rules about the conversation; the default when the runs carry messages")
    .option("--no-messages", "leave the runs' conversations out of the vocabulary")
    .option("-o, --output <file>", "write the policy here (default: standard output)")
    .option("--report <file>", "write the report (rules, their sources, unsupported and rejected requirements) as JSON")
    .option("--name <policy>", "the policy's name (default: the specification's folder)")
    .addOption(new Option("--provider <name>", "the model's provider (default: the one whose key is set)").choices(["anthropic", "openai"]))
    .option("--model <model>", "the model (default: claude-opus-4-6 or gpt-5)")
    .option("--max-repairs <rounds>", "how often a draft that fails a check goes back to the model", parseCount, 3)
    .option("--timeout <seconds>", "the longest wait for one answer", parsePositiveInteger, 300)
    .option("--stream", "stream the model's answers")
    .option("--explain", "print each requirement beside its rule and the rule's meaning in words, and what `vigilc analyze` finds in the draft")
    .option("--no-cache", "ask the model even when the same draft is cached")
    .option("--show-request", "print the request a model would be sent (instructions, specification, vocabulary) and send nothing; no key needed")
    .option("--answer <file>", "check a model's answer saved in a file (to the request --show-request prints) instead of asking one; no key, no repair round")
    .option("--from-incident <run>", "a run that broke --rule: draft a guardrail the monitor would have used to refuse its call before it ran (the --trace runs are benign: it must let them through)")
    .option("--rule <name>", "with --from-incident: the rule the run broke (NAME or POLICY.NAME)")
    .action(async (specs: string[], options: DraftCommandOptions) => {
      context.exitCode = await draft(context, specs, options);
    });
}

type DraftCommandOptions = {
  trace?: string[];
  schema?: string;
  messages?: boolean;
  output?: string;
  report?: string;
  name?: string;
  provider?: "anthropic" | "openai";
  model?: string;
  maxRepairs: number;
  timeout: number;
  stream?: boolean;
  explain?: boolean;
  cache: boolean;
  showRequest?: boolean;
  answer?: string;
  fromIncident?: string;
  rule?: string;
};

async function draft(context: CommandContext, specs: string[], options: DraftCommandOptions): Promise<number> {
  const { io } = context;
  if (options.fromIncident !== undefined || options.rule !== undefined) return guardrail(context, specs, options);
  const { DraftFailed, draftKey, draftMessages, draftPolicy, languageReference, ModelError, promptVersion, readSpecifications, recheckDraft } = await import("@vigil/draft");
  const reading = await readSpecifications(specs, { cwd: io.cwd });
  for (const note of reading.notes) io.stderr(`note: ${note}\n`);
  if (reading.errors.length > 0) {
    for (const error of reading.errors) io.stderr(`error: ${error}\n`);
    throw new InputError();
  }
  const { signature, vocabulary } = await groundingOption(context, options);
  const policyName = options.name ?? policyNameOf(resolve(io.cwd, specs[0]!.replace(/#.*$/, "")));
  if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(policyName)) {
    io.stderr(`error: \`${policyName}\` is not a policy name: give --name with letters, digits and _\n`);
    throw new InputError();
  }
  const reference = languageReference();
  const grounding = { sources: reading.sources, ...(signature !== undefined ? { signature } : {}), ...(vocabulary !== undefined ? { vocabulary } : {}) };
  const asking = await askingOf(context, options, () => draftMessages({ ...grounding, policyName, reference }));
  if (typeof asking === "number") return asking;
  const { provider, maxRepairs, cache } = asking;
  const key = draftKey({ promptVersion, reference, provider: provider.name, model: provider.model, policyName, maxRepairs, ...grounding });
  let result = cache !== undefined ? await cache.get(key) : undefined;
  // A kept draft goes through the checks again before it is used: the cache remembers answers, not verdicts.
  const stale = result !== undefined ? recheckDraft(result, grounding) : [];
  if (stale.length > 0) {
    io.stderr(`note: the cached draft no longer passes the checks (${stale.join("; ")}); asking again\n`);
    result = undefined;
  }
  const cached = result !== undefined;
  if (cached) io.stderr(`drafted before with the same specification, vocabulary and model: taken from the cache (${cache!.folder}) and checked again, no request made\n`);
  else {
    io.stderr(provider.name === "file" ? `checking the answer in ${provider.model}…\n` : `drafting with ${provider.name} ${provider.model}…\n`);
    try {
      result = await draftPolicy({
        ...grounding,
        provider,
        policyName,
        maxRepairs,
        reference,
        onRound: roundReporter(io, maxRepairs),
      });
    } catch (error) {
      if (error instanceof ModelError) io.stderr(`error: the model gave no draft: ${error.message}\n`);
      else if (error instanceof DraftFailed) io.stderr(`error: ${error.message}\n`);
      else throw error;
      return EXIT_INPUT_ERROR;
    }
    if (cache !== undefined) await cache.set(key, result).catch((error: unknown) => io.stderr(`warning: the draft could not be cached: ${String(error)}\n`));
  }
  const drafted = result!;
  const sources = [...specs, ...(options.trace ?? []), ...(options.schema !== undefined ? [options.schema] : [])];
  if (options.report !== undefined) await writeOutput(resolve(io.cwd, options.report), `${JSON.stringify({ key, cached, specifications: specs, traces: options.trace ?? [], ...(options.schema !== undefined ? { schema: options.schema } : {}), ...(vocabulary !== undefined ? { messages: vocabulary.messages } : {}), ...drafted }, null, 2)}\n`);
  io.stderr(reportText(drafted));
  // The analysis may fail (the solver, say): the policy is written all the same, and the failure said.
  let analysisFailed: string | undefined;
  if (options.explain === true && drafted.rules.length > 0) {
    // Runs given with --trace are samples of good behaviour: a prohibition they never break is expected.
    const explained = await explanation(drafted, signature, options.trace !== undefined && options.trace.length > 0);
    io.stderr(explained.text);
    analysisFailed = explained.failed;
  }
  if (drafted.rules.length === 0) {
    io.stderr("error: no rule of the draft passed the checks; nothing was written\n");
    return EXIT_INPUT_ERROR;
  }
  // A policy naming the conversation's messages is judged with them, here and by whoever checks it.
  const messageActions = await messageActionsOf(drafted.policy);
  const reviews = drafted.reviews ?? [];
  const header =
    `// Drafted by \`vigilc draft\` (${modelName(drafted)}, prompt ${promptVersion}) from ${specs.join(", ")}${sources.length > specs.length ? `, in the vocabulary of ${sources.slice(specs.length).join(", ")}` : ""}.\n// Every rule passed the parser and the checker${signature !== undefined ? " against that signature" : ""}; review each before enforcing it.\n` +
    (reviews.length > 0 ? `// ${plural(reviews.length, "name")} no run shows ${reviews.length === 1 ? "is" : "are"} kept where the specification names ${reviews.length === 1 ? "it" : "them"}: see the \`/// review:\` lines.\n` : "") +
    (messageActions.length > 0 ? `// It names the conversation's messages (${messageActions.map((action) => `\`${action}\``).join(", ")}): check runs with it using --messages.\n` : "") +
    "\n";
  const text = header + drafted.policy;
  if (options.output !== undefined) {
    const policyFile = resolve(io.cwd, options.output);
    await writeOutput(policyFile, text);
    io.stderr(`wrote ${options.output}\n`);
    if (analysisFailed !== undefined) io.stderr(`error: the analysis of the draft failed (${analysisFailed}); the policy was written without it: review it with \`vigilc analyze\`\n`);
    // The draft's verdicts on its sample runs, as tests to review and keep.
    const traces = options.trace ?? [];
    if (traces.length > 0) {
      const testFile = policyFile.replace(/(\.vigil)?$/, ".vigiltest");
      const tests = await testFileOf(text, policyFile, testFile, await runArgumentFiles(context, traces, io.cwd), messageActions.length > 0);
      if ("failures" in tests) {
        // A verdict that could not be judged is not written down as an expectation: no test file at all.
        io.stderr(`error: the draft could not be judged on ${plural(tests.failures.length, "run")} of ${tests.runs}, so no test file was written (the policy was):\n`);
        for (const failure of tests.failures.slice(0, FAILURES_SHOWN)) io.stderr(`  ${failure}\n`);
        if (tests.failures.length > FAILURES_SHOWN) io.stderr(`  … and ${tests.failures.length - FAILURES_SHOWN} more\n`);
        return EXIT_INPUT_ERROR;
      }
      await writeOutput(testFile, tests.text);
      io.stderr(
        `wrote ${relative(io.cwd, testFile)}: the draft's verdict on each of the ${plural(tests.runs, "run")} given, one test each (${tests.broken} break a rule), for review (a good run should hold)\n`,
      );
    }
  } else {
    io.stdout(text);
    if (analysisFailed !== undefined) io.stderr(`error: the analysis of the draft failed (${analysisFailed}); the policy was written without it: review it with \`vigilc analyze\`\n`);
  }
  // Asked for, the analysis is part of the result: its failure is one, after the policy is out.
  return analysisFailed !== undefined ? EXIT_INPUT_ERROR : 0;
}

/** How many runs that could not be judged are named on standard error. */
const FAILURES_SHOWN = 10;

/**
 * `--from-incident RUN --rule R POLICY`: a guardrail, one rule the monitor would have used to refuse
 * a call of the run at or before R's first witness, and that lets every call of the benign runs
 * (`--trace`) through; both checked by replaying the runs through the monitor.
 */
async function guardrail(context: CommandContext, specs: string[], options: DraftCommandOptions): Promise<number> {
  const { io } = context;
  if (options.fromIncident === undefined || options.rule === undefined || specs.length !== 1 || options.schema !== undefined) {
    io.stderr("error: a guardrail needs --from-incident RUN, --rule R and the one policy the run broke (benign runs with --trace; no --schema)\n");
    throw new InputError();
  }
  const { compile, mergeSignatures, signatureOf } = await loadCompiler();
  const { draftGuardrail, GuardrailFailed, guardrailKey, guardrailMessages, incidentOf, languageReference, ModelError, promptVersion, recheckGuardrail } = await import("@vigil/draft");
  const policyFile = specs[0]!;
  const policyText = await context.readText(resolve(io.cwd, policyFile), "policy");
  const policy = compile(policyText, { file: policyFile });
  if (!policy.ok) {
    context.printDiagnostics(policy.diagnostics.filter((d) => d.severity === "error"));
    io.stderr(`error: the policy \`${policyFile}\` has errors; nothing was drafted\n`);
    throw new InputError();
  }
  const incidents = await readRuns(context, [options.fromIncident], "drafted");
  if (incidents.length !== 1) {
    io.stderr(`error: \`${options.fromIncident}\` holds ${incidents.length} runs: name the one that broke the rule\n`);
    throw new InputError();
  }
  const incident = incidents[0]!;
  const benign = await readRuns(context, options.trace ?? [], "drafted");
  const signature = mergeSignatures([incident, ...benign].map((run) => signatureOf(run.events)));
  const reference = languageReference();
  const subject = { policy, policyText, rule: options.rule, incident, benign, signature, reference };
  let broken;
  try {
    broken = incidentOf(subject);
  } catch (error) {
    if (!(error instanceof GuardrailFailed)) throw error;
    io.stderr(`error: ${error.message}\n`);
    return EXIT_INPUT_ERROR;
  }
  const asking = await askingOf(context, options, () => guardrailMessages(subject, broken));
  if (typeof asking === "number") return asking;
  const { provider, maxRepairs, cache } = asking;
  const key = guardrailKey({ promptVersion, reference, provider: provider.name, model: provider.model, maxRepairs, ruleText: broken.ruleText, incident, benign, signature });
  const kept = cache !== undefined ? await cache.getGuardrail(key) : undefined;
  // A kept guardrail is replayed again before it is used: the cache remembers answers, not verdicts.
  const rechecked = kept !== undefined ? await recheckGuardrail(kept, subject) : undefined;
  let result;
  if (rechecked?.ok === true) {
    result = rechecked.result;
    io.stderr(`drafted before for the same rule, runs and model: taken from the cache (${cache!.folder}) and replayed again, no request made\n`);
  } else {
    if (rechecked?.ok === false) io.stderr(`note: the cached guardrail no longer passes the checks (${rechecked.problems.join("; ")}); asking again\n`);
    io.stderr(provider.name === "file" ? `checking the guardrail in ${provider.model}…\n` : `drafting a guardrail with ${provider.name} ${provider.model}…\n`);
    try {
      result = await draftGuardrail({ ...subject, provider, maxRepairs, onRound: roundReporter(io, maxRepairs) });
    } catch (error) {
      if (error instanceof GuardrailFailed || error instanceof ModelError) {
        io.stderr(`error: ${error.message}\n`);
        return EXIT_INPUT_ERROR;
      }
      throw error;
    }
    if (cache !== undefined) await cache.setGuardrail(key, result).catch((error: unknown) => io.stderr(`warning: the guardrail could not be cached: ${String(error)}\n`));
  }
  io.stderr(
    `${result.rule} refuses event ${result.refusesAt} (\`${result.refusedAction}\`) of ${incident.name} before it runs (${result.broken} was broken at event ${result.witness}), and lets ${plural(result.benignRuns, "benign run")} through (${plural(result.benignCalls, "event")})\n`,
  );
  const text = `// A guardrail drafted by \`vigilc draft --from-incident\` (${modelName(result)}) after ${incident.name} broke ${result.broken}.\n// Checked: the monitor refuses event ${result.refusesAt} of that run with it, and no call of ${benign.map((run) => run.name).join(", ") || "any benign run (none given)"}; review it before enforcing it.\n\n${result.policy}`;
  if (options.output !== undefined) {
    await writeOutput(resolve(io.cwd, options.output), text);
    io.stderr(`wrote ${options.output}\n`);
  } else io.stdout(text);
  return 0;
}

/**
 * Who a draft or a guardrail is asked of. With `--show-request`, no one: the request is printed and
 * the command ends (0). Else a provider's API (a key is needed) or the one answer saved in
 * `--answer FILE` (no key, no repair round), with the repair rounds it gets and the cache (none for
 * an answer from a file, which is checked anew each time, or with `--no-cache`); or, when there is
 * no one to ask, the exit code (2) after saying why.
 */
async function askingOf(context: CommandContext, options: DraftCommandOptions, request: () => ModelRequest): Promise<number | { provider: ModelProvider; maxRepairs: number; cache?: DraftCache }> {
  const { answerFromFile, createProvider, DraftCache, defaultCacheFolder } = await import("@vigil/draft");
  const { io } = context;
  if (options.showRequest === true) {
    io.stdout(requestText(request()));
    return 0;
  }
  const cache = options.cache ? new DraftCache(defaultCacheFolder(io.env ?? process.env)) : undefined;
  if (options.answer !== undefined) {
    const conflicting = [options.provider !== undefined && "--provider", options.model !== undefined && "--model", options.stream === true && "--stream"].filter((flag) => flag !== false);
    if (conflicting.length > 0) {
      io.stderr(`error: --answer checks an answer saved in a file: ${conflicting.join(", ")} ${conflicting.length === 1 ? "does" : "do"} not apply\n`);
      return EXIT_INPUT_ERROR;
    }
    return { provider: answerFromFile(options.answer, await context.readText(resolve(io.cwd, options.answer), "answer")), maxRepairs: 0 };
  }
  const made = createProvider({
    ...(options.provider !== undefined ? { provider: options.provider } : {}),
    ...(options.model !== undefined ? { model: options.model } : {}),
    stream: options.stream === true,
    timeoutMs: options.timeout * 1000,
    env: io.env ?? process.env,
  });
  if (!made.ok) {
    io.stderr(`error: ${made.message}; or, with no key, print the request with --show-request and check a model's saved answer with --answer FILE\n`);
    return EXIT_INPUT_ERROR;
  }
  return { provider: made.provider, maxRepairs: options.maxRepairs, ...(cache !== undefined ? { cache } : {}) };
}

/** Says after each answer how many problems it had, and whether they go back to the model. */
function roundReporter(io: CommandContext["io"], maxRepairs: number): (round: number, problems: readonly string[]) => void {
  return (round, problems) => io.stderr(`answer ${round}: ${problems.length === 0 ? "passes every check" : `${plural(problems.length, "problem")}${round <= maxRepairs ? ", sent back" : ""}`}\n`);
}

/** Who answered, for a header: `anthropic claude-opus-4-6`, or `the answer in FILE`. */
function modelName(answered: { readonly provider: string; readonly model: string }): string {
  return answered.provider === "file" ? `the answer in ${answered.model}` : `${answered.provider} ${answered.model}`;
}

/**
 * A request as text: what a model would be sent, each message under a `=== role ===` line (not a
 * markdown heading: the language reference inside the system message has its own).
 */
function requestText(request: ModelRequest): string {
  const parts = [`<!-- the request vigilc draft sends: ${request.messages.length + 1} messages; answers of up to ${request.maxTokens} tokens -->`, `=== system ===\n\n${request.system}`, ...request.messages.map((message) => `=== ${message.role} ===\n\n${message.content}`)];
  return `${parts.join("\n\n")}\n`;
}

/**
 * A test file (testing.md) pinning the draft's verdicts on the sample runs: one test per run, a
 * file holding several runs (a τ-bench results file) giving one test per run of it
 * (`trace "FILE" run "NAME"`). Every run must be judged: a run that does not read, or on which a
 * rule is undecided, is a failure named in `failures`, and then no test file is made (an empty or
 * undecided verdict is never written down as an expectation). With `messages`, the runs are judged
 * with their conversations as events (`trace "FILE" messages`), as the policy names them.
 */
async function testFileOf(
  policyText: string,
  policyFile: string,
  testFile: string,
  traces: readonly string[],
  messages: boolean,
): Promise<{ text: string; runs: number; broken: number } | { failures: string[]; runs: number }> {
  const { compile, judgeRun, readRunFile } = await loadCompiler();
  const compiled = compile(policyText, { file: policyFile });
  const from = (file: string) => relative(dirname(testFile), file).split("\\").join("/");
  const lines = [`policy ${JSON.stringify(from(policyFile))}`, ""];
  const failures: string[] = [];
  const names = new Set<string>();
  let runs = 0;
  let brokenRuns = 0;
  const nameOf = (s: { policy: string; name: string }) => (s.name === "all" || s.name === "others" ? ruleId(s) : s.name);
  // A run is named by its file's name, or by its path where several files share the name (a corpus of directories).
  const shared = new Set(traces.map((trace) => basename(trace)).filter((name, index, all) => all.indexOf(name) !== index));
  const fileName = (trace: string) => (shared.has(basename(trace)) ? from(trace) : basename(trace));
  for (const trace of traces) {
    const runFile = await readRunFile(trace);
    if (runFile !== undefined && "code" in runFile) {
      runs++;
      failures.push(`${fileName(trace)}: ${runFile.message}`);
      continue;
    }
    const each: { name: string; run?: RecordingRun }[] = runFile === undefined ? [{ name: fileName(trace) }] : runFile.runs.map((run) => ({ name: `${fileName(trace)}#${run.name}`, run }));
    for (const { name, run } of each) {
      runs++;
      let judged: Awaited<ReturnType<typeof judgeRun>>;
      try {
        const withMessages = messages ? { messages: true } : {};
        judged =
          run === undefined
            ? await judgeRun(compiled, { file: trace }, withMessages)
            : await judgeRun(compiled, { file: trace, text: run.text, run: run.name, origin: run.origin }, { traceFormat: "tau-bench", ...withMessages });
      } catch (error) {
        failures.push(`${name}: judging failed: ${error instanceof Error ? error.message : String(error)}`);
        continue;
      }
      const report = judged.report;
      if (report === undefined) {
        const error = judged.traceDiagnostics.find((d) => d.severity === "error") ?? judged.signatureDiagnostics.find((d) => d.severity === "error");
        failures.push(`${name}: not judged: ${error !== undefined ? `${error.code} ${error.message}` : `stopped (${judged.stopped ?? "no report"})`}`);
        continue;
      }
      const undecided = report.statements.filter((s) => s.undecided !== undefined);
      if (undecided.length > 0) {
        failures.push(`${name}: ${undecided.map((s) => `\`${ruleId(s)}\` undecided (${s.undecided})`).join("; ")}`);
        continue;
      }
      const statements = report.statements;
      const broken = statements.filter((s) => !s.holds);
      if (broken.length > 0) brokenRuns++;
      let testName = name;
      for (let k = 2; names.has(testName); k++) testName = `${name} (${k})`;
      names.add(testName);
      lines.push(
        `/// The draft's verdicts on ${name}, as it judged them when it was drafted: check each (a good run should hold).`,
        `test ${JSON.stringify(testName)} {`,
        `  trace ${JSON.stringify(from(trace))}${run !== undefined ? ` run ${JSON.stringify(run.name)}` : ""}${messages ? " messages" : ""}`,
        ...(broken.length === 0
          ? ["  expect all hold"]
          : [...broken.map((s) => `  expect ${nameOf(s)} violated${s.form === "until" || s.witnesses.length === 0 ? "" : ` at ${s.witnesses.join(", ")}`}`), ...(broken.length < statements.length ? ["  expect others hold"] : [])]),
        "}",
        "",
      );
    }
  }
  return failures.length > 0 ? { failures, runs } : { text: lines.join("\n"), runs, broken: brokenRuns };
}

/**
 * For review: each rule beside the text it came from and its meaning in words (the editor's hover
 * on a rule), then what the analysis finds in the draft under the signature (a rule that never
 * fires or always breaks, an action made impossible, a conflict: the paper's main source of false
 * positives).
 */
async function explanation(result: DraftResult, signature: Signature | undefined, samples: boolean): Promise<{ text: string; failed?: string }> {
  const { analyzePolicy, compile, defaultAnalysisDepth, describeRule } = await loadCompiler();
  const compiled = compile(result.policy, { file: "draft" });
  const plain = (markdown: string) => markdown.replace(/\*\*/g, "");
  const indent = (text: string) => text.split("\n").map((line) => `      ${line}`).join("\n");
  let out = "\nexplained:\n";
  for (const policy of compiled.syntax.policies) {
    for (const item of policy.items) {
      if (item.kind !== "RuleDecl") continue;
      const traced = result.rules.find((rule) => rule.policy === policy.name.text && rule.name === item.name.text);
      const meaning = describeRule({ ...item, doc: undefined }, policy).split("\n\n").slice(1).map(plain).join("\n");
      out += `\n  ${ruleId({ policy: policy.name.text, name: item.name.text })}${traced !== undefined ? ` (${traced.source})` : ""}\n`;
      if (traced !== undefined) out += `    the specification says:\n${indent(traced.cited)}\n`;
      out += `    the rule:\n${indent(result.policy.slice(item.span.start, item.span.end))}\n    what it means:\n${indent(meaning)}\n`;
    }
  }
  const heading = `\nanalysis (runs of up to ${defaultAnalysisDepth} events${signature !== undefined ? ", under the signature" : ""})`;
  let findings: Awaited<ReturnType<typeof analyzePolicy>>;
  try {
    if (!compiled.ok) throw new Error("the draft does not compile on its own");
    findings = await analyzePolicy(compiled.program, { ...(signature !== undefined ? { signature, samples } : {}) });
  } catch (error) {
    // Never "nothing found" for an analysis that did not finish.
    const failed = error instanceof Error ? error.message : String(error);
    return { text: `${out}${heading}: failed, nothing is known of it: ${failed}\n`, failed };
  }
  const warnings = findings.filter((finding) => finding.severity !== "info").length;
  const notes = findings.length - warnings;
  const counted = [...(warnings > 0 ? [plural(warnings, "finding")] : []), ...(notes > 0 ? [plural(notes, "note")] : [])].join(", ");
  out += `${heading}: ${findings.length === 0 ? "nothing found" : counted}\n`;
  for (const finding of findings) {
    const owner = compiled.syntax.policies.flatMap((p) => p.items.map((item) => ({ p, item }))).find(({ item }) => finding.span !== undefined && item.span.start <= finding.span.start && finding.span.start <= item.span.end);
    out += `  ${finding.code} (${finding.severity})${owner !== undefined ? ` ${ruleId({ policy: owner.p.name.text, name: owner.item.name.text })}` : ""}: ${finding.message}${finding.help !== undefined ? `\n      help: ${finding.help}` : ""}\n`;
  }
  return { text: out };
}

/** What was drafted, taken out and left unsupported, in words. */
function reportText(result: DraftResult): string {
  let out = `${plural(result.rules.length, "rule")} drafted in ${plural(result.rounds, "answer")}`;
  out += result.unsupported.length > 0 ? `; ${plural(result.unsupported.length, "requirement")} the model could not write` : "";
  out += result.rejected.length > 0 ? `; ${plural(result.rejected.length, "declaration")} taken out after failing the checks` : "";
  const reviews = result.reviews ?? [];
  out += reviews.length > 0 ? `; ${plural(reviews.length, "name")} no run shows kept for review` : "";
  out += "\n";
  for (const rule of result.rules) out += `  ✓ ${ruleId(rule)} ← ${rule.source}: ${oneLine(rule.requirement)}\n`;
  for (const item of result.unsupported) out += `  ✗ ${item.source}: ${oneLine(item.requirement)} — not written: ${oneLine(item.why)}\n`;
  for (const item of result.rejected) out += `  ✗ ${item.name}${item.source !== undefined ? ` (${item.source})` : ""} taken out: ${item.problems.map(oneLine).join("; ")}\n`;
  for (const item of reviews) out += `  ? ${item.name}${item.source !== undefined ? ` (${item.source})` : ""} kept for review: ${oneLine(item.review)}\n`;
  for (const warning of result.warnings) out += `  ${warning}\n`;
  return out;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, " ");
}

/** The policy's name from the specification's place: a skill's folder, else the file's name. */
function policyNameOf(file: string): string {
  const name = /^(skill|readme)\.md$/i.test(basename(file)) ? basename(dirname(file)) : basename(file).replace(/\.[^.]*$/, "");
  const identifier = name.replace(/[^A-Za-z0-9_]+/g, "_").replace(/^_+|_+$/g, "");
  return /^[A-Za-z_]/.test(identifier) ? identifier : `skill_${identifier}`;
}

/** Commander's parser of `--max-repairs`: 0 to 10. */
function parseCount(text: string): number {
  if (!/^\d+$/.test(text) || Number(text) > 10) throw new InvalidArgumentError("must be a count from 0 to 10");
  return Number(text);
}
