import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { activePolicyDocument } from "./policy-document.js";
import { diffCommittedRequest, type DiffCommittedParams, type DiffCommittedResult } from "./protocol.js";
import { baseName, diffSummary, messageOf } from "./report.js";

/**
 * "Vigil: Compare with last commit": what the policy's current text, saved or not, changes against
 * its last committed version (`vigil/diffCommitted`, as `vigilc diff FILE --base HEAD`): a summary
 * in a notification, and the report (the relation of each rule, the runs that show each difference
 * in the canonical trace format) in a read-only markdown document beside the policy. The solver
 * runs in the server's worker; cancelling the progress notification stops it.
 */
const scheme = "vigil-diff";

export function registerDiffWithCommitted(context: vscode.ExtensionContext, clientOf: () => LanguageClient): void {
  const contents = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(scheme, {
      onDidChange: changed.event,
      provideTextDocumentContent: (uri) => contents.get(uri.toString()) ?? "",
    }),
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
      const uri = vscode.Uri.from({ scheme, path: `/${name}.diff.md`, query: policy.uri.toString() });
      contents.set(uri.toString(), result.markdown);
      changed.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(document, "markdown");
      await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
      void vscode.window.showInformationMessage(`Vigil: ${diffSummary(result)}`);
    }),
  );
}
