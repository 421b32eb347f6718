/**
 * The requests and notifications the Vigil language server adds to the Language Server Protocol
 * (docs/language-server.md), under the names the extension uses. The shapes are the server's own
 * (`@vigil/language-server/protocol`, plain data with no run-time dependency), so the two cannot
 * drift apart; this module imports neither VS Code nor the language client, so the report code
 * that uses it can be tested on its own.
 */
import type { CheckTraceParams } from "@vigil/language-server/protocol";

export {
  checkTraceMethod as checkTraceRequest,
  diffCommittedMethod as diffCommittedRequest,
  runTestCommand,
  signatureMethod as signatureRequest,
  statusMethod as statusNotification,
} from "@vigil/language-server/protocol";
export type {
  CheckTraceParams,
  CheckTraceResult,
  CheckTraceStatement as StatementVerdict,
  CheckTraceWitness as WitnessEvent,
  DiffCommittedParams,
  DiffCommittedResult,
  OpenWitnessArguments as WitnessLocation,
  RunTestArguments,
  RunTestResult,
  SignatureParams,
  SignatureResult,
  StatusParams,
} from "@vigil/language-server/protocol";

export type Engine = NonNullable<CheckTraceParams["engine"]>;

/** An LSP range: 0-based lines and UTF-16 columns. */
export interface ProtocolRange {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}
