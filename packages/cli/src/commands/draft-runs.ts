import { relative } from "node:path";
import type { Diagnostic, Signature } from "@vigil/compiler";
import type { Vocabulary } from "@vigil/draft";
import type { CommandContext } from "./context.js";
import { runArgumentFiles } from "./runs.js";
import { InputError, loadCompiler, plural } from "./shared.js";

/**
 * What `vigilc draft` reads of its runs or tool schemas: the signature (the closed world) and, for
 * runs, the vocabulary per action the model is shown (`readRunsVocabulary` of @vigil/draft, the one
 * place it is built). The conversation's messages are events of the runs unless `--no-messages`:
 * runs that carry them give `user_message` and `agent_message`, and the command says so.
 */

/** `--messages` (true), `--no-messages` (false), or neither (undefined: the messages the runs carry). */
export interface GroundingOptions {
  readonly trace?: readonly string[];
  readonly schema?: string;
  readonly messages?: boolean;
}

export interface Grounding {
  readonly signature?: Signature;
  readonly vocabulary?: Vocabulary;
}

/** The vocabulary: the runs' (their signature and their vocabulary per action), or the tool schemas' signature. */
export async function groundingOption(context: CommandContext, options: GroundingOptions): Promise<Grounding> {
  const traces = options.trace ?? [];
  const { io } = context;
  if (traces.length > 0 && options.schema !== undefined) {
    io.stderr("error: give --trace or --schema, not both\n");
    throw new InputError();
  }
  if (options.messages === true && traces.length === 0) {
    io.stderr("error: --messages goes with --trace (the messages of the recorded conversations)\n");
    throw new InputError();
  }
  if (options.schema !== undefined) {
    const { signatureFromToolSchemas } = await loadCompiler();
    const read = signatureFromToolSchemas(await context.readText(options.schema, "schema"), { file: options.schema });
    stopOnErrors(context, read.diagnostics, options.schema);
    return { signature: read.signature };
  }
  if (traces.length === 0) return {};
  const { readRunsVocabulary } = await import("@vigil/draft");
  const read = await readRunsVocabulary(await runArgumentFiles(context, traces, io.cwd), options.messages === false ? { messages: false } : {});
  for (const file of read.files) stopOnErrors(context, file.diagnostics, relative(io.cwd, file.file) || file.file);
  if (options.messages === true && !read.vocabulary.messages) io.stderr("note: --messages: the runs carry no message of a conversation (canonical events and MCP logs have none)\n");
  if (options.messages === undefined && read.vocabulary.messages) {
    const messages = read.vocabulary.actions.filter((action) => action.message).map((action) => `\`${action.action}\``);
    io.stderr(`note: the runs carry their conversations: ${messages.join(" and ")} are in the vocabulary, and a policy naming them is checked with --messages (--no-messages leaves them out)\n`);
  }
  return { signature: read.signature, vocabulary: read.vocabulary };
}

function stopOnErrors(context: CommandContext, diagnostics: readonly Diagnostic[], file: string): void {
  const errors = diagnostics.filter((d) => d.severity === "error");
  if (errors.length === 0) return;
  context.printDiagnostics(errors);
  context.reportUnrendered();
  context.io.stderr(`error: \`${file}\` has ${plural(errors.length, "error")}; nothing was drafted\n`);
  throw new InputError();
}

/**
 * The message actions (`user_message`, `agent_message`) a policy names: those the closed-world
 * check finds missing from an empty signature. A policy naming them is judged with the messages
 * as events, as `vigilc check --messages` judges it.
 */
export async function messageActionsOf(policyText: string): Promise<string[]> {
  const { checkAgainstSignature, compile } = await loadCompiler();
  const compiled = compile(policyText);
  if (!compiled.ok) return [];
  const named = new Set<string>();
  for (const d of checkAgainstSignature(compiled, { actions: new Set(), keys: new Map(), outputCount: 0 })) {
    const action = d.code === "V1101" ? /^the action `(user_message|agent_message)`/.exec(d.message)?.[1] : undefined;
    if (action !== undefined) named.add(action);
  }
  return [...named].sort().reverse();
}
