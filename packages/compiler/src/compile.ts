import { hasErrors, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import { checkSignature, checkSourceFile, type CheckedProgram } from "@vigil/checker";
import { parse, type SourceFile } from "@vigil/syntax";
import type { Signature } from "@vigil/trace";

export interface CompileOptions {
  /** The signature Σ of the trace the policy will judge; enables the closed-world checks. */
  readonly signature?: Signature;
  /** The file name, recorded on every diagnostic. */
  readonly file?: string;
}

/** A compiled `.vigil` file: its syntax tree, its checked program, and every diagnostic. */
export interface CompiledPolicy {
  readonly source: string;
  readonly file?: string;
  readonly syntax: SourceFile;
  /** The statements that checked without errors (all of them when `ok`). */
  readonly program: CheckedProgram;
  /** Every problem found, ordered by position. */
  readonly diagnostics: readonly Diagnostic[];
  /** True when there is no error (warnings allowed): the policy may be used to judge traces. */
  readonly ok: boolean;
}

/** Parses and checks a policy. Never throws on user input. */
export function compile(source: string, options: CompileOptions = {}): CompiledPolicy {
  const parsed = parse(source);
  const checked = checkSourceFile(parsed.file, options.signature === undefined ? {} : { signature: options.signature });
  const located = (d: Diagnostic): Diagnostic => (options.file === undefined ? d : { ...d, file: options.file });
  const diagnostics = sortDiagnostics([...parsed.diagnostics, ...checked.diagnostics].map(located));
  return {
    source,
    ...(options.file !== undefined ? { file: options.file } : {}),
    syntax: parsed.file,
    program: checked.program,
    diagnostics,
    ok: !hasErrors(diagnostics),
  };
}

/**
 * The closed-world check of a compiled policy against a trace's signature, as its own pass: the
 * symbols of the policy that Σ lacks (warnings and notes; never errors). `compile(source, {
 * signature })` gives the same diagnostics in one go.
 */
export function checkAgainstSignature(policy: CompiledPolicy, signature: Signature): Diagnostic[] {
  const diagnostics = checkSignature(policy.syntax, signature);
  return sortDiagnostics(policy.file === undefined ? diagnostics : diagnostics.map((d) => ({ ...d, file: policy.file! })));
}
