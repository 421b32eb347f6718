import * as vscode from "vscode";

/**
 * Which policy a command is about: the active editor's document when it is a Vigil policy,
 * otherwise the Vigil document that was active last (a trace may have been opened beside it), or
 * the only Vigil document visible.
 */
let lastActivePolicy: vscode.Uri | undefined;

export function trackActivePolicy(context: vscode.ExtensionContext): void {
  const remember = (editor: vscode.TextEditor | undefined) => {
    if (editor?.document.languageId === "vigil") lastActivePolicy = editor.document.uri;
  };
  remember(vscode.window.activeTextEditor);
  context.subscriptions.push(vscode.window.onDidChangeActiveTextEditor(remember));
}

export function activePolicyDocument(): vscode.TextDocument | undefined {
  const active = vscode.window.activeTextEditor?.document;
  if (active?.languageId === "vigil") return active;
  const open = vscode.workspace.textDocuments.filter((document) => document.languageId === "vigil" && !document.isClosed);
  const last = lastActivePolicy === undefined ? undefined : open.find((document) => document.uri.toString() === lastActivePolicy!.toString());
  if (last !== undefined) return last;
  const visible = vscode.window.visibleTextEditors.map((editor) => editor.document).filter((document) => document.languageId === "vigil");
  return visible.length === 1 ? visible[0] : undefined;
}
