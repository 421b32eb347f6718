import { readFile } from "node:fs/promises";
import { basename } from "node:path";
import { compile, readFileAtRevision, type CompiledPolicy } from "@vigil/compiler";
import { ErrorCodes, LSPErrorCodes, ResponseError, type CancellationToken } from "vscode-languageserver/node";
import type { Analysis } from "../analysis.js";
import { checkTrace, signatureOfSamples } from "../features/custom-requests.js";
import { AnalysisFailed, type AnalysisWorker } from "../findings/runner.js";
import { TextPositions } from "../positions.js";
import {
  runTestCommand,
  type CheckTraceParams,
  type CheckTraceResult,
  type DiffCommittedParams,
  type DiffCommittedResult,
  type RunTestArguments,
  type RunTestResult,
  type SignatureParams,
  type SignatureResult,
} from "../protocol.js";
import { uriToPath } from "../uris.js";
import type { DocumentChecks } from "./document-checks.js";
import { analysisSolverCallMs } from "./findings-scheduler.js";
import type { ServerState } from "./server-state.js";
import type { TestDocuments } from "./test-documents.js";

/**
 * The server's own requests (`vigil/checkTrace`, `vigil/signature`, `vigil/diffCommitted`) and its
 * one command (`vigil.runTest`): each checks its parameters, answering malformed ones with
 * `InvalidParams`, and takes a policy open in the editor as it is there (unsaved), any other from
 * its file. The answers themselves come from `features/custom-requests.ts`, the analysis worker
 * and the test runner.
 */
export class VigilRequests {
  constructor(
    private readonly server: ServerState,
    private readonly checks: DocumentChecks,
    private readonly tests: TestDocuments,
    /** Runs the diff (Z3) off the thread that answers the editor. */
    private readonly analysisWorker: AnalysisWorker,
  ) {}

  /** `vigil/checkTrace`: a trace file judged against a policy, cancelled with the request. */
  async checkTrace(params: CheckTraceParams, token: CancellationToken): Promise<CheckTraceResult> {
    if (typeof params?.uri !== "string" || typeof params.trace !== "string" || params.trace.length === 0) {
      throw new ResponseError(ErrorCodes.InvalidParams, "vigil/checkTrace needs { uri: the policy document, trace: a file path, engine?: \"eval\" | \"smt\" }");
    }
    if (params.engine !== undefined && params.engine !== "eval" && params.engine !== "smt") {
      throw new ResponseError(ErrorCodes.InvalidParams, `unknown engine \`${String(params.engine)}\`: use "eval" or "smt"`);
    }
    const engine = params.engine ?? this.server.workspace.currentSettings.engine;
    const policy = await this.policyOf(params.uri);
    // The trace is read as the policy's sample traces are: with messages when its config says so.
    const messages = (await this.server.workspace.contextOf(uriToPath(params.uri))).samples?.section?.messages === true;
    // A long trace (or the solver) may take a while: the client's cancellation stops the run.
    const cancelled = new AbortController();
    const subscription = token.onCancellationRequested(() => cancelled.abort());
    try {
      return await checkTrace(policy.compiled, policy.positions, params.trace, engine, cancelled.signal, messages);
    } catch (error) {
      if (cancelled.signal.aborted) throw new ResponseError(LSPErrorCodes.RequestCancelled, "vigil/checkTrace was cancelled");
      throw error;
    } finally {
      subscription.dispose();
    }
  }

