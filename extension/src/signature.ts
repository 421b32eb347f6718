import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";
import { baseName, messageOf } from "./report.js";
import { signatureRequest, type SignatureParams, type SignatureResult } from "./protocol.js";
import { activePolicyDocument } from "./policy-document.js";
import { readOnlyDocuments } from "./read-only.js";

/**
 * "Vigil: Show signature": the signature (actions, argument names and values) that a policy is
 * checked against and the traces it was read from, as a read-only JSON document. The documents
 * are served by a content provider of their own scheme (`readOnlyDocuments`).
 */
export function registerShowSignature(context: vscode.ExtensionContext, clientOf: () => LanguageClient): void {
  const documents = readOnlyDocuments(context, "vigil-signature");
  context.subscriptions.push(
    vscode.commands.registerCommand("vigil.showSignature", async () => {
      const policy = activePolicyDocument();
      if (policy === undefined) {
        void vscode.window.showErrorMessage("Vigil: open a .vigil policy to show the signature it is checked against");
        return;
      }
      try {
        const params: SignatureParams = { uri: policy.uri.toString() };
        const result = await clientOf().sendRequest<SignatureResult>(signatureRequest, params);
        const text = `${JSON.stringify({ sources: result.sources, problems: result.problems ?? [], signature: result.signature }, null, 2)}\n`;
        await documents.show(`/${baseName(policy.uri.path)}.signature.json`, policy.uri.toString(), text, "json");
      } catch (error) {
        void vscode.window.showErrorMessage(`Vigil: the signature could not be read: ${messageOf(error)}`);
      }
    }),
  );
}
