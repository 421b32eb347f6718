import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { baseName, messageOf } from "./report.js";
import { signatureRequest, type SignatureParams, type SignatureResult } from "./protocol.js";
import { activePolicyDocument } from "./policy-document.js";

/**
 * "Vigil: Show signature": the signature (actions, argument names and values) that a policy is
 * checked against and the traces it was read from, as a read-only JSON document. The documents
 * are served by a content provider of their own scheme, which makes them read-only.
 */
const scheme = "vigil-signature";

export function registerShowSignature(context: vscode.ExtensionContext, clientOf: () => LanguageClient): void {
  const contents = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(scheme, {
      onDidChange: changed.event,
      provideTextDocumentContent: (uri) => contents.get(uri.toString()) ?? "",
    }),
    vscode.commands.registerCommand("vigil.showSignature", async () => {
      const policy = activePolicyDocument();
      if (policy === undefined) {
        void vscode.window.showErrorMessage("Vigil: open a .vigil policy to show the signature it is checked against");
        return;
      }
      try {
        const params: SignatureParams = { uri: policy.uri.toString() };
        const result = await clientOf().sendRequest<SignatureResult>(signatureRequest, params);
        const uri = vscode.Uri.from({ scheme, path: `/${baseName(policy.uri.path)}.signature.json`, query: policy.uri.toString() });
        contents.set(uri.toString(), `${JSON.stringify({ sources: result.sources, problems: result.problems ?? [], signature: result.signature }, null, 2)}\n`);
        changed.fire(uri);
        const document = await vscode.workspace.openTextDocument(uri);
        await vscode.languages.setTextDocumentLanguage(document, "json");
        await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
      } catch (error) {
        void vscode.window.showErrorMessage(`Vigil: the signature could not be read: ${messageOf(error)}`);
      }
    }),
  );
}
