/**
 * The requests and notifications the Vigil language server adds to the Language Server Protocol
 * (docs/language-server.md), as the extension sends and receives them. Only plain data: this
 * module imports neither VS Code nor the language client, so the report code that uses it can be
 * tested on its own.
 */

/** An LSP range: 0-based lines and UTF-16 columns. */
export interface ProtocolRange {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}

/** `vigil/checkTrace`: judge the policy document on one trace file. */
export const checkTraceRequest = "vigil/checkTrace";

export interface CheckTraceParams {
  /** The policy document's URI. */
  readonly uri: string;
  /** The trace, as a file system path. */
  readonly trace: string;
  readonly engine?: Engine;
}

export type Engine = "eval" | "smt";

export interface WitnessEvent {
  /** The event's number in the trace, from 1. */
  readonly event: number;
  /** The line of the trace file the event was read from, from 1, when known. */
  readonly line?: number;
}

export interface StatementVerdict {
  readonly policy: string;
  readonly name: string;
  readonly holds: boolean;
  /** Why the statement could not be decided (it then counts as not holding). */
  readonly undecided?: string;
  /** The first witnesses, ascending (the server may list only the first ones). */
  readonly witnesses: readonly WitnessEvent[];
  /** How many witnesses there are in all, when the server says. */
  readonly witnessCount?: number;
  /** The rule's name in the policy document. */
  readonly range: ProtocolRange;
}

export interface CheckTraceResult {
  readonly verdict: "safe" | "unsafe";
  readonly trace: string;
  readonly statements: readonly StatementVerdict[];
  readonly errors: readonly string[];
}

/** `vigil/signature`: the signature the policy document is checked against, and where it was read. */
export const signatureRequest = "vigil/signature";

export interface SignatureParams {
  readonly uri: string;
}

export interface SignatureResult {
  readonly sources: readonly string[];
  readonly signature: unknown;
  /** What kept a source out (unreadable files, traces with errors, globs that match nothing). */
  readonly problems?: readonly string[];
}

/** `vigil/status`, from the server: what the status bar says about the server's view of the workspace. */
export const statusNotification = "vigil/status";

export interface StatusParams {
  readonly text: string;
  readonly tooltip?: string;
  readonly severity: "info" | "warning" | "error";
}

/** The argument of `vigil.openWitness`, which the server's code lenses carry. */
export interface WitnessLocation {
  /** The trace file's URI. */
  readonly uri: string;
  /** The line to show, from 0. */
  readonly line: number;
}
