import * as vscode from "vscode";

/**
 * Read-only documents of a URI scheme of the extension's own (a content provider makes them
 * read-only): `show` sets a document's text and opens it beside the active editor in a language.
 */
export function readOnlyDocuments(context: vscode.ExtensionContext, scheme: string): { show(path: string, query: string, text: string, language: string): Promise<void> } {
  const contents = new Map<string, string>();
  const changed = new vscode.EventEmitter<vscode.Uri>();
  context.subscriptions.push(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(scheme, {
      onDidChange: changed.event,
      provideTextDocumentContent: (uri) => contents.get(uri.toString()) ?? "",
    }),
  );
  return {
    async show(path, query, text, language) {
      const uri = vscode.Uri.from({ scheme, path, query });
      contents.set(uri.toString(), text);
      changed.fire(uri);
      const document = await vscode.workspace.openTextDocument(uri);
      await vscode.languages.setTextDocumentLanguage(document, language);
      await vscode.window.showTextDocument(document, { preview: true, viewColumn: vscode.ViewColumn.Beside });
    },
  };
}
