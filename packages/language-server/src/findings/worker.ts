import { parentPort } from "node:worker_threads";
import { analyzePolicy, compile, diffPolicies, noDifferenceFound, policyDiffMarkdown, policyDiffToJson, unconfirmedRuns } from "@vigil/compiler";
import type { WorkerAnswer, WorkerRequest } from "./messages.js";

/**
 * The analysis worker: runs `analyzePolicy` and `diffPolicies` (Z3) on a thread of its own, so
 * that the solver's work never delays an answer to the editor, and so that work a newer edit made
 * stale is stopped by ending the thread. One request at a time, in the order they come.
 */

const port = parentPort;
if (port === null) throw new Error("the analysis worker runs only as a worker thread");

port.on("message", (request: WorkerRequest) => {
  void answer(request).then((reply) => port.postMessage(reply));
});

async function answer(request: WorkerRequest): Promise<WorkerAnswer> {
  try {
    if (request.kind === "analyze") {
      const compiled = compile(request.text, { ...(request.file !== undefined ? { file: request.file } : {}) });
      if (!compiled.ok) return { id: request.id, ok: false, error: "the policy has errors" };
      const diagnostics = await analyzePolicy(compiled.program, {
        depth: request.depth,
        timeoutMs: request.timeoutMs,
        ...(request.file !== undefined ? { file: request.file } : {}),
      });
      return { id: request.id, ok: true, diagnostics };
    }
    const old = compile(request.oldText, { file: request.oldName });
    const next = compile(request.newText, { file: request.newName });
    if (!old.ok || !next.ok) return { id: request.id, ok: false, error: `\`${!old.ok ? request.oldName : request.newName}\` has errors` };
    const result = await diffPolicies(old.program, next.program, { depth: request.depth, timeoutMs: request.timeoutMs });
    return {
      id: request.id,
      ok: true,
      diff: {
        relation: result.whole.relation,
        basis: result.whole.basis,
        same: noDifferenceFound(result),
        markdown: policyDiffMarkdown(result, request.oldName, request.newName),
        json: policyDiffToJson(result, request.oldName, request.newName),
        unconfirmed: unconfirmedRuns(result).length,
      },
    };
  } catch (error) {
    return { id: request.id, ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}
