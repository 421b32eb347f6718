import { hasErrors, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import { checkSourceFile, type CheckedProgram } from "@vigil/checker";
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
