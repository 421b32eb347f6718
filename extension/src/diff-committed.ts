import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { activePolicyDocument } from "./policy-document.js";
import { readOnlyDocuments } from "./read-only.js";
import { diffCommittedRequest, type DiffCommittedParams, type DiffCommittedResult } from "./protocol.js";
import { baseName, diffSummary, messageOf } from "./report.js";

/**
 * "Vigil: Compare with last commit": what the policy's current text, saved or not, changes against
 * its last committed version (`vigil/diffCommitted`, as `vigilc diff FILE --base HEAD`): a summary
 * in a notification, and the report (the relation of each rule, the runs that show each difference
 * in the canonical trace format) in a read-only markdown document beside the policy. The solver
 * runs in the server's worker; cancelling the progress notification stops it.
 */
export function registerDiffWithCommitted(context: vscode.ExtensionContext, clientOf: () => LanguageClient): void {
  const documents = readOnlyDocuments(context, "vigil-diff");
  context.subscriptions.push(
    vscode.commands.registerCommand("vigil.diffWithCommitted", async () => {
      const policy = activePolicyDocument();
      if (policy === undefined || policy.uri.scheme !== "file") {
        void vscode.window.showErrorMessage("Vigil: open a saved .vigil policy in a git repository to compare it with its last commit");
        return;
      }
      const name = baseName(policy.uri.fsPath);
      let result: DiffCommittedResult | undefined;
      try {
        const params: DiffCommittedParams = { uri: policy.uri.toString() };
        result = await vscode.window.withProgress(
          { location: vscode.ProgressLocation.Notification, title: `Vigil: comparing ${name} with its last commit`, cancellable: true },
          (_progress, token) => clientOf().sendRequest<DiffCommittedResult>(diffCommittedRequest, params, token),
        );
      } catch (error) {
        if (error instanceof vscode.CancellationError || messageOf(error).includes("cancelled")) return;
        void vscode.window.showErrorMessage(`Vigil: ${messageOf(error)}`);
        return;
      }
      await documents.show(`/${name}.diff.md`, policy.uri.toString(), result.markdown, "markdown");
      void vscode.window.showInformationMessage(`Vigil: ${diffSummary(result)}`);
    }),
  );
}
