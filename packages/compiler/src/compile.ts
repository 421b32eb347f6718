import { hasErrors, sortDiagnostics, type Diagnostic } from "@vigil/diagnostics";
import { checkSignature, checkSourceFile, type CheckedProgram, type SymbolTable } from "@vigil/checker";
import { parse, type ParseResult, type SourceFile } from "@vigil/syntax";
import type { Signature } from "@vigil/trace";

export interface CompileOptions {
  /** The signature Σ of the trace the policy will judge; enables the closed-world checks. */
  readonly signature?: Signature;
  /** The file name, recorded on every diagnostic. */
  readonly file?: string;
  /**
   * The compiled previous version of the same document: the declarations it parsed that did not
   * change are reused (an editor re-compiles on every keystroke). See also `CompileCache`.
   */
  readonly previous?: CompiledPolicy;
  /** Cancels the compilation: checked between the passes; an aborted compile throws `signal.reason`. */
  readonly signal?: AbortSignal;
}

/** A compiled `.vigil` file: its syntax tree, its checked program, and every diagnostic. */
export interface CompiledPolicy {
  readonly source: string;
  readonly file?: string;
  readonly syntax: SourceFile;
  /** The statements that checked without errors (all of them when `ok`). */
  readonly program: CheckedProgram;
  /** Every policy, pattern, rule and variable, with its declaration and references. */
  readonly symbols: SymbolTable;
  /** Every problem found, ordered by position. */
  readonly diagnostics: readonly Diagnostic[];
  /** True when there is no error (warnings allowed): the policy may be used to judge traces. */
  readonly ok: boolean;
}

/**
 * Parses and checks a policy: parse (reusing unchanged declarations of `previous`), resolve names,
 * validate and lower to the checked program, and, given a signature, the closed-world check. Never
 * throws on user input; throws only when `signal` aborts it.
 */
export function compile(source: string, options: CompileOptions = {}): CompiledPolicy {
  options.signal?.throwIfAborted();
  const previous = options.previous === undefined ? undefined : parseResults.get(options.previous);
  const parsed = parse(source, previous === undefined ? {} : { reuse: previous });
  options.signal?.throwIfAborted();
  const checked = checkSourceFile(parsed.file, options.signature === undefined ? {} : { signature: options.signature });
  options.signal?.throwIfAborted();
  const located = (d: Diagnostic): Diagnostic => (options.file === undefined ? d : { ...d, file: options.file });
  const diagnostics = sortDiagnostics([...parsed.diagnostics, ...checked.diagnostics].map(located));
  const compiled: CompiledPolicy = {
    source,
    ...(options.file !== undefined ? { file: options.file } : {}),
    syntax: parsed.file,
    program: checked.program,
    symbols: checked.symbols,
    diagnostics,
    ok: !hasErrors(diagnostics),
  };
  parseResults.set(compiled, parsed);
  return compiled;
}

/** The parse behind each compiled policy, so that compiling its next version can reuse it. */
const parseResults = new WeakMap<CompiledPolicy, ParseResult>();

/**
 * The last compilation of each open document, by a key the caller chooses (an editor's URI). A
 * compile of unchanged text with the same signature returns the cached policy; a compile of changed
 * text re-parses only the declarations that changed. The closed-world check against a signature is
 * not part of it: run `checkAgainstSignature` on the result, so a new sample trace does not
 * re-compile anything.
 */
export class CompileCache {
  private readonly documents = new Map<string, CompiledPolicy>();

  compile(key: string, source: string, options: Omit<CompileOptions, "previous" | "signature"> = {}): CompiledPolicy {
    const previous = this.documents.get(key);
    if (previous !== undefined && previous.source === source && previous.file === options.file) return previous;
    const compiled = compile(source, { ...options, ...(previous !== undefined ? { previous } : {}) });
    this.documents.set(key, compiled);
    return compiled;
  }

  /** The last compilation of a document, if any. */
  get(key: string): CompiledPolicy | undefined {
    return this.documents.get(key);
  }

  /** Forgets a document (an editor closed it). */
  delete(key: string): void {
    this.documents.delete(key);
  }
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
