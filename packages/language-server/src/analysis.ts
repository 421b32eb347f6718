import { checkAgainstSignature, type CompileCache, type CompiledPolicy, type Diagnostic, type Signature } from "@vigil/compiler";
import type { Item, PolicyDecl } from "@vigil/syntax";
import { TextPositions } from "./positions.js";
import { scanTokens, type Token } from "./tokens.js";
import type { PolicyContext } from "./workspace/workspace.js";

/**
 * One version of a policy document, compiled: the tree, the checked program, the symbol table and
 * the diagnostics (with the closed-world check against the sample signature when there is one),
 * with the positions to convert its spans and the tokens (scanned on first use). Every feature
 * answers from an analysis, so a request sees one consistent version.
 */
export class Analysis {
  private scanned: Token[] | undefined;
  readonly positions: TextPositions;

  constructor(
    readonly uri: string,
    readonly version: number,
    readonly text: string,
    readonly compiled: CompiledPolicy,
    /** The compiler's diagnostics and the closed-world check's, ordered by position. */
    readonly diagnostics: readonly Diagnostic[],
    readonly context: PolicyContext,
    /** The workspace generation the context belongs to: when it moves on, the analysis is redone. */
    readonly generation: number,
  ) {
    this.positions = new TextPositions(text);
  }

  get tokens(): readonly Token[] {
    this.scanned ??= scanTokens(this.text);
    return this.scanned;
  }

  /** The policy whose block covers an offset. */
  policyAt(offset: number): PolicyDecl | undefined {
    return this.compiled.syntax.policies.find((policy) => policy.span.start <= offset && offset <= policy.span.end);
  }

  /** The pattern or rule declaration covering an offset. */
  itemAt(offset: number): Item | undefined {
    return this.policyAt(offset)?.items.find((item) => item.span.start <= offset && offset <= item.span.end);
  }
}

export interface AnalyzeOptions {
  readonly uri: string;
  readonly version: number;
  readonly text: string;
  readonly file?: string;
  readonly context: PolicyContext;
  readonly generation: number;
  /** Per-document reuse of the declarations that did not change since the last version. */
  readonly cache: CompileCache;
  /** Cancels the compilation (a newer version arrived); an aborted analysis throws. */
  readonly signal?: AbortSignal;
}

/** Compiles a document version, and checks it against its context's signature when there is one. */
export function analyze(options: AnalyzeOptions): Analysis {
  const compiled = options.cache.compile(options.uri, options.text, {
    ...(options.file !== undefined ? { file: options.file } : {}),
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  const signature = options.context.samples?.signature;
  const diagnostics = signature === undefined ? compiled.diagnostics : withSignatureCheck(compiled, signature);
  return new Analysis(options.uri, options.version, options.text, compiled, diagnostics, options.context, options.generation);
}

/** The closed-world diagnostics of a compiled policy against a signature, computed once per pair. */
const signatureChecks = new WeakMap<CompiledPolicy, { readonly signature: Signature; readonly diagnostics: readonly Diagnostic[] }>();

function withSignatureCheck(compiled: CompiledPolicy, signature: Signature): readonly Diagnostic[] {
  const known = signatureChecks.get(compiled);
  if (known !== undefined && known.signature === signature) return known.diagnostics;
  const diagnostics = [...compiled.diagnostics, ...checkAgainstSignature(compiled, signature)].sort(
    (a, b) => (a.span?.start ?? -1) - (b.span?.start ?? -1) || a.code.localeCompare(b.code),
  );
  signatureChecks.set(compiled, { signature, diagnostics });
  return diagnostics;
}
