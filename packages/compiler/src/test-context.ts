import type { CheckedStatement } from "@vigil/checker";
import type { Diagnostic } from "@vigil/diagnostics";
import type { RunFile } from "@vigil/trace";
import type { CompiledPolicy } from "./compile.js";
import type { DecisionEngine, EngineName } from "./engines.js";

/** What every test of a test file runs with: the compiled policy, the engines, and the files it reads. */
export interface TestContext {
  readonly file: string;
  readonly policy: CompiledPolicy;
  readonly statements: readonly CheckedStatement[];
  readonly engines: readonly EngineName[];
  /** The engines asked for, in the order they judge. */
  readonly judges: readonly DecisionEngine[];
  readonly readText: (file: string, what: string) => Promise<string | Diagnostic>;
  /** The trace files read so far by the file's tests, each text cut into its runs once. */
  readonly traces: Map<string, TraceText>;
  readonly signal?: AbortSignal;
}

/** A trace file's text, and its runs when it holds several. */
export interface TraceText {
  readonly text: string;
  readonly runFile?: RunFile;
}
