import type { Range } from "vscode-languageserver";

/**
 * The server's own messages, beyond LSP (docs/language-server.md, "Custom protocol"). The VS Code
 * extension is written against exactly these shapes.
 */

/** Request `vigil/checkTrace`: judge a trace file against a policy document. */
export const checkTraceMethod = "vigil/checkTrace";

export interface CheckTraceParams {
  /** The policy document (open in the editor, or a `file:` URI on disk). */
  readonly uri: string;
  /** The trace, as a file system path. */
  readonly trace: string;
  /** The decision procedure; the `vigil.engine` setting when absent. */
  readonly engine?: "eval" | "smt";
}

export interface CheckTraceWitness {
  /** The event's position in the trace, from 1. */
  readonly event: number;
  /** The 1-based line of the trace file the event's record starts on. */
  readonly line?: number;
}

export interface CheckTraceStatement {
  readonly policy: string;
  readonly name: string;
  readonly holds: boolean;
  /** Why the statement could not be decided (it then counts as not holding). */
  readonly undecided?: string;
  /** The first witnesses (at most `witnessLimit`), ascending. */
  readonly witnesses: readonly CheckTraceWitness[];
  /** How many witnesses there are in all. */
  readonly witnessCount: number;
  /** The rule's name in the policy document. */
  readonly range: Range;
}

export interface CheckTraceResult {
  /** `unsafe` when a rule is violated or undecided, and when nothing could be judged (`errors`): fail closed. */
  readonly verdict: "safe" | "unsafe";
  readonly trace: string;
  readonly statements: readonly CheckTraceStatement[];
  /** Why the trace was not judged (errors in the policy or the trace, an engine that failed); empty when it was. */
  readonly errors: readonly string[];
}

/** How many witnesses of a statement `vigil/checkTrace` lists (all are counted in `witnessCount`). */
export const witnessLimit = 1000;

/** Request `vigil/signature`: the signature Σ the policy document is checked against. */
export const signatureMethod = "vigil/signature";

export interface SignatureParams {
  readonly uri: string;
}

export interface SignatureResult {
  /** The sample traces and tool schemas Σ was read from (file system paths). */
  readonly sources: readonly string[];
  /** `vigilc signature --format json`'s shape: actions, keys with their values, outputs. */
  readonly signature: object;
  /** What kept a source out (unreadable files, traces with errors, globs that match nothing). */
  readonly problems: readonly string[];
}

/** Notification `vigil/status`, server to client: one line for a status bar. */
export const statusMethod = "vigil/status";

export interface StatusParams {
  readonly text: string;
  readonly tooltip?: string;
  readonly severity: "info" | "warning" | "error";
}

/** The command the verdict lenses invoke; the client implements it (open the trace at the witness). */
export const openWitnessCommand = "vigil.openWitness";

export interface OpenWitnessArguments {
  /** The trace file's URI. */
  readonly uri: string;
  /** The 0-based line of the witness event's record. */
  readonly line: number;
}

/**
 * The command the test lenses invoke; the server implements it (`workspace/executeCommand`): runs
 * the tests of a test file (`*.vigiltest`), or one of them, and publishes what they found.
 */
export const runTestCommand = "vigil.runTest";

export interface RunTestArguments {
  /** The test file: an open document, or a `file:` URI on disk. */
  readonly uri: string;
  /** The name of the test to run; every test of the file when absent. */
  readonly name?: string;
}

export interface RunTestOutcome {
  readonly name: string;
  /** `error`: the test could not run (its diagnostics say why). */
  readonly outcome: "passed" | "failed" | "error";
  /** How many of its expectations do not hold. */
  readonly failedExpectations: number;
  readonly durationMs: number;
}

export interface RunTestResult {
  readonly uri: string;
  /** The tests that ran, in the file's order. */
  readonly tests: readonly RunTestOutcome[];
  /** Why no test ran (the file's errors or its policy's), as `line L:C: CODE: message`; empty when they ran. */
  readonly errors: readonly string[];
}

/**
 * Request `vigil/diffCommitted`: what the policy document's current text (saved or not) changes
 * against the file's version at a git revision (`vigilc diff FILE --base REVISION`): the relation
 * of the whole policy and of each rule, with the runs that show each difference.
 */
export const diffCommittedMethod = "vigil/diffCommitted";

export interface DiffCommittedParams {
  /** The policy document: an open document, or a `file:` URI on disk. */
  readonly uri: string;
  /** The git revision to compare with; `HEAD` (the last commit) when absent. */
  readonly revision?: string;
  /** The longest run searched for a difference; `vigil.analysis.depth` when absent. */
  readonly depth?: number;
}

export interface DiffCommittedResult {
  readonly uri: string;
  /** The document version compared (absent for a file that is not open). */
  readonly version?: number;
  readonly revision: string;
  /** The names the report uses: `NAME@REVISION` and `NAME`. */
  readonly old: string;
  readonly new: string;
  /** The whole policy's relation; `equivalent` with `basis: "bounded"` is "no difference found up to the depth", not a proof. */
  readonly relation: "equivalent" | "stricter" | "looser" | "incomparable";
  readonly basis: "proof" | "bounded";
  /** Whether no difference was found in any rule or in the whole. */
  readonly same: boolean;
  /** The report, as `vigilc diff --format markdown` writes it. */
  readonly markdown: string;
  /** `vigilc diff --format json`'s shape. */
  readonly json: object;
}