  /** `vigil/diffCommitted`: the document's current text against the file at a git revision, diffed in the worker. */
  async diffCommitted(params: DiffCommittedParams, token: CancellationToken): Promise<DiffCommittedResult> {
    const usage = "vigil/diffCommitted needs { uri: the policy document, revision?: a git revision, depth?: 1–12 }";
    if (typeof params?.uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, usage);
    const revision = params.revision ?? "HEAD";
    // A revision is never an option of git's.
    if (typeof revision !== "string" || revision.length === 0 || revision.startsWith("-")) throw new ResponseError(ErrorCodes.InvalidParams, `${usage}; \`${String(revision)}\` is not a revision`);
    const depth = params.depth ?? this.server.workspace.currentSettings.analysis.depth;
    if (typeof depth !== "number" || !Number.isInteger(depth) || depth < 1 || depth > 12) throw new ResponseError(ErrorCodes.InvalidParams, `${usage}; the depth is ${String(depth)}`);
    const file = uriToPath(params.uri);
    if (file === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `${params.uri} is not a file, so it has no committed version`);
    const open = this.server.documents.get(params.uri) !== undefined ? await this.checks.currentAnalysis({ textDocument: { uri: params.uri } }) : undefined;
    const text = open?.text ?? (await readFile(file, "utf8").catch(() => undefined));
    if (text === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${params.uri}: it is not open and cannot be read`);
    const name = basename(file);
    const errors = (compiled: CompiledPolicy) => compiled.diagnostics.filter((d) => d.severity === "error").length;
    const now = open?.compiled ?? compile(text, { file });
    if (!now.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `\`${name}\` has ${plural(errors(now), "error")}: fix ${errors(now) === 1 ? "it" : "them"} to compare it with ${revision}`);
    const before = await readFileAtRevision(file, revision);
    if (!before.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `no version of \`${name}\` at ${revision} to compare with: ${before.reason}`);
    const old = `${name}@${revision}`;
    const then = compile(before.text, { file: old });
    if (!then.ok) throw new ResponseError(LSPErrorCodes.RequestFailed, `\`${old}\` has ${plural(errors(then), "error")}, so it cannot be compared`);
    const cancelled = new AbortController();
    const subscription = token.onCancellationRequested(() => cancelled.abort());
    try {
      const answer = await this.analysisWorker.diff({ oldText: before.text, oldName: old, newText: text, newName: name, depth, timeoutMs: analysisSolverCallMs }, cancelled.signal);
      if (answer === undefined) throw new ResponseError(LSPErrorCodes.RequestCancelled, "vigil/diffCommitted was cancelled");
      // A run the forward engine does not confirm is a bug, said where the report is read.
      const warning = answer.unconfirmed > 0 ? `> **Internal error:** ${plural(answer.unconfirmed, "run")} found by the search ${answer.unconfirmed === 1 ? "is" : "are"} not confirmed by the forward engine; this is a bug in Vigil.\n\n` : "";
      return {
        uri: params.uri,
        ...(open !== undefined ? { version: open.version } : {}),
        revision,
        old,
        new: name,
        relation: answer.relation,
        basis: answer.basis,
        same: answer.same,
        markdown: `${warning}${answer.markdown}`,
        json: answer.json,
      };
    } catch (error) {
      if (error instanceof AnalysisFailed) throw new ResponseError(LSPErrorCodes.RequestFailed, error.message);
      throw error;
    } finally {
      subscription.dispose();
    }
  }

  /** `workspace/executeCommand`: the server's one command, `vigil.runTest` (the test lenses'). */
  async executeCommand(params: { command?: unknown; arguments?: unknown[] }): Promise<RunTestResult> {
    if (params?.command !== runTestCommand) throw new ResponseError(ErrorCodes.InvalidParams, `unknown command \`${String(params?.command)}\`: the server has only ${runTestCommand}`);
    const target = (Array.isArray(params.arguments) ? params.arguments[0] : undefined) as Partial<RunTestArguments> | undefined;
    if (typeof target?.uri !== "string" || (target.name !== undefined && typeof target.name !== "string")) {
      throw new ResponseError(ErrorCodes.InvalidParams, `${runTestCommand} needs { uri: the test file, name?: the test to run }`);
    }
    return this.tests.run({ uri: target.uri, ...(target.name !== undefined ? { name: target.name } : {}) });
  }

  /** `vigil/signature`: what the policy's sample traces and schemas say exists. */
  async signature(params: SignatureParams): Promise<SignatureResult> {
    if (typeof params?.uri !== "string") throw new ResponseError(ErrorCodes.InvalidParams, "vigil/signature needs { uri: the policy document }");
    if (this.server.documents.get(params.uri) !== undefined) return signatureOfSamples((await this.checks.currentAnalysis({ textDocument: { uri: params.uri } })).context.samples);
    const file = uriToPath(params.uri);
    if (file === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${params.uri}: it is not open and not a file`);
    return signatureOfSamples((await this.server.workspace.contextOf(file)).samples);
  }

  /** A policy by URI: the open document's current analysis, or the file on disk compiled as it is. */
  private async policyOf(uri: string): Promise<{ compiled: Analysis["compiled"]; positions: TextPositions }> {
    if (this.server.documents.get(uri) !== undefined) return this.checks.currentAnalysis({ textDocument: { uri } });
    const file = uriToPath(uri);
    let text: string | undefined;
    if (file !== undefined) text = await readFile(file, "utf8").catch(() => undefined);
    if (file === undefined || text === undefined) throw new ResponseError(ErrorCodes.InvalidParams, `unknown document ${uri}: it is not open and cannot be read`);
    return { compiled: compile(text, { file }), positions: new TextPositions(text) };
  }
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
